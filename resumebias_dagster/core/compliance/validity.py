"""The validity figures the published summary and the EU AI Act record carry (issue 42): per
model and study, does the tool tell better from worse candidates?

Each study's criterion-validity finding of the verdict tables, as it stands there (nothing is
recomputed): the job-description audit's ``validity:criterion`` (kind ``criterion_validity``, of
``validity_verdicts``: the share of better and worse twins the model scores in the right order,
ties half; chance 1/2) and the seniority study's ``validity:accuracy`` (kind
``seniority_accuracy``, of ``seniority_verdicts``: the share of a résumé's texts labelled at
their true level; chance 1/3). Each comes with its 95% interval, the share at chance, the
declared target (the finding's margin, ``catalog/inference.yaml``), its verdict (``valid``,
``better than chance``, ``no better than chance``, ``worse than chance``, read from the
interval alone) and the résumés it counts, the unit of its interval.

Local Law 144 asks for impact ratios, not validity; the summary carries it because the ratios of
a tool no better than chance describe noise, however close to 1 they are. The EU AI Act asks
the accuracy levels and metrics of a high-risk system to be declared (Art. 15(3); Annex IV 2(g)
and 3): the record's ``accuracy`` items are these figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from resumebias_dagster.core.tables.compliance import NOT_MEASURED
from resumebias_dagster.core.tables.verdicts import CHANCE_KINDS, QUALIFICATION_FINDINGS

# Per study: the finding that answers "does it measure qualification?", and its kind.
FINDINGS: dict[str, tuple[str, str]] = QUALIFICATION_FINDINGS
TASKS = {"jd_audit": "fit scoring", "seniority": "seniority labelling"}
MEASURES = {
    "criterion_validity": "share of better and worse twins scored in the right order (ties half)",
    "seniority_accuracy": "share of a résumé's texts labelled at their true level",
}
FIGURE_COLUMNS = [
    "model",
    "study",
    "task",
    "finding",
    "measure",
    "share",
    "ci_low",
    "ci_high",
    "chance",
    "target",
    "verdict",
    "n_resumes",
]
LAW_NOTE = (
    "Local Law 144 asks for scoring or selection rates and impact ratios, not for validity. It is given here "
    "because the impact ratios of a tool no better than chance at telling a better candidate from a worse one "
    "describe noise, however close to 1 they are."
)
NOISE = "it does not tell better from worse candidates; its bias figures describe noise"


def validity_figures(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, study) with a criterion-validity finding in ``verdicts`` (a
    ``Verdicts`` table, or several concatenated): ``FIGURE_COLUMNS``, the finding's own figures."""
    if not len(verdicts):
        return pd.DataFrame(columns=FIGURE_COLUMNS)
    wanted = pd.Series(False, index=verdicts.index)
    for study, (finding, kind) in FINDINGS.items():
        wanted |= verdicts["study"].eq(study) & verdicts["finding"].eq(finding) & verdicts["kind"].eq(kind)
    rows = verdicts[wanted]
    out = pd.DataFrame(
        {
            "model": rows["model"].astype(str),
            "study": rows["study"].astype(str),
            "task": rows["study"].map(TASKS),
            "finding": rows["finding"],
            "measure": rows["kind"].map(MEASURES),
            "share": rows["estimate"].astype(float),
            "ci_low": rows["ci_low"].astype(float),
            "ci_high": rows["ci_high"].astype(float),
            "chance": rows["kind"].map(CHANCE_KINDS).astype(float),
            "target": rows["margin"].astype(float),
            "verdict": rows["verdict"].astype(str),
            "n_resumes": rows["n_resumes"].astype(int),
        }
    )
    return out.drop_duplicates(["model", "study"]).sort_values(["study", "model"], ignore_index=True)[FIGURE_COLUMNS]


def _figure(x: float) -> str:
    return f"{x:.3f}" if np.isfinite(x) else "n/a"


def figure_text(f: dict) -> str:
    """One figure in words: "0.917 of better and worse twins ..., 95% CI [0.861, 0.972], on 36 résumés;
    chance 0.500, declared target 0.900: valid"."""
    interval = (
        f"95% CI [{_figure(f['ci_low'])}, {_figure(f['ci_high'])}]"
        if np.isfinite(f["ci_low"]) and np.isfinite(f["ci_high"])
        else "no interval"
    )
    return (
        f"{f['task']}: {_figure(f['share'])} {f['measure']}, {interval}, on {f['n_resumes']} résumés; "
        f"chance {_figure(f['chance'])}, declared target {_figure(f['target'])}: {f['verdict']}"
    )


def reading(f: dict) -> str:
    """What the verdict means for the model's bias figures."""
    if not (np.isfinite(f["ci_low"]) and np.isfinite(f["ci_high"])):
        return "no interval on this design (too few résumés): not shown valid"
    if f["verdict"] == "valid":
        return "its whole 95% interval is at or above the declared target: shown valid on this design"
    if f["verdict"] == "better than chance":
        return "better than chance, but not shown to reach the declared target: not shown valid"
    return f"{f['verdict']}: {NOISE}"


def not_measured(study: str) -> str:
    finding, _ = FINDINGS.get(study, ("", ""))
    where = "validity_pairs, validity_scores and validity_verdicts" if study == "jd_audit" else "seniority_verdicts"
    return f"no {finding} finding for this model ({where} give it): its validity was not measured"


def summary_fields(figures: pd.DataFrame, model: str, study: str) -> dict:
    """The published summary's ``validity_*`` fields of one (model, study)."""
    found = figures[(figures["model"] == model) & (figures["study"] == study)] if len(figures) else figures
    if not len(found):
        finding, _ = FINDINGS.get(study, ("", ""))
        return {
            "validity_finding": finding,
            "validity_share": np.nan,
            "validity_ci_low": np.nan,
            "validity_ci_high": np.nan,
            "validity_chance": np.nan,
            "validity_target": np.nan,
            "validity_verdict": NOT_MEASURED,
            "validity_n_resumes": pd.NA,
            "validity_note": f"{not_measured(study)}. {LAW_NOTE}",
        }
    f = found.iloc[0].to_dict()
    return {
        "validity_finding": f["finding"],
        "validity_share": f["share"],
        "validity_ci_low": f["ci_low"],
        "validity_ci_high": f["ci_high"],
        "validity_chance": f["chance"],
        "validity_target": f["target"],
        "validity_verdict": f["verdict"],
        "validity_n_resumes": int(f["n_resumes"]),
        "validity_note": f"{figure_text(f)}; {reading(f)}. {LAW_NOTE}",
    }
