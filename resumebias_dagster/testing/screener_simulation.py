"""Simulated answers of the screeners employers run: deterministic scorers and argmax
classifiers (tests and the calibration benchmark).

Such a tool gives a résumé the same answer every time, so most variants change nothing and a
few change some résumés by a fixed amount: zero spread and sparse effects. Every planted
effect is a share of résumés moved by a fixed amount, so its true value over the population of
résumés is known exactly (``share x shift``), whatever the sample drew.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import DEMOGRAPHICS, SENIORITY_LEVELS, STYLES


def deterministic_fit_scores(
    seed: int,
    *,
    resumes: int,
    jds: int = 1,
    variants: Sequence[str],
    sparse: Mapping[str, tuple[float, float]] | None = None,
    base: tuple[float, float] = (6.0, 10.0),
    arms: Mapping[str, str] | None = None,
    noise: float = 0.0,
    model: str = "tool",
    names_per_level: int = 0,
) -> pd.DataFrame:
    """Fit-score rows (one run) of a deterministic scorer: each (résumé, job description) has
    a baseline score drawn once in ``base`` (hundredths, as a service might answer), and each
    variant of ``sparse`` (variant -> (share, shift)) moves each résumé with probability
    ``share`` by ``shift`` under every job description; every other variant changes nothing.
    ``arms`` maps an axis to its arm (default: placebo for ``placebo``, else probe). ``noise``:
    a low-noise scorer's own wobble (sd, points) on every score, so that nothing ties exactly.
    ``names_per_level``: each résumé's text of a ``firstName`` level carries one of that many
    names of the level (drawn per résumé; the scorer ignores them), as the packaged pools do."""
    rng = np.random.default_rng(seed)
    sparse = dict(sparse or {})
    arms = {"placebo": "placebo", **(arms or {})}
    baseline = np.round(rng.uniform(*base, (resumes, jds)), 2)
    rows = []
    for v in variants:
        share, shift = sparse.get(v, (0.0, 0.0))
        moved = rng.random(resumes) < share
        score = np.round(baseline + np.where(moved, shift, 0.0)[:, None], 2)
        if noise:
            score = np.clip(score + rng.normal(0.0, noise, score.shape), 1.0, 10.0)
        axis, _, level = v.partition("_")
        for r in range(resumes):
            for j in range(jds):
                rows.append((model, f"j{j}", f"r{r:03d}", v, 0, float(score[r, j]), axis, level))
    out = pd.DataFrame(rows, columns=["model", "jd", "resume_id", "variant", "run", "score", "axis", "level"])
    out["arm"] = np.where(out["variant"] == "baseline", "baseline", out["axis"].map(arms).fillna("probe"))
    if names_per_level:
        named = (out["axis"] == "firstName").to_numpy()
        drawn = {key: int(rng.integers(names_per_level)) for key in zip(out["variant"], out["resume_id"])}
        which = [drawn[key] for key in zip(out["variant"], out["resume_id"])]
        out["name"] = np.where(named, out["variant"] + "_name" + pd.Series(which).astype(str), None)  # type: ignore[call-overload]
    return out


def argmax_predictions(
    seed: int,
    *,
    n_resumes: int = 120,
    style_up: float = 0.0,
    group_down: Mapping[str, float] | None = None,
    flip_both: float = 0.0,
    names_per_group: int = 9,
    model: str = "classifier",
) -> pd.DataFrame:
    """Seniority predictions of a deterministic classifier (one run, no distributions): the
    neutral text of each résumé is read at its true level (levels cycle junior, mid, senior);
    the overstated rewrite reads one level up on a share ``style_up`` of the résumés that can
    move up; a name variant of demographic d reads one level down on a share
    ``group_down[d]`` of the résumés that can move down (drawn per name variant); every other
    variant (and name) reads as the neutral text, except that with ``flip_both`` each variant
    moves one level up or down, each with that probability where it can (a null: two thirds
    of the résumés can move either way, so the mean change is 0)."""
    rng = np.random.default_rng(seed)
    group_down = {d: 0.0 for d in DEMOGRAPHICS} | dict(group_down or {})
    truth = np.arange(n_resumes) % 3
    frames = []
    for kind, variants in (("style", STYLES), ("demographic", DEMOGRAPHICS)):
        for v in variants:
            label = truth.copy()
            if kind == "style" and v == "overstated":
                label = np.where((label < 2) & (rng.random(n_resumes) < style_up), label + 1, label)
            if kind == "demographic":
                label = np.where((label > 0) & (rng.random(n_resumes) < group_down[v]), label - 1, label)
            if flip_both and not (kind == "style" and v == "neutral"):
                u = rng.random(n_resumes)
                label = np.where((u < flip_both) & (label < 2), label + 1, label)
                label = np.where((u > 1 - flip_both) & (label > 0), label - 1, label)
            names = np.full(n_resumes, None, dtype=object)
            if kind == "demographic":
                pool = np.concatenate(
                    [rng.permutation(names_per_group) for _ in range(n_resumes // names_per_group + 1)]
                )
                names = np.array([f"{v.title().replace('_', '')}{k} Name" for k in pool[:n_resumes]], dtype=object)
            frames.append(
                pd.DataFrame(
                    {
                        "variant_kind": kind,
                        "original_idx": np.arange(n_resumes),
                        "variant": v,
                        "model": model,
                        "run": 0,
                        "prediction": np.asarray(SENIORITY_LEVELS, dtype=object)[label],
                        "true_seniority": np.asarray(SENIORITY_LEVELS, dtype=object)[truth],
                        "name": names,
                        "p_junior": np.nan,
                        "p_mid": np.nan,
                        "p_senior": np.nan,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def movable_share(direction: int) -> float:
    """The share of the argmax design's résumés that can move one level ``direction`` (+1 up,
    -1 down): two thirds either way (seniors cannot move up, juniors down)."""
    return 2.0 / 3.0 if direction in (1, -1) else 0.0
