"""Fit-score statistics (core/jd_audit/fit_stats.py) against scipy, statsmodels, hand-computed
numbers and simulated experiments with planted effects."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from resumebias_dagster.core.jd_audit.fit_stats import (
    EFFECT_COLUMNS,
    MODEL_SUMMARY_COLUMNS,
    axis_summary,
    bh_qvalues,
    fit_effects,
    model_summary,
)
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

ARMS = {"placebo": "placebo", "promptInjection": "prompt_injection", "anonymize": "anonymize"}


def rows(model, jd, variant, scores, start_run=0):
    return [
        {"model": model, "jd": jd, "variant": variant, "run": start_run + i, "score": s} for i, s in enumerate(scores)
    ]


def table(*groups):
    return pd.DataFrame([r for g in groups for r in g])


def cell(effects, variant, model="m", jd="j"):
    hit = effects[(effects["model"] == model) & (effects["jd"] == jd) & (effects["variant"] == variant)]
    assert len(hit) == 1
    return hit.iloc[0]


# --------------------------------------------------------------------------- Welch


def test_welch_matches_hand_computed_numbers():
    # baseline 6 7 8: mean 7, s² 1; variant 4 5 6 7: mean 5.5, s² 5/3.
    df = table(rows("m", "j", "baseline", [6, 7, 8]), rows("m", "j", "school_mit", [4, 5, 6, 7]))
    e = cell(fit_effects(df, arms=ARMS), "school_mit")
    a1, a2 = 1 / 3, (5 / 3) / 4
    se = math.sqrt(a1 + a2)
    dof = (a1 + a2) ** 2 / (a1**2 / 2 + a2**2 / 3)
    assert e["delta"] == pytest.approx(-1.5)
    assert e["se"] == pytest.approx(se)
    assert e["df"] == pytest.approx(dof)
    assert dof == pytest.approx(4.9592, abs=1e-4)
    assert e["t"] == pytest.approx(-1.5 / se)
    assert e["p_value"] == pytest.approx(2 * stats.t.sf(1.5 / se, dof))
    half = stats.t.ppf(0.975, dof) * se
    assert (e["ci_low"], e["ci_high"]) == pytest.approx((-1.5 - half, -1.5 + half))
    assert (e["n_baseline"], e["n_variant"], e["axis"], e["level"], e["arm"]) == (3, 4, "school", "mit", "probe")
    assert not e["degenerate"] and e["note"] == ""


def test_welch_matches_scipy_on_many_cells():
    rng = np.random.default_rng(7)
    groups = []
    for model in ("a", "b"):
        for jd in ("j1", "j2", "j3"):
            groups.append(rows(model, jd, "baseline", rng.normal(6, rng.uniform(0.5, 2), rng.integers(2, 12))))
            for variant in ("firstName_x", "school_y", "placebo_z"):
                groups.append(rows(model, jd, variant, rng.normal(5.5, rng.uniform(0.5, 2), rng.integers(2, 12))))
    df = table(*groups)
    effects = fit_effects(df, arms=ARMS)
    assert list(effects.columns) == list(EFFECT_COLUMNS)
    assert len(effects) == 2 * 3 * 3
    for e in effects.itertuples():
        base = df[(df.model == e.model) & (df.jd == e.jd) & (df.variant == "baseline")]["score"]
        var = df[(df.model == e.model) & (df.jd == e.jd) & (df.variant == e.variant)]["score"]
        ref = stats.ttest_ind(var, base, equal_var=False)
        ci = ref.confidence_interval(0.95)
        assert e.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        assert e.t == pytest.approx(ref.statistic, rel=1e-9)
        assert e.df == pytest.approx(ref.df, rel=1e-9)
        assert (e.ci_low, e.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-9)
        assert e.delta == pytest.approx(var.mean() - base.mean())


def test_bh_matches_scipy_and_statsmodels_per_model():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    groups = []
    for model in ("a", "b", "c"):
        for jd in ("j1", "j2"):
            groups.append(rows(model, jd, "baseline", rng.normal(6, 1, 6)))
            for k in range(12):
                shift = -1.2 if k < 3 else 0.0
                groups.append(rows(model, jd, f"axis{k}_l", rng.normal(6 + shift, 1, 6)))
    effects = fit_effects(table(*groups), arms=ARMS)
    for _, e in effects.groupby("model"):
        p = e["p_value"].to_numpy()
        np.testing.assert_allclose(e["q_value"], stats.false_discovery_control(p, method="bh"), rtol=1e-12)
        np.testing.assert_allclose(e["q_value"], multipletests(p, method="fdr_bh")[1], rtol=1e-12)


def test_bh_qvalues_groups_ties_and_nan():
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.04, np.nan, 0.2, 0.001, 0.5, 0.03, 0.03, np.nan])
    g = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    q = bh_qvalues(p, g)
    for k in (0, 1):
        ok = (g == k) & ~np.isnan(p)
        np.testing.assert_allclose(q[ok], multipletests(p[ok], method="fdr_bh")[1])
    assert np.isnan(q[3]) and np.isnan(q[9])
    assert np.isnan(bh_qvalues(np.array([np.nan]))).all()


# --------------------------------------------------------------------------- conventions


@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")  # scipy on the constant reference side
def test_both_sides_constant_conventions():
    df = table(
        rows("m", "j", "baseline", [7, 7, 7, 7, 7]),
        rows("m", "j", "school_same", [7, 7, 7, 7, 7]),
        rows("m", "j", "school_lower", [6, 6, 6, 6, 6]),
        rows("m", "j", "school_fewer", [8, 8, 8]),
        rows("m", "j", "school_noisy", [6, 7, 8, 7, 6]),
    )
    effects = fit_effects(df, arms=ARMS)
    same, lower, fewer = (cell(effects, v) for v in ("school_same", "school_lower", "school_fewer"))
    assert same["degenerate"] and same["p_value"] == 1.0 and same["t"] == 0.0
    assert (same["ci_low"], same["ci_high"], same["se"]) == (0.0, 0.0, 0.0)
    assert "p = 1" in same["note"]
    # Exact permutation p: the observed split (and its mirror when n_b == n_v) of C(10, 5).
    assert lower["degenerate"] and lower["p_value"] == pytest.approx(2 / math.comb(10, 5))
    assert lower["t"] == -np.inf and lower["df"] == 8
    assert (lower["ci_low"], lower["ci_high"]) == (-1.0, -1.0)
    assert fewer["p_value"] == pytest.approx(1 / math.comb(8, 3))
    assert "permutation" in lower["note"]
    # One constant side is ordinary Welch.
    noisy = cell(effects, "school_noisy")
    ref = stats.ttest_ind([6, 7, 8, 7, 6], [7] * 5, equal_var=False)
    assert not noisy["degenerate"] and noisy["p_value"] == pytest.approx(ref.pvalue)
    for column in ("p_value", "q_value", "ci_low", "ci_high", "se", "df"):
        assert effects[column].notna().all(), column


def test_constant_float_scores_count_as_constant():
    df = table(rows("m", "j", "baseline", [6.73] * 7), rows("m", "j", "school_x", [6.1] * 3))
    e = cell(fit_effects(df, arms=ARMS), "school_x")
    assert e["degenerate"] and e["p_value"] == pytest.approx(1 / math.comb(10, 3))


def test_fewer_than_two_runs_give_nan_with_a_reason_and_leave_bh_alone():
    df = table(
        rows("m", "j", "baseline", [5, 6, 7, 6]),
        rows("m", "j", "school_one", [3]),
        rows("m", "j", "school_a", [3, 4, 3, 4]),
        rows("m", "j", "school_b", [6, 5, 7, 6]),
        rows("m", "k", "baseline", [6]),
        rows("m", "k", "school_a", [5, 6]),
    )
    effects = fit_effects(df, arms=ARMS)
    one = cell(effects, "school_one")
    assert one["delta"] == pytest.approx(3 - 6)
    assert np.isnan(one["p_value"]) and np.isnan(one["q_value"]) and np.isnan(one["ci_low"])
    assert one["note"] == "fewer than 2 valid variant runs"
    assert cell(effects, "school_a", jd="k")["note"] == "fewer than 2 valid baseline runs"
    tested = effects[effects["p_value"].notna()]
    assert len(tested) == 2
    np.testing.assert_allclose(tested["q_value"], stats.false_discovery_control(tested["p_value"]))
    summary = model_summary(effects)
    assert summary.loc[0, "n_untestable"] == 2


def test_failed_runs_are_excluded_and_counted():
    df = table(rows("m", "j", "baseline", [6, np.nan, 7, 8]), rows("m", "j", "school_x", [5, 4, np.nan, np.nan, 6]))
    e = cell(fit_effects(df, arms=ARMS), "school_x")
    assert (e["n_baseline"], e["n_failed_baseline"], e["n_variant"], e["n_failed_variant"]) == (3, 1, 3, 2)
    ref = stats.ttest_ind([5, 4, 6], [6, 7, 8], equal_var=False)
    assert e["p_value"] == pytest.approx(ref.pvalue)


def test_missing_baseline_for_a_pair_is_noted():
    df = table(rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6]), rows("m", "k", "school_x", [5, 6]))
    e = cell(fit_effects(df, arms=ARMS), "school_x", jd="k")
    assert e["n_baseline"] == 0 and np.isnan(e["p_value"]) and e["note"] == "no baseline runs for this model and jd"


def test_input_errors():
    good = table(rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6]))
    with pytest.raises(ValueError, match="missing columns"):
        fit_effects(good.drop(columns=["run"]))
    with pytest.raises(ValueError, match="not a number"):
        fit_effects(good.assign(score=["6", "x", "5", "6"]))
    with pytest.raises(ValueError, match="no 'baseline' rows"):
        fit_effects(good[good["variant"] != "baseline"])
    with pytest.raises(ValueError, match="occurs twice"):
        fit_effects(pd.concat([good, good.iloc[[0]]]))



# --------------------------------------------------------------------------- recommend rate


def test_recommend_yes_rate_per_cell_beside_the_score_delta():
    """re-cinq's yes/no/maybe: the share of "yes" over the runs that answered a recommendation."""
    base = rows("m", "j", "baseline", [7, 7, 8, 6, 7])
    for r, rec in zip(base, ["yes", "yes", "yes", "maybe", "no"]):
        r["recommend"] = rec
    var = rows("m", "j", "firstName_x", [5, 6, 4, 6, np.nan, 6])
    # "maybe" is not a yes; run 4 failed; run 5 scored but gave no recommendation: both left out.
    for r, rec in zip(var, ["yes", "maybe", "no", "no", None, " "]):  # "": none, as an imported file writes it
        r["recommend"] = rec
    quiet = rows("m", "j", "school_y", [6, 7])  # a model that never recommends (no text)
    for r in quiet:
        r["recommend"] = None
    e = fit_effects(table(base, var, quiet), arms=ARMS)
    x = cell(e, "firstName_x")
    assert (x["n_recommend_baseline"], x["n_recommend_variant"]) == (5, 4)
    assert x["baseline_recommend_rate"] == pytest.approx(3 / 5)
    assert x["variant_recommend_rate"] == pytest.approx(1 / 4)
    assert x["recommend_rate_delta"] == pytest.approx(1 / 4 - 3 / 5)
    assert x["delta"] == pytest.approx(27 / 5 - 7)  # the score delta is unchanged beside it
    y = cell(e, "school_y")
    assert y["n_recommend_variant"] == 0 and np.isnan(y["variant_recommend_rate"])
    assert np.isnan(y["recommend_rate_delta"]) and y["baseline_recommend_rate"] == pytest.approx(3 / 5)
    # Recommendations are matched case- and space-insensitively, as the score parser writes them.
    again = fit_effects(table(base, var).assign(recommend=lambda d: d["recommend"].str.upper()), arms=ARMS)
    assert cell(again, "firstName_x")["variant_recommend_rate"] == pytest.approx(1 / 4)


