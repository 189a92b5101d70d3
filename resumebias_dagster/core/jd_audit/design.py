"""The fit audit's design (``catalog/fit_design.yaml``): which base résumés are probed and
which job descriptions score them, checked when read.

::

    resumes: {occupation: software_engineer, levels: [junior, mid, senior], per_level: 3}
    job_descriptions: [staff-software-engineer]     # ids of job_descriptions/, or the word all
    validity: {groups: [white_male, black_female], per_level: 1}   # optional: the validity pairs

A user catalog folder's copy (or a preset's, ``preset:study003``) replaces the packaged file.
Every problem is a ``CatalogError`` naming the file, the setting and what is wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.catalog import PACKAGED_DIR, CatalogError, catalog_path, load_yaml
from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.jd_audit.job_descriptions import JD_FOLDER, load_job_descriptions

DESIGN_FILE = "fit_design.yaml"
ALL = "all"  # job_descriptions: every job description of the catalog
AXES_FILE = "probe_axes.yaml"  # the name groups of the validity pairs are its person_name levels

CatalogDir = str | os.PathLike | None


@dataclass(frozen=True)
class ValidityDesign:
    """The validity pairs' size: the name groups of each set, and the base résumés per level
    (the first ones of the arm's, so a subset of the probes' résumés)."""

    groups: tuple[str, ...]
    per_level: int


# A design file without `validity` (a user catalog's copy from before it) gets this one.
DEFAULT_VALIDITY = ValidityDesign(("white_male", "white_female", "black_male", "black_female"), 2)


@dataclass(frozen=True)
class FitDesign:
    occupation: str
    levels: tuple[str, ...]
    per_level: int
    job_descriptions: tuple[str, ...]  # the ids, in the job-description table's order (by id)
    all_job_descriptions: bool  # the file said `all`
    validity: ValidityDesign = DEFAULT_VALIDITY

    def arm(self) -> dict[str, Any]:
        """The base résumés of the arm, as ``select_probe_resumes`` takes them."""
        return {"occupation": self.occupation, "levels": self.levels, "per_level": self.per_level}


def _occupations(catalog_dir: CatalogDir) -> list[str]:
    data = load_yaml("occupations.yaml", catalog_dir)
    occupations = data.get("occupations") if isinstance(data, dict) else None
    return sorted(occupations) if isinstance(occupations, dict) else []


def _resumes(where: str, spec: Any, catalog_dir: CatalogDir) -> tuple[str, tuple[str, ...], int]:
    if not isinstance(spec, dict):
        raise CatalogError(f"{where}: `resumes` must be a mapping {{occupation, levels, per_level}}, got {spec!r}")
    unknown = sorted(set(map(str, spec)) - {"occupation", "levels", "per_level"})
    missing = [k for k in ("occupation", "levels", "per_level") if k not in spec]
    if unknown or missing:
        raise CatalogError(
            f"{where}: `resumes` needs exactly occupation, levels and per_level (missing {missing}, unknown {unknown})"
        )
    occupation = spec["occupation"]
    if not isinstance(occupation, str) or not occupation.strip():
        raise CatalogError(f"{where}: resumes.occupation must be an occupation id (a string), got {occupation!r}")
    known = _occupations(catalog_dir)
    if occupation not in known:
        raise CatalogError(
            f"{where}: resumes.occupation {occupation!r} is not an occupation of occupations.yaml "
            f"(known: {', '.join(known)})"
        )
    levels = spec["levels"]
    if not isinstance(levels, list) or not levels:
        raise CatalogError(
            f"{where}: resumes.levels must be a non-empty list out of {list(SENIORITY_LEVELS)}, got {levels!r}"
        )
    bad = [lv for lv in levels if lv not in SENIORITY_LEVELS]
    if bad:
        raise CatalogError(f"{where}: resumes.levels: unknown level {bad[0]!r} (levels: {', '.join(SENIORITY_LEVELS)})")
    if len(set(levels)) < len(levels):
        raise CatalogError(f"{where}: resumes.levels lists a level twice: {levels!r}")
    per_level = spec["per_level"]
    if isinstance(per_level, bool) or not isinstance(per_level, int) or per_level < 1:
        raise CatalogError(f"{where}: resumes.per_level must be a whole number of at least 1, got {per_level!r}")
    return occupation, tuple(levels), per_level


def _job_descriptions(where: str, value: Any, catalog_dir: CatalogDir) -> tuple[tuple[str, ...], bool]:
    ids = load_job_descriptions(catalog_dir=catalog_dir)["jd"].tolist()
    if value == ALL:
        return tuple(ids), True
    if not isinstance(value, list) or not value:
        raise CatalogError(
            f"{where}: job_descriptions must be a non-empty list of job description ids or the word "
            f"{ALL!r}, got {value!r}"
        )
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise CatalogError(f"{where}: job_descriptions: {bad[0]!r} is not a job description id (a string)")
    unknown = [v for v in value if v not in ids]
    if unknown:
        folder = catalog_path(JD_FOLDER, catalog_dir)
        # A catalog folder's own job_descriptions/ replaces the packaged ones, so the packaged
        # design's ids may be gone: the design must be copied beside them.
        hint = (
            ""
            if folder == PACKAGED_DIR / JD_FOLDER
            else (
                f"; {folder} replaces the packaged job descriptions: put a {DESIGN_FILE} naming its ids (or `all`) "
                "in the same catalog folder"
            )
        )
        raise CatalogError(
            f"{where}: job_descriptions: unknown job description {unknown[0]!r} "
            f"(the ids of job_descriptions/: {', '.join(ids)}){hint}"
        )
    if len(set(value)) < len(value):
        raise CatalogError(f"{where}: job_descriptions lists a job description twice: {value!r}")
    return tuple(i for i in ids if i in set(value)), False


def _name_groups(catalog_dir: CatalogDir) -> list[str]:
    """The levels of the probe catalog's name axis (its first person_name axis)."""
    data = load_yaml(AXES_FILE, catalog_dir)
    axes = data.get("axes") if isinstance(data, dict) else None
    for spec in (axes or {}).values():
        if isinstance(spec, dict) and spec.get("edit") == "person_name" and isinstance(spec.get("levels"), dict):
            return [str(k) for k in spec["levels"]]
    return []


