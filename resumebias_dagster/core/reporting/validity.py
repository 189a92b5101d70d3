"""The report's first question: does the screener measure qualification at all? (issue 42)

Read off the validity verdicts (``core/jd_audit/validity_stats.py``): per model, its word
(``valid``, ``not shown valid``, ``no better than chance``), the share of better and worse twins
it ordered right with its interval and the target, and the name groups whose share differs
beyond noise. A model no better than chance carries a warning on every bias finding: a bias
test of a screener that scores noise finds nothing, or finds noise."""

from __future__ import annotations

import math

import pandas as pd

from resumebias_dagster.core.jd_audit.validity_stats import CRITERION, PREFIX, validity_summary

CHANCE_WARNING = "this model does not tell better from worse candidates; its bias figures describe noise"
WORDS = {
    "valid": "Valid: it tells the better candidate from the worse as often as the target asks.",
    "not shown valid": "Not shown valid: it tells better from worse more often than chance, or the study could not "
    "tell, but not shown as often as the target asks.",
    "no better than chance": "No better than chance: it does not tell the better candidate from the worse.",
}


def is_validity(findings: pd.Series) -> pd.Series:
    """Which rows of a verdicts table are validity findings (they answer another question than bias)."""
    return findings.astype(str).str.startswith(PREFIX)


def _share(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def _gap(row) -> str:
    if row["kind"] == "validity_gap":  # a difference of two shares
        return f"{row['estimate'] * 100:+.0f} percentage points (95% CI {row['ci_low'] * 100:+.0f} to {row['ci_high'] * 100:+.0f})"
    return f"{row['estimate']:+.2f} {row['unit']} (95% CI {row['ci_low']:+.2f} to {row['ci_high']:+.2f})"


def validity_sections(verdicts: pd.DataFrame) -> list[dict]:
    """Per model with a criterion-validity finding: its word, the sentence with its figures,
    and one line per name group whose share or equal-twin scoring differs beyond noise."""
    if not len(verdicts):
        return []
    rows = verdicts[is_validity(verdicts["finding"])]
    words = validity_summary(rows)
    out = []
    for model, word in words.items():
        mine = rows[rows["model"] == model].set_index("finding")
        c = mine.loc[[CRITERION]].iloc[0].to_dict()
        sentence = (
            f"It ordered {_share(c['estimate'])} of the better and worse twins right (95% CI {_share(c['ci_low'])} "
            f"to {_share(c['ci_high'])}; chance is 50%, the target {_share(c['margin'])}) over "
            f"{int(c['n_resumes'])} résumés."
        )
        gaps = mine[
            mine.index.str.contains(":group_gap:|:equal_gap:", regex=True) & (mine["verdict"] == "beyond_noise")
        ]
        out.append(
            {
                "model": model,
                "word": word,
                "headline": WORDS[word],
                "sentence": sentence,
                "groups": [f"{r['description']}: {_gap(r)}" for _, r in gaps.iterrows()],
                "warning": CHANCE_WARNING if word == "no better than chance" else "",
            }
        )
    return out


def chance_models(verdicts: pd.DataFrame) -> set[str]:
    """The models no better than chance: every bias finding of theirs carries ``CHANCE_WARNING``."""
    if not len(verdicts):
        return set()
    words = validity_summary(verdicts[is_validity(verdicts["finding"])])
    return {model for model, word in words.items() if word == "no better than chance"}
