"""The check of a validity pairs table: every set one baseline and one name of its group, every
twin the edit its row names, re-derived from the set's baseline and the job description's
requirements, and nothing else changed (the probes' one-signal and timeline checks)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from resumebias_dagster.core.common.diffing import tokens
from resumebias_dagster.core.jd_audit.job_descriptions import JobRequirements
from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
from resumebias_dagster.core.jd_audit.probes.terms import CatalogDir
from resumebias_dagster.core.jd_audit.validity.edits import YEARS_STEP
from resumebias_dagster.core.jd_audit.validity.pairs import (
    BASELINE,
    PAIR_COLUMNS,
    PROBLEM_COLUMNS,
    _twin,
    name_axis,
    twin_problems,
)
from resumebias_dagster.core.resumes.reader import read_resume


def _set_problems(rows: pd.DataFrame, group: str, names: object) -> list[str]:
    """What is wrong with a set as a whole (its baseline, its name)."""
    found = []
    if int((rows["role"] == BASELINE).sum()) != 1:
        found.append(f"{int((rows['role'] == BASELINE).sum())} baseline rows; expected exactly one")
    set_names = rows["name"].unique()
    if len(set_names) != 1:
        found.append(f"the set carries {len(set_names)} names; expected one")
    elif not isinstance(names, list) or set_names[0] not in names:
        found.append(f"the name {set_names[0]!r} is not one of group {group!r}'s names")
    else:
        wanted = set(tokens(set_names[0]))
        found += [
            f"{v}: the text does not carry the set's name"
            for v, t in zip(rows["variant"], rows["text"])
            if not wanted <= set(tokens(t))
        ]
    return found


def check_validity_pairs(
    pairs: pd.DataFrame,
    requirements: Mapping[str, JobRequirements],
    catalog_dir: CatalogDir = None,
    *,
    years: int = YEARS_STEP,
) -> pd.DataFrame:
    """One row per problem (``PROBLEM_COLUMNS``; empty: every twin changes its one signal). Each
    twin is made again from its set's baseline (``pairs._twin``): its text must be that twin's,
    and pass the one-signal and timeline checks."""
    missing = set(PAIR_COLUMNS) - set(pairs.columns)
    if missing:
        raise ValueError(f"check_validity_pairs: the pairs lack columns {sorted(missing)}")
    spec = load_probe_axes(catalog_dir)
    pools = name_axis(spec).levels
    problems: list[tuple] = []
    for key, rows in pairs.groupby(["jd", "resume_id", "group"], sort=False):
        jd, resume_id, group = (str(k) for k in key)
        problems += [(jd, resume_id, f"{group}:{BASELINE}", p) for p in _set_problems(rows, group, pools.get(group))]
        base = rows[rows["role"] == BASELINE]
        if len(base) != 1 or jd not in requirements:
            if jd not in requirements:
                problems.append((jd, resume_id, f"{group}:{BASELINE}", f"no job description {jd!r} in the catalog"))
            continue
        baseline = base["text"].iloc[0]
        layout = read_resume(baseline)
        for variant, role, edit, text in rows.loc[
            rows["role"] != BASELINE, ["variant", "role", "edit", "text"]
        ].itertuples(index=False):
            if variant != f"{group}:{role}:{edit}":
                problems.append((jd, resume_id, variant, f"the variant should be named {group}:{role}:{edit}"))
            try:
                twin = _twin(layout, role, edit, req=requirements[jd], spec=spec, years=years)
            except ValueError as exc:
                problems.append((jd, resume_id, variant, f"the edit does not apply to the baseline: {exc}"))
                continue
            if twin.signal.text != text:
                problems.append((jd, resume_id, variant, "the text is not the edit of the set's baseline"))
            problems += [(jd, resume_id, variant, p) for p in twin_problems(baseline, layout, twin, text, edit)]
    return pd.DataFrame(problems, columns=PROBLEM_COLUMNS)