def test_recommend_rate_is_nan_without_a_recommend_column():
    e = cell(fit_effects(table(rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6])), arms=ARMS), "school_x")
    assert (e["n_recommend_baseline"], e["n_recommend_variant"]) == (0, 0)
    assert np.isnan(e["baseline_recommend_rate"]) and np.isnan(e["recommend_rate_delta"])


def test_recommend_outside_yes_no_maybe_is_an_error():
    df = table(rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6])).assign(
        recommend=["yes", "no", "perhaps", "yes"]
    )
    with pytest.raises(ValueError, match=r"fit scores: recommend 'perhaps' \(row 2\) is not one of yes, no, maybe"):
        fit_effects(df, arms=ARMS)


# --------------------------------------------------------------------------- paired, arms, floor


def test_paired_test_on_matched_runs():
    base = [6, 7, 5, 8, 6, 7]
    var = [5, 7, 4, 6, 5, np.nan, 4]  # run 5 failed, run 6 has no baseline partner
    e = cell(fit_effects(table(rows("m", "j", "baseline", base), rows("m", "j", "school_x", var)), arms=ARMS), "school_x")
    b, v = np.array(base[:5], float), np.array(var[:5], float)
    ref = stats.ttest_rel(v, b)
    assert e["paired_n"] == 5
    assert e["paired_delta"] == pytest.approx((v - b).mean())
    assert e["paired_p"] == pytest.approx(ref.pvalue)


