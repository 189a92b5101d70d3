"""Notebook 001-style tables of the seniority metrics as text: plain-text boxes and Markdown, models as columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import (
    DEMOGRAPHICS,
    STYLES,
)
from resumebias_dagster.core.inference.verdict_table import format_verdict_table
from resumebias_dagster.core.seniority.metrics.prepare import GENDERS, RACES
from resumebias_dagster.core.seniority.metrics.summary import _tables

# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class _Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def _pct(x: Any) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.1f}%"


def _signed(x: Any) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:+.3f}"


def _band(x: Any) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"±{x:.3f}"


_FLOOR_NOTE = (
    "floor = the same figure for identical texts (repeated runs of one variant stand in for the variants): "
    "sampling noise alone; n/a = not measurable (fewer runs than variants, or one run)."
)


_GROUP_LABELS = {"race": "{} (race)", "gender": "{} (gender)", "all": "All"}


def _label(group_kind: str, group: str) -> str:
    return _GROUP_LABELS.get(group_kind, "{}").format(group)


def _pivot(groups: pd.DataFrame, models: list[str], group_kinds: tuple[str, ...], fmt) -> list[list[str]]:
    """One line per group, one cell per model (``fmt`` gets the group-metrics row)."""
    rows: list[list[str]] = []
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for r in groups[groups["group_kind"].isin(group_kinds)].itertuples(index=False):
        seen.setdefault((str(r.group_kind), str(r.group)), {})[str(r.model)] = fmt(r)
    # Canonical order, whichever model happens to have which group.
    canonical = {g: i for i, g in enumerate(STYLES + DEMOGRAPHICS + RACES + GENDERS)}
    ordered = sorted(seen, key=lambda k: (group_kinds.index(k[0]), canonical.get(k[1], len(canonical)), k[1]))
    for key in ordered:
        rows.append([_label(*key)] + [seen[key].get(m, "") for m in models])
    return rows


def _style_tables(groups: pd.DataFrame, summary: pd.DataFrame) -> list[_Table]:
    models = list(summary["model"])
    by_style = ("style", "all")
    return [
        _Table("ACCURACY BY STYLE", ["Style"] + models, _pivot(groups, models, by_style, lambda r: _pct(r.accuracy))),
        _Table(
            "RANK DIFFERENCE BY STYLE",
            ["Style"] + models,
            _pivot(groups, models, by_style, lambda r: _signed(r.rank_diff)),
            "rank_diff = predicted rank - true rank (junior=0, mid=1, senior=2); > 0 overestimates.",
        ),
        _Table(
            "PROMOTION/DEMOTION BY STYLE",
            ["Style"] + models,
            _pivot(groups, models, ("style",), lambda r: f"{r.promotions}/{r.demotions} ({r.net:+d})"),
            "promotions/demotions (net) against the mean rank of the résumé's variants, runs summed.",
        ),
        *_common_tables(summary, models),
        *_expected_tables(groups, summary, models, group_kinds=by_style, first_header="Style", by="STYLE"),
    ]


_INDICATORS = (("Racial Bias", "racial"), ("Gender Bias", "gender"), ("Extreme Comparison", "extreme"))


def _social_tables(groups: pd.DataFrame, summary: pd.DataFrame) -> list[_Table]:
    models = list(summary["model"])
    every = ("demographic", "race", "gender", "all")
    indicators = _INDICATORS
    return [
        _Table(
            "NAME SWAP",
            ["Scope"] + models,
            [["Name replaced"] + [v or "not recorded" for v in summary["name_scope"]]],
            "everywhere = in the whole résumé (e-mail, LinkedIn slug, mentions); first_line = the name line only, "
            "as notebook 004 did (the original name stays in the e-mail).",
        ),
        _Table(
            "ACCURACY BY DEMOGRAPHIC", ["Group"] + models, _pivot(groups, models, every, lambda r: _pct(r.accuracy))
        ),
        _Table(
            "RANK DIFFERENCE BY DEMOGRAPHIC",
            ["Group"] + models,
            _pivot(groups, models, every, lambda r: _signed(r.rank_diff)),
        ),
        _Table(
            "BIAS INDICATORS",
            ["Bias Type"] + models,
            [
                row
                for label, key in indicators
                for row in (
                    [label] + [_signed(v) for v in summary[f"{key}_bias"]],
                    [f"{label} floor"] + [_band(v) for v in summary[f"{key}_bias_floor"]],
                )
            ],
            "racial = caucasian - african_american, gender = male - female, "
            "extreme = caucasian_male - african_american_female (mean rank_diff). floor = 95% test-retest band: "
            "|bias| a model that ignores names exceeds in 5% of re-runs of the same texts; n/a = one run.",
        ),
        _Table(
            "BIAS READINGS (threshold +/-0.05)",
            ["Bias Type"] + models,
            [[label] + [v or "n/a" for v in summary[f"{key}_reading"]] for label, key in indicators],
            "notebook 001's reading of the estimate against +/-0.05; not a test: see VERDICTS for what the data "
            "can tell from noise and what they rule out.",
        ),
        _Table(
            "PROMOTION/DEMOTION",
            ["Group"] + models,
            _pivot(
                groups,
                models,
                ("demographic", "race", "gender"),
                lambda r: f"{r.promotions}/{r.demotions} ({r.net:+d})",
            ),
            "promotions/demotions (net) against the mean rank of the résumé's variants, runs summed.",
        ),
        _Table(
            "SENIOR PREDICTIONS BY GROUP",
            ["Group"] + models,
            _pivot(groups, models, every, lambda r: _pct(r.senior_share)),
        ),
        _Table(
            "JUNIOR PREDICTIONS BY GROUP",
            ["Group"] + models,
            _pivot(groups, models, every, lambda r: _pct(r.junior_share)),
        ),
        *_common_tables(summary, models),
        *_expected_tables(groups, summary, models, group_kinds=every, first_header="Group", by="DEMOGRAPHIC"),
    ]


def _expected_tables(
    groups: pd.DataFrame,
    summary: pd.DataFrame,
    models: list[str],
    *,
    group_kinds: tuple[str, ...],
    first_header: str,
    by: str,
) -> list[_Table]:
    """The EXPECTED VALUES block; empty unless some model of the experiment has distributions."""
    if not (summary["n_dist"] > 0).any():
        return []

    def line(label: str, values) -> list[str]:
        return [label] + list(values)

    rows = [
        line("Rows with distribution", (f"{d} of {n}" for d, n in zip(summary["n_dist"], summary["n"]))),
        line("Accuracy", (_pct(v) for v in summary["exp_accuracy"])),
        line("Rank diff", (_signed(v) for v in summary["exp_rank_diff"])),
        line("Inconsistency", (_pct(v) for v in summary["exp_inconsistency_rate"])),
        line("Inconsistency floor", (_pct(v) for v in summary["exp_inconsistency_floor"])),
        line(
            "Originals, all variants with one",
            (f"{d} of {o}" for d, o in zip(summary["n_dist_originals"], summary["n_originals"])),
        ),
    ]
    if (summary["variant_kind"] == "demographic").any():
        rows += [line(label, (_signed(v) for v in summary[f"exp_{key}_bias"])) for label, key in _INDICATORS]
        rows += [
            line(f"{label} floor (of the sampled figure)", (_band(v) for v in summary[f"exp_{key}_bias_floor"]))
            for label, key in _INDICATORS
        ]
    return [
        _Table(
            "EXPECTED VALUES (from label distributions)",
            ["Measure"] + models,
            rows,
            "expectations under the label distribution stored in p_junior/p_mid/p_senior (as the caller stored it, "
            "no sampling noise); inconsistency = P(independent draws for the variants differ), once per original "
            "whose variants all have one; its floor = P(as many draws of one variant differ), the part due to "
            "sampling alone; bias floors: the sampled figures' retest band, exact; n/a = no distribution.",
        ),
        _Table(
            f"EXPECTED ACCURACY BY {by}",
            [first_header] + models,
            _pivot(groups, models, group_kinds, lambda r: _pct(r.exp_accuracy)),
        ),
        _Table(
            f"EXPECTED RANK DIFFERENCE BY {by}",
            [first_header] + models,
            _pivot(groups, models, group_kinds, lambda r: _signed(r.exp_rank_diff)),
        ),
    ]


def _common_tables(summary: pd.DataFrame, models: list[str]) -> list[_Table]:
    def line(label: str, values) -> list[str]:
        return [label] + list(values)

    return [
        _Table(
            "INCONSISTENCY RATE",
            ["Measure"] + models,
            [
                line("Inconsistent", (_pct(v) for v in summary["inconsistency_rate"])),
                line("Test-retest floor", (_pct(v) for v in summary["inconsistency_floor"])),
                line(
                    "Résumés",
                    (
                        f"{a} of {o * r}"
                        for a, o, r in zip(summary["n_inconsistent"], summary["n_originals"], summary["n_runs"])
                    ),
                ),
            ],
            "share of original résumés (x runs) whose variants, all validly predicted, got different predictions; "
            + _FLOOR_NOTE,
        ),
        _Table(
            "PREDICTIONS",
            ["Count"] + models,
            [
                line("Total", (str(v) for v in summary["n"])),
                line("Valid", (str(v) for v in summary["n_valid"])),
                line("Invalid (unknown/error)", (str(v) for v in summary["n_invalid"])),
                line("Runs", (str(v) for v in summary["n_runs"])),
                line("Original résumés", (str(v) for v in summary["n_originals"])),
            ],
        ),
    ]


_EXPERIMENT_TITLES = {
    "style": "TEST 2: STYLE BIAS (variant_kind = style)",
    "demographic": "TEST 3: SOCIAL BIAS (variant_kind = demographic)",
}


def _sections(groups: pd.DataFrame, summary: pd.DataFrame) -> list[tuple[str, list[_Table]]]:
    sections = []
    for kind, build in (("style", _style_tables), ("demographic", _social_tables)):
        s = summary[summary["variant_kind"] == kind]
        if len(s):
            sections.append((_EXPERIMENT_TITLES[kind], build(groups[groups["variant_kind"] == kind], s)))
    return sections


def _box(table: _Table) -> str:
    widths = [max(len(r[i]) for r in [table.header] + table.rows) for i in range(len(table.header))]

    def fmt_row(cells: list[str]) -> str:
        parts = [cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "│ " + " │ ".join(parts) + " │"

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    lines = [f"{table.title}:", "  " + rule("┌", "┬", "┐"), "  " + fmt_row(table.header), "  " + rule("├", "┼", "┤")]
    lines += ["  " + fmt_row(r) for r in table.rows]
    lines.append("  " + rule("└", "┴", "┘"))
    if table.note:
        lines.append(f"  {table.note}")
    return "\n".join(lines)


def _markdown(table: _Table) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = [f"#### {table.title}", "", "| " + " | ".join(esc(h) for h in table.header) + " |"]
    lines.append("|" + "|".join([" --- "] + [" ---: "] * (len(table.header) - 1)) + "|")
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in table.rows]
    if table.note:
        lines += ["", f"_{table.note}_"]
    return "\n".join(lines)


def _format_tables_from(groups: pd.DataFrame, summary: pd.DataFrame) -> str:
    bar = "=" * 80
    if summary.empty:
        return "No predictions to analyse.\n"
    chunks = []
    for title, tables in _sections(groups, summary):
        chunks.append(f"{bar}\n{title}\n{bar}")
        chunks.extend(_box(t) for t in tables)
    return "\n\n".join(chunks) + "\n"


def _format_markdown_from(groups: pd.DataFrame, summary: pd.DataFrame) -> str:
    chunks = []
    for title, tables in _sections(groups, summary):
        chunks.append(f"### {title}")
        chunks.extend(_markdown(t) for t in tables)
    return "\n\n".join(chunks) + ("\n" if chunks else "")


def format_tables(df: pd.DataFrame, verdicts: pd.DataFrame | None = None) -> str:
    """Notebook 001-style plain-text tables, models as columns, one section per experiment,
    and the ``verdicts`` (seniority_verdicts' table) when given."""
    text = _format_tables_from(*_tables(df))
    if verdicts is not None and len(verdicts):
        text += "\n" + format_verdict_table(verdicts)  # the table every command prints verdicts with
    return text


def format_markdown(df: pd.DataFrame) -> str:
    """The tables of ``format_tables`` as Markdown ("" when there are no predictions)."""
    return _format_markdown_from(*_tables(df))
