"""Calibration scenarios of the "changed since the last audit" verdicts (issue 44;
``calibration.calibrate`` runs them) through ``core/history/changes.audit_changes``, as the
``audit_changes`` asset calls it: two audits of one model by the fit audit's own verdicts
(``fit_verdicts``), each on its own sample of résumés (unpaired), or both on the same résumés
with their units (``fit_units``: the levels' and the group contrasts'), the model answering
afresh (paired).

* an unchanged LLM-like model (run noise, résumé-specific effects, each name its own quirk), on
  the default study's 9 résumés and on 40: nothing changed, so every "changed beyond noise" is
  false;
* an unchanged deterministic scorer with a fixed penalty on one level (zero spread), on 40
  résumés (too few to call anything unchanged) and on 300 (above the 264 "unchanged" needs);
* a name penalty that doubles (0.5 to 1 point on one name level) between the audits: planted;
  and one that grows by the declared effect, which is also the margin (0.5 to 0.75 points):
  the printed power checked against the share found, and "unchanged" there is false.

Impact ratios (the later ratio over the earlier) are in every scenario above; their own
scenarios report them alone: the LLM-like model's (true ratio of ratios 1 when unchanged), and a
deterministic scorer that ignores names but takes 2 points off a share of the résumés carrying
a Black woman's name (12 names a group, drawn per résumé, selected at a score of 7), unchanged
(40 and 300 résumés, shared and not), and with that share grown so that her group's impact ratio
falls by the declared factor (0.8: planted; the printed power of a sparse change is the sparse
rule's, conservative, so it is reported beside the share found but not held to it) or by the
margin's (0.9: "unchanged" there is false).

The seniority study's findings (``seniority_verdicts``, units from ``seniority_units``): two
audits of an unchanged LLM-like labeller (120 résumés, names from pools of 9 with their own
effects, 5 sampled runs), on other résumés and on the same ones answered afresh (paired), and of
an unchanged argmax classifier on the same 120 résumés.

The true change of every finding is known from the design: 0 (a ratio of 1), or the planted
difference.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from resumebias_dagster.core.history.changes import audit_changes
from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.verdicts import fit_units, fit_verdicts
from resumebias_dagster.core.seniority.verdicts import seniority_units, seniority_verdicts
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, PROBES, Scenario, _fit_scores
from resumebias_dagster.testing.screener_simulation import argmax_predictions, deterministic_fit_scores
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions

NAME = "firstName_black_female"
# A second audit draws its own résumés: another seed far from the first's.
LATER = 500_000


def _llm(resumes: int, doubled: bool, shared: bool = False, later: float = -1.0) -> Callable:
    """``doubled``: the name penalty moves from 0.5 points to ``-later`` between the audits."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        before = {NAME: -0.5} if doubled else {}
        after = {NAME: later} if doubled else {}
        groups = {"firstName": NAME_LEVELS}
        first = _fit_scores(seed, before, resumes=resumes)
        # Shared: the same résumés (and names) answered afresh; else other résumés.
        if shared:
            second = _fit_scores(seed, after, resumes=resumes, noise_seed=seed + LATER)
        else:
            second = _fit_scores(seed + LATER, after, resumes=resumes)
        base, new = (fit_verdicts(s, settings, groups, ARMS) for s in (first, second))
        units = {"base_units": fit_units(first, groups), "new_units": fit_units(second, groups)} if shared else {}
        v = audit_changes(base, new, settings, base_id="a", new_id="b", **units)
        planted = v["finding"] == f"fit_level:{NAME}"
        # A doubled name penalty also moves the group contrasts that hold that name: no truth kept for them.
        group = v["finding"].str.startswith("fit_group:race:black") | v["finding"].eq("fit_group:sex")
        true = np.where(planted & doubled, later + 0.5, np.where(group & doubled, np.nan, 0.0))
        # An unchanged model's impact ratios are alike in both audits (a ratio of 1); a doubled
        # penalty moves the highest group's rate too (the winner's curse): no truth kept.
        ratio = (v["kind"] == "impact_ratio").to_numpy()
        true = np.where(ratio, np.nan if doubled else 1.0, true)
        return v.assign(true=true, is_planted=planted & doubled)

    return study


