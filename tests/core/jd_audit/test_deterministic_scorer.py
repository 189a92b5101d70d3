"""A deterministic scorer (an HTTP service, a Python function) gives every résumé the same
change, up to floating-point rounding: ``(b - 1.5) - b`` is not exactly -1.5 for every b. Such
a change has no spread: a standard error of 1e-16 must not pass for a measured one (it gave a
zero-width interval and "beyond noise" from 5 résumés). What n résumés all alike show of the
population is the no-spread bound of ``core/inference/estimate.py``: the share of résumés they
can have missed, each anywhere in the -9..9 range of a change. So a change seen on every one of
12 résumés is not yet beyond noise (unseen résumés could bring the mean back to 0), and from
about 30 it is; the interval and the verdict say the same thing at every size."""

import numpy as np
import pytest

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.inference.clustered import paired
from resumebias_dagster.core.jd_audit.fit_stats import SCORE_RANGE, fit_effects
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

BASELINES = np.array([6.43, 5.17, 7.91, 4.38, 8.29, 6.66])


def test_rounding_noise_is_no_spread():
    # What a scorer answering in hundredths gives: each score rounded, the difference not exact.
    diffs = np.round(BASELINES - 1.5, 2) - BASELINES
    noisy = paired(diffs[None, :], *SCORE_RANGE)
    exact = paired(np.full((1, len(BASELINES)), -1.5), *SCORE_RANGE)
    assert np.ptp(diffs) > 0  # the rounding this test is about
    assert noisy.se[0] == 0.0 and noisy.no_spread[0]
    np.testing.assert_allclose(noisy.interval(), exact.interval())
    # No spread: p = 2 (1 - 1.5 / 10.5)**6, the chance unseen résumés at +9 could bring the mean to 0.
    assert noisy.p_value()[0] == pytest.approx(2 * (1 - 1.5 / 10.5) ** 6)


def deterministic_scores(resumes: int):
    s = simulate_fit_scores(["m"], ["j1"], ["baseline", "careerGap_x", "placebo_a"], 1, resumes=resumes, seed=1)
    s["axis"] = s["variant"].str.split("_").str[0]
    s["level"] = s["variant"].str.split("_", n=1).str[1].fillna("")
    s["arm"] = np.where(s["axis"] == "placebo", "placebo", np.where(s["variant"] == "baseline", "baseline", "probe"))
    base = {r: round(4.13 + 0.037 * k, 2) for k, r in enumerate(sorted(s["resume_id"].unique()))}
    s["score"] = [
        round(base[r] - (1.5 if v == "careerGap_x" else 0.0), 2) for r, v in zip(s["resume_id"], s["variant"])
    ]
    return s


@pytest.mark.parametrize("resumes", [5, 12, 40])
def test_a_deterministic_penalty_is_beyond_noise_only_when_its_interval_excludes_zero(resumes):
    effects = fit_effects(deterministic_scores(resumes), settings=InferenceSettings()).set_index("variant")
    gap = effects.loc["careerGap_x"]
    assert gap["delta"] == pytest.approx(-1.5)
    assert gap["ci_high"] - gap["ci_low"] > 0.1  # bounded, not a zero-width interval
    assert -9 <= gap["ci_low"] and gap["ci_high"] <= 9
    assert gap["p_value"] >= 2 / 2**resumes  # never below what the sign-flip test can give
    verdicts = fit_verdicts(deterministic_scores(resumes), settings=InferenceSettings()).set_index("finding")
    row = verdicts.loc["fit_level:careerGap_x"]
    assert (row["verdict"] == "beyond_noise") == (resumes == 40)
    assert (row["ci_high"] < 0) == (resumes == 40)
    # The placebo changed nothing on any résumé: ruled out only from as many résumés as could not
    # miss an effect of 0.25 points carried by a few résumés moved to the end of the range.
    assert verdicts.loc["fit_level:placebo_a", "verdict"] == "within_noise"
