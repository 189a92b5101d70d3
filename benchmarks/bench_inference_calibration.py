"""Calibration of every verdict type by simulation, through the code the assets use.

For each verdict type (seniority style shifts, name contrasts, inconsistency and impact
ratios; fit cells, fit levels pooled over job descriptions, fit name-group contrasts) it
simulates null studies (nothing planted) and studies with an effect of the size declared in
``catalog/inference.yaml`` (``detect``) planted, runs the same functions the Dagster assets
run (``core/seniority/verdicts.py``, ``core/jd_audit/fit_stats.py``, ``core/jd_audit/verdicts.py``,
``core/fairness/impact.py``) and prints:

* ``false_positive_rate``: the share of null findings read ``beyond_noise`` (target <= 5%
  within Monte Carlo error), and ``null_studies_flagged``, the share of null studies with
  any such finding of that type;
* ``coverage_null`` / ``coverage_planted``: the share of 95% intervals that contain the true
  value (target 95 ± 2%);
* ``power``: the share of planted findings read ``beyond_noise`` at the declared effect size
  (what the default designs can detect; ``resumebias plan`` sizes a study for more).

Designs: the seniority study's 120 résumés (names from pools of 9, a random effect of sd 0.3
on the latent scale), 5 sampled runs or exact distributions; the fit audit's 9 résumés x 2
job descriptions x 5 runs (sd 1.5 points), 4 placebo and 4 probe levels, 8 name groups
with each résumé's own names. ``testing/calibration.py`` holds the scenarios.

Run: python benchmarks/bench_inference_calibration.py [--studies 400]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _machine import machine_busy_seconds, own_cpu_seconds  # noqa: E402

from resumebias_dagster.core.inference import load_inference_settings  # noqa: E402
from resumebias_dagster.testing.calibration import calibrate  # noqa: E402


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=400, help="simulated studies per scenario")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    settings = load_inference_settings()
    busy, own, started = machine_busy_seconds(), own_cpu_seconds(), time.perf_counter()
    table = calibrate(args.studies, settings, args.seed)
    wall = time.perf_counter() - started
    pd.set_option("display.width", 200)
    print(f"{args.studies} studies per scenario; {_cpu()}; {wall:.0f} s")
    print(table.round(3).to_string(index=False))
    n = args.studies
    # Monte Carlo error: a 5% rate over the null findings, a 95% coverage over the intervals.
    fpr_limit = 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)
    problems = []
    for row in table.itertuples(index=False):
        if row.false_positive_rate > fpr_limit:
            problems.append(f"{row.verdict_type}: false-positive rate {row.false_positive_rate:.3f} > {fpr_limit:.3f}")
        for name in ("coverage_null", "coverage_planted"):
            value = getattr(row, name)
            if np.isfinite(value) and abs(value - 0.95) > 0.02 + 2 * np.sqrt(0.05 * 0.95 / n):
                problems.append(f"{row.verdict_type}: {name} {value:.3f} outside 95 ± 2% (and Monte Carlo error)")
    if busy is not None:
        others = machine_busy_seconds() - busy - (own_cpu_seconds() - own)
        print(f"other processes used {max(0.0, others) / wall:.2f} cores during the run")
    print("\n".join(problems) if problems else "every verdict type within its targets")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