def test_paired_by_resume_and_constant_differences():
    df = table(
        [dict(r, resume_id="r1") for r in rows("m", "j", "baseline", [6, 7, 8])],
        [dict(r, resume_id="r2") for r in rows("m", "j", "baseline", [3, 4, 5])],
        [dict(r, resume_id="r1") for r in rows("m", "j", "school_x", [5, 6, 7])],
        [dict(r, resume_id="r2") for r in rows("m", "j", "school_x", [2, 3, 4])],
    )
    e = cell(fit_effects(df, arms=ARMS), "school_x")
    # Every pair differs by exactly -1: sign-flip convention 2 / 2**6.
    assert e["paired_n"] == 6 and e["paired_delta"] == pytest.approx(-1)
    assert e["paired_p"] == pytest.approx(2 / 2**6)


def test_axis_level_and_arm_come_from_the_variant_name_or_columns():
    df = table(
        rows("m", "j", "baseline", [6, 7, 8]),
        rows("m", "j", "addressCountry_sao_paulo", [5, 6, 7]),
        rows("m", "j", "placebo_blank_line", [6, 7, 7]),
        rows("m", "j", "anonymize_all", [6, 6, 7]),
    )
    e = fit_effects(df).set_index("variant")  # arms from the packaged probe_axes.yaml
    assert e.loc["addressCountry_sao_paulo", ["axis", "level", "arm"]].tolist() == ["addressCountry", "sao_paulo", "probe"]
    assert e.loc["placebo_blank_line", "arm"] == "placebo"
    assert e.loc["anonymize_all", ["axis", "level", "arm"]].tolist() == ["anonymize", "all", "anonymize"]
    with_arm = fit_effects(df.assign(arm="custom")).set_index("variant")
    assert (with_arm["arm"] == "custom").all()


