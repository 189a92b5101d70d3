"""The fit audit's design (``catalog/fit_design.yaml``): which base résumés are probed and
which job descriptions score them, checked when read.

::

    resumes: {occupation: software_engineer, levels: [junior, mid, senior], per_level: 3}
    job_descriptions: [staff-software-engineer]     # ids of job_descriptions/, or the word all

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

CatalogDir = str | os.PathLike | None


@dataclass(frozen=True)
class FitDesign:
    occupation: str
    levels: tuple[str, ...]
    per_level: int
    job_descriptions: tuple[str, ...]  # the ids, in the job-description table's order (by id)
    all_job_descriptions: bool  # the file said `all`

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


def load_fit_design(catalog_dir: CatalogDir = None) -> FitDesign:
    """``fit_design.yaml`` (a user catalog folder's copy first), validated against the
    catalog's occupations and job descriptions."""
    where = str(catalog_path(DESIGN_FILE, catalog_dir))
    data = load_yaml(DESIGN_FILE, catalog_dir)
    if not isinstance(data, dict):
        raise CatalogError(f"{where}: must be a mapping with `resumes` and `job_descriptions`, got {data!r}")
    unknown = sorted(set(map(str, data)) - {"resumes", "job_descriptions"})
    if unknown:
        raise CatalogError(f"{where}: unknown setting {unknown[0]!r} (settings: resumes, job_descriptions)")
    for key in ("resumes", "job_descriptions"):
        if key not in data:
            raise CatalogError(f"{where}: missing setting `{key}`")
    occupation, levels, per_level = _resumes(where, data["resumes"], catalog_dir)
    jds, every = _job_descriptions(where, data["job_descriptions"], catalog_dir)
    return FitDesign(occupation, levels, per_level, jds, every)


def design_job_descriptions(catalog_dir: CatalogDir = None) -> list[str]:
    """The job description ids of the design: the jd partitions of ``fit_scores``."""
    return list(load_fit_design(catalog_dir).job_descriptions)
