"""A fast run of benchmarks/bench_inference_calibration.py: every verdict type, simulated
through the code the assets use, keeps its false-positive rate and covers the truth (loose
bounds for few studies; the benchmark runs hundreds)."""

import warnings

import numpy as np

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.testing.calibration import SCENARIOS, calibrate


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
