"""How large a study must be to detect an effect: résumés, runs and job descriptions for a
target effect at the declared power, from the noise of a pilot run or an assumed one.

The model of the noise is the design's: an effect is the mean over G résumés of each
résumé's difference, whose standard deviation ``sd`` has two parts. One is how the effect
itself differs between résumés (and names): more runs or job descriptions do not shrink it.
The other is the run-to-run noise of the model's answers, averaged over R runs and J job
descriptions: it shrinks as 1 / (R J). ``run_share`` is that part's share of ``sd**2`` at the
pilot's runs and job descriptions (0 for a model scored exactly, as an embedded LLM is).
So ``sd(R, J)**2 = sd**2 (1 - run_share + run_share R0 J0 / (R J))`` and the standard error
with G résumés is ``sd(R, J) / sqrt(G)``; the needed G is the smallest whose two-sided t
test has the declared power against the effect *as the verdict is printed*: beyond noise
after the model's multiplicity control, whose threshold for one finding among the study's
families is simulated through the same procedure (``power.thresholds``: the study's family
structure, from a pilot's verdicts or the default design's). Planning at alpha itself asked
for about ten times too few résumés (48 for 80% at -0.3 points, which gave 16-27%). For a
randomisation test over résumés, the smallest possible p (2 / 2**G) must reach the threshold
too. An impact ratio's effect is planned on the log scale (a ratio of 0.8 is log 0.8).

Criterion validity (a share read against chance, ``verdicts.finish``) stands alone: its verdict
"better than chance" is its own 95% interval above 0.5, a t over résumés of each résumé's share,
so its plan is the t at alpha for the effect's excess over chance (0.75 is 0.25), with no
family around it. A group's gap in criterion validity (``validity_gap``) is one finding of the
validity verdicts' families and is planned among them, as every other kind.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference.estimate import Estimate
from resumebias_dagster.core.inference.power import power_at, thresholds
from resumebias_dagster.core.inference.randomization import smallest_p
from resumebias_dagster.core.inference.settings import CHANCE, InferenceSettings

# Rough per-résumé standard deviations when there is no pilot: one résumé's difference, in
# the finding's unit (the log ratio for impact ratios). A pilot run replaces them.
ASSUMED_SD = {
    "style_shift": 0.5,
    "seniority_bias": 0.5,
    "inconsistency": 0.5,
    "fit_delta": 1.0,
    "impact_ratio": 2.0,
    # A résumé's share of a few comparisons ordered right (0..1), and two groups' shares' difference.
    "criterion_validity": 0.3,
    "validity_gap": 0.4,
}
RANDOMISATION = {"fit_delta"}  # kinds tested by sign flips over résumés
MAX_RESUMES = 100_000


@dataclass(frozen=True)
class Noise:
    sd: float  # SD of one résumé's difference at the pilot's runs and JDs
    run_share: float = 0.5  # share of sd**2 that is run-to-run noise (0: exact scores)
    runs: int = 5  # the pilot's runs per cell
    jds: int = 1  # the pilot's job descriptions per résumé

    def at(self, runs: int, jds: int) -> float:
        return self.sd * math.sqrt(1 - self.run_share + self.run_share * self.runs * self.jds / (runs * jds))


def pilot_noise(verdicts: pd.DataFrame, kind: str, runs: int, jds: int = 1, run_share: float = 0.5) -> Noise:
    """The noise of ``kind`` measured by a pilot's verdicts (se x sqrt(résumés), the median
    over its findings of that kind)."""
    rows = verdicts[(verdicts["kind"] == kind) & np.isfinite(verdicts["se"]) & (verdicts["n_resumes"] > 1)]
    if not len(rows):
        raise ValueError(f"the pilot has no {kind} finding with a standard error to plan from")
    sd = float(np.median(rows["se"] * np.sqrt(rows["n_resumes"])))
    return Noise(sd, run_share, runs, jds)


@dataclass(frozen=True)
class Structure:
    """The findings with a p in each family of one model, and the family of the planned finding."""

    sizes: tuple[int, ...] = (1,)
    target: int = 0

    def thresholds(self, settings: InferenceSettings) -> np.ndarray:
        return thresholds(self.sizes, self.target, settings.alpha, seed=settings.seed)


def pilot_structure(verdicts: pd.DataFrame, kind: str, family: str | None = None) -> Structure:
    """The family structure of the pilot's first model with a finding of ``kind``: its
    families' sizes (findings with a p) and ``family`` (default: the one holding most
    findings of ``kind``) as the planned finding's."""
    rows = verdicts[verdicts["kind"] == kind]
    if kind in CHANCE or not len(rows) or not {"model", "family", "p"} <= set(verdicts.columns):
        return Structure()  # a share read against chance stands alone (``verdicts.finish``)
    model = rows["model"].iloc[0]
    # Those findings take no part in the model's families either.
    mine = verdicts[
        (verdicts["model"] == model)
        & pd.to_numeric(verdicts["p"], errors="coerce").notna()
        & ~verdicts["kind"].isin(list(CHANCE))
    ]
    if not len(mine):
        return Structure()
    sizes = mine.groupby("family", sort=True).size()
    target = family if family is not None else rows[rows["model"] == model]["family"].value_counts().index[0]
    if target not in sizes.index:
        return Structure((*(int(x) for x in sizes), 1), len(sizes))
    return Structure(tuple(int(x) for x in sizes), int(np.flatnonzero(sizes.index == target)[0]))


