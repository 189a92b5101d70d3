"""The inference core: checked against scipy's and statsmodels' implementations and by
small simulations of its own assumptions."""

import numpy as np
import pytest
from scipy import stats

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.inference import (
    Estimate,
    bh_qvalues,
    classify,
    family_adjusted,
    holm,
    load_inference_settings,
    name_variance,
    paired,
    run_permutation_p,
    side_contrast,
    sign_flip_p,
    simes,
    smallest_p,
)
from resumebias_dagster.core.inference.power import minimal_detectable, power_at, thresholds


def test_paired_is_the_one_sample_t_of_the_resume_differences():
    d = np.random.default_rng(1).normal(0.3, 1.0, (4, 12))
    d[2, :5] = np.nan
    est = paired(d)
    for i, row in enumerate(d):
        r = row[~np.isnan(row)]
        ref = stats.ttest_1samp(r, 0.0)
        assert est.estimate[i] == pytest.approx(r.mean())
        assert est.p_value()[i] == pytest.approx(ref.pvalue)
        low, high = est.interval(0.95)
        ci = ref.confidence_interval(0.95)
        assert (low[i], high[i]) == pytest.approx((ci.low, ci.high))
        assert est.n_resumes[i] == len(r)


def test_sign_flip_matches_scipy_permutation_test_exactly_and_by_monte_carlo():
    rng = np.random.default_rng(2)
    d = rng.normal(0.4, 1.0, (5, 9))
    d[1, 6:] = np.nan

    def t(x, axis):
        return np.mean(x, axis=axis) / (np.std(x, ddof=1, axis=axis) / np.sqrt(x.shape[axis]))

    ours = sign_flip_p(d)
    for i, row in enumerate(d):
        r = row[~np.isnan(row)]
        ref = stats.permutation_test((r,), t, permutation_type="samples", n_resamples=np.inf, vectorized=True)
        assert ours[i] == pytest.approx(ref.pvalue)
    wide = rng.normal(0.3, 1.0, (3, 30))
    mc = sign_flip_p(wide, exact_max=14, draws=20000, seed=3)
    for i, row in enumerate(wide):
        ref = stats.permutation_test(
            (row,), t, permutation_type="samples", n_resamples=20000, vectorized=True, random_state=4
        )
        assert mc[i] == pytest.approx(ref.pvalue, abs=0.01)


def test_sign_flip_edge_cases_and_the_smallest_attainable_p():
    p = sign_flip_p(np.array([[0.0] * 6, [1.0] * 6, [1.0, np.nan, np.nan, np.nan, np.nan, np.nan]]))
    assert p[0] == 1.0
    assert p[1] == pytest.approx(2 / 2**6)  # only the identity and the full flip are as extreme
    assert np.isnan(p[2])
    assert smallest_p(5) == pytest.approx(0.0625)  # five résumés can never reach 0.05


def test_run_permutation_matches_scipy_and_never_goes_below_what_a_permutation_can_give():
    # Welch on these runs gives 0.0039; a permutation of 5 + 5 runs cannot go below 2/252.
    assert run_permutation_p([7] * 5, [6, 6, 6, 6, 5])[0] == pytest.approx(2 / 252)
    assert run_permutation_p([7] * 5, [7] * 5)[0] == 1.0
    assert np.isnan(run_permutation_p([7, np.nan], [6, 6])[0])
    rng = np.random.default_rng(9)
    b, v = rng.integers(3, 9, (6, 5)).astype(float), rng.integers(4, 10, (6, 5)).astype(float)
    b[2, 4] = np.nan
    ours = run_permutation_p(b, v)
    for i in range(6):
        x, y = b[i][~np.isnan(b[i])], v[i]
        ref = stats.permutation_test(
            (x, y),
            lambda a, c, axis: np.mean(c, axis=axis) - np.mean(a, axis=axis),
            permutation_type="independent",
            n_resamples=np.inf,
            vectorized=True,
        )
        # Two-sided as |difference| at least the observed one (scipy doubles the smaller tail,
        # the same thing when both sides have as many runs).
        null = ref.null_distribution
        assert ours[i] == pytest.approx(np.mean(np.abs(null) >= abs(ref.statistic) - 1e-9))
        if len(x) == len(y):
            assert ours[i] == pytest.approx(ref.pvalue)