def _deterministic(resumes: int, shared: bool = False) -> Callable:
    """A deterministic scorer, unchanged: one level takes a point off every résumé in both audits
    (``shared``: the same résumés, compared résumé by résumé)."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        variants = ("baseline", *PROBES, "placebo_p0", "placebo_p1")

        def audit(s: int) -> pd.DataFrame:
            scores = deterministic_fit_scores(
                s, resumes=resumes, jds=1, variants=variants, sparse={PROBES[0]: (1.0, -1.0)}
            )
            return scores

        first, second = audit(seed), audit(seed if shared else seed + LATER)
        base, new = (fit_verdicts(s, settings, arms=ARMS) for s in (first, second))
        units = {"base_units": fit_units(first), "new_units": fit_units(second)} if shared else {}
        v = audit_changes(base, new, settings, base_id="a", new_id="b", **units)
        return v.assign(true=0.0, is_planted=False)

    return study


def _ratios_only(study: Callable) -> Callable:
    """The impact-ratio rows of ``study``'s changes."""

    def only(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        v = study(seed, settings)
        return v[v["kind"] == "impact_ratio"]

    return only


# A deterministic scorer's selection (a score of 7 or more, scores drawn in 6 to 10 to the
# hundredth) without and with its 2-point penalty: P(score >= 7) and P(score >= 9).
SELECTED, PENALISED = 3.005 / 4.0, 1.005 / 4.0
BLACK_FEMALE = "firstName_black_female"


def _ratio_truth(share: float) -> dict[str, float]:
    """Each impact ratio over the population of résumés when a share of them lose 2 points
    under a Black woman's name (every other group is selected alike: the highest)."""
    her = SELECTED - (SELECTED - PENALISED) * share
    return {
        "intersection:black_female": her / SELECTED,
        "race_ethnicity:black": (SELECTED + her) / 2.0 / SELECTED,
        "sex:female": (3.0 * SELECTED + her) / 4.0 / SELECTED,
    }


def share_for(factor: float, before: float) -> float:
    """The share of résumés penalised that makes her group's impact ratio ``factor`` times what
    it was with ``before`` of them penalised."""
    target = factor * _ratio_truth(before)["intersection:black_female"]
    return (1.0 - target) * SELECTED / (SELECTED - PENALISED)


def _deterministic_names(resumes: int, before: float, after: float, shared: bool = True) -> Callable:
    """Impact-ratio changes of a deterministic scorer with the penalty on ``before`` of the
    résumés in the first audit and ``after`` in the second (the same résumés, the same names
    when ``shared``)."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        variants = ("baseline", *(f"firstName_{lv}" for lv in NAME_LEVELS))
        groups = {"firstName": NAME_LEVELS}

        def audit(share: float, s: int) -> pd.DataFrame:
            sparse = {BLACK_FEMALE: (share, -2.0)}
            return deterministic_fit_scores(s, resumes=resumes, variants=variants, sparse=sparse, names_per_level=12)

        first, second = audit(before, seed), audit(after, seed if shared else seed + LATER)
        base, new = (fit_verdicts(s, settings, groups, ARMS) for s in (first, second))
        units = {"base_units": fit_units(first, groups), "new_units": fit_units(second, groups)} if shared else {}
        v = audit_changes(base, new, settings, base_id="a", new_id="b", **units)
        v = v[v["kind"] == "impact_ratio"]
        was, now = _ratio_truth(before), _ratio_truth(after)
        key = v["finding"].str.split(":", n=2).str[2]
        true = key.map(lambda k: now.get(k, 1.0) / was.get(k, 1.0))
        planted = (key == "intersection:black_female") & (before != after)
        return v.assign(true=true.to_numpy(float), is_planted=planted.to_numpy(bool))

    return study


def _seniority(shared: bool, classifier: bool = False) -> Callable:
    """Every change finding of two audits of an unchanged seniority labeller (``shared``: the
    same résumés and names, with their units; ``classifier``: a deterministic argmax classifier)."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        if classifier:
            first = argmax_predictions(seed, flip_both=0.05)
            second = argmax_predictions(seed if shared else seed + LATER, flip_both=0.05)
        else:
            first = simulate_seniority_predictions(exact=False, name_sd=0.3, seed=seed, noise_seed=seed + 1)
            again = (seed, seed + LATER) if shared else (seed + LATER, seed + LATER + 1)
            second = simulate_seniority_predictions(exact=False, name_sd=0.3, seed=again[0], noise_seed=again[1])
        base, new = (seniority_verdicts(p, settings) for p in (first, second))
        units = {"base_units": seniority_units(first), "new_units": seniority_units(second)} if shared else {}
        v = audit_changes(base, new, settings, base_id="a", new_id="b", **units)
        return v.assign(true=np.where(v["kind"] == "impact_ratio", 1.0, 0.0), is_planted=False)

    return study


CHANGES_SCENARIOS = [
    Scenario("changes: unchanged LLM-like model, 9 résumés", False, _llm(9, False)),
    Scenario("changes: unchanged LLM-like model, 40 résumés", False, _llm(40, False)),
    Scenario("changes: unchanged deterministic scorer, 40 résumés", False, _deterministic(40)),
    Scenario("changes: unchanged deterministic scorer, 300 résumés", False, _deterministic(300)),
    Scenario("changes: name penalty doubled, 40 résumés", True, _llm(40, True)),
    Scenario("changes (paired): unchanged LLM-like model, 9 shared résumés", False, _llm(9, False, True)),
    Scenario("changes (paired): unchanged LLM-like model, 40 shared résumés", False, _llm(40, False, True)),
    Scenario("changes (paired): unchanged deterministic scorer, 40 shared résumés", False, _deterministic(40, True)),
    Scenario("changes (paired): unchanged deterministic scorer, 300 shared résumés", False, _deterministic(300, True)),
    Scenario("changes (paired): name penalty doubled, 40 shared résumés", True, _llm(40, True, True)),
    # Up by the declared effect and margin (0.25 points): printed power against the share found,
    # and "unchanged" there is a false "nothing changed".
    Scenario(
        "changes: name penalty up by the declared 0.25, 40 résumés",
        True,
        _llm(40, True, later=-0.75),
        at_margin=True,
        declared=True,
    ),
    Scenario(
        "changes (paired): name penalty up by the declared 0.25, 40 shared résumés",
        True,
        _llm(40, True, True, later=-0.75),
        at_margin=True,
        declared=True,
    ),
    # Impact ratios alone (the later ratio over the earlier).
    Scenario("changes: impact ratios, unchanged LLM-like model, 40 résumés", False, _ratios_only(_llm(40, False))),
    Scenario(
        "changes (shared résumés): impact ratios, unchanged LLM-like model, 40 résumés",
        False,
        _ratios_only(_llm(40, False, True)),
    ),
    Scenario(
        "changes: impact ratios, unchanged deterministic scorer, 300 résumés",
        False,
        _deterministic_names(300, 0.1, 0.1, shared=False),
    ),
    Scenario(
        "changes (paired): impact ratios, unchanged deterministic scorer, 40 shared résumés",
        False,
        _deterministic_names(40, 0.1, 0.1),
    ),
    Scenario(
        "changes (paired): impact ratios, unchanged deterministic scorer, 300 shared résumés",
        False,
        _deterministic_names(300, 0.1, 0.1),
    ),
    Scenario(
        "changes (paired): an impact ratio down by the declared factor 0.8, deterministic scorer, 80 shared résumés",
        True,
        _deterministic_names(80, 0.1, share_for(0.8, 0.1)),
    ),
    Scenario(
        "changes (paired): an impact ratio down by the margin's factor 0.9, deterministic scorer, 300 shared résumés",
        True,
        _deterministic_names(300, 0.1, share_for(0.9, 0.1)),
        at_margin=True,
    ),
    # The seniority study.
    Scenario("changes: seniority study, unchanged LLM-like labeller, 120 résumés", False, _seniority(False)),
    Scenario(
        "changes (paired): seniority study, unchanged LLM-like labeller, 120 shared résumés", False, _seniority(True)
    ),
    Scenario(
        "changes (paired): seniority study, unchanged argmax classifier, 120 shared résumés",
        False,
        _seniority(True, classifier=True),
    ),
]
