"""Effects estimated within résumé, with standard errors that treat the résumé as the unit.

The audit's designs are paired: each résumé is scored as itself and with one signal
changed, so an effect is estimated within résumé and its uncertainty comes from how the
effect varies across résumés (and, for names, across the names drawn for a group).
Repeated runs of one prompt are repeated measures of that prompt: they are averaged into
its value (or replaced by the model's exact expectation where it gives one) before any
test, never counted as independent units.

* ``paired``: k effects from a (k, G) array of résumé-level differences (NaN: the résumé
  lacks that contrast). Estimate = the mean over the G résumés, SE = sd / sqrt(G),
  df = G - 1: the paired t of the résumé means.
* ``side_contrast``: the mean over résumés of (mean of the rows on side +1 minus mean of
  the rows on side -1) within each résumé, e.g. female-name variants minus male-name
  variants. Its variance is the résumé-level one, plus, where names recur on several
  résumés, what their own effects add: the names' variance (``name_variance``, estimated
  from every name of the study) times the products of the weights a name's rows carry on
  different résumés. So a penalty on one name counts as that name's quirk, not as its
  group's effect, unless the group's other names share it. Satterthwaite degrees of
  freedom combine the résumés' and the names'.
* ``unit_spread``: for both, how the units tie (every one alike, or most alike and a few
  moved off): the sparse and no-spread rules of ``estimate.py`` read it. Each takes the
  range one unit can take (``low``, ``high``: -9..9 fit points, -2..2 seniority levels).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from resumebias_dagster.core.inference.estimate import Estimate

# How many robust standard deviations off the median a unit must lie to count as moved off
# a bulk that does not tie (``_outlier_extra``).
OUTLYING = 5.0
# From fewer units the robust scale is too rough to tell a far unit from noise (below, ruling
# out takes more résumés than this anyway: ``Estimate.unseen_floor``).
OUTLIER_UNITS = 30


def unit_spread(
    d: np.ndarray, low: float = -np.inf, high: float = np.inf, *, sparse_share: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``d`` (k contrasts x G units, NaN where absent): the variance the sparse rule
    adds to the squared standard error of the mean, and the value every unit shares (NaN where
    they differ). See ``estimate.py``'s module docstring.

    Units that tie at the row's most common value c (two or more of them, to within rounding)
    and k that move off it by ``e``: a unit's variance when a share ``pi`` of résumés moves is
    ``pi m2 - pi**2 m1**2`` (m1, m2 the movers' first and second moments of ``e``), which is
    the sample's at the observed share. Its largest value for ``pi`` between the observed
    share and the share's exact one-sided 97.5% upper bound, over ``n - 1``, is the sparse
    squared standard error (or, where one rare value's share alone raised to its own bound
    gives more, that); the function returns its excess over the sample's. Where the units do
    not tie but a few lie far off the rest (``_outlier_extra``), the same reading with the
    rest as a bulk with its own variance: the larger of the two.

    ``sparse_share``: the smallest share of a row's units that must tie for the tie rule to
    read it as sparse (0: any two). Units that are shares of a few comparisons (criterion
    validity) tie by construction, most of them moved: the rule is for most units unmoved."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    extra, tie = _tie_extra(d, sparse_share)
    return np.fmax(extra, _outlier_extra(d)), tie


def _tie_extra(d: np.ndarray, sparse_share: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``unit_spread``'s rule where units tie exactly (see there)."""
    k_rows = len(d)
    extra, tie = np.zeros(k_rows), np.full(k_rows, np.nan)
    runs = _runs(d)
    if runs is None:
        return extra, tie
    row, value, count, n = runs
    n_row = np.bincount(row, weights=count, minlength=k_rows)  # units per row
    n_runs = np.bincount(row, minlength=k_rows)
    one_value = (n_runs == 1) & (n_row >= 2)
    if one_value.any():
        tie[one_value] = np.nanmean(d[one_value], axis=1)
    # The tie of each row: its most common value (two units at least), the one nearest 0 among equals.
    order = np.lexsort((np.abs(value), -count, row))
    first = order[np.r_[True, row[order][1:] != row[order][:-1]]]
    tie_value, tie_count = np.full(k_rows, np.nan), np.zeros(k_rows)
    tie_value[row[first]], tie_count[row[first]] = value[first], count[first]
    sparse_rows = (n_runs >= 2) & (tie_count >= 2) & (tie_count >= sparse_share * n_row)
    keep = sparse_rows[row]
    if not keep.any():
        return extra, tie
    row, value, count, n = row[keep], value[keep], count[keep], n[keep]
    e = value - tie_value[row]
    mover = e != 0
    nn = n_row.astype(float)

    def per_row(x: np.ndarray) -> np.ndarray:
        return np.bincount(row, weights=x, minlength=k_rows)

    k = per_row(np.where(mover, count, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        m1, m2 = per_row(np.where(mover, count * e, 0.0)) / k, per_row(np.where(mover, count * e * e, 0.0)) / k
        first_moment, second_moment = per_row(count * e) / nn, per_row(count * e * e) / nn
    at = np.flatnonzero(sparse_rows)
    # Every mover's share raised together, their mix kept: pi m2 - pi**2 m1**2 over [k / n, bound].
    low_share, high_share = k[at] / nn[at], _share_bounds(k[at], nn[at])
    with np.errstate(invalid="ignore", divide="ignore"):
        vertex = np.clip(np.where(m1[at] != 0, m2[at] / (2 * m1[at] ** 2), high_share), low_share, high_share)
    best = np.zeros(k_rows)
    best[at] = np.max([s * m2[at] - s * s * m1[at] ** 2 for s in (low_share, high_share, vertex)], axis=0)
    # One value's share raised alone to its own bound, the mass taken from the tie.
    raise_by = np.minimum(_share_bounds(count, n) - count / n, tie_count[row] / n)
    a, b = second_moment[row], first_moment[row]
    with np.errstate(invalid="ignore", divide="ignore"):
        top = np.clip(np.where(e != 0, 0.5 - b / e, 0.0), 0.0, raise_by)
    alone = np.max([a + s * e * e - (b + s * e) ** 2 for s in (np.zeros_like(e), raise_by, top)], axis=0)
    np.maximum.at(best, row[mover], alone[mover])
    with np.errstate(invalid="ignore", divide="ignore"):
        sample = np.nanvar(d[at], axis=1, ddof=1) / nn[at]
    extra[at] = np.maximum(0.0, best[at] / (nn[at] - 1) - sample)
    return extra, tie


def _outlier_extra(d: np.ndarray) -> np.ndarray:
    """Per row: the variance the sparse rule adds where a few units lie far off a bulk that does
    not tie exactly (a scorer with a little noise on every résumé that moves a few by a lot):
    the units further than ``OUTLYING`` robust standard deviations (1.4826 MAD) from the median
    are the movers, the rest a bulk with its own variance ``s_b``, and a unit's variance at a
    movers' share ``pi`` is ``(1 - pi) s_b + pi m2 - pi**2 m1**2`` (m1, m2 about the bulk's
    mean), taken at its largest up to the share's exact one-sided 97.5% bound, from
    ``OUTLIER_UNITS`` units on. Normal noise never lies that far (2 in 10 million units),
    heavy-tailed noise does, and is read as carefully as it should be."""
    out = np.zeros(len(d))
    enough = np.flatnonzero((~np.isnan(d)).sum(axis=1) >= OUTLIER_UNITS)
    if not len(enough):
        return out
    d = d[enough]
    present = ~np.isnan(d)
    n = present.sum(axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        center = np.nanmedian(d, axis=1)
        scale = 1.4826 * np.nanmedian(np.abs(d - center[:, None]), axis=1)
        far = present & (np.abs(d - center[:, None]) > OUTLYING * scale[:, None]) & (scale[:, None] > 0)
        k = far.sum(axis=1).astype(float)
        rows = np.flatnonzero((k > 0) & (n - k >= 2))
        if not len(rows):
            return out
        x, far, n, k = d[rows], far[rows], n[rows], k[rows]
        rows = enough[rows]
        bulk = np.where(far | np.isnan(x), np.nan, x)
        bulk_mean, bulk_var = np.nanmean(bulk, axis=1), np.nanvar(bulk, axis=1)
        e = np.where(far, x - bulk_mean[:, None], 0.0)
        m1, m2 = e.sum(axis=1) / k, (e * e).sum(axis=1) / k
        low, high = k / n, _share_bounds(k, n)
        vertex = np.clip(np.where(m1 != 0, (m2 - bulk_var) / (2 * m1 * m1), high), low, high)
        best = np.max([(1 - s) * bulk_var + s * m2 - s * s * m1 * m1 for s in (low, high, vertex)], axis=0)
        sample = np.nanvar(x, axis=1, ddof=1) / n
    out[rows] = np.maximum(0.0, best / (n - 1) - sample)
    return out


def _runs(d: np.ndarray):
    """The distinct values of each row (to within rounding) as runs: (row, value, count, the
    row's units), one entry a run; None without two units in any row."""
    present = ~np.isnan(d)
    if not (present.sum(axis=1) >= 2).any():
        return None
    tol = 1e-9 * np.maximum(1.0, np.nanmax(np.abs(np.where(present, d, 0.0)), axis=1))
    rounded = np.sort(np.round(d / tol[:, None]) * tol[:, None], axis=1)  # NaN last
    valid = ~np.isnan(rounded)
    new = valid & np.concatenate([np.ones((len(d), 1), bool), rounded[:, 1:] != rounded[:, :-1]], axis=1)
    rows = np.nonzero(valid)[0]
    run = np.cumsum(new[valid]) - 1
    count = np.bincount(run).astype(float)
    row = rows[new[valid]]
    value = rounded[valid][new[valid]]
    n = present.sum(axis=1).astype(float)[row]
    return row, value, count, n


def _share_bounds(count: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The exact (Clopper-Pearson) one-sided 97.5% upper bound of a share seen ``count`` times in ``n``."""
    count, n = np.asarray(count, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count >= n, 1.0, special.betaincinv(count + 1, np.maximum(n - count, 1e-12), 0.975))


def paired(d: np.ndarray, low: float = -np.inf, high: float = np.inf, *, sparse_share: float = 0.0) -> Estimate:
    """Effects of the rows of ``d`` (k contrasts x G units, NaN where absent), each unit in
    ``[low, high]`` (the range the no-spread bound and the clipping use; ``sparse_share``:
    ``unit_spread``'s)."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    present = ~np.isnan(d)
    n = present.sum(axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(present, d, 0.0).sum(axis=1) / n
        ss = np.where(present, (d - mean[:, None]) ** 2, 0.0).sum(axis=1)
        se = np.sqrt(ss / (n - 1) / n)
    se = np.where(n >= 2, se, np.nan)
    extra, tie = unit_spread(d, low, high, sparse_share=sparse_share)
    return Estimate(
        mean, se, np.where(n >= 1, n - 1, np.nan), n, extra_var=extra, tie=tie, low=low, high=high, clip=(low, high)
    )


def _two_way_residuals(m: np.ndarray, resume: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The columns of ``m`` less their résumé and group effects (least squares, by alternating
    projections; exact in one pass when every résumé has every group)."""
    n_r = np.bincount(resume).astype(float)[:, None]
    n_g = np.bincount(group).astype(float)[:, None]
    out = m - m.mean(axis=0)
    for _ in range(200):
        before = out
        out = out - (_group_sums(out, resume) / n_r)[resume]
        out = out - (_group_sums(out, group) / n_g)[group]
        if np.max(np.abs(out - before)) < 1e-12 * max(1.0, float(np.max(np.abs(out)))):
            break
    return out


def _group_sums(m: np.ndarray, codes: np.ndarray) -> np.ndarray:
    out = np.zeros((int(codes.max()) + 1, m.shape[1]))
    np.add.at(out, codes, m)
    return out


def name_variance(y: np.ndarray, resume: np.ndarray, name: np.ndarray, group: np.ndarray) -> tuple[float, float]:
    """(variance of a name's own effect, its degrees of freedom) from every row, by the method
    of moments of the model ``y = résumé + group + name + noise`` (résumé and group fixed, the
    name's effect and the noise random): with P the projection that removes the résumé and group
    effects and Z the rows' name indicators, the residual sum of squares and the sum over names
    of their residuals' squared sums have expectations ``s_name tr(A) + s_noise tr(P)`` and
    ``s_name |A|^2 + s_noise tr(A)`` (A = Z'PZ), solved for ``s_name`` (truncated at 0): unbiased
    for any layout of names over résumés (the cross-product estimator it replaces, which took a
    group's mean as known, read 8% low with 3 names per group). Its degrees of freedom are
    Satterthwaite's from the two forms' normal-theory variances (at most names less groups).
    No name on two résumés: 0, no df
    (a name's effect is then part of its résumé's difference). One name per group on several
    résumés: NaN, no df: a name's own effect cannot be told from its group's."""
    ok = ~np.isnan(y)
    y = y[ok]
    resume, name, group = (np.unique(x[ok], return_inverse=True)[1] for x in (resume, name, group))
    k = np.bincount(name).astype(float)
    g_n, n_groups = len(k), int(group.max()) + 1
    if float((k * (k - 1)).sum()) == 0:
        return 0.0, 0  # names nested in résumés: their variance is already the résumés'
    if g_n <= n_groups:
        return float("nan"), 0  # one name per group, on several résumés: not separable from the group
    z = _two_way_residuals(y[:, None], resume, group)[:, 0]
    indicators = np.zeros((len(y), g_n))
    indicators[np.arange(len(y)), name] = 1.0
    pz = _two_way_residuals(indicators, resume, group)
    a = _group_sums(pz, name)  # Z'PZ
    trace_p = len(y) - (int(resume.max()) + 1) - n_groups + 1
    q1 = float(z @ z)
    q2 = float((np.bincount(name, weights=z, minlength=g_n) ** 2).sum())
    tr_a, frob = float(np.trace(a)), float((a * a).sum())
    det = tr_a * tr_a - trace_p * frob
    if trace_p <= 0 or abs(det) < 1e-12 * max(1.0, tr_a * tr_a):
        return float("nan"), 0
    s_name = (q1 * tr_a - trace_p * q2) / det
    if s_name <= 0:
        return 0.0, g_n - n_groups
    s_noise = max(0.0, (q2 * tr_a - frob * q1) / det)
    # Degrees of freedom of the estimate (Satterthwaite: 2 s**2 / its variance), from the
    # normal-theory variances of the two quadratic forms (with U = PZ: U'U = A).
    a2, a3 = a @ a, a @ a @ a
    var_q1 = 2 * (s_name**2 * np.trace(a2) + 2 * s_name * s_noise * tr_a + s_noise**2 * trace_p)
    u_sigma_u = s_name * a2 + s_noise * a
    var_q2 = 2 * float(np.trace(u_sigma_u @ u_sigma_u))
    cov = 2 * (s_name**2 * np.trace(a3) + 2 * s_name * s_noise * np.trace(a2) + s_noise**2 * tr_a)
    variance = (tr_a**2 * var_q1 + trace_p**2 * var_q2 - 2 * tr_a * trace_p * cov) / det**2
    df = 2 * s_name**2 / variance if variance > 0 else g_n - n_groups
    return s_name, float(np.clip(df, 1.0, g_n - n_groups))


def side_contrast(
    y: np.ndarray,
    resume: np.ndarray,
    side: np.ndarray,
    name: np.ndarray | None = None,
    group: np.ndarray | None = None,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    named: np.ndarray | None = None,
    sparse_share: float = 0.0,
) -> Estimate:
    """Within-résumé contrast of the rows with ``side`` +1 against those with -1 (0: not in
    it; NaN ``y``: left out). Résumés without both sides are left out. With ``name`` (and each
    name's ``group``), every row (side 0 too; only the ``named`` ones where given) estimates
    the names' variance (``name_variance``) and the estimate's variance adds what names shared
    by several résumés contribute. See the module docstring. ``[low, high]``: the range of
    one résumé's contrast, and ``sparse_share`` ``unit_spread``'s (``paired``)."""
    y = np.asarray(y, dtype=float)
    side = np.asarray(side)
    resume_all = np.asarray(resume)
    if name is None:
        sigma2, df_n = 0.0, 0.0
    else:
        rows = np.ones(len(y), bool) if named is None else np.asarray(named, bool)
        groups = np.zeros(len(y), int) if group is None else np.asarray(group)
        sigma2, df_n = name_variance(y[rows], resume_all[rows], np.asarray(name)[rows], groups[rows])
    keep = (side != 0) & ~np.isnan(y)
    y, side, resume = y[keep], side[keep], resume_all[keep]
    name = None if name is None else np.asarray(name)[keep]
    codes, resume = np.unique(resume, return_inverse=True)
    size = len(codes)
    a = side > 0
    n_a = np.bincount(resume[a], minlength=size).astype(float)
    n_b = np.bincount(resume[~a], minlength=size).astype(float)
    both = (n_a > 0) & (n_b > 0)
    g = int(both.sum())
    if g == 0:
        return Estimate.of_one(np.nan, np.nan, np.nan, 0, n_names=None if name is None else np.array([0.0]))
    range_ = {"low": low, "high": high}
    with np.errstate(invalid="ignore", divide="ignore"):
        m_a = np.bincount(resume[a], weights=y[a], minlength=size) / n_a
        m_b = np.bincount(resume[~a], weights=y[~a], minlength=size) / n_b
    d = m_a - m_b
    theta = float(d[both].mean())
    v_r = float(((d[both] - theta) ** 2).sum() / (g * (g - 1))) if g > 1 else np.nan
    extra, tie = unit_spread(d[both][None, :], low, high, sparse_share=sparse_share)
    spread = {"extra_var": extra, "tie": tie, "clip": (low, high), **range_}
    if name is None or g < 2:
        n_names = None if name is None else np.array([0.0])
        return Estimate.of_one(theta, np.sqrt(v_r), g - 1, g, n_names=n_names, **spread)
    if np.isnan(sigma2):
        n_names = np.array([float(len(np.unique(name)))])
        return Estimate.of_one(theta, np.nan, np.nan, g, n_names=n_names, clip=(low, high), **range_)
    rows = both[resume]
    a, resume = a[rows], resume[rows]
    name = np.unique(name[rows], return_inverse=True)[1]
    g_n = int(name.max()) + 1
    # Each row's weight in its résumé's difference. The names' part of the estimate's variance
    # is sigma2 times the sum over names of (their weight over all résumés / g)**2; the résumés'
    # spread v_r already holds part of it (its expectation's name part, the second term), so
    # v_n adds the rest: exact for any layout of names over résumés.
    w = np.where(a, 1.0, -1.0) / np.where(a, n_a[resume], n_b[resume])
    cell = np.unique(resume.astype(np.int64) * g_n + name, return_inverse=True)[1]
    per_cell = np.bincount(cell, weights=w)  # a name's weight within one résumé
    per_name = np.bincount(name, weights=w, minlength=g_n)  # and over all résumés
    total = float((per_name**2).sum())
    v_n = sigma2 * (total / g**2 - (float((per_cell**2).sum()) - total / g) / (g * (g - 1)))
    v = v_r + max(0.0, v_n)
    # Satterthwaite: the résumé part has g - 1 degrees of freedom, the name part df_n.
    df = v**2 / (v_r**2 / (g - 1) + (v_n**2 / df_n if df_n > 0 and v_n > 0 else 0.0)) if v > 0 else g - 1
    return Estimate.of_one(theta, np.sqrt(v), df, g, n_names=np.array([float(g_n)]), **spread)
