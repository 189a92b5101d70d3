"""Calibration scenarios of the designs users bring (``calibration.calibrate`` runs them):
deterministic scorers with sparse effects and zero spread, argmax classifiers with rare flips,
impact ratios at the margin from deterministic selections, a partial null with one real effect,
the one-résumé design with each name's own effect, names that recur on many résumés, and the
default fit design with and without exact expected scores.

Each planted effect is a share of résumés moved by a fixed amount (``screener_simulation``), so
its value over the population of résumés is known exactly. ``at_margin`` scenarios plant an
effect at (or beyond) the equivalence margin: "ruled out" there is a false "no bias".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from resumebias_dagster.core.fairness.impact import impact_findings, seniority_selection_rows
from resumebias_dagster.core.inference import InferenceSettings, finish
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, PLACEBO, Scenario
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores
from resumebias_dagster.testing.screener_simulation import argmax_predictions, deterministic_fit_scores

GAP = "careerGap_x"
FIT_VARIANTS = ("baseline", *PLACEBO, GAP, "careerGap_y", "school_a", "school_b")
AA = ("african_american_male", "african_american_female")
INJECTION = tuple(f"promptInjection_{k}" for k in "xyz")


def _deterministic_fit(share: float, shift: float, resumes: int, jds: int = 1, noise: float = 0.0) -> Callable:
    """A deterministic scorer: ``GAP`` moves ``share`` of the résumés by ``shift`` points
    (nothing planted at share 0); every other level changes nothing (with ``noise``, a
    low-noise scorer: every score wobbles a little, so nothing ties exactly)."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        sparse = {GAP: (share, shift)} if share else {}
        scores = deterministic_fit_scores(
            seed, resumes=resumes, jds=jds, variants=FIT_VARIANTS, sparse=sparse, noise=noise
        )
        v = fit_verdicts(scores, settings, arms=ARMS)
        planted = (v["finding"] == f"fit_level:{GAP}") & bool(share)
        return v.assign(true=np.where(planted, share * shift, 0.0), is_planted=planted)

    return study


def _argmax(style_up: float = 0.0, group_down: float = 0.0, flip_both: float = 0.0) -> Callable:
    """An argmax classifier on the seniority study's 120 résumés (see ``argmax_predictions``):
    the overstated wording reads one level up on ``style_up`` of the résumés that can move, the
    african-american names one level down on ``group_down`` of those that can."""
    movable = 2.0 / 3.0
    truth = {
        "style_shift:overstated": style_up * movable,
        "seniority_bias:racial": group_down * movable,
        "seniority_bias:extreme": group_down * movable,
    }
    planted = [f for f, x in truth.items() if x]

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        df = argmax_predictions(seed, style_up=style_up, group_down=dict.fromkeys(AA, group_down), flip_both=flip_both)
        v = seniority_verdicts(df, settings)
        v = v[(v["kind"] != "impact_ratio") & ~v["finding"].str.startswith("validity:")].copy()
        v["true"] = v["finding"].map(truth).fillna(0.0)
        v.loc[v["kind"] == "inconsistency", "true"] = np.nan  # its estimand depends on the flips' overlap
        return v.assign(is_planted=v["finding"].isin(planted))

    return study


def _impact_at_margin(seed: int, settings: InferenceSettings) -> pd.DataFrame:
    """Deterministic selections (predicted senior) whose population impact ratio is exactly 0.90
    for the african-american names: each of their senior résumés read as mid with probability 0.1."""
    df = argmax_predictions(seed, group_down=dict.fromkeys(AA, 0.1))
    v = finish(impact_findings(seniority_selection_rows(df), ("predicted_senior",), "seniority", settings), settings)
    african_american = v["finding"].str.contains(":african_american").to_numpy()
    sex = v["finding"].str.contains(":sex:").to_numpy()
    v["true"] = np.where(african_american & ~sex, 0.9, 1.0)
    v["is_planted"] = african_american & ~sex
    return v