def planned_power(
    effect: float,
    sd: float,
    resumes: int,
    settings: InferenceSettings,
    *,
    randomisation: bool = False,
    structure: Structure | None = None,
) -> float:
    """The chance that the verdict of one finding among the ``structure``'s families (default:
    alone) finds ``effect`` with ``resumes`` résumés of SD ``sd``: a t over them (``df`` one
    less), through the thresholds of ``power.thresholds``, as ``verdicts.finish`` computes it."""
    c = (structure or Structure()).thresholds(settings)[None, :]
    g = resumes
    est = Estimate(np.array([0.0]), np.array([sd / math.sqrt(g)]), np.array([g - 1.0]), np.array([g]))
    floor = smallest_p(np.array([g])) if randomisation else None
    return float(power_at(est, abs(effect), c, floor)[0])


def resumes_needed(
    effect: float,
    sd: float,
    settings: InferenceSettings,
    randomisation: bool = False,
    structure: Structure | None = None,
) -> int:
    """The smallest number of résumés whose verdict finds ``effect`` with the declared power,
    one finding among the ``structure``'s families (default: alone)."""
    if effect == 0 or sd <= 0:
        return 2 if sd <= 0 else MAX_RESUMES

    def power(g: int) -> float:
        return planned_power(effect, sd, g, settings, randomisation=randomisation, structure=structure)

    floor = max(2, math.ceil(math.log2(2 / settings.alpha)) if randomisation else 2)
    low, high = floor, floor
    while power(high) < settings.power:
        low, high = high, high * 2
        if high > MAX_RESUMES:
            return MAX_RESUMES
    while low < high:  # power grows with g: bisect
        mid = (low + high) // 2
        low, high = (mid + 1, high) if power(mid) < settings.power else (low, mid)
    return high


def plan(
    kind: str,
    effect: float,
    noise: Noise,
    settings: InferenceSettings,
    variants_per_resume: int,
    *,
    runs: Sequence[int] = (1, 3, 5, 10),
    jds: Sequence[int] = (1,),
    structure: Structure | None = None,
) -> pd.DataFrame:
    """Designs (runs x job descriptions) with the résumés each needs and the calls it makes
    (résumés x variants per résumé x runs x job descriptions)."""
    # An impact ratio on the log scale; a share read against chance as its excess over chance.
    target = math.log(effect) if kind == "impact_ratio" else effect - CHANCE.get(kind, 0.0)
    rows = []
    for r in runs:
        for j in jds:
            sd = noise.at(r, j)
            g = resumes_needed(target, sd, settings, kind in RANDOMISATION, structure)
            rows.append(
                {
                    "kind": kind,
                    "effect": effect,
                    "runs": r,
                    "job_descriptions": j,
                    "resumes": g,
                    "sd_per_resume": sd,
                    "calls": g * variants_per_resume * r * j,
                }
            )
    return pd.DataFrame(rows)
