"""``resumebias plan`` for the validity findings, checked by simulation as a user would run it
(issue 42): a pilot of the screener (``validity_simulation``) gives the noise of one résumé and
the family structure, exactly as ``plan --pilot`` reads them (``planning.pilot_noise``,
``pilot_structure``); the planned number of résumés is then simulated ``studies`` times and the
share of studies whose verdict is reached is the power the plan promised (the declared power).

* ``criterion_validity``: a screener sampled like an LLM (5 runs, 2 groups, 2 edits: 8
  comparisons a résumé) whose criterion validity is ``share``; reached: "better than chance" or
  "valid" (the interval above 0.5).
* ``validity_gap``: a deterministic screener ordering pairs right for 0.8 of white_male's
  comparisons and 0.8 - ``gap`` of black_female's; reached: that group's gap beyond noise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.inference.planning import pilot_noise, pilot_structure, resumes_needed
from resumebias_dagster.core.jd_audit.validity_stats import CRITERION, SHARE_CHANCE, validity_verdicts
from resumebias_dagster.testing.validity_simulation import GROUPS, delta_for, deterministic_validity, noisy_validity

SD, RUNS = 1.0, 5
PILOT_RESUMES = 1000  # a pilot this large measures the SD to within about 2%: the check is of the plan
GAP_BASE = 0.8


def _criterion_study(seed: int, resumes: int, effect: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    return noisy_validity(seed, resumes=resumes, runs=RUNS, sd=SD, delta=delta_for(effect, SD, RUNS))


def _gap_study(seed: int, resumes: int, effect: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    validity = {GROUPS[0]: GAP_BASE, GROUPS[1]: GAP_BASE - effect}
    return deterministic_validity(seed, resumes=resumes, groups=GROUPS[:2], validity=validity)


def validity_plan_check(
    kind: str, studies: int, settings: InferenceSettings | None = None, seed: int = 0, effect: float | None = None
) -> dict:
    """The plan for ``kind`` at ``effect`` (default: its declared one, ``settings.detect``) from a
    simulated pilot, and the share of ``studies`` simulated studies of that size whose verdict
    is reached, beside the mean power the verdicts printed."""
    settings = settings or InferenceSettings()
    effect = settings.detect[kind] if effect is None else effect
    study: Callable[[int, int, float], tuple[pd.DataFrame, pd.DataFrame]]
    found: tuple[str, ...]
    if kind == "criterion_validity":
        study, finding, found = _criterion_study, CRITERION, ("better than chance", "valid")
        excess = effect - SHARE_CHANCE
    elif kind == "validity_gap":
        study, finding, found = _gap_study, f"validity:group_gap:{GROUPS[1]}", ("beyond_noise",)
        excess = effect
    else:
        raise ValueError(f"no validity plan check for kind {kind!r}")
    scores, pairs = study(seed + 900_000, PILOT_RESUMES, effect)
    pilot = validity_verdicts(scores, pairs, settings, reference=GROUPS[0])
    rows = pilot[pilot["finding"] == finding]
    noise = pilot_noise(rows, kind, runs=RUNS)
    structure = pilot_structure(pilot, kind)
    resumes = resumes_needed(excess, noise.sd, settings, structure=structure)
    reached, printed = [], []
    for k in range(studies):
        scores, pairs = study(seed + k, resumes, effect)
        v = validity_verdicts(scores, pairs, settings, reference=GROUPS[0])
        row = v[v["finding"] == finding]
        reached.append(bool(row["verdict"].isin(found).any()))
        printed.append(float(row["power"].iloc[0]) if len(row) else np.nan)
    return {
        "kind": kind,
        "effect": effect,
        "sd": noise.sd,
        "structure": structure.sizes,
        "resumes": resumes,
        "planned_power": settings.power,
        "simulated_power": float(np.mean(reached)),
        "printed_power": float(np.nanmean(printed)),
        "studies": studies,
    }


__all__ = ["validity_plan_check"]