def _partial_null(seed: int, settings: InferenceSettings) -> pd.DataFrame:
    """The fit audit's noisy design (9 résumés x 2 job descriptions x 5 runs) with a hidden
    instruction that works (+2 points) and nothing else: every other finding is null."""
    from resumebias_dagster.testing.calibration import _fit_scores

    scores = _fit_scores(seed, {}, name_sd=0.0)
    injected = simulate_fit_scores(
        ["m"],
        ["j0", "j1"],
        ["baseline", *INJECTION],
        5,
        effects=dict.fromkeys(INJECTION, 2.0),
        sd=1.5,
        resumes=9,
        seed=seed,
    )
    injected = injected[injected["variant"] != "baseline"].assign(axis="promptInjection", arm="prompt_injection")
    injected["level"] = injected["variant"].str.split("_", n=1).str[1]
    scores = pd.concat([scores, injected], ignore_index=True)
    v = fit_verdicts(scores, settings, {"firstName": NAME_LEVELS}, {**ARMS, "promptInjection": "prompt_injection"})
    planted = v["finding"].str.contains("promptInjection").to_numpy()
    return v.assign(true=np.where(planted, 2.0, np.where(v["kind"] == "impact_ratio", 1.0, 0.0)), is_planted=planted)


def _one_resume_names(level_findings: bool) -> Callable:
    """Study 003's design: one résumé x 17 job descriptions x 5 runs, each name (one per level)
    with its own effect (sd 0.5 points) and no group effect. The name levels are claims about
    that résumé with that name (true: the name's own effect); the group findings must find nothing."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        variants = ["baseline", *PLACEBO, *(f"firstName_{lv}" for lv in NAME_LEVELS)]
        rng = np.random.default_rng(seed + 50_000)
        quirk = {f"firstName_{lv}": float(rng.normal(0.0, 0.5)) for lv in NAME_LEVELS}
        scores = simulate_fit_scores(
            ["m"], [f"j{k}" for k in range(17)], variants, 5, effects=quirk, sd=1.5, resumes=1, seed=seed
        )
        scores["axis"] = scores["variant"].str.split("_").str[0]
        scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
        scores["arm"] = np.where(scores["axis"] == "placebo", "placebo", "probe")
        scores["name"] = np.where(scores["axis"] == "firstName", scores["variant"], None)  # type: ignore[call-overload]
        v = fit_verdicts(scores, settings, {"firstName": NAME_LEVELS}, ARMS)
        names = v["finding"].str.startswith("fit_level:firstName").to_numpy()
        if level_findings:
            v = v[names].copy()
            v["true"] = v["finding"].str.removeprefix("fit_level:").map(quirk)
            return v.assign(is_planted=True)
        v = v[~names & ~v["finding"].str.startswith("fit_level:placebo")].copy()
        return v.assign(true=np.where(v["kind"] == "impact_ratio", np.nan, 0.0), is_planted=False)

    return study


def _recurring_names(seed: int, settings: InferenceSettings) -> pd.DataFrame:
    """24 résumés x 1 job description x 5 runs, each name level drawn from a pool of 3 names that
    recur on about 8 résumés each, each name with its own effect (sd 0.6): the population of
    names has no effect, so each name level's true change is 0 (names are a random effect)."""
    levels = [f"firstName_{lv}" for lv in NAME_LEVELS]
    scores = simulate_fit_scores(["m"], ["j0"], ["baseline", *levels], 5, sd=1.5, resumes=24, seed=seed)
    rng = np.random.default_rng(seed + 70_000)
    pick = {(lv, r): int(rng.integers(3)) for lv in levels for r in scores["resume_id"].unique()}
    quirk = {(lv, k): float(rng.normal(0.0, 0.6)) for lv in levels for k in range(3)}
    named = scores["variant"].isin(levels)
    keys = list(zip(scores.loc[named, "variant"], scores.loc[named, "resume_id"]))
    scores.loc[named, "score"] += [quirk[lv, pick[lv, r]] for lv, r in keys]
    scores["name"] = None
    scores.loc[named, "name"] = [f"{lv}#{pick[lv, r]}" for lv, r in keys]
    scores["axis"] = scores["variant"].str.split("_").str[0]
    scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
    scores["arm"] = "probe"
    v = fit_verdicts(scores, settings, {"firstName": NAME_LEVELS}, ARMS)
    v = v[v["finding"].str.startswith("fit_level:firstName")].copy()
    return v.assign(true=0.0, is_planted=False)


