"""The ranking task's verdicts, for ``resumebias analyze-rank``: per model, job and group below
the group ranked first most often, the impact ratio of being ranked first as a finding of
``core/inference`` (``impact_ratio:ranked_first:<job>:<group>``, a family per job), with the
base résumé as the unit exactly as ``tables.selection_table``'s interval
(``core/fairness/impact.group_ratios``: one individual per résumé and group, its valid
rankings repeated measures). Rankings that give no ``resume`` id have no unit: their findings
keep the ratio, get no interval, and their note says what would give one.

Beside them, abstention on equals (``validity:ranking:abstention``, ``evenness.py``): how evenly
the ranker puts the equal candidates of one résumé first, against a name-blind ranker's even
split."""

from __future__ import annotations

import numpy as np
import pandas as pd

from resumebias_dagster.core.fairness.impact import group_ratios, ratio_findings
from resumebias_dagster.core.inference import InferenceSettings, finish
from resumebias_dagster.core.ranking.evenness import abstention_findings
from resumebias_dagster.core.ranking.tables import candidate_rows

STUDY = "ranking"
SELECTION = "ranked_first"
NOTE_NO_RESUME = (
    "the rankings give no `resume` id (the base résumé every candidate of a ranking is a copy of): "
    "give each line its `resume` for an interval"
)


def _ratios(d: pd.DataFrame, settings: InferenceSettings) -> pd.DataFrame:
    """``group_ratios`` of one (model, job)'s valid candidate rows ``d``."""
    known = d["resume"].notna().any()
    # Without résumé ids all rankings stand for one résumé: the ratio, and no interval.
    d = d[d["resume"].notna()] if known else d.assign(resume="")
    individuals = (
        d.groupby(["resume", "group"], sort=True).agg(value=("first", "mean"), name=("name", "first")).reset_index()
    )
    margin = settings.margins["impact_ratio"]
    t = group_ratios(individuals, individuals["value"].to_numpy(float), 1 - settings.alpha, margin)
    if not known:
        t["_why"] = np.where(t["_why"] != "", NOTE_NO_RESUME, "")
    return t


def ranking_verdicts(rows: pd.DataFrame, settings: InferenceSettings) -> pd.DataFrame:
    """The ``Verdicts`` of rankings (rows as ``rank_import.read_ranking_files`` gives them)."""
    c = candidate_rows(rows)
    valid = c[c["valid"]].assign(first=lambda x: (x["rank"] == 1).astype(float))
    frames = [
        _ratios(d, settings).assign(model=str(model), selection=SELECTION, dimension=str(job))
        for (model, job), d in valid.groupby(["model", "jd"], sort=True)
    ]
    t = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return finish([*ratio_findings(t, STUDY, settings), abstention_findings(c, settings)], settings)