def test_tost_mde_and_power_against_their_definitions():
    est = Estimate(np.array([0.01, 0.2]), np.array([0.02, 0.05]), np.array([99.0, 99.0]), np.array([100, 100]))
    tost = est.tost_p(0.1)
    low, high = est.interval(0.95)
    # Ruled out: the printed 95% interval inside the margin.
    assert (tost < 0.05).tolist() == ((low > -0.1) & (high < 0.1)).tolist() == [True, False]
    # One finding alone: its threshold is alpha itself, and the power is the noncentral t's.
    c = np.tile(thresholds((1,), 0, 0.05), (2, 1))
    assert c == pytest.approx(0.05)
    mde = minimal_detectable(est, c, 0.8)
    assert power_at(est, mde, c) == pytest.approx([0.8, 0.8], abs=0.01)  # the mde is what is detected with 80%
    crit = stats.t.ppf(0.975, 99)
    exact = stats.nct.sf(crit, 99, mde / est.se) + stats.nct.cdf(-crit, 99, mde / est.se)
    assert exact == pytest.approx([0.8, 0.8], abs=0.01)


def test_power_counts_the_multiplicity_procedure_the_verdict_goes_through():
    # Issue 38, item 4: power at alpha itself was about ten times too optimistic. One finding
    # among 40 in 8 families must clear about alpha / 40: its threshold is that, not 0.05.
    c = thresholds((5,) * 8, 3, 0.05)
    assert np.median(c) == pytest.approx(0.05 / 40, rel=0.35)
    est = Estimate(np.array([0.0]), np.array([0.1]), np.array([119.0]), np.array([120]))
    alone = power_at(est, 0.3, np.tile(thresholds((1,), 0, 0.05), (1, 1)))[0]
    among = power_at(est, 0.3, c[None, :])[0]
    assert alone == pytest.approx(0.85, abs=0.02) and among < 0.5
    # The same through the procedure itself: a finding at 3 se among 39 nulls is found as often.
    rng = np.random.default_rng(1)
    family = np.repeat(np.arange(8), 5)
    hits = []
    for _ in range(1500):
        p = rng.uniform(size=40)
        p[15] = 2 * stats.t.sf(abs(rng.standard_t(119) + 3.0), 119)
        hits.append(family_adjusted(p, family)[15] <= 0.05)
    assert np.mean(hits) == pytest.approx(among, abs=0.04)


def test_bh_matches_statsmodels_and_simes_is_its_smallest_q():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(5).uniform(0, 0.2, 40)
    groups = np.repeat([0, 1, 2, 3], 10)
    q = bh_qvalues(p, groups)
    for g in range(4):
        assert q[groups == g] == pytest.approx(multipletests(p[groups == g], method="fdr_bh")[1])
        assert simes(p, groups)[g] == pytest.approx(q[groups == g].min())


def test_family_adjustment_keeps_one_family_out_of_another_families_ranking():
    probe = np.array([0.004, 0.02, 0.03, 0.2])
    injection = np.full(3, 1e-9)
    family = np.array([0] * 4 + [1] * 3)
    alone = family_adjusted(probe, np.zeros(4, int))
    together = family_adjusted(np.concatenate([probe, injection]), family)
    # BH over the pooled cells (the old fit family) would let the injection cells loosen the probe cells' q.
    pooled = bh_qvalues(np.concatenate([probe, injection]))[:4]
    assert (pooled < bh_qvalues(probe)).any()
    # Here the probe family's own ranking decides; the other family only counts as one more
    # selected family (both selected: R / m = 1, so the probe family's own BH at alpha).
    assert (together[:4] <= 0.05).tolist() == (bh_qvalues(probe) <= 0.05).tolist()
    assert (alone <= 0.05).tolist() == (bh_qvalues(probe) <= 0.05).tolist()


def test_family_adjustment_keeps_the_chance_of_any_finding_under_the_null_at_alpha():
    rng = np.random.default_rng(6)
    family = np.repeat(np.arange(8), 12)
    hits = np.mean([(family_adjusted(rng.uniform(size=96), family) <= 0.05).any() for _ in range(2000)])
    assert hits <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 2000)
    # Issue 38, item 5: one real family (a working prompt injection) must not open the gate for
    # false findings in the others: Holm over families keeps that at alpha too (BH let 16% through).
    leaks = []
    for _ in range(2000):
        p = rng.uniform(size=96)
        p[family == 0] = 1e-9
        leaks.append((family_adjusted(p, family)[family != 0] <= 0.05).any())
    assert np.mean(leaks) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 2000)
    # Two models are two gates: each keeps its own alpha.
    gate = np.repeat([0, 1], 48)
    both = np.mean([(family_adjusted(rng.uniform(size=96), family, gate) <= 0.05).any() for _ in range(2000)])
    assert 0.05 < both <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / 2000)


