"""The validity pairs table: per (job description, base résumé, name group) a baseline and its
twins, and the check that each twin changes its one signal.

A set's baseline is the probes' baseline (the base text plus the probe catalog's INTERESTS line)
with the résumé's own name replaced by a name of the group (the name probe's edit, the pool entry
the résumé's position gives), so every text of the set carries that name. Each twin is one edit
of that baseline (``edits``): better or worse by the job description's requirements, or equal.
A twin is kept only if the probes' one-signal check finds nothing else changed and its timeline
has no problem the baseline lacks; an edit the résumé cannot take, or one that fails the checks,
is a row of the skipped table with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from resumebias_dagster.core.jd_audit.job_descriptions import JobRequirements
from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
from resumebias_dagster.core.jd_audit.probes.edits import _EDITS, pool_name
from resumebias_dagster.core.jd_audit.probes.terms import Axis, CatalogDir, ProbeAxes
from resumebias_dagster.core.jd_audit.probes.variants import verify_single_signal, with_baseline_additions
from resumebias_dagster.core.jd_audit.validity.edits import (
    YEARS_STEP,
    NotApplicable,
    Twin,
    add_certification,
    add_skill,
    add_years,
    change_degree,
    remove_certification,
    remove_skill,
    remove_years,
    reorder_skills,
)
from resumebias_dagster.core.resumes.fields import Layout
from resumebias_dagster.core.resumes.reader import read_resume
from resumebias_dagster.core.resumes.timeline import timeline_issues
from resumebias_dagster.core.tables import ValidityPairs, columns

ARM = "validity"
BASELINE = "baseline"
PAIR_COLUMNS = columns(ValidityPairs)
SKIPPED_COLUMNS = ["jd", "resume_id", "group", "role", "edit", "reason"]
PROBLEM_COLUMNS = ["jd", "resume_id", "variant", "problem"]
# The job-relevant twins, each (role, edit); then the equal ones: reorder, and the placebo.
JOB_EDITS = (
    ("better", "skill"),
    ("worse", "skill"),
    ("better", "years"),
    ("worse", "years"),
    ("better", "degree"),
    ("worse", "degree"),
    ("better", "certification"),
    ("worse", "certification"),
)
REORDER = "reorder"


def name_axis(spec: ProbeAxes) -> Axis:
    """The probe catalog's name axis (its first person_name axis): its levels are the groups."""
    axis = next((a for a in spec.axes if a.edit == "person_name"), None)
    if axis is None:
        raise ValueError("validity pairs: the probe catalog has no person_name axis to take the groups' names from")
    return axis


def placebo_level(spec: ProbeAxes, op: str | None = None) -> tuple[Axis, str] | None:
    """The placebo axis and the level the equal placebo twin takes: the first level (of ``op``)."""
    for axis in spec.axes:
        if axis.edit == "placebo":
            for level, value in axis.levels.items():
                if op is None or value["op"] == op:
                    return axis, level
    return None


def _twin(layout: Layout, role: str, edit: str, *, req: JobRequirements, spec: ProbeAxes, years: int) -> Twin:
    """The twin (role, edit) of a set's baseline; ``NotApplicable`` or ``MissingField`` says why none."""
    if edit == "skill":
        return add_skill(layout, req) if role == "better" else remove_skill(layout, req)
    if edit == "years":
        return add_years(layout, req, years) if role == "better" else remove_years(layout, req, years)
    if edit == "degree":
        return change_degree(layout, req, up=role == "better")
    if edit == "certification":
        return add_certification(layout, req) if role == "better" else remove_certification(layout, req)
    if edit == REORDER:
        return reorder_skills(layout, req)
    found = placebo_level(spec, edit)
    if found is None:
        raise NotApplicable(f"no placebo level of op {edit!r} in the probe catalog")
    axis, level = found
    signal = _EDITS["placebo"][0](layout, axis.levels[level], axis)
    if signal is None:
        raise NotApplicable(f"the placebo level {level!r} leaves the résumé unchanged")
    return Twin(signal, f"placebo: {level.replace('_', ' ')} ({axis.id} of the probe catalog)")


def twin_problems(baseline: str, layout: Layout, twin: Twin, text: str, edit: str) -> list[str]:
    """What the twin changes beyond its signal: the probes' token and line check, timeline
    problems the baseline lacks, and (but for the years edit) a change of total experience."""
    s = twin.signal
    found = verify_single_signal(baseline, text, s.removed, s.added, changeable_lines=s.changed, may_insert=s.inserts)
    before = {issue.key for issue in timeline_issues(baseline)}
    found += [f"timeline: {i.message}" for i in timeline_issues(text) if i.key not in before]
    after = read_resume(text)
    if edit != "years" and after.career() and after.experience_months() != layout.experience_months():
        found.append(
            f"total experience changed from {layout.experience_months()} to {after.experience_months()} months"
        )
    return found


