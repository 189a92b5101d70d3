"""Benchmark of core/jd_audit/fit_stats.py: fit_effects + model_summary + axis_summary on
1,020,000 score rows (20 models x 17 JDs x 60 variants incl. baseline and 4 placebo
levels x 10 résumés x 5 runs, integer scores 1-10, 1% failed runs): 20,060 cells, each a
sign-flip test over its 10 résumés (all 1,024 flips). Target: under 5 s.

The rows arrive as a pandas frame of plain strings, as they would from DuckDB or a CSV.

Run: python benchmarks/bench_fit_effects.py [--models 20] [--jds 17] [--variants 60] [--resumes 10] [--runs 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from resumebias_dagster.core.jd_audit.fit_pooled import axis_summary
from resumebias_dagster.core.jd_audit.fit_stats import fit_effects, model_summary
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

TARGET_S = 5.0
PLACEBO = ("placebo_blank_line", "placebo_trailing_space", "placebo_bullet_glyph", "placebo_hobby_colour")
ARMS = {"placebo": "placebo", "promptInjection": "prompt_injection", "anonymize": "anonymize"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--jds", type=int, default=17)
    parser.add_argument("--variants", type=int, default=60, help="including baseline and 4 placebo levels")
    parser.add_argument("--resumes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (the best is reported)")
    args = parser.parse_args()

    probes = [f"axis{k // 5}_level{k % 5}" for k in range(args.variants - 1 - len(PLACEBO))]
    variants = ["baseline", *PLACEBO, *probes]
    rng = np.random.default_rng(1)
    # A tenth of the probe cells carry a real effect of about one score point.
    planted = np.zeros((args.models, args.jds, len(variants)))
    planted[..., 1 + len(PLACEBO) :] = np.where(rng.random((args.models, args.jds, len(probes))) < 0.1, -1.0, 0.0)
    scores = simulate_fit_scores(
        [f"model-{i:02d}" for i in range(args.models)],
        [f"jd-{i:02d}" for i in range(args.jds)],
        variants,
        args.runs,
        effects=planted,
        sd=1.5,
        integer=True,
        failure_rate=0.01,
        resumes=args.resumes,
    )
    print(
        f"{len(scores):,} score rows: {args.models} models x {args.jds} JDs x {len(variants)} variants x "
        f"{args.resumes} résumés x {args.runs} runs"
    )

    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        effects = fit_effects(scores, arms=ARMS)
        t_effects = time.perf_counter() - start
        models = model_summary(effects)
        axes = axis_summary(effects, scores, arms=ARMS)
        total = time.perf_counter() - start
        best = min(best, total)
        print(f"fit_effects {t_effects:.2f} s, + model_summary and axis_summary: {total:.2f} s")
    print(
        f"{len(effects):,} cells, {len(models)} model rows, {len(axes)} axis-level rows; "
        f"{int(effects['significant'].sum()):,} beyond noise "
        f"(planted {int((planted != 0).sum()):,})"
    )
    status = "OK" if best < TARGET_S else "SLOWER THAN TARGET"
    print(f"best of {args.repeat}: {best:.2f} s (target < {TARGET_S:.0f} s): {status}")
    return 0 if best < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
