"""Simulated seniority studies with known effects (the calibration benchmark and its tests).

A résumé ``i`` of true level ``t`` has a latent seniority ``mu[t] + a_i`` (``a_i`` normal with
sd ``resume_sd``: résumés differ). A variant adds its planted shift: a style's
``style_effects[style]``, a name's ``group_effects[demographic]`` plus that name's own
effect (normal with sd ``name_sd``, drawn once per name per study: names are a random
effect). The label distribution is an ordered logit of the latent value with cut points
``CUTS``; ``exact=True`` stores it (as a scoring model does), and every run samples a
label from it. Names come from pools of ``names_per_group`` names per demographic, used in
balanced shuffled rounds as ``core/seniority/names.py`` does.

``true_effects`` gives each finding's estimand (the mean over the population of résumés,
and of names, of the within-résumé contrast of expected ranks) by simulating a large
population from the same model.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import DEMOGRAPHICS, SENIORITY_LEVELS, STYLES, gender_of, race_of

MU = np.array([-1.5, 0.0, 1.5])
CUTS = np.array([-0.75, 0.75])


def label_distribution(eta: np.ndarray) -> np.ndarray:
    """(n, 3) probabilities of junior, mid, senior under the ordered logit."""
    below = 1.0 / (1.0 + np.exp(-(CUTS[None, :] - np.asarray(eta)[:, None])))
    return np.column_stack([below[:, 0], below[:, 1] - below[:, 0], 1.0 - below[:, 1]])


def _names(n: int, names_per_group: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for d in DEMOGRAPHICS:
        rounds = [rng.permutation(names_per_group) for _ in range(n // names_per_group + 1)]
        out[d] = np.concatenate(rounds)[:n]
    return out


def simulate_seniority_predictions(
    n_resumes: int = 120,
    runs: int = 5,
    *,
    exact: bool = True,
    style_effects: Mapping[str, float] | None = None,
    group_effects: Mapping[str, float] | None = None,
    name_sd: float = 0.0,
    names_per_group: int = 9,
    resume_sd: float = 1.0,
    seed: int = 0,
    model: str = "sim",
    noise_seed: int | None = None,
) -> pd.DataFrame:
    """A predictions table (``SeniorityPredictions`` columns the metrics read) of one model.
    ``noise_seed``: the sampled runs draw from it, the résumés and names from ``seed`` (the same
    résumés answered afresh)."""
    rng = np.random.default_rng(seed)
    style_effects = {s: 0.0 for s in STYLES} | dict(style_effects or {})
    group_effects = {d: 0.0 for d in DEMOGRAPHICS} | dict(group_effects or {})
    truth = np.arange(n_resumes) % 3
    base = MU[truth] + rng.normal(0.0, resume_sd, n_resumes)
    name_effect = {d: rng.normal(0.0, name_sd, names_per_group) for d in DEMOGRAPHICS}
    drawn = _names(n_resumes, names_per_group, rng)
    runs_rng = rng if noise_seed is None else np.random.default_rng(noise_seed)
    frames = []
    for kind, variants in (("style", STYLES), ("demographic", DEMOGRAPHICS)):
        for v in variants:
            if kind == "style":
                eta, names = base + style_effects[v], np.full(n_resumes, None, dtype=object)
            else:
                eta = base + group_effects[v] + name_effect[v][drawn[v]]
                names = np.array([f"{v.title().replace('_', '')}{k} Name" for k in drawn[v]], dtype=object)
            dist = label_distribution(eta)
            cum = dist.cumsum(axis=1)
            u = runs_rng.random((n_resumes, runs))
            labels = (u[:, :, None] > cum[:, None, :2]).sum(axis=2)
            frames.append(
                pd.DataFrame(
                    {
                        "variant_kind": kind,
                        "original_idx": np.repeat(np.arange(n_resumes), runs),
                        "variant": v,
                        "model": model,
                        "run": np.tile(np.arange(runs), n_resumes),
                        "prediction": np.asarray(SENIORITY_LEVELS, dtype=object)[labels.reshape(-1)],
                        "true_seniority": np.asarray(SENIORITY_LEVELS, dtype=object)[np.repeat(truth, runs)],
                        "name": np.repeat(names, runs),
                        "p_junior": np.repeat(dist[:, 0], runs) if exact else np.nan,
                        "p_mid": np.repeat(dist[:, 1], runs) if exact else np.nan,
                        "p_senior": np.repeat(dist[:, 2], runs) if exact else np.nan,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def true_effects(
    style_effects: Mapping[str, float] | None = None,
    group_effects: Mapping[str, float] | None = None,
    *,
    name_sd: float = 0.0,
    resume_sd: float = 1.0,
    population: int = 400_000,
    seed: int = 12345,
) -> dict[str, float]:
    """Each seniority finding's estimand (``finding`` of the verdicts table) under the model."""
    rng = np.random.default_rng(seed)
    style_effects = {s: 0.0 for s in STYLES} | dict(style_effects or {})
    group_effects = {d: 0.0 for d in DEMOGRAPHICS} | dict(group_effects or {})
    base = MU[np.arange(population) % 3] + rng.normal(0.0, resume_sd, population)
    rank = np.array([0.0, 1.0, 2.0])

    def expected(eta):
        return label_distribution(eta) @ rank

    neutral = expected(base + style_effects["neutral"])
    out = {
        f"style_shift:{s}": float((expected(base + style_effects[s]) - neutral).mean())
        for s in ("overstated", "understated")
    }
    value = {d: expected(base + group_effects[d] + rng.normal(0.0, name_sd, population)) for d in DEMOGRAPHICS}

    def side(pick) -> np.ndarray:
        return np.mean([value[d] for d in DEMOGRAPHICS if pick(d)], axis=0)

    out["seniority_bias:racial"] = float(
        (side(lambda d: race_of(d) == "caucasian") - side(lambda d: race_of(d) != "caucasian")).mean()
    )
    out["seniority_bias:gender"] = float(
        (side(lambda d: gender_of(d) == "male") - side(lambda d: gender_of(d) != "male")).mean()
    )
    out["seniority_bias:extreme"] = float((value["caucasian_male"] - value["african_american_female"]).mean())
    return out


def write_study_files(predictions: pd.DataFrame, folder) -> list[str]:
    """The table as the seniority study's two CSV formats (what ``resumebias analyze`` reads):
    ``style.csv`` (Test 2) and ``social.csv`` (Test 3), runs and distributions included."""
    from pathlib import Path

    folder = Path(folder)
    keep = ["model", "run", "prediction", "true_seniority", "p_junior", "p_mid", "p_senior"]
    style = predictions[predictions["variant_kind"] == "style"]
    social = predictions[predictions["variant_kind"] == "demographic"]
    style = style.assign(
        idx=style["original_idx"], style=style["variant"], correct=style["prediction"] == style["true_seniority"]
    )
    social = social.assign(demographic=social["variant"], correct=social["prediction"] == social["true_seniority"])
    paths = [folder / "style.csv", folder / "social.csv"]
    style[["idx", "style", "correct", *keep]].to_csv(paths[0], index=False)
    social[["original_idx", "demographic", "name", "correct", *keep]].to_csv(paths[1], index=False)
    return [str(p) for p in paths]
