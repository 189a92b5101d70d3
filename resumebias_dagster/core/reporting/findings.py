"""Every finding of a model in words (the report's collapsed list below each tool's first
screen, ``overview.py``): what was found, what was ruled out and what the study could not
decide, each finding with its interval and, where undecided, the smallest effect the study
could have detected. Every sentence is read off the verdicts
tables (``core/inference/``); nothing here decides anything."""

from __future__ import annotations

import math

import pandas as pd

from resumebias_dagster.core.reporting.validity import CHANCE_WARNING, chance_models, is_validity
from resumebias_dagster.core.reporting.wording import Words, number, pvalue

# The three headings of a model's summary, and which verdicts go under each.
SECTIONS = {
    "found": ("beyond_noise",),
    "ruled_out": ("equivalent",),
    "undecided": ("within_noise", "inconclusive"),
}
SECTION_TITLES = {
    "found": "Found (beyond noise)",
    "ruled_out": "Ruled out (equivalent within the margin)",
    "undecided": "Not decided by this study",
}


def _num(x) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def _value(x: float | None, ratio: bool) -> str:
    if x is None:
        return "n/a"
    if math.isinf(x):
        return "none at this size"
    return f"{x:.2f}" if ratio else f"{x:+.3f}"


def finding_sentence(row, words: Words | None = None) -> str:
    """One finding in plain words (``words``' readable name, else its description): estimate,
    interval, adjusted p, and what decides its verdict."""
    ratio = row.kind == "impact_ratio"
    estimate, low, high, q = (_num(getattr(row, c)) for c in ("estimate", "ci_low", "ci_high", "q"))
    unit = "" if ratio else f" {row.unit}"
    name = row.description if words is None else words.finding(row)
    name = name if words is None else name[:1].upper() + name[1:]
    where = f"{name}: {_value(estimate, ratio)}{unit}"
    if low is not None and high is not None:
        where += f" (95% CI {_value(low, ratio)} to {_value(high, ratio)}"
        where += f"; adjusted p {pvalue(q)})" if q is not None else ")"
    margin = _num(row.margin)
    # Every verdict is decided against a margin, so a verdict row always carries one.
    assert margin is not None, f"{row.description}: verdict row without a margin"
    margin_text = f"{margin:g}" if ratio else f"±{margin:g}{unit}"
    if row.verdict == "beyond_noise":
        # Beyond noise, and its whole interval inside the margin: found, but smaller than what matters.
        small = low is not None and high is not None and (low >= margin if ratio else max(abs(low), abs(high)) < margin)
        return where + (f"; smaller than the margin of {margin_text}." if small else ".")
    if row.verdict == "equivalent":
        return where + f"; an effect beyond {margin_text} is ruled out."
    mde = _num(row.mde)
    if mde is None:
        reach = "it could not be tested" + (f" ({row.note})" if getattr(row, "note", "") else "")
    elif math.isinf(mde):
        reach = f"with {int(row.n_resumes)} résumés no randomisation test can reach the level, whatever the effect"
    elif ratio:
        reach = f"the smallest drop it could detect with 80% power is to a ratio of {mde:.2f}"
    else:
        reach = f"the smallest effect it could detect with 80% power is {number(mde, 3)}{unit}"
    note = str(getattr(row, "note", "") or "")
    if mde is not None and note:
        reach += f"; {note}"
    return where + f"; {reach} (margin {margin_text})."


def headline_findings(verdicts: pd.DataFrame, words: Words | None = None) -> dict[str, dict[str, list[str]]]:
    """Per model: ``{"found": [...], "ruled_out": [...], "undecided": [...]}``, sentences of its
    bias findings in the verdicts table's order (study, then finding). The validity findings
    answer another question (``core/reporting/validity.py``); a model no better than chance at a
    study's task has its warning on every sentence of that study."""
    out: dict[str, dict[str, list[str]]] = {}
    if not len(verdicts):
        return out
    noise = chance_models(verdicts)
    bias = verdicts[~is_validity(verdicts["finding"])]
    warn = f" Warning: {CHANCE_WARNING}."
    for model, rows in bias.groupby("model", sort=True):
        out[str(model)] = {
            section: [
                finding_sentence(r, words) + (warn if (str(model), str(r.study)) in noise else "")
                for r in rows[rows["verdict"].isin(kinds)].itertuples(index=False)
            ]
            for section, kinds in SECTIONS.items()
        }
    return out


def not_measured(bias_summary: pd.DataFrame, fit_summary: pd.DataFrame, judge_verdicts: pd.DataFrame) -> list[str]:
    """What this run did not measure, said plainly."""
    out = []
    if not len(bias_summary):
        out.append("No seniority predictions: the seniority study was not run.")
    if not len(fit_summary):
        out.append("No fit scores: the job-description audit was not run.")
    if not len(judge_verdicts):
        out.append(
            "No LLM judge ran (none configured under `judges:` in the models config): the models' "
            "written justifications were not read."
        )
    return out
