"""Calibration scenarios of the validity verdicts (issue 42; ``calibration.calibrate`` runs them):
random scorers (the null: true criterion validity 0.5), sampled like an LLM, deterministic with
no ties, half ties or nothing but ties, on 5 résumés and on one; valid scorers, one exactly at
the target (a false "valid" there); a scorer less valid for one name group by the declared gap,
with names that recur on several résumés; equal twins moved for one group.

Each design is simulated once per seed (``validity_simulation``) and run through
``validity_verdicts``; its scenarios pick the rows of one verdict type, each with the true value
of what it estimates, known exactly from the design.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts
from resumebias_dagster.testing.calibration import Scenario
from resumebias_dagster.testing.validity_simulation import (
    GROUPS,
    delta_for,
    deterministic_validity,
    noisy_truth,
    noisy_validity,
)

LOWER = GROUPS[1]  # the group a scorer recognises the better twin less often for
TWO = GROUPS[:2]
SD, RUNS = 1.0, 5
# name: (simulator, its arguments, criterion validity per group, equal twins' shift per group).
DESIGNS: dict[str, tuple[Callable, dict[str, Any], Mapping[str, float], Mapping[str, float]]] = {
    "llm_random": (noisy_validity, {"resumes": 40, "jds": 2, "runs": RUNS, "sd": SD}, {}, {}),
    "random": (deterministic_validity, {"resumes": 40, "validity": 0.5}, {}, {}),
    "half_ties": (deterministic_validity, {"resumes": 40, "validity": 0.5, "tie": 0.5}, {}, {}),
    "all_ties": (deterministic_validity, {"resumes": 40, "validity": 0.5, "tie": 1.0}, {}, {}),
    "few": (deterministic_validity, {"resumes": 5, "validity": 0.5}, {}, {}),
    "one": (deterministic_validity, {"resumes": 1, "jds": 6, "validity": 0.5}, {}, {}),
    "valid": (deterministic_validity, {"resumes": 60, "validity": 0.97, "tie": 0.04}, {}, {}),
    "at_target": (deterministic_validity, {"resumes": 100, "validity": 0.9, "tie": 0.1}, {}, {}),
    "llm_valid": (
        noisy_validity,
        {"resumes": 40, "jds": 2, "runs": RUNS, "sd": SD, "delta": delta_for(0.95, SD, RUNS)},
        {},
        {},
    ),
    "llm_declared": (
        noisy_validity,
        {"resumes": 4, "runs": RUNS, "sd": SD, "delta": delta_for(0.75, SD, RUNS)},
        {},
        {},
    ),
    "group_gap": (
        deterministic_validity,
        {
            "resumes": 60,
            "groups": GROUPS,
            "validity": {g: 0.85 if g == LOWER else 0.95 for g in GROUPS},
            "tie": 0.1,
            "equal_shift": {LOWER: 0.25},
            "name_pool": 3,
        },
        {},
        {LOWER: 0.25},
    ),
}


def _validity_of(name: str) -> dict[str, float]:
    """The true criterion validity of each group of a design."""
    simulate, kwargs, _, _ = DESIGNS[name]
    groups = kwargs.get("groups", TWO)
    if simulate is noisy_validity:
        v = noisy_truth(kwargs.get("delta", 0.0), kwargs["sd"], kwargs["runs"])
        return dict.fromkeys(groups, v)
    validity = kwargs["validity"]
    return {g: float(validity[g]) if isinstance(validity, Mapping) else float(validity) for g in groups}


def _truth(finding: str, validity: Mapping[str, float], shift: Mapping[str, float], reference: str) -> float:
    """The value over the population of résumés of one validity finding of a design."""
    groups = list(validity)
    kind, _, group = finding.removeprefix("validity:").partition(":")
    moved = {g: float(shift.get(g, 0.0)) for g in groups}
    return {
        "criterion": float(np.mean(list(validity.values()))),
        "group": validity.get(group, np.nan),
        "group_gap": validity.get(group, np.nan) - validity[reference],
        "discriminant": float(np.mean(list(moved.values()))),
        "equal": moved.get(group, np.nan),
        "equal_gap": moved.get(group, 0.0) - moved[reference],
    }[kind]


# Each design's studies, simulated once for all its scenarios: (name, seed, settings id) -> rows.
_STUDIES: dict[tuple[str, int, int], pd.DataFrame] = {}


def _design_study(name: str, seed: int, settings: InferenceSettings) -> pd.DataFrame:
    """One simulated study of a design: its verdicts with ``true`` and ``is_planted``."""
    key = (name, seed, id(settings))
    if key not in _STUDIES:
        _STUDIES[key] = _simulate(name, seed, settings)
    return _STUDIES[key]


def _simulate(name: str, seed: int, settings: InferenceSettings) -> pd.DataFrame:
    simulate, kwargs, _, _ = DESIGNS[name]
    scores, pairs = simulate(seed, **kwargs)
    v = validity_verdicts(scores, pairs, settings)
    validity, shift = _validity_of(name), DESIGNS[name][3]
    reference = str(pairs["group"].iloc[0])
    v["true"] = [_truth(f, validity, shift, reference) for f in v["finding"]]
    null = np.where(v["kind"] == "criterion_validity", 0.5, 0.0)
    v["is_planted"] = ~np.isclose(v["true"].to_numpy(float), null)
    return v


def _pick(name: str, *prefixes: str) -> Callable[[int, InferenceSettings], pd.DataFrame]:
    """A scenario's study: the design's rows whose finding starts with one of ``prefixes``."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        v = _design_study(name, seed, settings)
        return v[v["finding"].str.startswith(prefixes)].copy()

    return study


