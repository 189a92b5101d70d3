"""The "Since the last audit" lines of a tool's first screen (issue 44): read off the
``audit_changes`` table (core/history/changes.py), what changed beyond noise, what got worse
first (an effect that moved away from no effect), then one line for what stayed unchanged
within its margin and what the two audits could not decide."""

from __future__ import annotations

import pandas as pd

from resumebias_dagster.core.history.changes import RATIO_KINDS
from resumebias_dagster.core.reporting.wording import Words, number


def _worsening(rows: pd.DataFrame) -> pd.Series:
    """How much further from no effect each finding moved (an impact ratio: further below 1)."""
    ratio = rows["kind"] == "impact_ratio"
    base, new = rows["base_estimate"], rows["new_estimate"]
    return (new - 1).abs().where(ratio, new.abs()) - (base - 1).abs().where(ratio, base.abs())


def since_lines(changes: pd.DataFrame, words: Words, n_findings: int = 0) -> list[str]:
    """One model's lines: each changed finding, worse first, then the rest in one line, which
    says how many of this audit's ``n_findings`` findings ``audit_changes`` could not compare
    (not in the earlier audit, or without an interval in one of them), so a count is never
    read as covering them."""
    if not len(changes):
        return []
    rows = changes.assign(_worse=_worsening(changes))
    changed = rows[rows["verdict"] == "beyond_noise"].sort_values("_worse", ascending=False)
    lines = []
    for r in changed.to_dict("records"):
        unit, scale = words.unit(str(r["kind"]))
        f = 100.0 if unit == "percentage points" else 1.0
        name = words.finding(r)
        way = "worse" if float(r["_worse"]) > 0 else "better"
        base, new, diff, low, high = (
            float(r[c]) * f for c in ("base_estimate", "new_estimate", "estimate", "ci_low", "ci_high")
        )
        change = f"{number(diff)} times the earlier ratio" if r["kind"] in RATIO_KINDS else f"change {number(diff)}"
        to = " ".join(filter(None, (number(new), unit, scale)))
        lines.append(
            f"{name[:1].upper()}{name[1:]}: {way}, from {number(base)} to {to} "
            f"({change}, 95% interval {number(low)} to {number(high)})."
        )
    unchanged = int((rows["verdict"] == "equivalent").sum())
    undecided = len(rows) - len(changed) - unchanged
    base_id = str(rows["base_snapshot_id"].iloc[0])
    left = n_findings - len(rows)
    rest = (
        f" {left} of this audit's findings {'are' if left != 1 else 'is'} not compared (not in that audit, or "
        "without an interval in one of the two)."
        if left > 0
        else ""
    )
    lines.append(
        f"Against the audit {base_id}: {len(changed)} changed beyond noise, {unchanged} unchanged within their margin, "
        f"{undecided} not decided by these two audits.{rest}"
    )
    return lines
