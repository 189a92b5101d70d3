"""Power and minimal detectable effect of the verdict actually printed.

A finding is "beyond noise" when its family-adjusted p (``multiplicity.family_adjusted``)
is at most alpha, not when its own p is: with dozens of findings per model the own p must
clear a far smaller threshold. Power computed at alpha itself was about ten times too
optimistic (printed 0.73 at a -0.6 name-group penalty that was found in 8.3% of studies).

So the threshold is simulated through the same procedure: in ``draws`` studies where every
other finding of the model is null (independent uniform p-values, the families' sizes as
the model has them), the largest own p at which the finding is still beyond noise
(``thresholds``, found by bisection; the procedure is monotone in the own p). The power at
an effect is the mean over those thresholds of the chance the finding's test reaches it:

* a t: ``P(|effect + se T| > t_{1-c/2} se_eff)``, T Student's t with ``df``: the estimate
  varies by its sampling error ``se`` while the verdict needs it past the interval's error
  ``se_eff`` (the same where units do not tie; larger where a sparse effect's share could be
  larger than seen, and printing the t's own power there read 0.20 at a true 0.05);
* units without spread: whether the no-spread p of a design where every unit moved by the
  effect (``2 (1 - effect / room)**n``) is at most the threshold;
* a test that cannot go below a floor (a sign-flip test over G résumés: ``2 / 2**G``)
  detects nothing at thresholds under its floor.

The minimal detectable effect is the effect with the declared power (bisection). The
assumption: the other findings are null and independent. With real effects elsewhere more
families are selected and the thresholds rise, so the printed power is a lower bound there.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from scipy import special

from resumebias_dagster.core.inference.estimate import Estimate
from resumebias_dagster.core.inference.multiplicity import family_adjusted

DRAWS = 200  # simulated studies per family structure (fewer for large ones: at least 32, ~40,000 p-values)
QUANTILES = 16  # thresholds kept per structure (equal-probability quantiles)
_LOG_LOW = -14.0  # the smallest threshold searched, log10


@lru_cache(maxsize=512)
def thresholds(sizes: tuple[int, ...], target: int, alpha: float, draws: int = DRAWS, seed: int = 0) -> np.ndarray:
    """``QUANTILES`` equal-probability quantiles of the largest own p at which a finding of
    family ``target`` is beyond noise, over ``draws`` simulated studies of a model whose
    families hold ``sizes`` findings with a p, every other finding null. 0 where nothing can pass."""
    sizes_a = np.asarray(sizes, dtype=np.int64)
    m = int(sizes_a.sum())
    # A model with a thousand findings needs few studies: its thresholds barely vary between them.
    draws = int(np.clip(40_000 // max(m, 1), 32, draws))
    family = np.repeat(np.arange(len(sizes_a)), sizes_a)
    own = int(np.flatnonzero(family == target)[0])
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=(draws, m))
    families = (family[None, :] + len(sizes_a) * np.arange(draws)[:, None]).ravel()
    gates = np.repeat(np.arange(draws), m)
    low = np.full(draws, _LOG_LOW)
    high = np.full(draws, np.log10(alpha))

    def passes(log_x: np.ndarray) -> np.ndarray:
        p[:, own] = 10.0**log_x
        adjusted = family_adjusted(p.ravel(), families, gates, alpha).reshape(draws, m)[:, own]
        return adjusted <= alpha * (1 + 1e-9)  # 10**log10(alpha) may round above alpha

    ok_high = passes(high)
    ok_low = passes(low)
    for _ in range(18):  # ~0.8% of a decade
        mid = (low + high) / 2
        ok = passes(mid)
        low, high = np.where(ok, mid, low), np.where(ok, high, mid)
    c = np.where(ok_high, alpha, np.where(ok_low, 10.0**low, 0.0))
    return np.quantile(np.sort(c), (np.arange(QUANTILES) + 0.5) / QUANTILES)


def _detector(est: Estimate, c: np.ndarray, floor_p: np.ndarray):
    """A function of the effect giving, (k, Q), how often each finding's verdict reaches each
    of its thresholds ``c``; the critical values are computed once."""
    se, df = est.se_eff[:, None], est.df[:, None]
    # The estimate varies by its sampling error (``se``); the verdict needs it past the
    # threshold times the interval's error (``se_eff``, the sparse rule's included).
    spread = np.where(est.se > 0, est.se, est.se_eff)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        crit = special.stdtrit(df, 1 - c / 2) * se / spread
    room = np.maximum(est.tie - est.low, est.high - est.tie)[:, None]
    arms, n_units = est.arms[:, None], est.n_units[:, None]
    t_ok = (se > 0) & (df >= 1)
    tied = est.no_spread[:, None]
    defined = (est.df >= 1)[:, None] | tied
    usable = (c > 0) & (floor_p[:, None] <= c)

    def chance(effect: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            shift = np.abs(effect)[:, None] / spread
            by_t = special.stdtr(df, -crit + shift) + special.stdtr(df, -crit - shift)
            by_t = np.where(t_ok, by_t, np.nan)
            tie_p = 2.0 * arms * np.clip(1.0 - np.abs(effect)[:, None] / room, 0.0, 1.0) ** n_units
        out = np.where(tied, np.fmax(np.nan_to_num(by_t, nan=0.0), (tie_p <= c).astype(float)), by_t)
        return np.where(usable, np.where(defined, out, np.nan), np.where(defined, 0.0, np.nan))

    return chance


def _mean_over_thresholds(chance: np.ndarray) -> np.ndarray:
    tested = np.isfinite(chance).any(axis=1)
    out = np.full(len(chance), np.nan)
    out[tested] = np.nanmean(chance[tested], axis=1)
    return out


def power_at(est: Estimate, effect, c: np.ndarray, floor_p: np.ndarray | None = None) -> np.ndarray:
    """Per finding: the chance its verdict is beyond noise at a true ``effect`` (in the
    estimate's unit), over the thresholds ``c`` (k x Q, from ``thresholds``)."""
    k = len(est)
    if not k:
        return np.zeros(0)
    effect = np.broadcast_to(np.asarray(effect, dtype=float), (k,))
    floor = np.zeros(k) if floor_p is None else np.asarray(floor_p, dtype=float)
    return _mean_over_thresholds(_detector(est, c, floor)(effect))


def minimal_detectable(est: Estimate, c: np.ndarray, power: float, floor_p: np.ndarray | None = None) -> np.ndarray:
    """Per finding: the smallest effect whose verdict is beyond noise with ``power`` (inf:
    none is, the test's floor or the thresholds forbid it; NaN: no test)."""
    k = len(est)
    if not k:
        return np.zeros(0)
    floor = np.zeros(k) if floor_p is None else np.asarray(floor_p, dtype=float)
    chance = _detector(est, c, floor)
    scale = np.where(np.isfinite(est.se_eff) & (est.se_eff > 0), est.se_eff, 0.0)
    scale = np.maximum(scale, np.where(est.no_spread, np.maximum(est.tie - est.low, est.high - est.tie), 0.0))
    # Bracket: the textbook (critical + power quantile) x se at the median threshold, widened
    # four times; where that is not enough, 64 standard errors.
    with np.errstate(invalid="ignore"):
        guess = (special.stdtrit(est.df, 1 - np.median(c, axis=1) / 2) + special.stdtrit(est.df, power)) * scale
    high = np.where(np.isfinite(guess) & (guess > 0), 4 * guess, 64 * np.maximum(scale, 1e-12))
    top = _mean_over_thresholds(chance(high))
    wider = ~(top >= power)
    high[wider] = 64 * np.maximum(scale[wider], 1e-12)
    top[wider] = _mean_over_thresholds(chance(high))[wider]
    low = np.zeros(k)
    for _ in range(28):
        mid = (low + high) / 2
        ok = _mean_over_thresholds(chance(mid)) >= power
        low, high = np.where(ok, low, mid), np.where(ok, mid, high)
    out = np.where(top >= power, high, np.inf)
    untested = ~((est.df >= 1) & (est.se_eff > 0)) & ~est.no_spread
    return np.where(untested, np.nan, out)


def model_thresholds(
    family: np.ndarray, gate: np.ndarray, has_p: np.ndarray, alpha: float, seed: int = 0
) -> np.ndarray:
    """(k, Q) thresholds of every finding: its model's (``gate``) families' sizes (findings
    with a p) and its own family's position among them."""
    family, gate = np.asarray(family, dtype=np.int64), np.asarray(gate, dtype=np.int64)
    out = np.zeros((len(family), QUANTILES))
    for g in np.unique(gate):
        mine = gate == g
        fams, sizes = np.unique(family[mine & has_p], return_counts=True)
        structure = tuple(int(s) for s in sizes)
        for f in np.unique(family[mine]):
            at = mine & (family == f)
            if f in fams:
                out[at] = thresholds(structure, int(np.flatnonzero(fams == f)[0]), alpha, seed=seed)
            else:  # no p in its family: the finding joins it as one more
                out[at] = thresholds((*structure, 1), len(structure), alpha, seed=seed)
    return out


def power_columns(
    est: Estimate,
    family: np.ndarray,
    gate: np.ndarray,
    has_p: np.ndarray,
    *,
    effect: float | Sequence[float] | np.ndarray,
    alpha: float,
    power: float,
    floor_p: np.ndarray | None = None,
    seed: int = 0,
    scale: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(minimal detectable effect, power at ``effect``) of every finding, through the
    thresholds of its model's families; ``scale`` (per finding) multiplies them: a level split
    over several findings (Bonferroni)."""
    c = model_thresholds(family, gate, has_p, alpha, seed)
    if scale is not None:
        c = c * np.asarray(scale, dtype=float)[:, None]
    return minimal_detectable(est, c, power, floor_p), power_at(est, effect, c, floor_p)
