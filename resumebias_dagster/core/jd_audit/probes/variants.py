"""Probe variants of the base résumés, and the check that each changes its one signal and nothing else."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from typing import Any

import pandas as pd

from resumebias_dagster.core.common.diffing import tokens, unexplained_changes
from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
from resumebias_dagster.core.jd_audit.probes.edits import _EDITS, pool_name
from resumebias_dagster.core.jd_audit.probes.terms import (
    AXES_FILE,
    BASELINE,
    PROBLEM_COLUMNS,
    VARIANT_COLUMNS,
    Axis,
    CatalogDir,
    ProbeAxes,
    Signal,
)
from resumebias_dagster.core.resumes.fields import Layout
from resumebias_dagster.core.resumes.layout import INTERESTS
from resumebias_dagster.core.resumes.reader import read_resume
from resumebias_dagster.core.resumes.timeline import timeline_issues

# --------------------------------------------------------------------------- public


def with_baseline_additions(text: str, interests: str) -> str:
    """The arm's baseline: ``text`` plus an INTERESTS section when ``interests`` is set."""
    if not interests:
        return text
    return f"{text.rstrip()}\n\n{INTERESTS}\n{interests}\n"


def _spec(axes: ProbeAxes | Iterable[str] | None, catalog_dir: CatalogDir) -> ProbeAxes:
    if isinstance(axes, ProbeAxes):
        return axes
    spec = load_probe_axes(catalog_dir)
    if isinstance(axes, str):
        axes = [axes]
    return spec if axes is None else spec.select(axes)


def _name(axis: Axis, level: str, layout: Layout, position: int, resume_id: Any) -> str | None:
    """The name a person_name level writes into the résumé at ``position`` of the arm (None
    for any other edit)."""
    if axis.edit != "person_name":
        return None
    try:
        return pool_name(axis.levels[level], position, layout)
    except ValueError as exc:
        raise ValueError(f"probe variant {axis.id}_{level} of résumé {resume_id}: {exc}") from exc


def _signal(axis: Axis, level: str, layout: Layout, resume_id: Any, name: str | None = None) -> Signal | None:
    """The level applied to the résumé; a person_name level writes ``name`` (one of its pool)."""
    value = name if axis.edit == "person_name" else axis.levels[level]
    try:
        signal = _EDITS[axis.edit][0](layout, value, axis)
    except ValueError as exc:
        raise ValueError(f"probe variant {axis.id}_{level} of résumé {resume_id}: {exc}") from exc
    if signal is not None and signal.lines == layout.lines:
        return None
    return signal


# The default arm of the audit (the ``probe_variants`` asset's config): the base résumés of
# catalog/fit_design.yaml (of $RESUMEBIAS_CATALOG_DIR when set), read when this module loads.
DEFAULT_ARM = load_fit_design().arm()


def select_probe_resumes(
    base: pd.DataFrame,
    occupation: str = DEFAULT_ARM["occupation"],
    levels: Iterable[str] = DEFAULT_ARM["levels"],
    per_level: int = DEFAULT_ARM["per_level"],
) -> pd.DataFrame:
    """The base résumés of the arm: the first ``per_level`` of ``occupation`` at each of ``levels``."""
    chosen = base[base["occupation"] == occupation]
    return chosen[chosen["seniority"].isin(list(levels))].groupby("seniority", sort=False).head(per_level)


def applying_axes(
    resume_ids: Iterable[Any], applicability: pd.DataFrame, spec: ProbeAxes, *, caller: str = "probe_variants"
) -> dict[Any, set[str]]:
    """Résumé -> the axes of ``spec`` that ``applicability`` (``probe_applicability``'s table:
    ``resume_id, axis, applies``) says apply to it.

    Every (résumé, axis of ``spec``) needs a row: a missing one (the table was computed for
    other résumés or another probe_axes.yaml) is a ``ValueError``, as no row must not read as
    "does not apply".
    """
    missing_columns = {"resume_id", "axis", "applies"} - set(applicability.columns)
    if missing_columns:
        raise ValueError(f"{caller}: the applicability table lacks columns {sorted(missing_columns)}")
    table = {
        (r, a): bool(ok)
        for r, a, ok in zip(applicability["resume_id"], applicability["axis"], applicability["applies"])
    }
    ids = list(resume_ids)
    gaps = [(r, a.id) for r in ids for a in spec.axes if (r, a.id) not in table]
    if gaps:
        more = f" (and {len(gaps) - 3} more)" if len(gaps) > 3 else ""
        raise ValueError(
            f"{caller}: the applicability table has no row for (résumé, axis) {gaps[:3]}{more}: it was computed for "
            "other résumés or another probe_axes.yaml; compute it again (probe_applicability)"
        )
    return {r: {a.id for a in spec.axes if table[(r, a.id)]} for r in ids}


