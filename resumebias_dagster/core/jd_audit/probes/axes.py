"""The axis catalog (catalog/probe_axes.yaml): axes, levels and the value each level writes, checked when read."""

from __future__ import annotations

import re
from typing import Any

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.jd_audit.probes.edits import _EDITS, _words
from resumebias_dagster.core.jd_audit.probes.terms import (
    ARMS,
    AXES_FILE,
    BASELINE,
    Axis,
    CatalogDir,
    ProbeAxes,
)

# --------------------------------------------------------------------------- axes

_AXIS_ID = re.compile(r"[a-z][A-Za-z0-9]*")
_LEVEL_ID = re.compile(r"[a-z0-9][a-z0-9_]*")


def _load_axis(axis_id: Any, spec: Any) -> Axis:
    if not isinstance(axis_id, str) or not _AXIS_ID.fullmatch(axis_id) or axis_id == BASELINE:
        raise ValueError(
            f"axis id {axis_id!r} must be camelCase letters and digits (no underscore: the variant name "
            "'<axis>_<level>' is split at its first underscore) and not 'baseline'"
        )
    if not isinstance(spec, dict):
        raise ValueError("must be a mapping with arm, edit and levels")
    if spec.get("arm") not in ARMS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {spec.get('arm')!r}")
    if spec.get("edit") not in _EDITS:
        raise ValueError(f"edit must be one of {sorted(_EDITS)}, got {spec.get('edit')!r}")
    levels = spec.get("levels")
    if not isinstance(levels, dict) or not levels:
        raise ValueError("needs a non-empty mapping `levels`")
    params = {k: v for k, v in spec.items() if k not in ("arm", "label", "edit", "levels")}
    axis = Axis(axis_id, spec["arm"], str(spec.get("label") or axis_id), spec["edit"], {}, params)
    check = _EDITS[spec["edit"]][1]
    for key, value in levels.items():
        level = str(key)
        if not _LEVEL_ID.fullmatch(level):
            raise ValueError(f"level {level!r} must use lower-case letters, digits and underscores")
        try:
            check(value, axis)
        except ValueError as exc:
            raise ValueError(f"level {level!r}: {exc}") from exc
        axis.levels[level] = value
    if "groups" in params:
        params["groups"] = _check_groups(params["groups"], axis)
    return axis


# Perceived sex of a name level; None: the name gives none (left out of the sex tables).
GROUP_SEXES = ("male", "female", None)


def _check_groups(groups: Any, axis: Axis) -> dict[str, dict[str, str | None]]:
    """``groups``: level -> {sex, race_ethnicity}, the perceived group of each name level
    (the impact-ratio tables, core/jd_audit/impact.py); every level once, nothing else."""
    if axis.edit != "person_name":
        raise ValueError("`groups` declares the perceived group of names: only a person_name axis has one")
    if not isinstance(groups, dict):
        raise ValueError(f"`groups` must map each level to {{sex, race_ethnicity}}, got {groups!r}")
    keys = {str(k) for k in groups}
    if keys != set(axis.levels):
        missing, extra = sorted(set(axis.levels) - keys), sorted(keys - set(axis.levels))
        raise ValueError(f"`groups` must list every level once: missing {missing}, not a level {extra}")
    out = {}
    for key, group in groups.items():
        level = str(key)
        if not isinstance(group, dict) or set(group) != {"sex", "race_ethnicity"}:
            raise ValueError(f"groups.{level} must be {{sex: ..., race_ethnicity: ...}}, got {group!r}")
        if group["sex"] not in GROUP_SEXES:
            raise ValueError(
                f"groups.{level}.sex must be male, female or null (no perceived sex), got {group['sex']!r}"
            )
        race = group["race_ethnicity"]
        if race is not None and (not isinstance(race, str) or not _LEVEL_ID.fullmatch(race)):
            raise ValueError(
                f"groups.{level}.race_ethnicity must be null or lower-case letters, digits and underscores, got {race!r}"
            )
        out[level] = {"sex": group["sex"], "race_ethnicity": race}
    return out


def load_probe_axes(catalog_dir: CatalogDir = None) -> ProbeAxes:
    """The axes of ``probe_axes.yaml`` (a user catalog folder's copy first), validated."""
    data = load_yaml(AXES_FILE, catalog_dir)
    if not isinstance(data, dict) or not isinstance(data.get("axes"), dict) or not data["axes"]:
        raise CatalogError(f"{AXES_FILE}: needs a non-empty mapping `axes`")
    interests = (data.get("baseline") or {}).get("interests") or ""
    if interests:
        try:
            _words(interests, "baseline.interests")
        except ValueError as exc:
            raise CatalogError(f"{AXES_FILE}: {exc}") from exc
    axes = []
    for axis_id, spec in data["axes"].items():
        try:
            axes.append(_load_axis(axis_id, spec))
        except ValueError as exc:
            raise CatalogError(f"{AXES_FILE}: axis {axis_id!r}: {exc}") from exc
    return ProbeAxes(interests, tuple(axes))


def axis_arms(catalog_dir: CatalogDir = None) -> dict[str, str]:
    """Axis id -> arm, from the catalog."""
    return load_probe_axes(catalog_dir).arms()
