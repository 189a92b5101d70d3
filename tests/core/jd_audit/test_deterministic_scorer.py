"""A deterministic scorer (an HTTP service, a Python function) gives every résumé the same
change, up to floating-point rounding: ``(b - 1.5) - b`` is not exactly -1.5 for every b. Such
a change has no spread, and the exact sign-flip p (2 / 2**n) and the bounded interval are what
the design supports; a standard error of 1e-16 must not pass for a measured one (before the
fix it gave a zero-width interval and "beyond noise" from 5 résumés, which the sign-flip test
cannot reach)."""

import numpy as np
import pytest

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.inference.clustered import paired
from resumebias_dagster.core.jd_audit.fit_stats import SCORE_DEVIATION, fit_effects
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

BASELINES = np.array([6.43, 5.17, 7.91, 4.38, 8.29, 6.66])


def test_rounding_noise_is_no_spread():
    # What a scorer answering in hundredths gives: each score rounded, the difference not exact.
    diffs = np.round(BASELINES - 1.5, 2) - BASELINES
    noisy = paired(diffs[None, :]).bounded(SCORE_DEVIATION)
    exact = paired(np.full((1, len(BASELINES)), -1.5)).bounded(SCORE_DEVIATION)
    assert np.ptp(diffs) > 0  # the rounding this test is about
    assert noisy.se[0] == 0.0
    np.testing.assert_allclose(noisy.interval(), exact.interval())
    assert noisy.p_value()[0] == pytest.approx(2 / 2 ** len(BASELINES))


def deterministic_scores(resumes: int):
    s = simulate_fit_scores(["m"], ["j1"], ["baseline", "careerGap_x", "placebo_a"], 1, resumes=resumes, seed=1)
    s["axis"] = s["variant"].str.split("_").str[0]
    s["level"] = s["variant"].str.split("_", n=1).str[1].fillna("")
    s["arm"] = np.where(s["axis"] == "placebo", "placebo", np.where(s["variant"] == "baseline", "baseline", "probe"))
    base = {r: round(4.13 + 0.37 * k, 2) for k, r in enumerate(sorted(s["resume_id"].unique()))}
    s["score"] = [
        round(base[r] - (1.5 if v == "careerGap_x" else 0.0), 2) for r, v in zip(s["resume_id"], s["variant"])
    ]
    return s


@pytest.mark.parametrize("resumes", [5, 12])
def test_a_deterministic_penalty_is_judged_by_the_sign_flip_test(resumes):
    effects = fit_effects(deterministic_scores(resumes), settings=InferenceSettings()).set_index("variant")
    gap = effects.loc["careerGap_x"]
    assert gap["delta"] == pytest.approx(-1.5)
    assert gap["p_value"] == pytest.approx(2 / 2**resumes)
    assert gap["ci_high"] - gap["ci_low"] > 0.5  # bounded, not a zero-width interval
    verdicts = fit_verdicts(deterministic_scores(resumes), settings=InferenceSettings()).set_index("finding")
    verdict = verdicts.loc["fit_level:careerGap_x", "verdict"]
    # 5 résumés: the sign-flip test cannot reach 5% (its floor is 2/32); 12 can.
    assert (verdict == "beyond_noise") == (resumes == 12)