def probe_variants(
    base: pd.DataFrame,
    axes: ProbeAxes | Iterable[str] | None = None,
    catalog_dir: CatalogDir = None,
    *,
    applicability: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The baseline and one variant per (axis, level) of every résumé of ``base``.

    ``base`` needs ``resume_id`` and ``text`` (read by ``core/resumes/reader.read_resume``).
    ``axes``: None for every catalog axis, a list of axis ids for some, or a loaded
    ``ProbeAxes``. Columns ``resume_id, variant, arm, axis, level, name, text``; the baseline
    row has variant, arm and axis ``baseline`` and an empty level. ``name`` is the "First Last"
    a person_name variant writes (null otherwise): from a pool, the résumé at position k of
    ``base`` gets entry k modulo the pool's size. A level that would leave a résumé unchanged
    stops the arm, and so does an edit that cannot find its field (without ``applicability``).

    ``applicability`` (``probe_applicability``'s table for the résumés of ``base``, in the same
    order, such as the user's résumés): each résumé gets variants of the axes that apply to it
    only, and a résumé no axis applies to is left out (not even a baseline: the audit compares
    variants with their baseline). What is skipped is the table's rows with ``applies`` false
    (``applicability.skipped_probes``); none is skipped silently.
    """
    missing = {"resume_id", "text"} - set(base.columns)
    if missing:
        raise ValueError(f"probe_variants: base lacks columns {sorted(missing)}")
    spec = _spec(axes, catalog_dir)
    applying = None if applicability is None else applying_axes(base["resume_id"], applicability, spec)
    rows: list[tuple[Any, str, str, str, str, str | None, str]] = []
    for position, (resume_id, text) in enumerate(zip(base["resume_id"], base["text"])):
        chosen = spec.axes if applying is None else tuple(a for a in spec.axes if a.id in applying[resume_id])
        if not chosen:
            continue
        baseline = with_baseline_additions(text, spec.interests)
        layout = read_resume(baseline)
        rows.append((resume_id, BASELINE, BASELINE, BASELINE, "", None, baseline))
        for axis in chosen:
            for level in axis.levels:
                name = _name(axis, level, layout, position, resume_id)
                signal = _signal(axis, level, layout, resume_id, name)
                if signal is None:
                    # A missing level would silently drop an axis from the arm's statistics.
                    raise ValueError(
                        f"probe_variants: axis {axis.id!r} level {level!r} leaves résumé {resume_id} unchanged "
                        "(it already has that value, or lacks what the edit changes); probe another résumé "
                        f"or remove the level from {AXES_FILE}"
                    )
                rows.append((resume_id, f"{axis.id}_{level}", axis.arm, axis.id, level, name, signal.text))
    return pd.DataFrame(rows, columns=VARIANT_COLUMNS)


def verify_single_signal(
    baseline_text: str,
    variant_text: str,
    allowed_tokens_removed: Collection[str],
    allowed_tokens_added: Collection[str],
    *,
    changeable_lines: Collection[int] | None = None,
    may_insert: bool = True,
) -> list[str]:
    """Problems with a variant that should change one signal (empty list: none).

    Tokens (``core.common.diffing``) removed or added outside the allowed sets are reported; with
    ``changeable_lines`` (0-based baseline line numbers) so is any other baseline line that
    changed, and with ``may_insert=False`` any added line. An unchanged variant is a problem.
    """
    if variant_text == baseline_text:
        return ["the variant is identical to the baseline"]
    problems = []
    allowed_removed = {t for v in allowed_tokens_removed for t in tokens(v)}
    allowed_added = {t for v in allowed_tokens_added for t in tokens(v)}
    stray = unexplained_changes(baseline_text, variant_text, allowed_removed, allowed_added)
    if stray:
        problems.append(f"tokens changed outside the signal: {sorted(set(stray))[:10]}")
    if changeable_lines is None and may_insert:
        return problems
    a, b = baseline_text.split("\n"), variant_text.split("\n")
    allowed_lines = None if changeable_lines is None else set(changeable_lines)
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if allowed_lines is not None:
            problems += [
                f"line {i + 1} changed outside the signal: {a[i]!r}" for i in range(a0, a1) if i not in allowed_lines
            ]
        if b1 - b0 > a1 - a0 and not may_insert:
            problems.append(f"lines added: {b[b0 + (a1 - a0) : b1]!r}")
    return problems


def check_probe_variants(
    variants: pd.DataFrame,
    axes: ProbeAxes | Iterable[str] | None = None,
    catalog_dir: CatalogDir = None,
    *,
    applicability: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per problem found in ``probe_variants`` output (empty frame: every variant is clean).

    For each variant the allowed change is re-derived from its baseline row and its axis
    level (old and new values of the signal, the lines holding them) and the texts are
    diffed with ``verify_single_signal``; a person_name variant is re-derived from the name it
    records, which must be one of its level's names (only name variants record one).
    Columns ``resume_id, variant, problem``.

    ``applicability`` (``probe_applicability``'s table, as given to ``probe_variants``): an
    axis it says does not apply to a résumé is not expected for it, and a variant of such an
    axis is a problem. A résumé without rows in the table is expected to have every axis.
    """
    missing = set(VARIANT_COLUMNS) - set(variants.columns)
    if missing:
        raise ValueError(f"check_probe_variants: variants lack columns {sorted(missing)}")
    spec = _spec(axes, catalog_dir)
    by_id = {a.id: a for a in spec.axes}
    not_applying = _not_applying(applicability)
    problems = []
    for resume_id, rows in variants.groupby("resume_id", sort=False):
        baselines = rows.loc[rows["variant"] == BASELINE, "text"]
        if len(baselines) != 1:
            problems.append((resume_id, BASELINE, f"{len(baselines)} baseline rows; expected exactly one"))
            continue
        baseline = baselines.iloc[0]
        if rows.loc[rows["variant"] == BASELINE, "name"].notna().any():
            problems.append((resume_id, BASELINE, "the baseline records a name; only name variants do"))
        layout = read_resume(baseline)
        base_timeline = {issue.key for issue in timeline_issues(baseline)}
        skipped = not_applying.get(resume_id, {})
        configured = {f"{a.id}_{level}" for a in spec.axes if a.id not in skipped for level in a.levels}
        present = set(rows["variant"]) - {BASELINE}
        problems += [
            (resume_id, variant, "configured in the probe axes but missing for this résumé")
            for variant in sorted(configured - present)
        ]
        problems += [
            (resume_id, variant, f"the applicability table says axis {axis!r} does not apply ({skipped[axis]})")
            for variant, axis in rows[["variant", "axis"]].itertuples(index=False)
            if axis in skipped
        ]
        others = rows.loc[rows["variant"] != BASELINE, ["variant", "axis", "level", "name", "text"]]
        for variant, axis_id, level, name, text in others.itertuples(index=False):
            axis = by_id.get(axis_id)
            if axis is None or level not in axis.levels or variant != f"{axis_id}_{level}":
                problems.append((resume_id, variant, f"no level {level!r} of axis {axis_id!r} in the probe axes"))
                continue
            name = None if pd.isna(name) else str(name)
            name_problem = _name_problem(axis, level, name)
            if name_problem:
                problems.append((resume_id, variant, name_problem))
                continue
            try:
                signal = _signal(axis, level, layout, resume_id, name)
            except ValueError as exc:
                problems.append((resume_id, variant, str(exc)))
                continue
            if signal is None:
                problems.append((resume_id, variant, "this level does not apply to the résumé, yet a variant exists"))
                continue
            for problem in verify_single_signal(
                baseline, text, signal.removed, signal.added, changeable_lines=signal.changed, may_insert=signal.inserts
            ):
                problems.append((resume_id, variant, problem))
            problems += [(resume_id, variant, p) for p in _consistency_problems(layout, base_timeline, text, axis)]
    return pd.DataFrame(problems, columns=PROBLEM_COLUMNS)


def _not_applying(applicability: pd.DataFrame | None) -> dict[Any, dict[str, str]]:
    """Résumé -> {axis: reason} of the axes the table says do not apply to it."""
    if applicability is None:
        return {}
    missing = {"resume_id", "axis", "applies", "reason"} - set(applicability.columns)
    if missing:
        raise ValueError(f"check_probe_variants: the applicability table lacks columns {sorted(missing)}")
    out: dict[Any, dict[str, str]] = {}
    for resume_id, axis, reason in applicability.loc[
        ~applicability["applies"].astype(bool), ["resume_id", "axis", "reason"]
    ].itertuples(index=False):
        out.setdefault(resume_id, {})[axis] = str(reason)
    return out


def _name_problem(axis: Axis, level: str, name: str | None) -> str | None:
    """What is wrong with the name a variant records, if anything."""
    if axis.edit != "person_name":
        return None if name is None else f"records the name {name!r}, but only name variants carry one"
    if name is None:
        return "a name variant without its name (the `name` column)"
    value = axis.levels[level]
    if name not in (value if isinstance(value, list) else [value]):
        return f"the name {name!r} is not one of level {level!r}'s names"
    return None


def _consistency_problems(layout: Layout, base_timeline: set[tuple[object, ...]], text: str, axis: Axis) -> list[str]:
    """Timeline problems the variant adds to its baseline's, and a change of total experience
    by an axis that does not declare experience part of its signal. Problems are compared by
    their key (``TimelineIssue``: kind, positions, dates), not their message, which names the
    employers a variant may rename."""
    found = [f"timeline: {i.message}" for i in timeline_issues(text) if i.key not in base_timeline]
    variant = read_resume(text)
    # A variant without dated positions (the anonymisation of dates) has no timeline to compare.
    if variant.career() and not axis.params.get("changes_experience"):
        before, after = layout.experience_months(), variant.experience_months()
        if before != after:
            found.append(f"total experience changed from {before} to {after} months")
    return found
