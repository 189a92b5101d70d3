"""Simulated studies through the same code the assets use, to check every verdict type's
error rates: null studies (nothing planted) for the false-positive rate and the interval's
coverage, studies with an effect of the declared size planted for power and coverage.
``benchmarks/bench_inference_calibration.py`` runs many; a test runs a few.

A scenario simulates one study and returns its verdict rows of one type, each with the
true value of what it estimates (``true``) and whether an effect was planted on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import optimize

from resumebias_dagster.core.fairness.impact import impact_findings, seniority_selection_rows
from resumebias_dagster.core.inference import InferenceSettings, finish
from resumebias_dagster.core.jd_audit.fit_stats import fit_effects
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores
from resumebias_dagster.testing.seniority_simulation import (
    MU,
    label_distribution,
    simulate_seniority_predictions,
    true_effects,
)

AA = ("african_american_male", "african_american_female")
PLACEBO = tuple(f"placebo_p{k}" for k in range(4))
PROBES = tuple(f"school_l{k}" for k in range(4))
NAME_LEVELS = {
    f"{race}_{sex}": {"sex": sex, "race_ethnicity": race}
    for race in ("white", "black", "hispanic", "asian")
    for sex in ("male", "female")
}
ARMS = {"placebo": "placebo"}


@dataclass(frozen=True)
class Scenario:
    verdict_type: str
    planted: bool
    study: Callable[[int, InferenceSettings], pd.DataFrame]  # seed, settings -> rows with true, is_planted
    # The planted effect sits at (or beyond) the equivalence margin: "ruled out" is then false.
    at_margin: bool = False
    # The planted effect is the declared one (inference.yaml's ``detect``): the power the
    # verdicts print for it is then comparable with how often they find it.
    declared: bool = False


@lru_cache(maxsize=None)
def _latent_for(target: float, finding: str) -> float:
    """The latent shift that moves a seniority finding's estimand by ``target`` levels."""

    def gap(shift: float) -> float:
        if finding.startswith("style_shift"):
            effects = true_effects(style_effects={"overstated": shift}, population=100_000)
        else:
            effects = true_effects(group_effects=dict.fromkeys(AA, -shift), population=100_000)
        return effects[finding] - target

    return float(optimize.brentq(gap, 0.0, 3.0, xtol=1e-4))


def _seniority(kind: str, planted: bool, exact: bool) -> Callable:
    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        style, group, name_sd = {}, {}, 0.3
        if kind == "style_shift" and planted:
            style = {"overstated": _latent_for(settings.detect["style_shift"], "style_shift:overstated")}
        if kind == "seniority_bias" and planted:
            group = dict.fromkeys(AA, -_latent_for(settings.detect["seniority_bias"], "seniority_bias:racial"))
        if kind == "inconsistency":
            name_sd = 0.3 if planted else 0.0
        df = simulate_seniority_predictions(
            exact=exact, style_effects=style, group_effects=group, name_sd=name_sd, seed=seed
        )
        v = seniority_verdicts(df, settings)
        v = v[v["kind"] == kind].copy()
        truth = true_effects(style, group, name_sd=name_sd, population=100_000)
        v["true"] = v["finding"].map(truth).fillna(0.0) if kind != "inconsistency" else np.nan
        if kind == "inconsistency" and not planted:
            v["true"] = 0.0
        target = {"style_shift": "style_shift:overstated", "seniority_bias": "seniority_bias:racial"}.get(kind)
        v["is_planted"] = planted & (v["finding"] == target) if target else planted
        return v

    return study


@lru_cache(maxsize=None)
def _true_senior_rates(shift: float) -> tuple[float, float]:
    """P(senior) of a caucasian and of an african-american name over the résumé population."""
    rng = np.random.default_rng(7)
    base = MU[np.arange(200_000) % 3] + rng.normal(0.0, 1.0, 200_000)
    return float(label_distribution(base)[:, 2].mean()), float(label_distribution(base - shift)[:, 2].mean())


def _impact(planted: bool) -> Callable:
    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        target = settings.detect["impact_ratio"]
        shift = (
            optimize.brentq(lambda x: _true_senior_rates(x)[1] / _true_senior_rates(x)[0] - target, 0.0, 3.0, xtol=1e-4)
            if planted
            else 0.0
        )
        df = simulate_seniority_predictions(
            exact=False, group_effects=dict.fromkeys(AA, -shift), name_sd=0.0, seed=seed
        )
        v = finish(
            impact_findings(seniority_selection_rows(df), ("predicted_senior",), "seniority", settings), settings
        )
        v = v[v["finding"].str.contains(":race_ethnicity:|:intersection:")].copy()
        african_american = v["finding"].str.contains(":african_american").to_numpy()
        v["true"] = np.where(african_american & planted, target, 1.0)
        v["is_planted"] = african_american & planted
        return v

    return study


