"""An estimate with its standard error and degrees of freedom, and what follows from them:
the interval, the p of "no effect" and the equivalence test (TOST), one rule for every finding.

The estimand is the mean over the population of résumés of each résumé's change (its
*unit*: a résumé's difference, or, for one résumé, a job description's or a run's). What
each part assumes:

* **Spread.** ``(estimate - true mean) / se`` follows Student's t with ``df`` degrees of
  freedom: exact for normal units, approximately (central limit theorem) otherwise; the
  usual ``t(G - 1)`` reference of a cluster-robust error over G résumés.
* **Sparse changes.** A deterministic scorer leaves most résumés exactly as they were and
  moves a few. Then the share of résumés that move is estimated from few of them, and the
  sample's variance shrinks with the mean: the t alone under-covers and rules effects out
  that are there (2 of 120 résumés moved gave ``+0.017 (-0.007 to +0.040)``, "equivalent",
  at a true 0.05). Where units tie at one value and some move off it, the variance is taken
  at the largest the moved share allows up to its exact (Clopper-Pearson, one-sided 97.5%)
  upper bound (``clustered.unit_spread``): ``extra_var`` adds the difference. The same
  reading where units do not tie but a few lie far off the rest (more than 5 robust standard
  deviations: a low-noise scorer that moves a few résumés a lot), the rest then a bulk with
  its own variance. This widens intervals in noisy designs only a little (their ties are few,
  their units never that far off), and keeps the error of "ruled out" at or under alpha where
  effects sit in a few résumés.
* **No spread.** Every unit equal (``tie``): a t has no variance to work with, and what the
  data show is how much of the population n units can have missed. With n units all alike,
  the share of résumés that would differ is below ``1 - a**(1/n)`` at confidence ``1 - a``
  (exact binomial bound for no exception seen), and each such résumé can lie anywhere in
  the unit's range (``limits``). So the interval is ``[x - u (tie - low), x + u (high -
  tie)]``, the p of "no effect" the smallest level at which it excludes 0, and the TOST p
  the smallest at which it lies inside the margin. Every difference zero: p 1; a change
  seen on every one of n résumés is beyond noise only when n résumés could not have missed
  enough of the population to bring the mean back to 0.
* **Ruled out** takes the printed 95% interval inside the margin (two one-sided tests at
  2.5% each), and enough units that an effect of the margin's size carried by the fewest
  résumés it can be (each moved to the end of the range) would have shown in one of them
  (``unseen_floor``): a scorer that moves a few résumés a lot is otherwise "ruled out" by
  samples that happen to miss them.
* Every interval is clipped to the range the estimate can take (``clip``), and every p is
  the dual of its interval: a verdict can never disagree with the interval printed beside it.

``bench_inference_calibration.py`` checks error rates and coverage by simulation through
this code, on noisy LLM designs and on deterministic scorers with sparse or no spread.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

# Standard errors at or below this share of the estimate's size (at least 1 point) are
# floating-point rounding of equal differences, read as no spread.
SE_ROUNDING = 1e-9


def _arr(x) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float))


def unseen_share(n_units, one_sided: float) -> np.ndarray:
    """The share of a population that n units all alike can have missed, at confidence
    ``1 - one_sided``: ``1 - one_sided**(1/n)`` (exact binomial bound for no exception seen)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - np.power(one_sided, 1.0 / np.asarray(n_units, dtype=float))


