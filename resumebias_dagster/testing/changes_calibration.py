"""Calibration scenarios of the "changed since the last audit" verdicts (issue 44;
``calibration.calibrate`` runs them) through ``core/history/changes.audit_changes``, as the
``audit_changes`` asset calls it: two audits of one model, each on its own sample of résumés
(unpaired), by the fit audit's own verdicts (``fit_verdicts``).

* an unchanged LLM-like model (run noise, résumé-specific effects, each name its own quirk), on
  the default study's 9 résumés and on 40: nothing changed, so every "changed beyond noise" is
  false;
* an unchanged deterministic scorer with a fixed penalty on one level (zero spread), on 40
  résumés (too few to call anything unchanged) and on 300 (above the 264 "unchanged" needs);
* a name penalty that doubles (0.5 to 1 point on one name level) between the audits: planted.

The true change of every finding is known from the design: 0, or the planted difference.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from resumebias_dagster.core.history.changes import audit_changes
from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, PROBES, Scenario, _fit_scores
from resumebias_dagster.testing.screener_simulation import deterministic_fit_scores

NAME = "firstName_black_female"
# A second audit draws its own résumés: another seed far from the first's.
LATER = 500_000


def _llm(resumes: int, doubled: bool) -> Callable:
    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        before = {NAME: -0.5} if doubled else {}
        after = {NAME: -1.0} if doubled else {}
        groups = {"firstName": NAME_LEVELS}
        base = fit_verdicts(_fit_scores(seed, before, resumes=resumes), settings, groups, ARMS)
        new = fit_verdicts(_fit_scores(seed + LATER, after, resumes=resumes), settings, groups, ARMS)
        v = audit_changes(base, new, settings, base_id="a", new_id="b")
        planted = v["finding"] == f"fit_level:{NAME}"
        # A doubled name penalty also moves the group contrasts that hold that name: no truth kept for them.
        group = v["finding"].str.startswith("fit_group:race:black") | v["finding"].eq("fit_group:sex")
        true = np.where(planted & doubled, -0.5, np.where(group & doubled, np.nan, 0.0))
        return v.assign(true=true, is_planted=planted & doubled)

    return study


def _deterministic(resumes: int) -> Callable:
    """A deterministic scorer, unchanged: one level takes a point off every résumé in both audits."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        variants = ("baseline", *PROBES, "placebo_p0", "placebo_p1")

        def audit(s: int) -> pd.DataFrame:
            scores = deterministic_fit_scores(
                s, resumes=resumes, jds=1, variants=variants, sparse={PROBES[0]: (1.0, -1.0)}
            )
            return fit_verdicts(scores, settings, arms=ARMS)

        v = audit_changes(audit(seed), audit(seed + LATER), settings, base_id="a", new_id="b")
        return v.assign(true=0.0, is_planted=False)

    return study


CHANGES_SCENARIOS = [
    Scenario("changes: unchanged LLM-like model, 9 résumés", False, _llm(9, False)),
    Scenario("changes: unchanged LLM-like model, 40 résumés", False, _llm(40, False)),
    Scenario("changes: unchanged deterministic scorer, 40 résumés", False, _deterministic(40)),
    Scenario("changes: unchanged deterministic scorer, 300 résumés", False, _deterministic(300)),
    Scenario("changes: name penalty doubled, 40 résumés", True, _llm(40, True)),
]