def _fit_scores(
    seed: int, effects: dict, resumes: int = 9, jds: int = 2, name_sd: float = 0.3, *, noise_seed: int | None = None
):
    variants = ["baseline", *PLACEBO, *PROBES, *(f"firstName_{lv}" for lv in NAME_LEVELS)]
    scores = simulate_fit_scores(
        ["m"],
        [f"j{k}" for k in range(jds)],
        variants,
        5,
        effects=effects,
        sd=1.5,
        resumes=resumes,
        effect_sd=0.2,
        seed=seed,
        integer=False,
        noise_seed=noise_seed,
    )
    scores["axis"] = scores["variant"].str.split("_").str[0]
    scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
    scores["arm"] = np.where(
        scores["axis"] == "placebo", "placebo", np.where(scores["variant"] == "baseline", "baseline", "probe")
    )
    # Names: each résumé's name for a level is its own (nested), with its own effect.
    rng = np.random.default_rng(seed + 10_000)
    named = scores["axis"] == "firstName"
    key = scores.loc[named, "variant"] + "|" + scores.loc[named, "resume_id"]
    quirk = pd.Series(rng.normal(0.0, name_sd, key.nunique()), index=key.unique())
    scores.loc[named, "score"] += key.map(quirk).to_numpy()
    # None fills an object array (numpy reads it as a 0-d object array); numpy's stubs omit it.
    scores["name"] = np.where(named, scores["variant"] + "_" + scores["resume_id"], None)  # type: ignore[call-overload]
    return scores


