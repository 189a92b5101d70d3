"""A fast run of benchmarks/bench_inference_calibration.py: every verdict type, simulated
through the code the assets use, keeps its false-positive rate and covers the truth (loose
bounds for few studies; the benchmark runs hundreds), on the noisy LLM designs and on the
designs users bring (deterministic scorers, argmax classifiers, zero spread, one résumé)."""

import warnings

import numpy as np

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.testing.calibration import SCENARIOS, calibrate, plan_check
from resumebias_dagster.testing.screener_calibration import SCREENER_SCENARIOS


def test_every_verdict_type_is_calibrated_on_a_few_simulated_studies():
    warnings.simplefilter("ignore")
    table = calibrate(12, load_inference_settings(), seed=100).set_index("verdict_type")
    assert set(table.index) == {s.verdict_type for s in SCENARIOS}
    # 12 null studies: a calibrated test flags few of their findings.
    assert (table["false_positive_rate"] <= 0.15).all(), table["false_positive_rate"]
    for column in ("coverage_null", "coverage_planted"):
        finite = table[column].dropna()
        assert (finite >= 0.8).all(), table[column]
    planted = {s.verdict_type for s in SCENARIOS if s.planted}
    assert np.isfinite(table.loc[sorted(planted), "power"]).all()
    # Whole null studies, as the two analyze commands list their findings: few flagged.
    assert (table.loc[["analyze: whole study", "analyze-fit: whole study"], "null_studies_flagged"] <= 0.2).all()


def test_the_designs_users_bring_keep_their_error_rates_on_a_few_simulated_studies():
    warnings.simplefilter("ignore")
    table = calibrate(10, load_inference_settings(), seed=200, scenarios=SCREENER_SCENARIOS).set_index("verdict_type")
    assert set(table.index) == {s.verdict_type for s in SCREENER_SCENARIOS}
    assert (table["false_positive_rate"].dropna() <= 0.15).all(), table["false_positive_rate"]
    # Effects at the margin are a false "no bias" when ruled out: rare even over 10 studies.
    assert (table["ruled_out_at_margin"].dropna() <= 0.2).all(), table["ruled_out_at_margin"]
    for column in ("coverage_null", "coverage_planted", "coverage_margin"):
        assert (table[column].dropna() >= 0.8).all(), table[column]
    # A deterministic scorer that changes nothing: no finding, and every interval covers 0.
    nothing = table.loc["deterministic scorer, nothing changes (120 résumés)"]
    assert nothing["false_positive_rate"] == 0 and nothing["coverage_null"] == 1


def test_plan_asks_for_the_resumes_its_verdict_needs():
    warnings.simplefilter("ignore")
    check = plan_check(6, load_inference_settings(), seed=300)
    # Planned through the multiplicity the verdict goes through: far more than the ~50 résumés
    # a t at alpha alone asks for, and the planted effect is then found in most studies.
    assert check["resumes"] > 80 and check["simulated_power"] >= 0.5
