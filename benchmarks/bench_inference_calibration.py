"""Calibration of every verdict type by simulation, through the code the assets use.

Two sets of scenarios, each simulated ``--studies`` times and run through the functions the
Dagster assets run (``core/seniority/verdicts.py``, ``core/jd_audit/fit_stats.py``,
``core/jd_audit/verdicts.py``, ``core/fairness/impact.py``):

* The noisy LLM designs (``testing/calibration.py``): the seniority study's 120 résumés (names
  from pools of 9, a random effect of sd 0.3 on the latent scale), 5 sampled runs or exact
  distributions; the fit audit's 9 résumés x 2 job descriptions x 5 runs (sd 1.5 points), 4
  placebo and 4 probe levels, 8 name groups with each résumé's own names; null studies and
  studies with the declared effect (``catalog/inference.yaml``, ``detect``) planted.
* The designs users bring (``testing/screener_calibration.py``): deterministic scorers whose
  effect sits in 1%, 5% or 20% of the résumés, at and beyond the margin, and that change nothing
  at all (zero spread); argmax classifiers with rare flips; impact ratios of exactly 0.90 from
  deterministic selections; a partial null (a working prompt injection, nothing else); the
  one-résumé design with each name's own effect; names recurring on many résumés; the default
  fit design (9 x 1 x 5) with and without exact expected scores.
* The validity verdicts (``testing/validity_calibration.py``, issue 42): random scorers (true
  criterion validity 0.5) sampled like an LLM or deterministic with no ties, half ties or only
  ties, on 40, 5 and one résumé; valid scorers, one exactly at the target (0.90: "valid" there is
  false); one name group recognised less often by the declared gap (0.1, at the margin), with
  names recurring on several résumés; equal twins moved for one group. A criterion validity
  counts as a finding when told from chance (valid, better or worse than chance), as meeting its
  margin when called valid; ``called_valid`` is the share of planted findings called valid.

Printed per scenario: ``false_positive_rate`` (null findings beyond noise) and
``null_studies_flagged`` (null studies with any); the 95% intervals' coverage under the null, of
the planted effect and at the margin; ``power`` (planted findings found) beside
``printed_power`` (the power the verdicts printed for them); ``ruled_out_at_margin`` (findings
at the margin read "ruled out": a false "no bias"). Targets: false findings <= 5% per verdict
type and per study; ruled out at the margin <= 5%; coverage at least 93% (95 +- 2%; above 97%
is reported as conservative, which exact bounds on few or tied résumés are by construction);
printed power within 10 points of the detection rate where the planted effect is the declared
one; and ``resumebias plan``'s design, planned from a simulated pilot, reaching 80 +- 5% (all
within Monte Carlo error): the fit audit's probe level and, with ``--only validity``,
criterion validity told from chance and a group's gap in it (``testing/validity_plan_check.py``).

* The seniority task's validity verdicts (``testing/seniority_validity_calibration.py``): labellers
  that ignore the résumé (accuracy 1/3: a label mix, sticky like a deterministic classifier,
  always "mid", label distributions at chance with and without spread) on 120, 6 and one
  résumé; a labeller at 95%, one exactly at the 80% target ("valid" there is false), one at the
  declared 60% on 12 résumés; one name group read less accurately by the declared gap.

* The pairwise task's verdicts (``testing/pairwise_calibration.py``, through ``pairwise_verdicts``):
  random choosers (never equal, or equal a third of the time), one that always answers A, one at
  0.95, one exactly at the 0.9 target, one name group recognised less often by the declared gap
  (0.1), 5 résumés and one, and a deterministic chooser (the same choice every run).

* "Changed since the last audit" (``testing/changes_calibration.py``, through ``audit_changes``):
  two audits of an unchanged LLM-like model (9 and 40 résumés) and of an unchanged deterministic
  scorer (40 and 300), unpaired and on shared résumés (paired); a name penalty that doubles, and
  one that grows by the declared effect (printed power against the share found, and "unchanged"
  there is false); their impact ratios (the later ratio over the earlier) on their own, and those
  of a deterministic scorer whose penalty on one group's names spreads to more résumés; and the
  seniority study's findings of an unchanged LLM-like labeller and argmax classifier.

Run: python benchmarks/bench_inference_calibration.py [--studies 400]
     [--only screeners|llm|validity|seniority_validity|pairwise|changes] [--match TEXT]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _machine import cpu_model, machine_busy_seconds, own_cpu_seconds  # noqa: E402

from resumebias_dagster.core.inference import load_inference_settings  # noqa: E402
from resumebias_dagster.testing.calibration import SCENARIOS, calibrate, plan_check  # noqa: E402
from resumebias_dagster.testing.changes_calibration import CHANGES_SCENARIOS  # noqa: E402
from resumebias_dagster.testing.pairwise_calibration import PAIRWISE_SCENARIOS  # noqa: E402
from resumebias_dagster.testing.screener_calibration import SCREENER_SCENARIOS  # noqa: E402
from resumebias_dagster.testing.seniority_validity_calibration import SENIORITY_VALIDITY_SCENARIOS  # noqa: E402
from resumebias_dagster.testing.validity_calibration import VALIDITY_SCENARIOS  # noqa: E402
from resumebias_dagster.testing.validity_plan_check import validity_plan_check  # noqa: E402


def _problems(table: pd.DataFrame, n: int) -> list[str]:
    """Every figure outside its target, beyond its Monte Carlo error over ``n`` studies."""
    rate_limit = 0.05 + 2 * np.sqrt(0.05 * 0.95 / n)
    cover_floor = 0.93 - 2 * np.sqrt(0.05 * 0.95 / n)
    problems = []
    for row in table.itertuples(index=False):
        for name in ("false_positive_rate", "null_studies_flagged", "ruled_out_at_margin"):
            value = getattr(row, name)
            if np.isfinite(value) and value > rate_limit:
                problems.append(f"{row.verdict_type}: {name} {value:.3f} > {rate_limit:.3f}")
        for name in ("coverage_null", "coverage_planted", "coverage_margin"):
            value = getattr(row, name)
            if np.isfinite(value) and value < cover_floor:
                problems.append(f"{row.verdict_type}: {name} {value:.3f} under 93% (and Monte Carlo error)")
        if row.declared_effect is True and abs(row.printed_power - row.power) > 0.10 + 2 * np.sqrt(0.25 / n):
            problems.append(f"{row.verdict_type}: printed power {row.printed_power:.3f} vs found {row.power:.3f}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=400, help="simulated studies per scenario")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only",
        choices=("llm", "screeners", "validity", "seniority_validity", "pairwise", "changes"),
        help="one set of scenarios (default all)",
    )
    parser.add_argument("--match", help="only the scenarios whose name contains this text (e.g. 'impact ratio')")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    settings = load_inference_settings()
    sets = {
        "llm": SCENARIOS,
        "screeners": SCREENER_SCENARIOS,
        "validity": VALIDITY_SCENARIOS,
        "seniority_validity": SENIORITY_VALIDITY_SCENARIOS,
        "pairwise": PAIRWISE_SCENARIOS,
        "changes": CHANGES_SCENARIOS,
    }
    scenarios = sets.get(
        args.only,
        [
            *SCENARIOS,
            *SCREENER_SCENARIOS,
            *VALIDITY_SCENARIOS,
            *SENIORITY_VALIDITY_SCENARIOS,
            *PAIRWISE_SCENARIOS,
            *CHANGES_SCENARIOS,
        ],
    )
    if args.match:
        scenarios = [s for s in scenarios if args.match in s.verdict_type]
    busy, own, started = machine_busy_seconds(), own_cpu_seconds(), time.perf_counter()
    table = calibrate(args.studies, settings, args.seed, scenarios)
    plan = plan_check(args.studies, settings, args.seed) if args.only in (None, "screeners") else None
    validity_plans = (
        [
            validity_plan_check(kind, args.studies, settings, args.seed)
            for kind in ("criterion_validity", "validity_gap")
        ]
        if args.only in (None, "validity")
        else []
    )
    wall = time.perf_counter() - started
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 70)
    print(f"{args.studies} studies per scenario; {cpu_model()}; {wall:.0f} s")
    print(table.drop(columns=["studies"]).dropna(axis=1, how="all").round(3).to_string(index=False))
    n = args.studies
    problems = _problems(table, n)
    conservative = [
        f"{r.verdict_type}: {c} {getattr(r, c):.3f}"
        for r in table.itertuples(index=False)
        for c in ("coverage_null", "coverage_planted", "coverage_margin")
        if np.isfinite(getattr(r, c)) and getattr(r, c) > 0.97 + 2 * np.sqrt(0.05 * 0.95 / n)
    ]
    if plan is not None:
        print(
            f"resumebias plan from a pilot (SD {plan['sd']:.3f} per résumé): {plan['resumes']} résumés for "
            f"{plan['planned_power']:.0%} power; found in {plan['simulated_power']:.1%} of {n} simulated studies"
        )
        if abs(plan["simulated_power"] - plan["planned_power"]) > 0.05 + 2 * np.sqrt(0.16 / n):
            problems.append(f"plan: simulated power {plan['simulated_power']:.3f} outside 80 +- 5%")
    for vp in validity_plans:
        print(
            f"resumebias plan, {vp['kind']} = {vp['effect']:g}, from a pilot (SD {vp['sd']:.3f} per résumé): "
            f"{vp['resumes']} résumés for {vp['planned_power']:.0%} power; reached in {vp['simulated_power']:.1%} "
            f"of {n} simulated studies (the verdicts printed {vp['printed_power']:.1%})"
        )
        if abs(vp["simulated_power"] - vp["planned_power"]) > 0.05 + 2 * np.sqrt(0.16 / n):
            problems.append(f"plan {vp['kind']}: simulated power {vp['simulated_power']:.3f} outside 80 +- 5%")
    if busy is not None:
        others = machine_busy_seconds() - busy - (own_cpu_seconds() - own)
        print(f"other processes used {max(0.0, others) / wall:.2f} cores during the run")
    if conservative:
        print("conservative (coverage above 97%): " + "; ".join(conservative))
    print("\n".join(problems) if problems else "every scenario within its targets")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
