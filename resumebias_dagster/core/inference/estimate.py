"""An estimate with its standard error and degrees of freedom, and what follows from them:
the t test, intervals, the equivalence test (TOST), power and the minimal detectable effect.

Assumption of everything here: ``(estimate - true effect) / se`` follows Student's t with
``df`` degrees of freedom. For a mean of independent résumé-level differences that holds
exactly when the differences are normal and approximately (by the central limit theorem)
otherwise; for a cluster-robust standard error with G clusters it is the usual
``t(G - 1)`` reference. ``bench_inference_calibration.py`` checks error rates and coverage
by simulation through this code.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

# Standard errors at or below this share of the estimate's size (at least 1 point) are
# floating-point rounding of equal differences, read as no spread.
SE_ROUNDING = 1e-9


def _arr(x) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float))


@dataclass(frozen=True)
class Estimate:
    """Estimates of k effects (arrays of length k); NaN where an effect cannot be estimated."""

    estimate: np.ndarray
    se: np.ndarray
    df: np.ndarray
    n_resumes: np.ndarray  # résumés behind each estimate (the unit of the design)
    n_names: np.ndarray | None = None  # distinct names, where names are a random effect
    # Largest deviation of one résumé from the others that the measure allows; set with
    # ``bounded``, it gives estimates without spread an interval (see there).
    max_deviation: float | None = None

    def __post_init__(self):
        for name in ("estimate", "se", "df", "n_resumes"):
            object.__setattr__(self, name, _arr(getattr(self, name)))
        # A deterministic scorer's equal changes differ in the last bits ((b - 1.5) - b is not
        # exactly -1.5 for every b): a standard error that small is rounding, not spread, and
        # read as one it would give a zero-width interval and a t no design supports.
        with np.errstate(invalid="ignore"):
            rounding = self.se <= SE_ROUNDING * np.maximum(1.0, np.abs(self.estimate))
        object.__setattr__(self, "se", np.where(rounding, 0.0, self.se))

    @classmethod
    def of_one(
        cls, estimate: float, se: float, df: float, n_resumes: int, *, n_names: np.ndarray | None = None
    ) -> Estimate:
        """One effect from scalars (the fields hold arrays of k effects)."""
        return cls(_arr(estimate), _arr(se), _arr(df), _arr(n_resumes), n_names)

    def bounded(self, max_deviation: float) -> Estimate:
        """This estimate, where every résumé gave the same difference (no spread, se 0),
        read by what that says of the population of résumés instead of by a t with no
        variance: with n résumés all alike, the share of résumés that would differ is below
        ``1 - a**(1/n)`` at confidence 1 - a (the exact binomial bound for no exceptions seen),
        and each exception moves the mean by at most ``max_deviation``. So the interval is
        the estimate ± that share times ``max_deviation``; the p of "no effect" is the exact
        sign-flip p, 2 / 2**n (1 when the difference is 0). Two résumés both at 0 no longer
        rule anything out."""
        return replace(self, max_deviation=float(max_deviation))

    def _zero_spread(self) -> np.ndarray:
        return (self.se == 0) & (self.max_deviation is not None)

    def _bound(self, one_sided: float) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (1.0 - one_sided ** (1.0 / self.n_resumes)) * (self.max_deviation or 0.0)

    def __len__(self) -> int:
        return len(self.estimate)

    def t(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            t = self.estimate / self.se
        # A zero standard error: no spread at all; an exact zero is no effect (t 0), anything else infinite.
        zero = self.se == 0
        t[zero] = np.where(self.estimate[zero] == 0, 0.0, np.copysign(np.inf, self.estimate[zero]))
        return t

    def p_value(self) -> np.ndarray:
        """Two-sided p of "no effect" against t(df); NaN where df < 1."""
        with np.errstate(invalid="ignore"):
            p = 2.0 * stats.t.sf(np.abs(self.t()), self.df)
        zero = self._zero_spread()
        p[zero] = np.where(self.estimate[zero] == 0, 1.0, np.minimum(1.0, 2.0 / 2.0 ** self.n_resumes[zero]))
        return np.where(self.df >= 1, p, np.nan)

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(invalid="ignore"):
            half = stats.t.ppf(0.5 + level / 2, self.df) * self.se
        half = np.where(self._zero_spread(), self._bound((1 - level) / 2), half)
        half = np.where(self.df >= 1, half, np.nan)
        return self.estimate - half, self.estimate + half

    def tost_p(self, margin: float | np.ndarray) -> np.ndarray:
        """p of the two one-sided tests of "|effect| >= margin" (equivalence when < alpha,
        i.e. when the (1 - 2 alpha) interval lies inside ±margin)."""
        margin = _arr(margin)
        with np.errstate(invalid="ignore", divide="ignore"):
            lower = stats.t.sf((self.estimate + margin) / self.se, self.df)
            upper = stats.t.cdf((self.estimate - margin) / self.se, self.df)
        p = np.maximum(lower, upper)
        zero = self.se == 0
        # No spread: equivalent when the bounded 90% interval (or, unbounded, the point) is inside.
        reach = np.abs(self.estimate) + np.where(self._zero_spread(), self._bound(0.05), 0.0)
        p[zero] = np.where(reach[zero] < np.broadcast_to(margin, p.shape)[zero], 0.0, 1.0)
        return np.where(self.df >= 1, p, np.nan)

    def mde(self, alpha: float, power: float) -> np.ndarray:
        """The smallest effect a two-sided level-``alpha`` t test detects with ``power``
        (normal-theory approximation with t quantiles: ``(t_{1-a/2} + t_{power}) se``)."""
        with np.errstate(invalid="ignore"):
            m = (stats.t.ppf(1 - alpha / 2, self.df) + stats.t.ppf(power, self.df)) * self.se
        m = np.where(self._zero_spread(), np.nan, m)  # no spread: no t to plan with
        return np.where(self.df >= 1, m, np.nan)

    def power_at(self, effect: float | np.ndarray, alpha: float) -> np.ndarray:
        """Power of the two-sided level-``alpha`` t test against a true ``effect`` (noncentral t)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            ncp = _arr(effect) / self.se
            crit = stats.t.ppf(1 - alpha / 2, self.df)
            p = stats.nct.sf(crit, self.df, ncp) + stats.nct.cdf(-crit, self.df, ncp)
        # A standard error that is zero or negligible next to the effect: certain detection.
        p = np.where((self.se == 0) | (np.isnan(p) & (np.abs(ncp) > 1e3)), 1.0, p)
        p = np.where(self._zero_spread(), np.nan, p)
        return np.where(self.df >= 1, p, np.nan)