def _fit(kind: str, planted: bool) -> Callable:
    def study(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        size = settings.detect["fit_delta"]
        effects = {}
        if planted and kind in ("fit_cell", "fit_level"):
            effects = {PROBES[0]: -size}
        if planted and kind == "fit_group":
            effects = {f"firstName_{lv}": -size for lv in NAME_LEVELS if lv.endswith("_female")}
        scores = _fit_scores(seed, effects)
        if kind == "fit_cell":
            e = fit_effects(scores, arms=ARMS, settings=settings)
            e = e.rename(columns={"delta": "estimate", "q_value": "q"})
            e["finding"] = e["variant"] + "@" + e["jd"]
            e["true"] = e["variant"].map(effects).fillna(0.0)
            e["is_planted"] = e["variant"].isin(list(effects))
            return e
        v = fit_verdicts(scores, settings, {"firstName": NAME_LEVELS}, ARMS)
        prefix = "fit_level:" if kind == "fit_level" else "fit_group:"
        v = v[v["finding"].str.startswith(prefix)].copy()
        if kind == "fit_level":
            v["true"] = v["finding"].str.removeprefix("fit_level:").map(effects).fillna(0.0)
            v["is_planted"] = v["finding"] == f"fit_level:{PROBES[0]}"
        else:
            v["true"] = np.where(v["finding"] == "fit_group:sex", -size if planted else 0.0, 0.0)
            v["is_planted"] = planted & (v["finding"] == "fit_group:sex")
        return v

    return study


def _whole_study(study: str) -> Callable:
    """Every finding of one null study, as ``analyze --json`` / ``analyze-fit --json`` list them."""

    def run(seed: int, settings: InferenceSettings) -> pd.DataFrame:
        if study == "seniority":
            v = seniority_verdicts(simulate_seniority_predictions(exact=False, name_sd=0.0, seed=seed), settings)
        else:
            v = fit_verdicts(_fit_scores(seed, {}, name_sd=0.0), settings, {"firstName": NAME_LEVELS}, ARMS)
        # A null study of bias: its validity findings (the simulated model reads seniority) are no null.
        v = v[~v["finding"].str.startswith("validity:")]
        return v.assign(true=np.nan, is_planted=False)

    return run


SCENARIOS = [
    *(
        Scenario(kind, planted, _seniority(kind, planted, exact), declared=planted and kind != "inconsistency")
        for kind, exact in (("style_shift", False), ("seniority_bias", True), ("inconsistency", False))
        for planted in (False, True)
    ),
    *(Scenario("impact_ratio", planted, _impact(planted), declared=planted) for planted in (False, True)),
    *(
        Scenario(kind, planted, _fit(kind, planted), declared=planted)
        for kind in ("fit_cell", "fit_level", "fit_group")
        for planted in (False, True)
    ),
    Scenario("analyze: whole study", False, _whole_study("seniority")),
    Scenario("analyze-fit: whole study", False, _whole_study("jd_audit")),
]


# A finding: beyond noise, or a criterion validity told from chance (issue 42's verdicts).
FOUND = ("beyond_noise", "valid", "better than chance", "worse than chance")
# A claim a margin was met: an effect ruled out, or a criterion validity at or above its target.
MET = ("equivalent", "valid")


def _scenario_figures(scenario: Scenario, v: pd.DataFrame, studies: int) -> dict:
    """The figures one scenario's ``studies`` simulated studies give (``calibrate``)."""
    beyond = v["verdict"].isin(FOUND)
    planted = v["is_planted"].astype(bool)
    covered = (v["ci_low"] <= v["true"] + 1e-12) & (v["true"] <= v["ci_high"] + 1e-12)
    has_truth = v["true"].notna() & v["ci_low"].notna()
    out: dict = {}
    if not scenario.planted:
        null = ~planted
        out["false_positive_rate"] = float(beyond[null].mean()) if null.any() else np.nan
        out["null_studies_flagged"] = float((beyond & null).groupby(v["_study"]).any().mean())
        out["coverage_null"] = float(covered[null & has_truth].mean()) if (null & has_truth).any() else np.nan
        out["findings_per_study"] = len(v) / studies
        return out
    key = "margin" if scenario.at_margin else "planted"
    out[f"coverage_{key}"] = float(covered[planted & has_truth].mean()) if (planted & has_truth).any() else np.nan
    if scenario.at_margin:
        out["ruled_out_at_margin"] = float(v.loc[planted, "verdict"].isin(MET).mean())
    out["power"] = float(beyond[planted].mean())
    if "kind" in v and v["kind"].eq("criterion_validity").any():
        out["called_valid"] = float((v.loc[planted, "verdict"] == "valid").mean())
    out["printed_power"] = float(v.loc[planted, "power"].mean()) if "power" in v.columns else np.nan
    out["declared_effect"] = scenario.declared
    return out


def calibrate(
    studies: int, settings: InferenceSettings | None = None, seed: int = 0, scenarios: list[Scenario] | None = None
) -> pd.DataFrame:
    """Per verdict type: the share of null findings beyond noise (``false_positive_rate``),
    the share of null studies with any (``null_studies_flagged``), the 95% intervals'
    coverage of the truth under the null, with the planted effect and at the margin, the
    share of planted findings beyond noise (``power``) beside the power the verdicts printed
    for them (``printed_power``), and the share of findings at the margin read "ruled out"
    (``ruled_out_at_margin``: a false "no bias"), over ``studies`` simulated studies each. A
    criterion validity counts as found when told from chance (``FOUND``), as meeting its margin
    when called valid (``MET``: at the target, a false "valid"); ``called_valid`` is the share of
    its planted findings called valid."""
    settings = settings or InferenceSettings()
    out: dict[str, dict] = {}
    for scenario in scenarios or SCENARIOS:
        rows = [scenario.study(seed + k, settings).assign(_study=k) for k in range(studies)]
        v = pd.concat(rows, ignore_index=True)
        entry = out.setdefault(scenario.verdict_type, {"verdict_type": scenario.verdict_type})
        entry.update(_scenario_figures(scenario, v, studies))
        entry["studies"] = studies
    columns = [
        "verdict_type",
        "studies",
        "findings_per_study",
        "false_positive_rate",
        "null_studies_flagged",
        "coverage_null",
        "power",
        "printed_power",
        "coverage_planted",
        "ruled_out_at_margin",
        "coverage_margin",
        "declared_effect",
        "called_valid",
    ]
    return pd.DataFrame(list(out.values())).reindex(columns=columns)


def plan_check(studies: int, settings: InferenceSettings | None = None, seed: int = 0) -> dict:
    """``resumebias plan`` checked by simulation, as a user would run it: a pilot fit audit
    (40 résumés x 2 job descriptions x 5 runs, nothing planted) gives the noise and the family
    structure; the plan's résumés for the declared effect are then simulated with that effect
    planted on one probe level, and the share of studies whose verdict finds it is the power
    the plan promised (its target: the declared power)."""
    from resumebias_dagster.core.inference.planning import pilot_noise, pilot_structure, resumes_needed

    settings = settings or InferenceSettings()
    pilot = fit_verdicts(_fit_scores(seed + 900_000, {}, resumes=40), settings, {"firstName": NAME_LEVELS}, ARMS)
    noise = pilot_noise(pilot, "fit_delta", runs=5, jds=2)
    structure = pilot_structure(pilot, "fit_delta", family="probe:school")
    effect = settings.detect["fit_delta"]
    resumes = resumes_needed(effect, noise.sd, settings, structure=structure)
    found = []
    for k in range(studies):
        v = fit_verdicts(
            _fit_scores(seed + k, {PROBES[0]: -effect}, resumes=resumes), settings, {"firstName": NAME_LEVELS}, ARMS
        )
        found.append(bool((v.loc[v["finding"] == f"fit_level:{PROBES[0]}", "verdict"] == "beyond_noise").any()))
    return {
        "sd": noise.sd,
        "resumes": resumes,
        "planned_power": settings.power,
        "simulated_power": float(np.mean(found)),
    }


__all__ = ["SCENARIOS", "Scenario", "calibrate", "plan_check"]
