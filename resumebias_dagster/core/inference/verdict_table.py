"""The verdicts as a plain-text table: the one table every command prints them with
(``resumebias analyze``, ``analyze-fit``, ``analyze-rank`` and the summary of ``resumebias
run``), so a finding reads the same wherever it is printed (issue 41: three commands printed
three styles, one of them p-values as ``4.1e-31``).

One row per finding, in the verdicts table's order: model, finding, estimate, 95% interval,
adjusted p, detectable effect, verdict. Figures have three decimals (a ratio finding, the
impact ratios, as a ratio; criterion validity as a share; every other as a signed
difference); an adjusted p has three significant digits and reads ``< 0.0001`` below that, never in scientific notation. Under
the table, what the verdicts mean, then a line for each finding without an interval saying
why (``missing_interval_lines``)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from resumebias_dagster.core.inference.settings import CHANCE
from resumebias_dagster.core.inference.verdicts import missing_interval_lines

TITLE = "VERDICTS"
HEADER = ("model", "finding", "estimate", "95% interval", "adjusted p", "detectable", "verdict")
_NUMERIC = {"estimate", "95% interval", "adjusted p", "detectable"}  # right-aligned
LEGEND = (
    "beyond_noise: adjusted p at most alpha; equivalent: the 95% interval inside the margin of inference.yaml, "
    "with enough résumés to rule the effect out; within_noise, inconclusive: neither.",
    "detectable: the smallest effect the design finds with the power of inference.yaml. Impact ratios are "
    "ratios (1: no effect), the other findings differences.",
)
# Under a table with criterion validity findings (issue 42).
VALIDITY_LEGEND = (
    "criterion validity: the share of better / worse twins scored the right way (ties half); valid: the 95% "
    "interval at or above the target of inference.yaml; better / worse than chance: above / below 0.5; "
    "no better than chance: it contains 0.5."
)
ACCURACY_LEGEND = (
    "seniority accuracy: the share of a résumé's texts labelled at their true level; valid: the 95% interval at "
    "or above the target of inference.yaml; better / worse than chance: above / below 1/3; no better than "
    "chance: it contains 1/3."
)
SMALLEST_P = 0.0001
NO_INTERVAL = "none"


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _figure(value: Any, ratio: bool, signed: bool = True) -> str:
    x = _number(value)
    if x is None:
        return "n/a"
    if math.isinf(x):
        return NO_INTERVAL  # a detectable effect no test of this size reaches
    return f"{x:.3f}" if ratio or not signed else f"{x:+.3f}"


def format_p(value: Any) -> str:
    """An adjusted p as the table prints it: ``< 0.0001``, else three significant digits."""
    x = _number(value)
    if x is None:
        return "n/a"
    return f"< {SMALLEST_P:g}" if x < SMALLEST_P else f"{x:.3g}"


def verdict_rows(verdicts: pd.DataFrame) -> list[list[str]]:
    """The table's cells, one list per finding, in ``HEADER``'s order."""
    rows = []
    for r in verdicts.to_dict("records"):
        ratio = r.get("kind") == "impact_ratio" or r.get("kind") in CHANCE  # shown as they are, unsigned
        low, high = _number(r.get("ci_low")), _number(r.get("ci_high"))
        interval = NO_INTERVAL if low is None or high is None else f"{_figure(low, ratio)} to {_figure(high, ratio)}"
        rows.append(
            [
                str(r["model"]),
                str(r["finding"]),
                _figure(r.get("estimate"), ratio),
                interval,
                format_p(r.get("q")),
                _figure(r.get("mde"), ratio, signed=False),
                str(r["verdict"]),
            ]
        )
    return rows


def format_verdict_table(verdicts: pd.DataFrame, empty: str = "(no finding)") -> str:
    """The verdicts (a ``Verdicts`` table) as text ending in a newline: title, header, rule,
    rows, the legend and the missing-interval lines; ``empty`` under the title when there is
    no finding."""
    if not len(verdicts):
        return f"{TITLE}\n{empty}\n"
    rows = verdict_rows(verdicts)
    widths = [max(len(row[i]) for row in [list(HEADER), *rows]) for i in range(len(HEADER))]

    def line(cells) -> str:
        return "  ".join(c.rjust(w) if h in _NUMERIC else c.ljust(w) for c, w, h in zip(cells, widths, HEADER)).rstrip()

    lines = [TITLE, line(HEADER), "  ".join("-" * w for w in widths)]
    lines += [line(row) for row in rows]
    lines += list(LEGEND)
    if "kind" in verdicts and verdicts["kind"].eq("criterion_validity").any():
        lines.append(VALIDITY_LEGEND)
    if "kind" in verdicts and verdicts["kind"].eq("seniority_accuracy").any():
        lines.append(ACCURACY_LEGEND)
    lines += missing_interval_lines(verdicts)
    return "\n".join(lines) + "\n"
