"""Fit-score statistics (core/jd_audit/fit_stats.py): the résumé is the unit, runs are
repeated measures, exact expectations replace sampled runs, one kind of p per table, arms
and axes are separate families; checked against scipy and simulated experiments."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from resumebias_dagster.core.inference import InferenceSettings, bh_qvalues
from resumebias_dagster.core.jd_audit.fit_pooled import axis_summary
from resumebias_dagster.core.jd_audit.fit_stats import EFFECT_COLUMNS, MODEL_SUMMARY_COLUMNS, fit_effects, model_summary
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

ARMS = {"placebo": "placebo", "promptInjection": "prompt_injection", "anonymize": "anonymize"}


def rows(model, jd, variant, scores, start_run=0, resume="r0"):
    return [
        {"model": model, "jd": jd, "resume_id": resume, "variant": variant, "run": start_run + i, "score": s}
        for i, s in enumerate(scores)
    ]


def table(*groups):
    return pd.DataFrame([r for g in groups for r in g])


def cell(effects, variant, model="m", jd="j"):
    hit = effects[(effects["model"] == model) & (effects["jd"] == jd) & (effects["variant"] == variant)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_the_resume_is_the_unit_sign_flip_p_and_t_interval_over_resumes():
    scores = simulate_fit_scores(
        ["m"], ["j"], ["baseline", "school_x"], 5, effects={"school_x": -0.8}, resumes=9, effect_sd=0.5, seed=2
    )
    e = cell(fit_effects(scores, arms=ARMS), "school_x")
    per_resume = scores.groupby(["resume_id", "variant"])["score"].mean().unstack()
    d = (per_resume["school_x"] - per_resume["baseline"]).to_numpy()
    assert e["n_resumes"] == 9 and e["n_baseline"] == 45 and e["test"] == "sign_flip"
    assert e["delta"] == pytest.approx(d.mean())
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert (e["ci_low"], e["ci_high"]) == pytest.approx((ci.low, ci.high))
    ref = stats.permutation_test(
        (d,),
        lambda x, axis: stats.ttest_1samp(x, 0.0, axis=axis).statistic,
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    assert e["p_value"] == pytest.approx(ref.pvalue)
    assert e["df"] == 8  # 45 runs a side, but 9 résumés


def test_exact_expectations_replace_the_sampled_runs():
    # Issue 24, item 3: the embedded LLM stores each variant's expected score, yet the effects
    # used the 5 sampled draws, adding noise the model does not have.
    scores = simulate_fit_scores(
        ["m"],
        ["j"],
        ["baseline", "placebo_a", "school_x"],
        5,
        effects={"school_x": -0.5},
        resumes=6,
        sd=2.0,
        seed=3,
        exact=True,
        integer=True,
    )
    e = fit_effects(scores, arms=ARMS)
    x = cell(e, "school_x")
    exact = scores.groupby(["resume_id", "variant"])["expected_score"].mean().unstack()
    assert x["delta"] == pytest.approx((exact["school_x"] - exact["baseline"]).mean())
    sampled = scores.groupby(["resume_id", "variant"])["score"].mean().unstack()
    assert x["delta"] != pytest.approx((sampled["school_x"] - sampled["baseline"]).mean())
    # The placebo floor is what the exact placebo edits move the score by (here: nothing).
    assert cell(e, "placebo_a")["delta"] == pytest.approx(0.0, abs=1e-12)
    assert x["noise_floor"] == pytest.approx(0.0, abs=1e-12)


def test_one_kind_of_p_a_permutation_never_below_what_it_can_give():
    # Issue 24, item 5: [7]*5 against [6,6,6,6,5] got Welch's 0.0039 beside exact permutation
    # p-values elsewhere in the table; with one résumé every cell is now a run permutation.
    df = table(
        rows("m", "j", "baseline", [7] * 5),
        rows("m", "j", "school_x", [6, 6, 6, 6, 5]),
        rows("m", "j", "school_y", [7, 6, 7, 6, 8]),
    )
    e = fit_effects(df, arms=ARMS)
    assert set(e["test"]) == {"run_permutation"}
    assert cell(e, "school_x")["p_value"] == pytest.approx(2 / 252)
    assert (e["p_value"] >= 2 / 252 - 1e-12).all()
    assert "a claim about that résumé only" in cell(e, "school_x")["note"]


def test_one_resume_scored_exactly_has_nothing_to_test_and_says_so():
    df = table(rows("m", "j", "baseline", [7, 7]), rows("m", "j", "school_x", [6, 6])).assign(
        expected_score=[7.2, 7.2, 6.1, 6.1]
    )
    x = cell(fit_effects(df, arms=ARMS), "school_x")
    assert x["delta"] == pytest.approx(-1.1) and np.isnan(x["p_value"]) and x["test"] == ""
    assert x["verdict"] == "inconclusive" and "exact" in x["note"]


def test_prompt_injection_cells_do_not_loosen_the_probe_cells():
    # Issue 24, item 4: one BH family over every cell let near-certain prompt-injection
    # rejections raise the probe cells' threshold.
    variants = ["baseline", "school_a", "school_b", "school_c", "school_d"]
    scores = simulate_fit_scores(
        ["m"], [f"j{k}" for k in range(4)], variants, 1, resumes=8, seed=5, effects={"school_a": -0.9, "school_b": -0.6}
    )
    injected = simulate_fit_scores(
        ["m"],
        [f"j{k}" for k in range(4)],
        ["baseline", *[f"promptInjection_{k}" for k in "xyz"]],
        1,
        resumes=8,
        seed=5,
        effects={f"promptInjection_{k}": 3.0 for k in "xyz"},
    )
    with_injection = pd.concat([scores, injected[injected["variant"] != "baseline"]], ignore_index=True)
    alone = fit_effects(scores, arms=ARMS).set_index(["jd", "variant"])["q_value"]
    both = fit_effects(with_injection, arms=ARMS)
    probe = both[both["arm"] == "probe"].set_index(["jd", "variant"])["q_value"]
    # Families are selected by Holm: a family of near-certain findings is selected first and
    # never lowers another family's adjusted p, so the probe cells' decisions stay theirs.
    with_pi, without = probe.sort_index().to_numpy(), alone.sort_index().to_numpy()
    assert (with_pi >= without - 1e-12).all()
    assert ((with_pi <= 0.05) == (without <= 0.05)).all()
    # The old single family would have moved them.
    pooled = bh_qvalues(both["p_value"].to_numpy())[(both["arm"] == "probe").to_numpy()]
    assert not np.allclose(pooled, bh_qvalues(both.loc[both["arm"] == "probe", "p_value"].to_numpy()))


def test_bias_index_does_not_shrink_with_noise():
    # Issue 24, item 6: a true 0.5-point effect on every probe cell read 0.27 at se 0.3 and
    # 0.05 at se 1.8 (mean |delta| of the probes minus that of the placebos).
    variants = ["baseline", *[f"placebo_{k}" for k in range(4)], *[f"school_{k}" for k in range(8)]]
    planted = {v: 0.5 for v in variants if v.startswith("school")}
    readings = []
    for sd in (0.3, 1.8):
        index = [
            model_summary(
                fit_effects(
                    simulate_fit_scores(
                        ["m"],
                        [f"j{k}" for k in range(17)],
                        variants,
                        5,
                        effects=planted,
                        sd=sd,
                        resumes=6,
                        resume_sd=0.0,
                        seed=seed,
                    ),
                    arms=ARMS,
                )
            ).iloc[0]["bias_index"]
            for seed in range(5)
        ]
        readings.append(np.mean(index))
    assert readings == pytest.approx([0.5, 0.5], abs=0.1)


def test_failed_runs_are_excluded_and_counted():
    df = table(rows("m", "j", "baseline", [6, np.nan, 7, 8]), rows("m", "j", "school_x", [5, 4, np.nan, np.nan, 6]))
    e = cell(fit_effects(df, arms=ARMS), "school_x")
    assert (e["n_baseline"], e["n_failed_baseline"], e["n_variant"], e["n_failed_variant"]) == (3, 1, 3, 2)
    assert e["delta"] == pytest.approx(5 - 7)


def test_missing_baseline_for_a_pair_is_noted():
    df = table(
        rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6]), rows("m", "k", "school_x", [5, 6])
    )
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


def test_recommend_yes_rate_per_cell_beside_the_score_delta():
    base = rows("m", "j", "baseline", [7, 7, 8, 6, 7])
    for r, rec in zip(base, ["yes", "yes", "yes", "maybe", "no"]):
        r["recommend"] = rec
    var = rows("m", "j", "firstName_x", [5, 6, 4, 6, np.nan, 6])
    for r, rec in zip(var, ["yes", "maybe", "no", "no", None, " "]):
        r["recommend"] = rec
    e = fit_effects(table(base, var), arms=ARMS)
    x = cell(e, "firstName_x")
    assert (x["n_recommend_baseline"], x["n_recommend_variant"]) == (5, 4)
    assert x["recommend_rate_delta"] == pytest.approx(1 / 4 - 3 / 5)
    with pytest.raises(ValueError, match=r"fit scores: recommend 'perhaps' \(row 2\) is not one of yes, no, maybe"):
        fit_effects(
            table(rows("m", "j", "baseline", [6, 7]), rows("m", "j", "school_x", [5, 6])).assign(
                recommend=["yes", "no", "perhaps", "yes"]
            ),
            arms=ARMS,
        )


def test_axis_level_and_arm_come_from_the_variant_name_or_columns():
    df = table(
        rows("m", "j", "baseline", [6, 7, 8]),
        rows("m", "j", "addressCountry_sao_paulo", [5, 6, 7]),
        rows("m", "j", "placebo_blank_line", [6, 7, 7]),
        rows("m", "j", "anonymize_all", [6, 6, 7]),
    )
    e = fit_effects(df).set_index("variant")  # arms from the packaged probe_axes.yaml
    assert e.loc["addressCountry_sao_paulo", ["axis", "level", "arm"]].tolist() == [
        "addressCountry",
        "sao_paulo",
        "probe",
    ]
    assert e.loc["placebo_blank_line", "arm"] == "placebo"
    assert (fit_effects(df.assign(arm="custom")).set_index("variant")["arm"] == "custom").all()


def test_placebo_arm_is_the_empirical_null_of_every_cell():
    variants = ["baseline", *[f"placebo_{k}" for k in range(6)], "school_big", "school_none"]
    scores = simulate_fit_scores(
        ["m"], [f"j{k}" for k in range(5)], variants, 3, resumes=8, seed=9, effects={"school_big": -2.0}
    )
    e = fit_effects(scores, arms=ARMS)
    big = e[e["variant"] == "school_big"]
    assert np.allclose(big["placebo_p"], 1 / 31)  # beyond all 30 placebo cells
    assert e.loc[e["variant"] == "school_none", "placebo_p"].median() > 0.2
    assert ((e["placebo_p"] > 0) & (e["placebo_p"] <= 1)).all()


def test_planted_effects_are_found_and_null_cells_rarely():
    variants = ["baseline", *[f"placebo_{k}" for k in range(4)], *[f"axis{k // 4}_l{k % 4}" for k in range(16)]]
    planted = {v: -1.5 for v in variants[5:9]}
    scores = simulate_fit_scores(
        ["m1", "m2"], [f"j{k}" for k in range(4)], variants, 3, effects=planted, resumes=10, effect_sd=0.3, seed=11
    )
    e = fit_effects(scores, arms=ARMS)
    real = e["variant"].isin(list(planted))
    assert e.loc[real, "significant"].mean() > 0.8
    assert e.loc[~real, "significant"].mean() < 0.05
    assert (e["significant"] == (e["verdict"] == "beyond_noise")).all()
    assert list(e.columns) == list(EFFECT_COLUMNS)


def test_model_summary_and_axis_summary_pool_over_jds_with_the_resume_as_unit():
    variants = ["baseline", "placebo_a", "school_x", "school_y"]
    scores = simulate_fit_scores(
        ["m"], ["j1", "j2", "j3"], variants, 2, effects={"school_x": -1.5}, resumes=10, seed=12
    )
    e = fit_effects(scores, arms=ARMS)
    s = model_summary(e).iloc[0]
    assert list(model_summary(e).columns) == list(MODEL_SUMMARY_COLUMNS)
    assert s["largest_penalty_variant"] == "school_x" and s["largest_penalty"] < -0.5
    axes = axis_summary(e, scores, arms=ARMS).set_index("variant")
    x = axes.loc["school_x"]
    per = scores.groupby(["resume_id", "jd", "variant"])["score"].mean().unstack()
    d = (per["school_x"] - per["baseline"]).groupby(level="resume_id").mean().to_numpy()
    assert x["n_resumes"] == 10 and x["pooled_delta"] == pytest.approx(d.mean()) and x["pooled_test"] == "t_resume"
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert (x["pooled_ci_low"], x["pooled_ci_high"]) == pytest.approx((ci.low, ci.high))


def test_settings_declare_the_level():
    scores = simulate_fit_scores(
        ["m"], ["j"], ["baseline", "school_x"], 2, effects={"school_x": -0.7}, resumes=8, seed=4
    )
    loose = fit_effects(scores, arms=ARMS, settings=InferenceSettings(alpha=0.2))
    strict = fit_effects(scores, arms=ARMS, settings=InferenceSettings(alpha=0.001))
    assert loose["significant"].sum() >= strict["significant"].sum()


def test_no_scores_give_the_declared_tables_typed_and_empty():
    from resumebias_dagster.core.tables import FitAxisSummary, FitEffects, FitModelSummary, columns

    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in ("model", "jd", "variant", "run", "score")})
    effects = fit_effects(empty)
    assert list(effects.columns) == columns(FitEffects) and effects.empty
    FitEffects.validate(effects)
    for t, model in ((model_summary(effects), FitModelSummary), (axis_summary(effects), FitAxisSummary)):
        assert list(t.columns) == columns(model) and t.empty
        model.validate(t)


def test_tables_pass_their_schemas_and_name_snapshots():
    from resumebias_dagster.core.tables import FitAxisSummary, FitEffects, FitModelSummary

    scores = simulate_fit_scores(
        ["m"],
        ["j1", "j2"],
        ["baseline", "placebo_a", "school_x"],
        3,
        resumes=5,
        integer=True,
        failure_rate=0.05,
        seed=13,
    )
    effects = fit_effects(scores, arms=ARMS, snapshots={"m": "gpt-x-2026-01-01"})
    FitEffects.validate(effects)
    FitModelSummary.validate(model_summary(effects))
    FitAxisSummary.validate(axis_summary(effects, scores, arms=ARMS))
    assert (effects["resolved_models"] == "gpt-x-2026-01-01").all()
    assert model_summary(effects)["resolved_models"].tolist() == ["gpt-x-2026-01-01"]