def test_noise_floor_is_the_placebo_quantile_per_model():
    rng = np.random.default_rng(11)
    groups = []
    for model in ("a", "b"):
        for jd in ("j1", "j2", "j3"):
            groups.append(rows(model, jd, "baseline", rng.normal(6, 1, 8)))
            for variant in ("placebo_p1", "placebo_p2", "placebo_p3", "school_big", "school_none"):
                shift = -3.0 if variant == "school_big" else 0.0
                groups.append(rows(model, jd, variant, rng.normal(6 + shift, 1, 8)))
    groups.append(rows("c", "j1", "baseline", [5, 6, 7]))
    groups.append(rows("c", "j1", "school_big", [1, 2, 3]))
    effects = fit_effects(table(*groups), arms=ARMS)
    for model in ("a", "b"):
        e = effects[effects["model"] == model]
        floor = np.quantile(e.loc[e["arm"] == "placebo", "delta"].abs(), 0.95)
        np.testing.assert_allclose(e["noise_floor"], floor)
        np.testing.assert_array_equal(e["clears_floor"], e["delta"].abs() > floor)
        assert e.loc[e["variant"] == "school_big", "significant"].all()
        assert (e["significant"] == ((e["q_value"] < 0.05) & e["clears_floor"])).all()
    c = cell(effects, "school_big", model="c", jd="j1")
    assert np.isnan(c["noise_floor"]) and c["clears_floor"]


