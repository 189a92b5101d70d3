"""Calibration scenarios of the pairwise task's verdicts (issue 42; ``calibration.calibrate``
runs them) through ``pairwise_stats.pairwise_verdicts``, as the ``pairwise_verdicts`` asset calls
it: random choosers (the null: criterion validity 0.5), one that never says equal and one that
says equal a third of the time; one that always answers A (criterion at chance, position bias);
a chooser at 0.95, one exactly at the target (0.9: "valid" there is false); one group recognised
less often by the declared gap (0.1), names recurring; 5 résumés and one; a deterministic chooser
(temperature 0: the same choice every run).

Each design is simulated once per seed (``pairwise_simulation``); its scenarios pick the rows of
one verdict type, each with the true value of what it estimates, known exactly from the design.
A chooser that says equal at random has a true abstention above 0.5 (``equal + (1 - equal)^2 /
2``: 0.556 at a third), so its abstention is a planted scenario (coverage), not a null one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.pairwise_stats import PAIRWISE, pairwise_verdicts
from resumebias_dagster.testing.calibration import Scenario
from resumebias_dagster.testing.pairwise_simulation import simulate_choices, truths
from resumebias_dagster.testing.validity_simulation import GROUPS

LOWER = GROUPS[1]  # the group a chooser recognises the better candidate less often for
TWO = GROUPS[:2]
THIRD = 1 / 3
# name: the arguments of ``simulate_choices``.
DESIGNS: dict[str, dict[str, Any]] = {
    "random": {"resumes": 40, "runs": 5},
    "random_equal": {"resumes": 40, "runs": 5, "tie": THIRD, "equal": THIRD},
    "always_a": {"resumes": 40, "runs": 5, "always_a": True},
    "valid": {"resumes": 40, "runs": 5, "validity": 0.95, "tie": 0.04, "equal": 0.9},
    "at_target": {"resumes": 60, "runs": 5, "validity": 0.9, "tie": 0.1},
    "group_gap": {
        "resumes": 60,
        "runs": 1,
        "groups": GROUPS,
        "validity": {g: 0.85 if g == LOWER else 0.95 for g in GROUPS},
        "tie": 0.1,
        "equal": 0.5,
        "name_pool": 3,
    },
    "few": {"resumes": 5, "runs": 5},
    "one": {"resumes": 1, "jds": 6, "runs": 5},
    "sticky": {"resumes": 40, "runs": 5, "sticky": True},
}


def _truth(finding: str, truth: dict[str, dict[str, float]], reference: str) -> float:
    """The value over the population of résumés of one pairwise finding of a design."""
    crit, abst = truth["criterion"], truth["abstention"]
    kind, _, group = finding.removeprefix(PAIRWISE).partition(":")
    if kind == "position_a":
        return truth["position"][""]
    return {
        "criterion": float(np.mean(list(crit.values()))),
        "abstention": abst.get(group, np.nan) if group else float(np.mean(list(abst.values()))),
        "group": crit.get(group, np.nan),
        "group_gap": crit.get(group, np.nan) - crit[reference],
        "abstention_gap": abst.get(group, np.nan) - abst[reference],
    }[kind]


_STUDIES: dict[tuple[str, int, int], pd.DataFrame] = {}


def _design_study(name: str, seed: int, settings: InferenceSettings) -> pd.DataFrame:
    """One simulated study of a design (simulated once for all its scenarios): its verdicts
    with ``true`` and ``is_planted``."""
    key = (name, seed, id(settings))
    if key not in _STUDIES:
        kwargs = DESIGNS[name]
        choices = simulate_choices(seed, **kwargs)
        v = pairwise_verdicts(choices, settings)
        truth = truths(**{"groups": TWO, **kwargs})
        reference = str(choices["group"].iloc[0])
        v["true"] = [_truth(f, truth, reference) for f in v["finding"]]
        null = np.where(v["kind"] == "criterion_validity", 0.5, 0.0)
        v["is_planted"] = ~np.isclose(v["true"].to_numpy(float), null)
        _STUDIES[key] = v
    return _STUDIES[key]


def _pick(name: str, *prefixes: str, planted: bool | None = None) -> Callable[[int, InferenceSettings], pd.DataFrame]:
    """A scenario's study: the design's rows whose finding starts with one of ``prefixes``
    (and, given ``planted``, only the planted or only the null ones)."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        v = _design_study(name, seed, settings)
        v = v[v["finding"].str.startswith(prefixes)]
        return (v if planted is None else v[v["is_planted"] == planted]).copy()

    return study


