"""Randomisation tests that are valid at the sample sizes the audit runs.

* ``sign_flip_p``: the résumé is the unit. Under "no effect", a résumé's difference
  (variant minus baseline) is as likely to have either sign, so flipping the signs of the
  G résumé differences gives the null distribution of the statistic. The statistic is
  studentised (the t of the differences), which keeps the test asymptotically valid for
  "mean zero" even when the differences are not symmetric. Every one of the 2**G flips is
  enumerated when G is at most ``exact_max``; above, ``draws`` random flips (the same for
  every contrast) give p = (1 + hits) / (1 + draws). With G résumés no p can be smaller
  than 2 / 2**G (``smallest_p``): 5 résumés can never reach 0.05.
* ``run_permutation_p``: one résumé only. The claim is then about that résumé (conditional
  on it): the two-sample permutation test of the variant's runs against the baseline's,
  exact (every relabelling) at the run counts the audit uses, valid at any run count.

scipy's ``permutation_test`` is the reference these are checked against in the tests.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

# Relative tolerance of "at least as extreme" (the observed flip must count itself).
_TIE = 1e-9


def smallest_p(n_resumes: np.ndarray | int) -> np.ndarray:
    """The smallest two-sided p a sign-flip test over ``n_resumes`` résumés can give."""
    n = np.asarray(n_resumes, dtype=float)
    return np.where(n >= 1, np.minimum(1.0, np.power(0.5, n - 1.0)), np.nan)


def _t_stats(s: np.ndarray, q: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Studentised statistic from the sum ``s`` and sum of squares ``q`` of n values."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
        var = np.maximum(q - s * s / n, 0.0) / (n - 1)
        t = mean / np.sqrt(var / n)
    # Zero spread: infinite unless the mean is zero too.
    return np.where(var > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))


def sign_flip_p(d: np.ndarray, exact_max: int = 14, draws: int = 9999, seed: int = 0) -> np.ndarray:
    """Two-sided studentised sign-flip p of each row of ``d`` (contrasts x résumés, NaN where
    absent); NaN for a row with fewer than 2 résumés, 1 for a row of zeros."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    k = d.shape[0]
    present = ~np.isnan(d)
    n = present.sum(axis=1)
    # Compact each row's values to the front: the flips act on columns 0..n-1.
    order = np.argsort(~present, axis=1, kind="stable")
    values = np.where(present, d, 0.0)[np.arange(k)[:, None], order]
    width = int(n.max()) if k else 0
    values = values[:, :width]
    q = (values**2).sum(axis=1)
    t_obs = np.abs(_t_stats(values.sum(axis=1), q, n.astype(float)))
    p = np.full(k, np.nan)
    if width < 2:
        return p
    if width <= exact_max:
        flips = np.array(list(itertools.product((1.0, -1.0), repeat=width)))
        total = None
    else:
        rng = np.random.default_rng(seed)
        flips = rng.choice((1.0, -1.0), size=(draws, width))
        total = draws
    hits = np.zeros(k)
    chunk = max(1, 2_000_000 // max(1, len(flips)))
    for start in range(0, k, chunk):
        rows = slice(start, start + chunk)
        s = values[rows] @ flips.T  # (rows, flips)
        t = np.abs(_t_stats(s, q[rows, None], n[rows, None].astype(float)))
        obs = t_obs[rows, None]
        hits[rows] = ((t >= obs * (1 - _TIE)) | (np.isinf(obs) & np.isinf(t))).sum(axis=1)
    if total is None:
        # Rows with fewer résumés than the widest see each of their own flips 2**(width - n) times.
        p = hits / len(flips)
    else:
        p = (1.0 + hits) / (1.0 + total)
    zero = np.all(values == 0.0, axis=1)
    p = np.where(zero, 1.0, p)
    return np.where(n >= 2, np.minimum(p, 1.0), np.nan)


def run_permutation_p(
    baseline: np.ndarray, variant: np.ndarray, exact_limit: int = 20000, draws: int = 9999, seed: int = 0
) -> np.ndarray:
    """Two-sided permutation p of the difference in means of two sets of runs of one résumé,
    per row (contrasts x runs, NaN: no run); NaN with fewer than 2 runs on a side, 1 when
    every run is the same. Every relabelling is enumerated when there are at most
    ``exact_limit`` of them; else ``draws`` random ones give (1 + hits) / (1 + draws)."""
    b = np.atleast_2d(np.asarray(baseline, dtype=float))
    v = np.atleast_2d(np.asarray(variant, dtype=float))
    n_b, n_v = (~np.isnan(b)).sum(axis=1), (~np.isnan(v)).sum(axis=1)
    p = np.full(len(b), np.nan)
    rng = np.random.default_rng(seed)
    for nb, nv in sorted(set(zip(n_b.tolist(), n_v.tolist()))):
        if nb < 2 or nv < 2:
            continue
        rows = np.flatnonzero((n_b == nb) & (n_v == nv))
        # Each row's runs, valid ones first: baseline then variant.
        x = np.concatenate([np.sort(b[rows], axis=1)[:, :nb], np.sort(v[rows], axis=1)[:, :nv]], axis=1)
        n = nb + nv
        if math.comb(n, nv) <= exact_limit:
            picks = np.array(list(itertools.combinations(range(n), nv)))
            total = None
        else:
            picks = np.argsort(rng.random((draws, n)), axis=1)[:, :nv]
            total = draws
        member = np.zeros((len(picks), n))
        np.put_along_axis(member, picks, 1.0, axis=1)
        s_v = x @ member.T  # (rows, relabellings): the sum of the runs labelled "variant"
        stat = np.abs(s_v / nv - (x.sum(axis=1, keepdims=True) - s_v) / nb)
        obs = np.abs(x[:, nb:].mean(axis=1) - x[:, :nb].mean(axis=1))[:, None]
        hits = (stat >= obs - _TIE * np.maximum(1.0, obs)).sum(axis=1)
        p[rows] = hits / len(picks) if total is None else (1.0 + hits) / (1.0 + total)
        same = np.all(x == x[:, :1], axis=1)
        p[rows[same]] = 1.0
    return np.minimum(p, 1.0)