# --------------------------------------------------------------------------- summaries


def test_model_summary_bias_index_and_largest_penalty():
    df = table(
        rows("m", "j", "baseline", [6, 6, 7, 7, 6, 7]),
        rows("m", "j", "firstName_x", [3, 3, 4, 4, 3, 4]),
        rows("m", "j", "school_y", [6, 7, 7, 6, 6, 7]),
        rows("m", "j", "placebo_p", [6, 7, 6, 7, 7, 6]),
        rows("m", "j", "promptInjection_e", [9, 10, 10, 9, 10, 10]),
    )
    effects = fit_effects(df, arms=ARMS, floor_quantile=0.95)
    s = model_summary(effects)
    assert list(s.columns) == list(MODEL_SUMMARY_COLUMNS)
    row = s.iloc[0]
    assert row["probe_mean_abs_delta"] == pytest.approx((3 + 0) / 2)
    assert row["placebo_mean_abs_delta"] == pytest.approx(0)
    assert row["bias_index"] == pytest.approx(1.5)
    assert row["largest_penalty"] == pytest.approx(-3)
    assert (row["largest_penalty_jd"], row["largest_penalty_variant"]) == ("j", "firstName_x")
    assert row["prompt_injection_mean_delta"] == pytest.approx(9.666667 - 6.5, abs=1e-5)
    assert (row["n_probe_cells"], row["n_placebo_cells"], row["n_cells"]) == (2, 1, 4)


def test_axis_summary_pools_over_jds_by_inverse_variance():
    rng = np.random.default_rng(5)
    groups = []
    for jd in ("j1", "j2", "j3"):
        groups.append(rows("m", jd, "baseline", rng.normal(6, 1, 10)))
        groups.append(rows("m", jd, "school_mit", rng.normal(6.5, 1, 10)))
    effects = fit_effects(table(*groups), arms=ARMS)
    out = axis_summary(effects)
    assert len(out) == 1
    row = out.iloc[0]
    w = 1 / effects["se"] ** 2
    pooled = (w * effects["delta"]).sum() / w.sum()
    assert row["pooled_delta"] == pytest.approx(pooled)
    assert row["pooled_se"] == pytest.approx(1 / np.sqrt(w.sum()))
    assert row["pooled_p"] == pytest.approx(2 * stats.norm.sf(abs(pooled) * np.sqrt(w.sum())))
    assert (row["n_jds"], row["n_pooled"], row["mean_delta"]) == (3, 3, pytest.approx(effects["delta"].mean()))


# --------------------------------------------------------------------------- simulation