CRITERION = (f"{PAIRWISE}criterion", f"{PAIRWISE}group:")
ABSTENTION = (f"{PAIRWISE}abstention",)  # overall, per group and the gaps
ABSTAIN = (f"{PAIRWISE}abstention:", f"{PAIRWISE}abstention_gap:")
ABSTAIN_ALL = f"{PAIRWISE}abstention"
GAP = (f"{PAIRWISE}group_gap:",)
POSITION = (f"{PAIRWISE}position_a",)


def _scenarios() -> list[Scenario]:
    s = Scenario
    return [
        s("pairwise: random chooser, never equal (40 x 5 runs): criterion", False, _pick("random", *CRITERION)),
        s("pairwise: the same: abstention (overall, per group, gap)", False, _pick("random", *ABSTENTION)),
        s("pairwise: the same: group gap / position", False, _pick("random", *GAP, *POSITION)),
        s("pairwise: random chooser, equal a third of the time: criterion", False, _pick("random_equal", *CRITERION)),
        s(
            "pairwise: the same: abstention (true 0.556) overall and per group",
            True,
            _pick("random_equal", ABSTAIN_ALL, planted=True),
        ),
        s(
            "pairwise: the same: abstention gap / group gap",
            False,
            _pick("random_equal", *ABSTAIN, *GAP, planted=False),
        ),
        s("pairwise: always A (40 x 5): criterion", False, _pick("always_a", *CRITERION)),
        s("pairwise: always A: position_a (true +0.5)", True, _pick("always_a", *POSITION)),
        s("pairwise: always A: abstention (true 1: split evenly)", True, _pick("always_a", ABSTAIN_ALL, planted=True)),
        s("pairwise: chooser at 0.95 (40 x 5): criterion", True, _pick("valid", *CRITERION)),
        s("pairwise: the same: abstention (true 0.905)", True, _pick("valid", ABSTAIN_ALL, planted=True)),
        s(
            "pairwise: chooser exactly at the target (0.90, 60 x 5): criterion",
            True,
            _pick("at_target", *CRITERION),
            at_margin=True,
        ),
        s(
            "pairwise: one group 0.85, three 0.95 (60 x 1 run, names recur): its gap, at the margin",
            True,
            _pick("group_gap", *GAP, planted=True),
            at_margin=True,
            declared=True,
        ),
        s(
            "pairwise: the same: the other groups' gaps, abstention gaps",
            False,
            _pick("group_gap", *GAP, f"{PAIRWISE}abstention_gap:", planted=False),
        ),
        s("pairwise: random chooser on 5 résumés: criterion", False, _pick("few", *CRITERION)),
        s("pairwise: random chooser on 5 résumés: abstention", False, _pick("few", *ABSTENTION)),
        s("pairwise: random chooser, one résumé x 6 JDs: criterion", False, _pick("one", *CRITERION)),
        s("pairwise: random chooser, one résumé x 6 JDs: abstention", False, _pick("one", ABSTAIN_ALL)),
        s(
            "pairwise: deterministic random chooser (same choice every run): criterion",
            False,
            _pick("sticky", *CRITERION),
        ),
        s("pairwise: the same: abstention", False, _pick("sticky", *ABSTENTION)),
        s("pairwise: the same: position", False, _pick("sticky", *POSITION)),
    ]


PAIRWISE_SCENARIOS = _scenarios()

__all__ = ["DESIGNS", "PAIRWISE_SCENARIOS"]
