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
"""

from __future__ import annotations

import numpy as np

from resumebias_dagster.core.inference.estimate import Estimate


def paired(d: np.ndarray) -> Estimate:
    """Effects of the rows of ``d`` (k contrasts x G résumés, NaN where absent)."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    present = ~np.isnan(d)
    n = present.sum(axis=1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(present, d, 0.0).sum(axis=1) / n
        ss = np.where(present, (d - mean[:, None]) ** 2, 0.0).sum(axis=1)
        se = np.sqrt(ss / (n - 1) / n)
    se = np.where(n >= 2, se, np.nan)
    return Estimate(mean, se, np.where(n >= 1, n - 1, np.nan), n)


def name_variance(y: np.ndarray, resume: np.ndarray, name: np.ndarray, group: np.ndarray) -> tuple[float, int]:
    """(variance of a name's own effect, its degrees of freedom) from every row: a name seen
    on several résumés keeps its effect on each, so after removing each résumé's mean and each
    group's mean, two rows of the same name covary more than two rows of different names of
    the same group. The difference of the two average cross-products, over (1 - 1/m)**2 (the
    share of a row's name effect its résumé's mean of m rows leaves), estimates the variance
    without bias (ANOVA-style; truncated at 0). No name on two résumés: 0, no df (a name's
    effect is then part of its résumé's difference). One name per group on several résumés:
    NaN, no df: a name's own effect cannot be told from its group's."""
    ok = ~np.isnan(y)
    y = y[ok]
    resume, name, group = (np.unique(x[ok], return_inverse=True)[1] for x in (resume, name, group))
    m = np.bincount(resume).astype(float)
    z = y - (np.bincount(resume, weights=y) / m)[resume]
    n_g = np.bincount(group).astype(float)
    z = z - (np.bincount(group, weights=z) / n_g)[group]  # each group's rows now sum to 0
    k = np.bincount(name).astype(float)
    same_count = float((k * (k - 1)).sum())
    all_count = float((n_g * (n_g - 1)).sum())
    g_n, n_groups = len(k), len(n_g)
    if same_count == 0:
        return 0.0, 0  # names nested in résumés: their variance is already the résumés'
    if all_count <= same_count or g_n <= n_groups:
        return float("nan"), 0  # one name per group, on several résumés: not separable from the group
    same = float((np.bincount(name, weights=z) ** 2).sum() - (z**2).sum())
    every = -float((z**2).sum())  # all pairs within groups: (sum z)^2 - sum z^2 with sum z = 0
    difference = same / same_count - (every - same) / (all_count - same_count)
    shrink = float(np.mean((1 - 1 / m[resume]) ** 2))
    return max(0.0, difference / shrink), g_n - n_groups


def side_contrast(
    y: np.ndarray, resume: np.ndarray, side: np.ndarray, name: np.ndarray | None = None, group: np.ndarray | None = None
) -> Estimate:
    """Within-résumé contrast of the rows with ``side`` +1 against those with -1 (0: not in
    it; NaN ``y``: left out). Résumés without both sides are left out. With ``name`` (and each
    name's ``group``), every row (side 0 too) estimates the names' variance (``name_variance``)
    and the estimate's variance adds what names shared by several résumés contribute. See
    the module docstring."""
    y = np.asarray(y, dtype=float)
    side = np.asarray(side)
    resume_all = np.asarray(resume)
    sigma2, df_n = (
        (0.0, 0)
        if name is None
        else name_variance(
            y, resume_all, np.asarray(name), np.zeros(len(y), int) if group is None else np.asarray(group)
        )
    )
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
    with np.errstate(invalid="ignore", divide="ignore"):
        m_a = np.bincount(resume[a], weights=y[a], minlength=size) / n_a
        m_b = np.bincount(resume[~a], weights=y[~a], minlength=size) / n_b
    d = m_a - m_b
    theta = float(d[both].mean())
    v_r = float(((d[both] - theta) ** 2).sum() / (g * (g - 1))) if g > 1 else np.nan
    if name is None or g < 2:
        return Estimate.of_one(theta, np.sqrt(v_r), g - 1, g, n_names=None if name is None else np.array([0.0]))
    if np.isnan(sigma2):
        return Estimate.of_one(theta, np.nan, np.nan, g, n_names=np.array([float(len(np.unique(name)))]))
    rows = both[resume]
    a, resume = a[rows], resume[rows]
    name = np.unique(name[rows], return_inverse=True)[1]
    g_n = int(name.max()) + 1
    # Each row's weight in the estimate; a name on several résumés adds sigma2 times the
    # products of its rows' weights on different résumés.
    w = np.where(a, 1.0, -1.0) / (g * np.where(a, n_a[resume], n_b[resume]))
    v_n = sigma2 * float((np.bincount(name, weights=w, minlength=g_n) ** 2).sum() - (w**2).sum())
    v = v_r + max(0.0, v_n)
    # Satterthwaite: the résumé part has g - 1 degrees of freedom, the name part df_n.
    df = v**2 / (v_r**2 / (g - 1) + (v_n**2 / df_n if df_n > 0 and v_n > 0 else 0.0)) if v > 0 else g - 1
    return Estimate.of_one(theta, np.sqrt(v), df, g, n_names=np.array([float(g_n)]))
