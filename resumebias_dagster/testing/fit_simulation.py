"""Simulated fit-score experiments with known planted effects (tests and benchmarks).

``score = base + jd offset + effect[model, jd, variant] + noise``: every planted effect is
known, so a test can ask whether ``fit_effects`` finds the planted cells and leaves the
null ones alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


def simulate_fit_scores(
    models: Sequence[str],
    jds: Sequence[str],
    variants: Sequence[str],
    runs: int,
    effects: Mapping[str, float] | np.ndarray | None = None,
    sd: float = 1.0,
    base_score: float = 6.0,
    seed: int = 0,
    integer: bool = False,
    failure_rate: float = 0.0,
) -> pd.DataFrame:
    """Long rows ``model, jd, variant, run, score`` for every (model, jd, variant, run).

    ``variants`` should include ``"baseline"``. ``effects``: variant -> shift (the same for
    every model and JD) or an array of shape (models, jds, variants). ``integer`` rounds and
    clips scores to 1..10 as a model's answer would be; ``failure_rate`` makes that share of
    scores NaN (failed runs).
    """
    rng = np.random.default_rng(seed)
    shape = (len(models), len(jds), len(variants), runs)
    if effects is None:
        shift = np.zeros(shape[:3])
    elif isinstance(effects, Mapping):
        per_variant = np.array([effects.get(v, 0.0) for v in variants], dtype=float)
        shift = np.broadcast_to(per_variant, shape[:3])
    else:
        shift = np.asarray(effects, dtype=float)
    jd_offset = rng.normal(0.0, 1.0, len(jds))
    m, j, v, r = (a.ravel() for a in np.meshgrid(*(np.arange(s) for s in shape), indexing="ij"))
    score = base_score + jd_offset[j] + shift[m, j, v] + rng.normal(0.0, sd, len(m))
    if integer:
        score = np.clip(np.rint(score), 1, 10)
    if failure_rate:
        score[rng.random(len(score)) < failure_rate] = np.nan
    return pd.DataFrame(
        {
            "model": np.asarray(models, dtype=object)[m],
            "jd": np.asarray(jds, dtype=object)[j],
            "variant": np.asarray(variants, dtype=object)[v],
            "run": r,
            "score": score,
        }
    )