def test_holm_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(3).uniform(0, 0.1, 30)
    groups = np.repeat([0, 1, 2], 10)
    adjusted = holm(p, groups)
    for g in range(3):
        assert adjusted[groups == g] == pytest.approx(multipletests(p[groups == g], method="holm")[1])


def test_classify_reads_each_verdict():
    verdicts = classify(
        adjusted_p=[0.01, 0.5, 0.5, 0.5, np.nan],
        tost_p=[0.9, 0.01, 0.3, 0.3, np.nan],
        estimate=[0.3, 0.01, 0.02, 0.4, np.nan],
        margin=0.1,
        alpha=0.05,
    )
    assert verdicts.tolist() == ["beyond_noise", "equivalent", "within_noise", "inconclusive", "inconclusive"]
    ratio = classify([0.5, 0.5], [0.01, 0.4], [0.97, 0.85], 0.9, 0.05, ratio=True)
    assert ratio.tolist() == ["equivalent", "inconclusive"]


def test_name_variance_is_unbiased_for_names_shared_by_resumes():
    rng = np.random.default_rng(7)
    estimates = []
    for _ in range(60):
        nu, a = rng.normal(0, 1, (4, 9)), rng.normal(0, 1, 120)
        names = [np.concatenate([rng.permutation(9) for _ in range(14)])[:120] for _ in range(4)]
        resume = np.tile(np.arange(120), 4)
        group = np.repeat(np.arange(4), 120)
        name = np.concatenate([g * 9 + names[g] for g in range(4)])
        y = a[resume] + nu[group, name % 9] + rng.normal(0, 1.0, 480)
        estimates.append(name_variance(y, resume, name, group)[0])
    assert np.mean(estimates) == pytest.approx(1.0, abs=0.12)


def test_side_contrast_without_names_is_the_paired_t_and_names_widen_it():
    rng = np.random.default_rng(8)
    resume = np.repeat(np.arange(30), 2)
    side = np.tile([1, -1], 30)
    y = rng.normal(0, 1, 60) + 0.5 * (side > 0)
    est = side_contrast(y, resume, side)
    ref = paired((y[side > 0] - y[side < 0])[None, :])
    assert est.estimate == pytest.approx(ref.estimate) and est.se == pytest.approx(ref.se)
    # Three names per side, each on ten résumés, with large name effects: the SE must grow.
    name = np.where(side > 0, resume % 3, 3 + resume % 3)
    y_named = y + np.array([2.0, -2.0, 0.5, 1.0, -1.5, 0.0])[name]
    unnamed = side_contrast(y_named, resume, side)
    named = side_contrast(y_named, resume, side, name, (name >= 3).astype(int))
    assert named.se[0] > 2 * unnamed.se[0]
    assert named.n_names[0] == 6


def test_settings_refuse_a_bad_file_naming_the_setting(tmp_path):
    assert load_inference_settings().margins["fit_delta"] == 0.25
    (tmp_path / "inference.yaml").write_text("alpha: 0.05\npower: 0.8\nmargins: {style_shift: 0.05}\ndetect: {}\n")
    with pytest.raises(CatalogError, match=r"inference.yaml: `margins` must list exactly .*missing \['seniority_bias'"):
        load_inference_settings(tmp_path)
    (tmp_path / "inference.yaml").write_text("alpha: 2\n")
    with pytest.raises(CatalogError, match=r"inference.yaml: alpha must lie in \(0, 0.5\), got 2"):
        load_inference_settings(tmp_path)


def test_a_few_units_far_off_a_bulk_that_does_not_tie_widen_the_interval():
    # Issue 38, item 1: a low-noise scorer (every score wobbles by 0.05) that moves one résumé
    # of 140 by -9 points: the t alone reads "ruled out" at 0.25 (the mean and its standard
    # error shrink together); the share of such résumés could be larger than one in 140.
    x = np.random.default_rng(3).normal(0.0, 0.05, 140)
    x[7] = -9.0
    alone = Estimate(np.array([x.mean()]), np.array([x.std(ddof=1) / np.sqrt(140)]), np.array([139.0]), np.array([140]))
    assert alone.tost_p(0.25)[0] < 0.05
    est = paired(x[None, :], -9, 9)
    assert est.se_eff[0] > 2 * est.se[0] and est.tost_p(0.25)[0] > 0.05
    # Normal noise never lies five robust standard deviations off: its intervals stay the t's.
    noise = paired(np.random.default_rng(4).normal(0, 1, (500, 40)), -9, 9)
    assert (noise.extra_var > 0).mean() < 0.02
