"""Calibration scenarios of the seniority task's validity verdicts (issue 42;
``core/seniority/validity.py``, through ``seniority_validity_verdicts``, which the asset's
``seniority_verdicts`` calls).

Simulated labellers of a design balanced over the three levels (as the generator makes it), each
text (3 wordings, 4 names) labelled once:

* ``ignores``: a label drawn from a mix that ignores the résumé (the null: accuracy exactly 1/3,
  whatever the mix). ``stick`` of the texts repeat the résumé's first label, as a deterministic
  classifier's variants mostly do; ``mix`` (1, 0, 0)-like a labeller that always says one level.
* ``reads``: right with probability ``accuracy`` (per name group where a mapping), else one of the
  two wrong levels at random, each text on its own, or ``stick`` of them repeating the résumé's
  first label (the true accuracy is then still ``accuracy``: the first label is right with it).
* ``exact``: a scoring model's label distributions: the true level has probability ``a_i`` (a
  résumé's own, Beta around ``accuracy``), the wrong levels share the rest; ``spread`` 0 gives
  every résumé the same (no spread at all).

The true value of every finding is known from the design: its accuracy, per group, the gaps,
and the rank difference (0 for symmetric errors on a balanced design; the mix's mean rank minus 1
for ``ignores``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import DEMOGRAPHICS, SENIORITY_LEVELS, STYLES
from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.seniority.validity import seniority_validity_verdicts
from resumebias_dagster.testing.calibration import Scenario

TEXTS = [("style", s) for s in STYLES] + [("demographic", d) for d in DEMOGRAPHICS]
REFERENCE = DEMOGRAPHICS[0]
LOWER = DEMOGRAPHICS[3]  # the group a labeller reads less accurately in the gap design


def _wrong(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """One of the two other levels, at random."""
    return (truth + rng.integers(1, 3, size=truth.shape)) % 3


def _accuracy_of(accuracy: float | Mapping[str, float], variant: str) -> float:
    if isinstance(accuracy, Mapping):
        return float(accuracy.get(variant, accuracy.get("*", 0.0)))
    return float(accuracy)


def labeller_predictions(
    seed: int,
    *,
    resumes: int,
    how: str = "reads",
    accuracy: float | Mapping[str, float] = 0.5,
    mix: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3),
    stick: float = 0.0,
    spread: float = 20.0,
    name_pool: int = 3,
) -> pd.DataFrame:
    """A predictions table (the metrics' input columns) of one simulated labeller."""
    rng = np.random.default_rng(seed)
    truth = np.arange(resumes) % 3
    if how == "ignores":
        first = rng.choice(3, size=resumes, p=mix)
    else:
        base = _accuracy_of(accuracy, "*") if isinstance(accuracy, Mapping) else float(accuracy)
        first = np.where(rng.random(resumes) < base, truth, _wrong(rng, truth))
    a_i = None
    if how == "exact":
        a = float(accuracy)  # type: ignore[arg-type]
        a_i = np.full(resumes, a) if spread == 0 else rng.beta(a * spread, (1 - a) * spread, size=resumes)
    frames = []
    for kind, variant in TEXTS:
        if how == "ignores":
            fresh = rng.choice(3, size=resumes, p=mix)
        else:
            a = _accuracy_of(accuracy, variant)
            fresh = np.where(rng.random(resumes) < a, truth, _wrong(rng, truth))
        label = np.where(rng.random(resumes) < stick, first, fresh)
        frame = {
            "variant_kind": kind,
            "original_idx": np.arange(resumes),
            "variant": variant,
            "model": "sim",
            "run": 0,
            "true_seniority": np.asarray(SENIORITY_LEVELS, dtype=object)[truth],
            "name": [
                f"{variant.title().replace('_', '')}{int(rng.integers(name_pool))} Name"
                if kind == "demographic"
                else None
                for _ in range(resumes)
            ],
        }
        if a_i is not None:
            jitter = np.clip(a_i + rng.normal(0.0, 0.02, resumes), 0.0, 1.0) if spread else a_i
            dist = np.full((resumes, 3), 0.0)
            dist[np.arange(resumes), truth] = jitter
            for k in (1, 2):
                dist[np.arange(resumes), (truth + k) % 3] = (1 - jitter) / 2
            frame |= {"p_junior": dist[:, 0], "p_mid": dist[:, 1], "p_senior": dist[:, 2]}
            label = dist.argmax(axis=1)
        frame["prediction"] = np.asarray(SENIORITY_LEVELS, dtype=object)[label]
        frames.append(pd.DataFrame(frame))
    return pd.concat(frames, ignore_index=True)


def _truth(finding: str, kwargs: Mapping[str, Any]) -> float:
    """A finding's value over the population of résumés of the design."""
    how = kwargs.get("how", "reads")
    accuracy = kwargs.get("accuracy", 0.5)
    if how == "ignores":
        per = dict.fromkeys([v for _, v in TEXTS], 1 / 3)
        mix = kwargs.get("mix", (1 / 3, 1 / 3, 1 / 3))
        rank = mix[1] + 2 * mix[2] - 1.0
    else:
        per = {v: _accuracy_of(accuracy, v) for _, v in TEXTS}
        rank = 0.0
    rest = finding.removeprefix("validity:")
    if rest == "accuracy":
        return float(np.mean(list(per.values())))
    if rest == "rank_difference":
        return rank
    if rest.startswith("accuracy:group:"):
        return per[rest.removeprefix("accuracy:group:")]
    if rest.startswith("accuracy_gap:"):
        return per[rest.removeprefix("accuracy_gap:")] - per[REFERENCE]
    return np.nan


NULL_VALUE = {"seniority_accuracy": 1 / 3}
DESIGNS: dict[str, dict[str, Any]] = {
    "ignores": {"resumes": 120, "how": "ignores", "mix": (0.2, 0.5, 0.3), "stick": 0.8},
    "always_mid": {"resumes": 120, "how": "ignores", "mix": (0.0, 1.0, 0.0)},
    "ignores_few": {"resumes": 6, "how": "ignores", "mix": (0.2, 0.5, 0.3), "stick": 0.8},
    "ignores_one": {"resumes": 1, "how": "ignores", "mix": (0.2, 0.5, 0.3)},
    "exact_chance": {"resumes": 120, "how": "exact", "accuracy": 1 / 3},
    "exact_chance_flat": {"resumes": 120, "how": "exact", "accuracy": 1 / 3, "spread": 0.0},
    "valid": {"resumes": 120, "accuracy": 0.95, "stick": 0.8},
    "at_target": {"resumes": 120, "accuracy": 0.8, "stick": 0.5},
    "declared": {"resumes": 12, "accuracy": 0.6},
    "group_gap": {
        "resumes": 120,
        "accuracy": {"*": 0.8, **{d: 0.8 for d in DEMOGRAPHICS}, LOWER: 0.7},
        "name_pool": 3,
    },
}
_STUDIES: dict[tuple[str, int, int], pd.DataFrame] = {}


def _study(name: str, seed: int, settings: InferenceSettings) -> pd.DataFrame:
    key = (name, seed, id(settings))
    if key not in _STUDIES:
        kwargs = DESIGNS[name]
        v = seniority_validity_verdicts(labeller_predictions(seed, **kwargs), settings)
        v["true"] = [_truth(f, kwargs) for f in v["finding"]]
        null = v["kind"].map(NULL_VALUE).fillna(0.0).to_numpy(float)
        v["is_planted"] = ~np.isclose(v["true"].to_numpy(float), null)
        _STUDIES[key] = v
    return _STUDIES[key]


def _pick(name: str, *prefixes: str, planted: bool | None = None) -> Callable[[int, InferenceSettings], pd.DataFrame]:
    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        v = _study(name, seed, settings)
        v = v[v["finding"].str.startswith(prefixes)]
        return v if planted is None else v[v["is_planted"] == planted].copy()

    return study


ACC = ("validity:accuracy",)
OVERALL = "validity:accuracy"


def _overall(name: str) -> Callable[[int, InferenceSettings], pd.DataFrame]:
    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        v = _study(name, seed, settings)
        return v[v["finding"] == OVERALL].copy()

    return study


SENIORITY_VALIDITY_SCENARIOS = [
    Scenario(
        "seniority validity: labeller ignoring the résumé (120, 80% sticky): accuracy", False, _overall("ignores")
    ),
    Scenario(
        "seniority validity: the same: accuracy per group and gaps",
        False,
        _pick("ignores", "validity:accuracy:group:", "validity:accuracy_gap:"),
    ),
    Scenario("seniority validity: always 'mid' (120): accuracy", False, _overall("always_mid")),
    Scenario(
        "seniority validity: always 'mid': rank difference", False, _pick("always_mid", "validity:rank_difference")
    ),
    Scenario("seniority validity: ignoring the résumé, 6 résumés: accuracy", False, _overall("ignores_few")),
    Scenario("seniority validity: ignoring the résumé, one résumé: accuracy", False, _overall("ignores_one")),
    Scenario("seniority validity: distributions at chance (120): accuracy", False, _overall("exact_chance")),
    Scenario(
        "seniority validity: distributions at chance, no spread (120): accuracy",
        False,
        _overall("exact_chance_flat"),
    ),
    Scenario("seniority validity: reads 95% (120, sticky): accuracy", True, _overall("valid")),
    Scenario(
        "seniority validity: reads 95%: rank difference (true 0)", False, _pick("valid", "validity:rank_difference")
    ),
    Scenario(
        "seniority validity: reads exactly the target 80% (120): accuracy",
        True,
        _overall("at_target"),
        at_margin=True,
    ),
    Scenario(
        "seniority validity: reads the declared 60% (12 résumés): accuracy", True, _overall("declared"), declared=True
    ),
    Scenario(
        "seniority validity: one group 70%, three 80% (120, names recur): its gap, at the margin",
        True,
        _pick("group_gap", "validity:accuracy_gap:", planted=True),
        at_margin=True,
        declared=True,
    ),
    Scenario(
        "seniority validity: one group 70%, three 80%: the other groups' gaps",
        False,
        _pick("group_gap", "validity:accuracy_gap:", planted=False),
    ),
]

__all__ = ["DESIGNS", "SENIORITY_VALIDITY_SCENARIOS", "labeller_predictions"]