def test_planted_effects_are_found_and_fdr_is_controlled():
    """200 simulated experiments (one per "model", so BH runs per experiment), each with
    4 JDs x (4 placebo + 4 planted + 12 null probe variants) x 20 runs."""
    n_exp, jds, runs = 200, ["j1", "j2", "j3", "j4"], 20
    placebo = [f"placebo_p{k}" for k in range(4)]
    planted = [f"firstName_planted{k}" for k in range(4)]
    null = [f"school_null{k}" for k in range(12)]
    variants = ["baseline", *placebo, *planted, *null]
    scores = simulate_fit_scores(
        [f"exp{k:03d}" for k in range(n_exp)], jds, variants, runs,
        effects={v: -1.5 for v in planted}, sd=1.0, seed=2024,
    )
    effects = fit_effects(scores, arms=ARMS)
    is_planted = effects["variant"].isin(planted)
    discovered = effects["q_value"] < 0.05

    power = discovered[is_planted].mean()
    assert power > 0.95
    assert effects.loc[is_planted, "significant"].mean() > 0.95

    # False discovery proportion per experiment, averaged: BH guarantees about
    # m0/m * 0.05 = 0.04 here; allow simulation error.
    false = (discovered & ~is_planted).groupby(effects["model"]).sum()
    total = discovered.groupby(effects["model"]).sum()
    fdr = (false / total.clip(lower=1)).mean()
    assert fdr < 0.05 + 0.015
    sig_false = (effects["significant"] & ~is_planted).groupby(effects["model"]).sum()
    sig_total = effects["significant"].groupby(effects["model"]).sum()
    assert (sig_false / sig_total.clip(lower=1)).mean() <= fdr
    # Null cells are rarely flagged, and the bias index sees the planted effect.
    assert discovered[effects["variant"].isin(null)].mean() < 0.02
    summary = model_summary(effects)
    assert (summary["bias_index"] > 0).mean() > 0.95


def test_bias_index_is_near_zero_without_effects():
    variants = ["baseline", *[f"placebo_p{k}" for k in range(4)], *[f"school_n{k}" for k in range(8)]]
    scores = simulate_fit_scores([f"m{k}" for k in range(50)], ["j1", "j2", "j3"], variants, 10, seed=9)
    summary = model_summary(fit_effects(scores, arms=ARMS))
    assert abs(summary["bias_index"].mean()) < 0.05
    assert summary["largest_penalty_variant"].eq("").mean() > 0.8


def test_integer_scores_with_failures_run_without_nan_p():
    variants = ["baseline", "placebo_p", "firstName_a", "firstName_b"]
    scores = simulate_fit_scores(["m1", "m2"], ["j1", "j2"], variants, 5, effects={"firstName_a": -2},
                                 sd=0.4, integer=True, failure_rate=0.05, seed=1)
    effects = fit_effects(scores, arms=ARMS)
    testable = (effects["n_baseline"] >= 2) & (effects["n_variant"] >= 2)
    assert effects.loc[testable, "p_value"].notna().all()
    assert effects.loc[testable, "q_value"].notna().all()


def test_no_scores_give_the_declared_tables_typed_and_empty():
    from resumebias_dagster.core.tables import FitAxisSummary, FitEffects, FitModelSummary, columns

    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in ("model", "jd", "variant", "run", "score")})
    effects = fit_effects(empty)
    assert list(effects.columns) == columns(FitEffects) and effects.empty
    FitEffects.validate(effects)
    for table, model in ((model_summary(effects), FitModelSummary), (axis_summary(effects), FitAxisSummary)):
        assert list(table.columns) == columns(model) and table.empty
        model.validate(table)


def test_snapshots_name_each_models_resolved_models_in_effects_and_summary():
    df = table(rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6]))
    effects = fit_effects(df, arms=ARMS, snapshots={"m": "gpt-x-2026-01-01"})
    assert effects["resolved_models"].tolist() == ["gpt-x-2026-01-01"]
    assert model_summary(effects)["resolved_models"].tolist() == ["gpt-x-2026-01-01"]
    assert fit_effects(df, arms=ARMS)["resolved_models"].isna().all()
