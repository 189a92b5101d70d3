"""The seniority study's verdicts: valid for the design (the résumé is the unit, runs are
repeated measures, names a random effect), and never "no bias" without an equivalence test."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.common.labels import DEMOGRAPHICS
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.reporting.findings import headline_findings
from resumebias_dagster.core.seniority.metrics import bias_summary
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions

SETTINGS = load_inference_settings()


def _rows(model, original, truth, preds, variants, run=0):
    return [
        {
            "variant_kind": "demographic",
            "original_idx": original,
            "variant": v,
            "model": model,
            "run": run,
            "prediction": p,
            "true_seniority": truth,
            "name": f"{v.title().replace('_', '')}{original} Name",
        }
        for v, p in zip(variants, preds)
    ]


def test_inconsistency_is_beyond_noise_in_few_null_studies_not_half_of_them():
    # Issue 24, item 1: the old summary compared the rate with the floor's expected value, so
    # half of the null studies read "beyond sampling noise".
    found = 0
    for seed in range(40):
        verdicts = seniority_verdicts(simulate_seniority_predictions(exact=False, seed=seed), SETTINGS)
        rows = verdicts[verdicts["kind"] == "inconsistency"]
        found += int((rows["verdict"] == "beyond_noise").any())
        summary = headline_findings(verdicts)["sim"]
        assert not any("share of résumés whose" in line for line in summary["found"]) or found
    assert found <= 5  # 5% of 40 is 2; 5 or more has probability 5% under a calibrated test


def test_one_flipped_resume_of_a_deterministic_model_is_not_a_finding():
    # Issue 24, item 10: a model at temperature 0 that moves 1 of 10 résumés. The old floor
    # (0 for a deterministic model) read that as beyond noise; paired by résumé it is p ~ 0.34.
    rows = []
    for o in range(10):
        for run in (0, 1):  # deterministic: both runs give the same labels
            rows += _rows("m", o, "mid", ["senior" if o == 0 else "mid", "mid", "mid", "mid"], DEMOGRAPHICS, run)
    df = pd.DataFrame(rows)
    old = bias_summary(df).iloc[0]
    assert old.extreme_bias_floor == 0 and abs(old.extreme_bias) > old.extreme_bias_floor
    v = seniority_verdicts(df, SETTINGS).set_index("finding").loc["seniority_bias:extreme"]
    assert v.estimate == pytest.approx(0.1)
    # Paired by résumé (t: p 0.34), and 9 of 10 résumés unmoved: the share of résumés that move
    # could be as high as its exact bound (45%), which widens the interval (p 0.56).
    assert v.p == pytest.approx(0.561, abs=0.01)
    assert v.ci_low < 0 < v.ci_high
    assert v.verdict == "inconclusive" and v.n_resumes == 10


def test_no_bias_is_said_only_when_an_equivalence_test_rules_it_out():
    # Issue 24, item 11: notebook 001's +-0.05 reading called a noisy estimate "no significant bias".
    noisy = simulate_seniority_predictions(n_resumes=24, runs=1, exact=False, seed=3)
    summary = bias_summary(noisy)
    demo = summary[summary["variant_kind"] == "demographic"].iloc[0]
    assert "no_significant_bias" not in set(
        summary[["racial_reading", "gender_reading", "extreme_reading"]].stack().tolist()
    )
    v = seniority_verdicts(noisy, SETTINGS).set_index("finding")
    for contrast in ("racial", "gender", "extreme"):
        row = v.loc[f"seniority_bias:{contrast}"]
        assert row.verdict != "equivalent" and row.ci_high - row.ci_low > 0.1
        if abs(demo[f"{contrast}_bias"]) <= 0.05:
            assert demo[f"{contrast}_reading"] == "within_threshold"
    # Exact distributions, small name effects: a tight interval around 0. From 30 résumés that
    # is not enough to rule out +-0.05 (an effect carried by a few résumés moved two levels could
    # be in none of them); from 150 it is.
    for n, verdict in ((30, "within_noise"), (150, "equivalent")):
        exact = seniority_verdicts(
            simulate_seniority_predictions(n_resumes=n, exact=True, seed=1, name_sd=0.05), SETTINGS
        ).set_index("finding")
        row = exact.loc["seniority_bias:gender"]
        assert row.verdict == verdict and -0.05 < row.ci_low < row.ci_high < 0.05


def test_a_planted_name_effect_is_found_and_its_interval_covers_it():
    effect = {"african_american_male": -0.6, "african_american_female": -0.6}
    v = seniority_verdicts(
        simulate_seniority_predictions(exact=True, group_effects=effect, name_sd=0.2, seed=4), SETTINGS
    ).set_index("finding")
    racial = v.loc["seniority_bias:racial"]
    assert racial.verdict == "beyond_noise" and racial.estimate > 0 and racial.n_names == 36
    assert racial.test == "t_resume_name"


def test_runs_are_averaged_not_counted_as_resumes():
    df = simulate_seniority_predictions(n_resumes=20, runs=7, exact=False, seed=5)
    v = seniority_verdicts(df, SETTINGS)
    v = v[v["kind"] != "impact_ratio"]  # "at or above the true level" leaves the junior résumés out
    assert set(v["n_resumes"]) == {20}
    # At most the résumés' 19 degrees of freedom plus the names' 32, never the 140 rows' or 700 runs'.
    assert (v["df"] <= 19 + 32 + 1e-9).all()
    assert (v.loc[v["test"] == "t_resume", "df"] == 19).all()


def test_a_model_without_distributions_and_one_run_has_no_retest_floor_and_says_so():
    df = simulate_seniority_predictions(n_resumes=20, runs=1, exact=False, seed=6)
    v = seniority_verdicts(df, SETTINGS).set_index("finding")
    row = v.loc["inconsistency:style"]
    assert np.isnan(row.estimate) and row.verdict == "inconclusive"
    assert "no retest floor" in row.note
