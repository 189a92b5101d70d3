"""The ranking task's impact-ratio intervals (base résumé as the unit), by hand and by
simulation through ``selection_table``, the function the ranking_selection asset calls."""

import json

import numpy as np
import pandas as pd

from resumebias_dagster.core.ranking.tables import selection_table
from resumebias_dagster.testing.ranking_simulation import simulate_rankings


def test_every_group_gets_its_resumes_and_an_interval_around_its_ratio():
    t = selection_table(simulate_rankings(np.random.default_rng(1), effects={"D": -1.5})).set_index("group")
    assert t["n_resumes"].tolist() == [30, 30, 30, 30]
    reference = t["reference_group"].iloc[0]
    assert np.isnan(t.loc[reference, "impact_ratio_p_value"])
    others = t.drop(index=reference)
    assert (others["impact_ratio_ci_low"] <= others["impact_ratio"]).all()
    assert (others["impact_ratio"] <= others["impact_ratio_ci_high"]).all()
    assert (others["impact_ratio_ci_high"] <= 1.0).all()
    # A strong planted penalty: below the four-fifths line beyond the design's noise.
    assert t.loc["D", "ci_below_four_fifths"] and t.loc["D", "impact_ratio_p_value"] < 0.01
    assert not others.drop(index="D")["ci_below_four_fifths"].any()


def test_rankings_without_a_resume_id_get_no_interval():
    rows = simulate_rankings(np.random.default_rng(2), resumes=5).drop(columns="resume_id")
    t = selection_table(rows)
    assert (t["n_resumes"] == 0).all()
    assert t[["impact_ratio_ci_low", "impact_ratio_ci_high", "impact_ratio_p_value"]].isna().all().all()
    assert not t["ci_below_four_fifths"].any()
    assert t["impact_ratio"].notna().all(), "the point ratio does not need the unit"


def test_one_resume_is_no_sample():
    t = selection_table(simulate_rankings(np.random.default_rng(3), resumes=1, runs=20))
    assert t["impact_ratio_ci_high"].isna().all() and t["impact_ratio_p_value"].isna().all()


def test_no_group_effect_is_rarely_called_below_the_others():
    """Null: the per-group test ("as high as any other") at 5% rejects at most its level."""
    rng = np.random.default_rng(10)
    p = pd.concat([selection_table(simulate_rankings(rng))["impact_ratio_p_value"] for _ in range(120)]).dropna()
    assert len(p) == 360
    assert (p < 0.05).mean() <= 0.07, f"rejection rate {(p < 0.05).mean():.3f} at the 5% level"


def test_a_planted_penalty_is_found_and_its_true_ratio_covered():
    rng = np.random.default_rng(20)
    effects = {"D": -0.7}
    # The true ratio of D to the others (equal by symmetry), from one very large experiment.
    big = selection_table(simulate_rankings(rng, resumes=3000, runs=1, effects=effects)).set_index("group")
    true_ratio = big.loc["D", "selection_rate"] / big.drop(index="D")["selection_rate"].mean()
    found = covered = 0
    for _ in range(80):
        t = selection_table(simulate_rankings(rng, effects=effects)).set_index("group")
        found += t.loc["D", "impact_ratio_p_value"] < 0.05
        covered += t.loc["D", "impact_ratio_ci_low"] <= true_ratio <= t.loc["D", "impact_ratio_ci_high"]
    assert found / 80 >= 0.6, f"power {found / 80:.2f}"
    assert covered / 80 >= 0.9, f"coverage {covered / 80:.2f} of the true ratio {true_ratio:.3f}"


def test_runs_are_not_resumes():
    """Twenty runs of the same five résumés are still five résumés: the interval does not narrow
    as if each ranking were an independent candidate."""
    few = selection_table(simulate_rankings(np.random.default_rng(4), resumes=5, runs=2, effects={"D": -0.7}))
    many = selection_table(simulate_rankings(np.random.default_rng(4), resumes=5, runs=40, effects={"D": -0.7}))
    width = lambda t: (t["impact_ratio_ci_high"] - t["impact_ratio_ci_low"]).max()  # noqa: E731
    assert (many["n_resumes"] == 5).all()
    # With independent rankings the width would shrink by sqrt(20); with the résumé as the unit
    # it shrinks only by the runs' share of the noise.
    assert width(many) > width(few) / np.sqrt(20) * 2
    json.dumps(many.to_dict("records"), default=str)  # the rows serialise (the CLI's --json)
