"""The ranking task's impact-ratio intervals by simulation, through ``selection_table`` (what
the ranking_selection asset and ``analyze-rank`` call).

Experiments from ``testing/ranking_simulation.py`` (4 groups, each base résumé in every
rotation, a position bias and a quirk per résumé and name that repeats over its rotations and
runs). Prints, with no group effect: the share of per-group tests rejecting at 5% (target <=
5% within Monte Carlo error) and of groups whose whole interval is under 0.8; with a planted
penalty on one group: its power at 5% and how often its interval covers its true ratio
(target >= 95%; the true ratio from one experiment of 4,000 résumés); and how the interval's
width changes with runs against résumés (runs are repeated measures: more runs of the same
résumés narrow it far less than more résumés would).

Run: python benchmarks/bench_ranking_intervals.py [--experiments 400] [--resumes 30] [--runs 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from resumebias_dagster.core.ranking.tables import selection_table
from resumebias_dagster.testing.ranking_simulation import simulate_rankings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, default=400)
    parser.add_argument("--resumes", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--penalty", type=float, default=-0.7, help="utility planted on group D")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    design = {"resumes": args.resumes, "runs": args.runs}
    started = time.perf_counter()

    null = pd.concat([selection_table(simulate_rankings(rng, **design)) for _ in range(args.experiments)])
    p = null["impact_ratio_p_value"].dropna()
    mc = np.sqrt(0.05 * 0.95 / len(p))
    print(
        f"no effect ({args.experiments} experiments x 3 non-reference groups, {args.resumes} résumés, {args.runs} runs): "
        f"per-group rejection at 5% {(p < 0.05).mean():.3f} (Monte Carlo SE at 5%: {mc:.3f}); "
        f"whole interval under 0.8: {null['ci_below_four_fifths'].mean():.3f}"
    )

    effects = {"D": args.penalty}
    big = selection_table(simulate_rankings(rng, resumes=4000, runs=1, effects=effects)).set_index("group")
    truth = big.loc["D", "selection_rate"] / big.drop(index="D")["selection_rate"].mean()
    found = covered = below = 0
    for _ in range(args.experiments):
        t = selection_table(simulate_rankings(rng, effects=effects, **design)).set_index("group")
        found += t.loc["D", "impact_ratio_p_value"] < 0.05
        covered += t.loc["D", "impact_ratio_ci_low"] <= truth <= t.loc["D", "impact_ratio_ci_high"]
        below += bool(t.loc["D", "ci_below_four_fifths"])
    n = args.experiments
    print(
        f"penalty {args.penalty:+g} on D (true ratio {truth:.3f}): power at 5% {found / n:.3f}, "
        f"coverage of the true ratio {covered / n:.3f}, whole interval under 0.8 {below / n:.3f}"
    )

    def width(resumes: int, runs: int) -> float:
        widths = []
        for _ in range(40):
            t = selection_table(simulate_rankings(rng, resumes=resumes, runs=runs, effects=effects)).set_index("group")
            widths.append(t.loc["D", "impact_ratio_ci_high"] - t.loc["D", "impact_ratio_ci_low"])
        return float(np.nanmedian(widths))

    base, more_runs, more_resumes = width(10, 2), width(10, 8), width(40, 2)
    print(
        f"median width of D's interval: 10 résumés x 2 runs {base:.3f}; x 8 runs {more_runs:.3f}; "
        f"40 résumés x 2 runs {more_resumes:.3f}"
    )
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
