"""The seniority task's validity findings (issue 42): notebook 001's accuracy and rank difference
with intervals and verdicts, per name group and their gaps, under their own multiplicity control."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.inference import InferenceSettings, load_inference_settings
from resumebias_dagster.core.seniority import verdicts as verdicts_module
from resumebias_dagster.core.seniority.validity import ACCURACY, RANK_DIFFERENCE, seniority_validity_verdicts
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.testing.calibration import calibrate
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions
from resumebias_dagster.testing.seniority_validity_calibration import (
    SENIORITY_VALIDITY_SCENARIOS,
    labeller_predictions,
)

SETTINGS = load_inference_settings()


def _row(v: pd.DataFrame, finding: str) -> dict:
    rows = v[v["finding"] == finding]
    assert len(rows) == 1, f"{finding}: {len(rows)} rows"
    return rows.iloc[0].to_dict()


def test_accuracy_is_notebook_001s_accuracy_with_an_interval():
    preds = labeller_predictions(3, resumes=60, accuracy=0.7)
    v = seniority_validity_verdicts(preds, SETTINGS)
    acc = _row(v, ACCURACY)
    # On a balanced design every résumé has 7 texts: the mean of the shares is the plain accuracy.
    assert acc["estimate"] == pytest.approx((preds["prediction"] == preds["true_seniority"]).mean())
    assert acc["kind"] == "seniority_accuracy" and acc["study"] == "seniority" and acc["n_resumes"] == 60
    assert acc["ci_low"] < acc["estimate"] < acc["ci_high"]
    assert acc["verdict"] == "better than chance" and acc["margin"] == SETTINGS.margins["seniority_accuracy"]
    rank = _row(v, RANK_DIFFERENCE)
    rank_diff = preds["prediction"].map({"junior": 0, "mid": 1, "senior": 2}) - preds["true_seniority"].map(
        {"junior": 0, "mid": 1, "senior": 2}
    )
    assert rank["estimate"] == pytest.approx(rank_diff.mean())
    assert rank["kind"] == "rank_difference" and rank["unit"] == "levels"


def test_exact_accuracy_is_the_mean_probability_of_the_true_level():
    preds = simulate_seniority_predictions(n_resumes=30, runs=2, exact=True, seed=4)
    acc = _row(seniority_validity_verdicts(preds, SETTINGS), ACCURACY)
    p_true = np.choose(
        preds["true_seniority"].map({"junior": 0, "mid": 1, "senior": 2}).to_numpy(),
        [preds["p_junior"], preds["p_mid"], preds["p_senior"]],
    )
    assert acc["estimate"] == pytest.approx(p_true.mean())
    assert "exact, from label distributions" in acc["note"]
    # The metrics table's accuracy (exp_accuracy, over every row) is the same figure.
    assert acc["estimate"] == pytest.approx(
        preds.assign(p=p_true).groupby(["variant_kind", "original_idx", "variant"])["p"].mean().mean()
    )


def test_a_labeller_that_always_says_mid_is_no_better_than_chance():
    preds = labeller_predictions(0, resumes=120, how="ignores", mix=(0.0, 1.0, 0.0))
    v = seniority_validity_verdicts(preds, SETTINGS)
    acc = _row(v, ACCURACY)
    assert acc["estimate"] == pytest.approx(1 / 3)
    assert acc["verdict"] == "no better than chance" and acc["ci_low"] < 1 / 3 < acc["ci_high"]
    assert _row(v, RANK_DIFFERENCE)["estimate"] == pytest.approx(0.0)


def test_a_perfect_classifier_is_valid_with_the_exact_bound_of_what_the_sample_can_miss():
    preds = labeller_predictions(0, resumes=120, accuracy=1.0)
    acc = _row(seniority_validity_verdicts(preds, SETTINGS), ACCURACY)
    assert acc["estimate"] == 1.0 and acc["ci_high"] == 1.0
    assert acc["ci_low"] == pytest.approx(0.025 ** (1 / 120), abs=1e-9)  # 120 résumés all right
    assert acc["verdict"] == "valid"


def test_one_resume_has_no_interval_and_says_why():
    preds = labeller_predictions(0, resumes=1, accuracy=0.8)
    acc = _row(seniority_validity_verdicts(preds, SETTINGS), ACCURACY)
    assert np.isnan(acc["ci_low"]) and acc["verdict"] == "no better than chance"
    assert "one résumé: no interval" in acc["note"]


def test_unequal_levels_say_that_chance_is_a_low_bar():
    preds = labeller_predictions(0, resumes=30, accuracy=0.8)
    preds = preds[~((preds["true_seniority"] == "junior") & (preds["original_idx"] % 2 == 0))]
    acc = _row(seniority_validity_verdicts(preds, SETTINGS), ACCURACY)
    assert "levels unequal (junior 5, mid 10, senior 10 résumés)" in acc["note"]
    assert "always gives the commonest level is right on 40%" in acc["note"]


def test_a_group_read_less_accurately_shows_its_gap():
    accuracy = {"*": 0.95, "caucasian_male": 0.95, "caucasian_female": 0.95, "african_american_male": 0.95}
    accuracy["african_american_female"] = 0.45
    preds = labeller_predictions(1, resumes=120, accuracy=accuracy)
    v = seniority_validity_verdicts(preds, SETTINGS)
    gap = _row(v, "validity:accuracy_gap:african_american_female")
    assert gap["verdict"] == "beyond_noise" and gap["ci_high"] < 0 and gap["kind"] == "validity_gap"
    assert "minus caucasian_male" in gap["description"]
    assert _row(v, "validity:accuracy_gap:caucasian_female")["verdict"] != "beyond_noise"
    group = _row(v, "validity:accuracy:group:caucasian_male")
    assert "interval at 98.75%" in group["note"] and group["verdict"] in ("valid", "better than chance")


def test_validity_takes_no_part_in_the_bias_findings_multiplicity(monkeypatch):
    preds = simulate_seniority_predictions(n_resumes=24, runs=2, exact=False, seed=2, style_effects={"overstated": 0.3})
    with_validity = seniority_verdicts(preds, SETTINGS)
    assert with_validity["finding"].str.startswith("validity:").any()
    empty = seniority_validity_verdicts(preds.iloc[:0], SETTINGS)
    monkeypatch.setattr(verdicts_module, "seniority_validity_verdicts", lambda *a, **k: empty)
    without = seniority_verdicts(preds, SETTINGS)
    bias = with_validity[~with_validity["finding"].str.startswith("validity:")].reset_index(drop=True)
    pd.testing.assert_frame_equal(bias, without.reset_index(drop=True))


def test_the_calibration_holds_in_small():
    """A few studies of each scenario through the asset's code (the benchmark runs 400)."""
    table = calibrate(12, InferenceSettings(), scenarios=SENIORITY_VALIDITY_SCENARIOS).set_index("verdict_type")
    null = table["false_positive_rate"].dropna()
    assert (null <= 0.25).all(), null[null > 0.25]  # 12 studies: 3 false findings in 12 would be a fault
    assert table.loc["seniority validity: reads 95% (120, sticky): accuracy", "power"] == 1.0