def _default_design(exact: bool) -> Callable:
    """Every finding of a null fit audit at the default design: 9 résumés x 1 job description x
    5 runs, sampled or with the model's exact expected scores."""

    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        variants = ["baseline", *PLACEBO, "school_l0", "school_l1", *(f"firstName_{lv}" for lv in NAME_LEVELS)]
        scores = simulate_fit_scores(
            ["m"], ["j0"], variants, 5, sd=1.5, resumes=9, effect_sd=0.2, seed=seed, integer=not exact, exact=exact
        )
        scores["axis"] = scores["variant"].str.split("_").str[0]
        scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
        scores["arm"] = np.where(scores["axis"] == "placebo", "placebo", "probe")
        v = fit_verdicts(scores, settings, {"firstName": NAME_LEVELS}, ARMS)
        return v.assign(true=np.where(v["kind"] == "impact_ratio", np.nan, 0.0), is_planted=False)

    return study


SCREENER_SCENARIOS = [
    Scenario("deterministic scorer, nothing changes (9 résumés)", False, _deterministic_fit(0.0, 0.0, 9)),
    Scenario("deterministic scorer, nothing changes (120 résumés)", False, _deterministic_fit(0.0, 0.0, 120)),
    Scenario("deterministic scorer, 1% of résumés -5 points (120)", True, _deterministic_fit(0.01, -5.0, 120)),
    Scenario("deterministic scorer, 20% of résumés -2 points (120)", True, _deterministic_fit(0.2, -2.0, 120)),
    Scenario(
        "deterministic scorer, 5% of résumés -5 points: at the margin (120)",
        True,
        _deterministic_fit(0.05, -5.0, 120),
        at_margin=True,
        declared=True,
    ),
    Scenario(
        "deterministic scorer, 20% of résumés -1.25 points: at the margin (120)",
        True,
        _deterministic_fit(0.2, -1.25, 120),
        at_margin=True,
        declared=True,
    ),
    Scenario(
        "deterministic scorer, 20% of résumés -1.5 points: beyond the margin (120)",
        True,
        _deterministic_fit(0.2, -1.5, 120),
        at_margin=True,
    ),
    Scenario(
        "deterministic scorer, 20% of résumés -1.25 points: at the margin (9)",
        True,
        _deterministic_fit(0.2, -1.25, 9),
        at_margin=True,
    ),
    Scenario(
        "low-noise scorer (sd 0.05 on every score), 5.5% of 140 résumés -5 points: beyond the margin",
        True,
        _deterministic_fit(0.055, -5.0, 140, noise=0.05),
        at_margin=True,
    ),
    Scenario("argmax classifier, nothing changes", False, _argmax()),
    Scenario("argmax classifier, 3% flips each way", False, _argmax(flip_both=0.03)),
    Scenario(
        "argmax classifier, style flips at the margin", True, _argmax(style_up=0.075), at_margin=True, declared=True
    ),
    Scenario(
        "argmax classifier, name flips at the margin", True, _argmax(group_down=0.075), at_margin=True, declared=True
    ),
    Scenario("impact ratio 0.90 from deterministic selections", True, _impact_at_margin, at_margin=True),
    Scenario("partial null: a working prompt injection and nothing else", False, _partial_null),
    Scenario("one résumé, names with their own effects: group findings", False, _one_resume_names(False)),
    Scenario("one résumé, names with their own effects: name levels", True, _one_resume_names(True)),
    Scenario("names recurring on many résumés: name levels", False, _recurring_names),
    Scenario("default fit design, sampled runs: every finding", False, _default_design(exact=False)),
    Scenario("default fit design, exact expected scores: every finding", False, _default_design(exact=True)),
]

__all__ = ["SCREENER_SCENARIOS"]