@dataclass(frozen=True)
class Estimate:
    """Estimates of k effects (arrays of length k); NaN where an effect cannot be estimated."""

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray
    n_resumes: np.ndarray  # résumés behind each estimate
    n_names: np.ndarray | None = None  # distinct names, where names are a random effect
    # The fields below take a scalar, an array or None (their default) and hold arrays of
    # length k once constructed.
    # The units of the test (résumés; the job descriptions or runs of one résumé); default n_resumes.
    n_units: Any = None
    # Variance the sparse rule adds to se**2 (module docstring); 0 where units do not tie.
    extra_var: Any = None
    # The value every unit shares (NaN where they differ), and the range a unit can take.
    tie: Any = None
    low: Any = None
    high: Any = None
    # Independent samples the no-spread bound covers at once (the baseline and variant runs of
    # one résumé: 2): its level is split over them (Bonferroni).
    arms: Any = None
    # The range the estimate itself can take: intervals are clipped to it.
    clip: tuple[float, float] = (-np.inf, np.inf)

    def __post_init__(self):
        for name in ("estimate", "se", "df", "n_resumes"):
            object.__setattr__(self, name, _arr(getattr(self, name)))
        k = len(self.estimate)
        defaults = {
            "n_units": self.n_resumes,
            "extra_var": 0.0,
            "tie": np.nan,
            "low": -np.inf,
            "high": np.inf,
            "arms": 1.0,
        }
        for name, default in defaults.items():
            value = getattr(self, name)
            object.__setattr__(self, name, np.broadcast_to(_arr(default if value is None else value), (k,)).copy())
        # A deterministic scorer's equal changes differ in the last bits ((b - 1.5) - b is not
        # exactly -1.5 for every b): a standard error that small is rounding, not spread, and
        # read as one it would give a zero-width interval and a t no design supports.
        with np.errstate(invalid="ignore"):
            rounding = self.se <= SE_ROUNDING * np.maximum(1.0, np.abs(self.estimate))
        object.__setattr__(self, "se", np.where(rounding, 0.0, self.se))

    @classmethod
    def of_one(
        cls, estimate: float, se: float, df: float, n_resumes: int, *, n_names: np.ndarray | None = None, **spread
    ) -> Estimate:
        """One effect from scalars (the fields hold arrays of k effects)."""
        return cls(_arr(estimate), _arr(se), _arr(df), _arr(n_resumes), n_names, **spread)

    def __len__(self) -> int:
        return len(self.estimate)

    def recentred(self, estimate: np.ndarray) -> Estimate:
        """The same spread around another estimate (a log ratio moves like the contrast whose
        spread it takes, by the delta method), not clipped."""
        return replace(self, estimate=_arr(estimate), clip=(-np.inf, np.inf))

    def against(self, value: float) -> Estimate:
        """The same estimate read as its difference from ``value`` (its tie, range and clip
        moved with it): its ``p_value`` is then the p of "the effect equals ``value``", dual to
        the same interval (a criterion validity read against its target)."""
        return replace(
            self,
            estimate=self.estimate - value,
            tie=self.tie - value,
            low=self.low - value,
            high=self.high - value,
            clip=(self.clip[0] - value, self.clip[1] - value),
        )

    @property
    def se_eff(self) -> np.ndarray:
        """The standard error the interval and tests use: ``se`` with the sparse rule's variance added."""
        return np.sqrt(self.se**2 + self.extra_var)

    @property
    def no_spread(self) -> np.ndarray:
        """Every unit alike (the tie rule of the module docstring applies)."""
        return np.isfinite(self.tie) & (self.n_units >= 2)

    def _rooms(self) -> tuple[np.ndarray, np.ndarray]:
        """How far below and above the shared value an unseen unit can lie."""
        return self.tie - self.low, self.high - self.tie

    def _t_ok(self) -> np.ndarray:
        return (self.df >= 1) & (self.se_eff > 0)

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """The two-sided ``level`` interval: the t's, widened by the no-spread bound where
        units tie, clipped to ``clip``; NaN where neither applies."""
        x = self.estimate
        with np.errstate(invalid="ignore"):
            half = stats.t.ppf(0.5 + level / 2, self.df) * self.se_eff
        t_ok = self._t_ok()
        low = np.where(t_ok, x - half, np.nan)
        high = np.where(t_ok, x + half, np.nan)
        tied = self.no_spread
        share = unseen_share(self.n_units, (1 - level) / 2 / self.arms)
        down, up = self._rooms()
        low = np.where(tied, np.fmin(low, x - share * down), low)
        high = np.where(tied, np.fmax(high, x + share * up), high)
        return np.clip(low, *self.clip), np.clip(high, *self.clip)

    def p_value(self) -> np.ndarray:
        """Two-sided p of "no effect": the smallest level at which ``interval`` excludes 0
        (the t's p, and where units tie the bound's, whichever is larger)."""
        x = self.estimate
        with np.errstate(invalid="ignore", divide="ignore"):
            p_t = 2.0 * stats.t.sf(np.abs(x) / self.se_eff, self.df)
            down, up = self._rooms()
            room = np.where(x > 0, down, up)  # how far the unseen units can pull the mean back past 0
            p_tie = np.where(x == 0, 1.0, 2.0 * self.arms * np.clip(1.0 - np.abs(x) / room, 0.0, 1.0) ** self.n_units)
        p = np.where(self._t_ok(), p_t, np.nan)
        p = np.where(self.no_spread, np.fmax(p, np.minimum(p_tie, 1.0)), p)
        return np.minimum(p, 1.0)

    def tost_p(self, margin: float | np.ndarray) -> np.ndarray:
        """p of "|effect| >= margin" at the printed interval's level: the smallest a at which
        the two-sided 1 - a interval lies inside ±margin, so equivalence (below alpha) is the
        printed 95% interval inside the margin: two one-sided tests at alpha / 2 each."""
        x, margin = self.estimate, np.broadcast_to(_arr(margin), self.estimate.shape)
        se = self.se_eff
        with np.errstate(invalid="ignore", divide="ignore"):
            one_sided = np.maximum(stats.t.sf((x + margin) / se, self.df), stats.t.cdf((x - margin) / se, self.df))
            down, up = self._rooms()
            reach = np.minimum((margin - x) / up, (x + margin) / down)  # largest unseen share still inside
            p_tie = np.where(reach > 0, 2.0 * self.arms * np.clip(1.0 - reach, 0.0, 1.0) ** self.n_units, 1.0)
        p = np.where(self._t_ok(), 2.0 * one_sided, np.nan)
        return np.minimum(np.where(self.no_spread, np.fmax(p, p_tie), p), 1.0)

    def unseen_floor(self, margin: float | np.ndarray) -> np.ndarray:
        """The smallest equivalence p any data can give with this many units: how likely an
        effect of the margin's size carried by the fewest résumés the unit's range allows
        (each moved to the end of the range) is to show in none of them, doubled as the
        interval's two tails. Below alpha only from ``ln(alpha / 2) / ln(1 - margin / range)``
        units on (131 résumés for 0.25 fit points, 146 for 0.05 seniority levels)."""
        reach = np.maximum(self.high, -self.low)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.clip(_arr(margin) / reach, 0.0, 1.0)
            floor = np.minimum(1.0, 2.0 * self.arms * (1.0 - share) ** self.n_units)
            return np.where(np.isfinite(reach), floor, 0.0)

    def t(self) -> np.ndarray:
        """The estimate over its standard error; without spread 0 for no change, else infinite."""
        se = self.se_eff
        with np.errstate(invalid="ignore", divide="ignore"):
            t = self.estimate / se
        zero = se == 0
        t[zero] = np.where(self.estimate[zero] == 0, 0.0, np.copysign(np.inf, self.estimate[zero]))
        return t