def _named(layout: Layout, axis: Axis, group: str, position: int) -> tuple[str, str]:
    """The group's name for the résumé at ``position``, and the baseline text carrying it."""
    name = pool_name(axis.levels[group], position, layout)
    signal = _EDITS["person_name"][0](layout, name, axis)
    if signal is None:
        raise ValueError(f"the résumé already carries the name {name!r}")
    return name, signal.text


def _edits(spec: ProbeAxes) -> list[tuple[str, str]]:
    placebo = placebo_level(spec)
    equal = [("equal", REORDER)] + ([("equal", placebo[0].levels[placebo[1]]["op"])] if placebo else [])
    return [*JOB_EDITS, *equal]


def _set_rows(
    key: tuple[str, Any, str, str], baseline: str, *, req: JobRequirements, spec: ProbeAxes, years: int
) -> tuple[list[tuple], list[tuple]]:
    """The rows of one set (``key``: its jd, résumé, group and name; empty when no twin is kept)
    and its skipped edits."""
    jd, resume_id, group, name = key
    layout = read_resume(baseline)
    rows = [(jd, resume_id, group, name, f"{group}:{BASELINE}", BASELINE, BASELINE, "", baseline)]
    skipped = []
    for role, edit in _edits(spec):
        try:
            twin = _twin(layout, role, edit, req=req, spec=spec, years=years)
        except ValueError as exc:  # NotApplicable, MissingField
            skipped.append((jd, resume_id, group, role, edit, str(exc)))
            continue
        problems = twin_problems(baseline, layout, twin, twin.signal.text, edit)
        if problems:
            skipped.append((jd, resume_id, group, role, edit, "dropped, not one signal: " + "; ".join(problems)))
            continue
        rows.append((jd, resume_id, group, name, f"{group}:{role}:{edit}", role, edit, twin.detail, twin.signal.text))
    if len(rows) == 1:
        skipped.append((jd, resume_id, group, BASELINE, BASELINE, "no twin: the set is left out"))
        return [], skipped
    return rows, skipped


def validity_pairs(
    base: pd.DataFrame,
    requirements: Mapping[str, JobRequirements],
    groups: Iterable[str],
    catalog_dir: CatalogDir = None,
    *,
    years: int = YEARS_STEP,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs table (``ValidityPairs`` columns) of every résumé of ``base`` (``resume_id``,
    ``text``) for each job description of ``requirements`` and each name group, and the skipped
    table (``SKIPPED_COLUMNS``: per job description, résumé, group and (role, edit), why no twin)."""
    missing = {"resume_id", "text"} - set(base.columns)
    if missing:
        raise ValueError(f"validity_pairs: base lacks columns {sorted(missing)}")
    spec = load_probe_axes(catalog_dir)
    axis = name_axis(spec)
    groups = list(groups)
    unknown = [g for g in groups if g not in axis.levels]
    if unknown:
        raise ValueError(
            f"validity_pairs: {unknown[0]!r} is not a level of the name axis {axis.id!r}: {list(axis.levels)}"
        )
    rows: list[tuple] = []
    skipped: list[tuple] = []
    for position, (resume_id, text) in enumerate(zip(base["resume_id"], base["text"])):
        original = read_resume(with_baseline_additions(text, spec.interests))
        for group in groups:
            try:
                name, baseline = _named(original, axis, group, position)
            except ValueError as exc:  # no name to replace, or every pool name shares a word with it
                skipped += [
                    (jd, resume_id, group, BASELINE, BASELINE, f"cannot carry the group's name: {exc}")
                    for jd in requirements
                ]
                continue
            for jd, req in requirements.items():
                set_rows, set_skipped = _set_rows(
                    (jd, resume_id, group, name), baseline, req=req, spec=spec, years=years
                )
                rows += set_rows
                skipped += set_skipped
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS[: PAIR_COLUMNS.index("text") + 1])
    pairs["resume_id"] = pairs["resume_id"].astype(str)
    pairs = pairs.assign(arm=ARM, axis=pairs["edit"], level=pairs["role"])[PAIR_COLUMNS]
    return pairs, pd.DataFrame(skipped, columns=SKIPPED_COLUMNS)


def skip_summary(skipped: pd.DataFrame, groups: Iterable[str]) -> pd.DataFrame:
    """The skipped table with one row per (job description, résumé, role, edit, reason), its
    groups joined ("all" where every group has it): the reasons seldom depend on the name."""
    every = ", ".join(groups)
    if not len(skipped):
        return pd.DataFrame(columns=SKIPPED_COLUMNS)
    out = (
        skipped.groupby(["jd", "resume_id", "role", "edit", "reason"], sort=False)["group"]
        .agg(lambda g: ", ".join(g))
        .reset_index()
    )
    out["group"] = out["group"].where(out["group"] != every, "all")
    return out[SKIPPED_COLUMNS]