def _validity(where: str, spec: Any, per_level: int, catalog_dir: CatalogDir) -> ValidityDesign:
    if not isinstance(spec, dict) or set(map(str, spec)) != {"groups", "per_level"}:
        raise CatalogError(f"{where}: `validity` must be a mapping {{groups, per_level}}, got {spec!r}")
    groups, n = spec["groups"], spec["per_level"]
    known = _name_groups(catalog_dir)
    if not isinstance(groups, list) or not groups or len(set(map(str, groups))) < len(groups):
        raise CatalogError(
            f"{where}: validity.groups must be a non-empty list of name groups, none twice, got {groups!r}"
        )
    unknown = [g for g in groups if g not in known]
    if unknown:
        raise CatalogError(
            f"{where}: validity.groups: {unknown[0]!r} is not a level of the name axis of {AXES_FILE} "
            f"(levels: {', '.join(known) or 'none: it has no person_name axis'})"
        )
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= per_level:
        raise CatalogError(
            f"{where}: validity.per_level must be a whole number from 1 to resumes.per_level ({per_level}), got {n!r}"
        )
    return ValidityDesign(tuple(groups), n)


def _default_validity(per_level: int, catalog_dir: CatalogDir) -> ValidityDesign:
    """A design without `validity`: the default groups the name axis has (all its levels where it
    has none of them, as study 003's six names), at most `per_level` résumés a level."""
    known = _name_groups(catalog_dir)
    groups = [g for g in DEFAULT_VALIDITY.groups if g in known] or known or list(DEFAULT_VALIDITY.groups)
    return ValidityDesign(tuple(groups), min(DEFAULT_VALIDITY.per_level, per_level))


def load_fit_design(catalog_dir: CatalogDir = None) -> FitDesign:
    """``fit_design.yaml`` (a user catalog folder's copy first), validated against the
    catalog's occupations and job descriptions."""
    where = str(catalog_path(DESIGN_FILE, catalog_dir))
    data = load_yaml(DESIGN_FILE, catalog_dir)
    if not isinstance(data, dict):
        raise CatalogError(f"{where}: must be a mapping with `resumes` and `job_descriptions`, got {data!r}")
    unknown = sorted(set(map(str, data)) - {"resumes", "job_descriptions", "validity"})
    if unknown:
        raise CatalogError(f"{where}: unknown setting {unknown[0]!r} (settings: resumes, job_descriptions, validity)")
    for key in ("resumes", "job_descriptions"):
        if key not in data:
            raise CatalogError(f"{where}: missing setting `{key}`")
    occupation, levels, per_level = _resumes(where, data["resumes"], catalog_dir)
    jds, every = _job_descriptions(where, data["job_descriptions"], catalog_dir)
    validity = (
        _validity(where, data["validity"], per_level, catalog_dir)
        if "validity" in data
        else _default_validity(per_level, catalog_dir)
    )
    return FitDesign(occupation, levels, per_level, jds, every, validity)


def design_job_descriptions(catalog_dir: CatalogDir = None) -> list[str]:
    """The job description ids of the design: the jd partitions of ``fit_scores``."""
    return list(load_fit_design(catalog_dir).job_descriptions)
