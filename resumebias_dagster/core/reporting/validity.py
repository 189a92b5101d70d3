"""The report's first question: does the screener measure qualification at all? (issue 42)

Read off the validity verdicts, per model and task: the fit task's criterion validity (the share
of better and worse twins it ordered right, ``core/jd_audit/validity_stats.py``) and the seniority
task's accuracy (the share of texts labelled at their true level, ``core/seniority/validity.py``),
each with its word (``valid``, ``not shown valid``, ``no better than chance``), its interval, chance
and the target, and the name groups whose share differs beyond noise. A model no better than chance
at a task carries a warning on every bias finding of that task's study: a bias test of a screener
that scores noise finds nothing, or finds noise."""

from __future__ import annotations

import math

import pandas as pd

from resumebias_dagster.core.inference.verdicts import qualification_word
from resumebias_dagster.core.jd_audit.validity_stats import PREFIX
from resumebias_dagster.core.seniority.validity import RANK_DIFFERENCE
from resumebias_dagster.core.tables.verdicts import QUALIFICATION_FINDINGS

CHANCE_WARNING = "this model does not tell better from worse candidates; its bias figures describe noise"
WORDS = {
    "valid": "Valid: it tells the better candidate from the worse as often as the target asks.",
    "not shown valid": "Not shown valid: it tells better from worse more often than chance, or the study could not "
    "tell, but not shown as often as the target asks.",
    "no better than chance": "No better than chance: it does not tell the better candidate from the worse.",
}
SENIORITY_WORDS = {
    "valid": "Valid: it reads the résumés' true seniority as often as the target asks.",
    "not shown valid": "Not shown valid: it reads seniority more often than chance, or the study could not tell, "
    "but not shown as often as the target asks.",
    "no better than chance": "No better than chance: its seniority labels do not follow the résumés' true levels.",
}
# Per study: the finding that answers the question, the task's name and its headlines.
HEADLINE = {
    "jd_audit": (QUALIFICATION_FINDINGS["jd_audit"][0], "Fit scores (job-description audit)", WORDS),
    "seniority": (QUALIFICATION_FINDINGS["seniority"][0], "Seniority labels", SENIORITY_WORDS),
}
GAPS = (":group_gap:", ":equal_gap:", ":accuracy_gap:")


def is_validity(findings: pd.Series) -> pd.Series:
    """Which rows of a verdicts table are validity findings (they answer another question than bias)."""
    return findings.astype(str).str.startswith(PREFIX)


def _share(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def _gap(row) -> str:
    if row["kind"] == "validity_gap":  # a difference of two shares
        return f"{row['estimate'] * 100:+.0f} percentage points (95% CI {row['ci_low'] * 100:+.0f} to {row['ci_high'] * 100:+.0f})"
    return f"{row['estimate']:+.2f} {row['unit']} (95% CI {row['ci_low']:+.2f} to {row['ci_high']:+.2f})"


def task_words(verdicts: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Per (model, study) with its headline finding, the report's word."""
    out = {}
    for study, (finding, _, _) in HEADLINE.items():
        rows = verdicts[(verdicts["finding"] == finding) & (verdicts["study"] == study)]
        for r in rows.to_dict("records"):
            out[(str(r["model"]), study)] = qualification_word(r["verdict"], r["ci_low"])
    return out


def _sentence(study: str, c: dict, mine: pd.DataFrame) -> str:
    if study == "jd_audit":
        return (
            f"It ordered {_share(c['estimate'])} of the better and worse twins right (95% CI {_share(c['ci_low'])} "
            f"to {_share(c['ci_high'])}; chance is 50%, the target {_share(c['margin'])}) over "
            f"{int(c['n_resumes'])} résumés."
        )
    sentence = (
        f"It labelled {_share(c['estimate'])} of the texts at their true level (95% CI {_share(c['ci_low'])} to "
        f"{_share(c['ci_high'])}; chance is 33%, the target {_share(c['margin'])}) over {int(c['n_resumes'])} résumés."
    )
    rank = mine[mine["finding"] == RANK_DIFFERENCE]
    if len(rank) and pd.notna(rank["ci_low"].iloc[0]):
        r = rank.iloc[0]
        where = {"beyond_noise": "beyond noise", "equivalent": "ruled out beyond the margin"}.get(
            r["verdict"], "undecided"
        )
        sentence += (
            f" On average it rates people {r['estimate']:+.2f} levels from their true level (95% CI "
            f"{r['ci_low']:+.2f} to {r['ci_high']:+.2f}; {where})."
        )
    return sentence


def validity_sections(verdicts: pd.DataFrame) -> list[dict]:
    """Per model with a headline validity finding: one entry per task (its word, headline,
    sentence with the figures, and one line per name group whose share or equal-twin scoring
    differs beyond noise), and the warning where it is no better than chance at a task."""
    if not len(verdicts):
        return []
    rows = verdicts[is_validity(verdicts["finding"])]
    words = task_words(rows)
    out: dict[str, dict] = {}
    for (model, study), word in sorted(words.items(), key=lambda kv: (kv[0][0], kv[0][1] != "jd_audit")):
        finding, task, headlines = HEADLINE[study]
        mine = rows[(rows["model"] == model) & (rows["study"] == study)]
        c = mine[mine["finding"] == finding].iloc[0].to_dict()
        gaps = mine[mine["finding"].str.contains("|".join(GAPS), regex=True) & (mine["verdict"] == "beyond_noise")]
        entry = out.setdefault(model, {"model": model, "tasks": [], "warning": ""})
        entry["tasks"].append(
            {
                "task": task,
                "word": word,
                "headline": headlines[word],
                "sentence": _sentence(study, c, mine),
                "groups": [f"{r['description']}: {_gap(r)}" for _, r in gaps.iterrows()],
            }
        )
        if word == "no better than chance":
            entry["warning"] = CHANCE_WARNING
    return list(out.values())


def chance_models(verdicts: pd.DataFrame) -> set[tuple[str, str]]:
    """The (model, study) pairs no better than chance: every bias finding of that model in that
    study carries ``CHANCE_WARNING``."""
    if not len(verdicts):
        return set()
    words = task_words(verdicts[is_validity(verdicts["finding"])])
    return {key for key, word in words.items() if word == "no better than chance"}
