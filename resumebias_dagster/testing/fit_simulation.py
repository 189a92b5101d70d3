"""Simulated fit-score experiments with known planted effects (tests and benchmarks).

``score = base + jd offset + résumé offset + effect[model, jd, variant] + the résumé's own
deviation from that effect + noise``: every planted effect is known, so a test can ask
whether ``fit_effects`` finds the planted cells and leaves the null ones alone. The résumé's
own deviation (sd ``effect_sd``) makes the effect vary across résumés, as real effects do:
the estimand is the effect over the population of résumés, ``effects``.
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
    *,
    effects: Mapping[str, float] | np.ndarray | None = None,
    sd: float = 1.0,
    base_score: float = 6.0,
    seed: int = 0,
    integer: bool = False,
    failure_rate: float = 0.0,
    resumes: int = 1,
    resume_sd: float = 1.0,
    effect_sd: float = 0.0,
    exact: bool = False,
    noise_seed: int | None = None,
) -> pd.DataFrame:
    """Long rows ``model, jd, resume_id, variant, run, score`` for every (model, jd, résumé,
    variant, run).

    ``variants`` should include ``"baseline"``. ``effects``: variant -> shift (the same for
    every model and JD) or an array of shape (models, jds, variants). ``integer`` rounds and
    clips scores to 1..10 as a model's answer would be; ``failure_rate`` makes that share of
    scores NaN (failed runs). ``exact`` adds ``expected_score``: each text's mean score
    without the run noise (clipped to 1..10), as an embedded LLM's distribution gives.
    """
    rng = np.random.default_rng(seed)
    shape = (len(models), len(jds), len(variants), resumes, runs)
    if effects is None:
        shift = np.zeros(shape[:3])
    elif isinstance(effects, Mapping):
        per_variant = np.array([effects.get(v, 0.0) for v in variants], dtype=float)
        shift = np.broadcast_to(per_variant, shape[:3])
    else:
        shift = np.asarray(effects, dtype=float)
    jd_offset = rng.normal(0.0, 1.0, len(jds))
    resume_offset = rng.normal(0.0, resume_sd, resumes)
    own = rng.normal(0.0, effect_sd, shape[:4])
    own[:, :, [i for i, v in enumerate(variants) if v == "baseline"], :] = 0.0
    m, j, v, r, k = (a.ravel() for a in np.meshgrid(*(np.arange(s) for s in shape), indexing="ij"))
    mean = base_score + jd_offset[j] + resume_offset[r] + shift[m, j, v] + own[m, j, v, r]
    noise = rng if noise_seed is None else np.random.default_rng(noise_seed)
    score = mean + noise.normal(0.0, sd, len(m))
    if integer:
        score = np.clip(np.rint(score), 1, 10)
    if failure_rate:
        score[noise.random(len(score)) < failure_rate] = np.nan
    out = pd.DataFrame(
        {
            "model": np.asarray(models, dtype=object)[m],
            "jd": np.asarray(jds, dtype=object)[j],
            "resume_id": np.array([f"r{x:03d}" for x in range(resumes)], dtype=object)[r],
            "variant": np.asarray(variants, dtype=object)[v],
            "run": k,
            "score": score,
        }
    )
    if exact:
        out["expected_score"] = np.clip(mean, 1.0, 10.0)
    return out
