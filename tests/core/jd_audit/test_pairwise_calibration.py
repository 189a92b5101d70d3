"""The pairwise verdicts' calibration scenarios (testing/pairwise_calibration.py), on a few
simulated studies with fixed seeds: every scenario runs, the simulated choices are the table the
asset stores, and the truths the scenarios use are what the simulated choosers do."""

import warnings

import numpy as np
import pytest

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.pairwise_stats import abstention_rows, criterion_rows
from resumebias_dagster.core.tables import PairwiseChoices
from resumebias_dagster.testing.calibration import calibrate
from resumebias_dagster.testing.pairwise_calibration import PAIRWISE_SCENARIOS
from resumebias_dagster.testing.pairwise_simulation import simulate_choices, truths

SETTINGS = InferenceSettings()


@pytest.mark.parametrize(
    "design",
    [
        {"validity": 0.5},
        {"validity": 0.5, "tie": 1 / 3, "equal": 1 / 3},
        {"validity": 0.95, "tie": 0.04, "equal": 0.9},
        {"always_a": True},
        {"validity": 0.8, "equal": 0.2, "sticky": True},
    ],
)
def test_the_simulated_choosers_do_what_their_truths_say(design):
    choices = simulate_choices(1, resumes=300, runs=2, **design)
    PairwiseChoices.validate(choices)
    truth = truths(**design)
    assert criterion_rows(choices)["right"].mean() == pytest.approx(
        np.mean(list(truth["criterion"].values())), abs=0.02
    )
    assert abstention_rows(choices)["right"].mean() == pytest.approx(
        np.mean(list(truth["abstention"].values())), abs=0.03
    )
    if design.get("sticky"):  # the same choice every run
        assert choices.groupby(["resume_id", "group", "twin", "twin_position"])["choice"].nunique().max() == 1


def test_every_pairwise_scenario_runs_and_is_calibrated_on_a_few_studies():
    warnings.simplefilter("ignore")
    table = calibrate(4, SETTINGS, seed=700, scenarios=PAIRWISE_SCENARIOS).set_index("verdict_type")
    assert set(table.index) == {s.verdict_type for s in PAIRWISE_SCENARIOS}
    assert (table["false_positive_rate"].dropna() <= 0.25).all(), table["false_positive_rate"]
    assert (table["ruled_out_at_margin"].dropna() <= 0.25).all(), table["ruled_out_at_margin"]
    for column in ("coverage_null", "coverage_planted", "coverage_margin"):
        assert (table[column].dropna() >= 0.75).all(), table[column]
    assert table.loc["pairwise: chooser at 0.95 (40 x 5): criterion", "called_valid"] == 1.0
    assert table.loc["pairwise: always A: position_a (true +0.5)", "power"] == 1.0
    assert table.loc["pairwise: chooser exactly at the target (0.90, 60 x 5): criterion", "ruled_out_at_margin"] <= 0.25
