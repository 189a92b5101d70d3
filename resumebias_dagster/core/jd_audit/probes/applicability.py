"""Which probe axes apply to which résumés: an axis whose field a résumé lacks is skipped for it, saying why.

``probe_variants`` stops at the first résumé an edit cannot change, which is right for the
generated résumés (all in one layout) but not for a user's files, where a résumé without a
city on its contact lines or without a graduation year is normal. ``probe_applicability``
tries every level of every axis on every résumé with the same functions ``probe_variants``
and ``check_probe_variants`` use, and says per (résumé, axis) whether the axis applies and,
if not, why: so an axis is skipped for a résumé with its reason in a table, never silently.

An axis applies to a résumé when every one of its levels (1) edits it (no error, a change;
a name swap that would leave a word of the résumé's own name behind is an error of
``replace_person``) and (2) passes ``check_probe_variants`` (one signal changed, the timeline
no worse). The reason is one line: the field the résumé lacks ("no school found in an
Education section (...)", ``edits.MissingField``), or the level that fails and why.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from resumebias_dagster.core.jd_audit.probes.edits import MissingField
from resumebias_dagster.core.jd_audit.probes.terms import BASELINE, VARIANT_COLUMNS, Axis, CatalogDir, ProbeAxes
from resumebias_dagster.core.jd_audit.probes.variants import (
    _name,
    _signal,
    _spec,
    check_probe_variants,
    with_baseline_additions,
)
from resumebias_dagster.core.resumes.fields import Layout
from resumebias_dagster.core.resumes.reader import read_resume

APPLICABILITY_COLUMNS = ["resume_id", "axis", "applies", "reason"]


def _why(exc: BaseException) -> str:
    """The edit's own message (``_name``/``_signal`` wrap it with the variant and résumé)."""
    cause = exc.__cause__ if isinstance(exc, ValueError) and exc.__cause__ is not None else exc
    return str(cause) if isinstance(cause, ValueError) else f"the edit failed ({type(cause).__name__}: {cause})"


def _axis_applies(axis: Axis, interests: str, layout: Layout, position: int, resume_id: Any) -> tuple[bool, str]:
    baseline = "\n".join(layout.lines)
    rows: list[tuple[Any, ...]] = [(resume_id, BASELINE, BASELINE, BASELINE, "", None, baseline)]
    for level in axis.levels:
        try:
            name = _name(axis, level, layout, position, resume_id)
            signal = _signal(axis, level, layout, resume_id, name)
        except Exception as exc:  # an edit meeting a layout it was not written for may raise anything
            if isinstance(exc.__cause__, MissingField):  # every level needs the field: name it once
                return False, str(exc.__cause__)
            return False, f"level {level!r}: {_why(exc)}"
        if signal is None:
            return (
                False,
                f"level {level!r} leaves the résumé unchanged (it already has that value, or lacks what the edit changes)",
            )
        rows.append((resume_id, f"{axis.id}_{level}", axis.arm, axis.id, level, name, signal.text))
    try:
        problems = check_probe_variants(pd.DataFrame(rows, columns=VARIANT_COLUMNS), ProbeAxes(interests, (axis,)))
    except Exception as exc:  # the check re-parses the variants, which may fail the same way
        return False, f"the variants cannot be checked: {_why(exc)}"
    if len(problems):
        first = problems.iloc[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return False, f"{first['variant']}: {first['problem']}{more}"
    return True, ""


def probe_applicability(
    rows: pd.DataFrame, axes: ProbeAxes | Iterable[str] | None = None, catalog_dir: CatalogDir = None
) -> pd.DataFrame:
    """One row per (résumé of ``rows``, axis): ``resume_id, axis, applies, reason``.

    ``rows`` needs ``resume_id`` and ``text`` (the user résumés of ``core/resumes/user_files``,
    or generated ones); ``axes`` as for ``probe_variants``. Each résumé is the arm's baseline
    (its text plus the catalog's INTERESTS line) at its position in ``rows`` (the position
    picks a name pool's entry). ``reason`` is "" where the axis applies, else the first level
    that fails and why (the field it lacks, where every level needs it).
    """
    missing = {"resume_id", "text"} - set(rows.columns)
    if missing:
        raise ValueError(f"probe_applicability: rows lack columns {sorted(missing)}")
    spec = _spec(axes, catalog_dir)
    out: list[tuple[Any, str, bool, str]] = []
    for position, (resume_id, text) in enumerate(zip(rows["resume_id"], rows["text"])):
        baseline = with_baseline_additions(str(text), spec.interests)
        layout = read_resume(baseline)
        out += [(resume_id, a.id, *_axis_applies(a, spec.interests, layout, position, resume_id)) for a in spec.axes]
    return pd.DataFrame(out, columns=APPLICABILITY_COLUMNS).astype({"applies": bool})


def applicable_rows(rows: pd.DataFrame, applicability: pd.DataFrame, axis: str) -> pd.DataFrame:
    """The rows of ``rows`` that ``axis`` applies to (what ``probe_variants`` can take for it)."""
    ok = applicability.loc[(applicability["axis"] == axis) & applicability["applies"], "resume_id"]
    return rows[rows["resume_id"].isin(set(ok))]


def skipped_probes(applicability: pd.DataFrame, axes: Iterable[str] | None = None) -> pd.DataFrame:
    """The (résumé, axis) pairs ``probe_variants(..., applicability=...)`` skips: the rows that do
    not apply (of ``axes`` only, when given), with ``resume_id, axis, reason``."""
    rows = applicability[~applicability["applies"].astype(bool)]
    if axes is not None:
        rows = rows[rows["axis"].isin(list(axes))]
    return rows[["resume_id", "axis", "reason"]].reset_index(drop=True)


def resumes_left_out(applicability: pd.DataFrame, axes: Iterable[str] | None = None) -> list[Any]:
    """The résumés no axis (of ``axes``, when given) applies to, in the table's order: with no
    variant to compare, ``probe_variants`` leaves them out, baseline included."""
    rows = applicability if axes is None else applicability[applicability["axis"].isin(list(axes))]
    applies = rows.groupby("resume_id", sort=False)["applies"].any()
    return applies[~applies].index.tolist()


def skip_reasons(skipped: pd.DataFrame) -> pd.DataFrame:
    """``skipped_probes``' rows counted by (axis, reason): ``axis, reason, resumes``, most common first."""
    counted = skipped.groupby(["axis", "reason"], sort=False).size().rename("resumes").reset_index()
    return counted.sort_values(["axis", "resumes"], ascending=[True, False], kind="stable").reset_index(drop=True)