CRITERION = ("validity:criterion",)
BY = ("validity:criterion:", "validity:group:")
EQUAL = ("validity:discriminant", "validity:equal")

VALIDITY_SCENARIOS = [
    Scenario("validity: LLM random scorer (40 x 2 JDs x 5 runs): criterion", False, _pick("llm_random", *CRITERION)),
    Scenario("validity: LLM random scorer: group gap", False, _pick("llm_random", "validity:group_gap")),
    Scenario("validity: LLM random scorer: equal twins (all, per group, gap)", False, _pick("llm_random", *EQUAL)),
    Scenario("validity: random deterministic scorer (40): criterion", False, _pick("random", "validity:criterion")),
    Scenario("validity: random deterministic scorer: per group", False, _pick("random", "validity:group:")),
    Scenario("validity: random deterministic scorer: group gap", False, _pick("random", "validity:group_gap")),
    Scenario("validity: deterministic, half the pairs tied: criterion", False, _pick("half_ties", *CRITERION)),
    Scenario("validity: deterministic, every pair tied: criterion", False, _pick("all_ties", *CRITERION)),
    Scenario("validity: deterministic, every pair tied: group gap", False, _pick("all_ties", "validity:group_gap")),
    Scenario("validity: random scorer on 5 résumés: criterion", False, _pick("few", *CRITERION)),
    Scenario("validity: random scorer on 5 résumés: group gap", False, _pick("few", "validity:group_gap")),
    Scenario("validity: random scorer, one résumé x 6 JDs: criterion", False, _pick("one", *CRITERION)),
    Scenario("validity: valid deterministic scorer (0.97, 60): criterion", True, _pick("valid", *CRITERION)),
    Scenario(
        "validity: deterministic scorer exactly at the target (0.90, 100): criterion",
        True,
        _pick("at_target", *CRITERION),
        at_margin=True,
    ),
    Scenario("validity: LLM valid scorer (0.95): criterion", True, _pick("llm_valid", *CRITERION)),
    Scenario(
        "validity: LLM scorer at the declared 0.75 (4 résumés x 1 JD): criterion",
        True,
        _pick("llm_declared", *CRITERION),
        declared=True,
    ),
    Scenario(
        "validity: one group 0.85, three 0.95 (60, names recur): its gap, at the margin",
        True,
        lambda seed, s: _pick("group_gap", "validity:group_gap")(seed, s).query("is_planted"),
        at_margin=True,
        declared=True,
    ),
    Scenario(
        "validity: one group 0.85, three 0.95: the other groups' gaps",
        False,
        lambda seed, s: _pick("group_gap", "validity:group_gap")(seed, s).query("~is_planted"),
    ),
    Scenario("validity: one group 0.85, three 0.95: criterion per group", True, _pick("group_gap", *BY)),
    Scenario(
        "validity: the same, that group's equal twins moved 0.25 (at the margin)",
        True,
        lambda seed, s: _pick("group_gap", "validity:equal")(seed, s).query("is_planted"),
        at_margin=True,
        declared=True,
    ),
]

__all__ = ["DESIGNS", "VALIDITY_SCENARIOS"]
