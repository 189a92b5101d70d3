"""Wall time of the whole default graph (`resumebias run` on the embedded defaults) on a fresh
data directory, with the seconds of every asset (all its partitions together).

The converted model weights are shared with the tests (`data/test-cache`, or
$RESUMEBIAS_MODEL_CACHE): a first conversion of the Gemma GGUF (~45 s) is a one-time cost of a
machine, not of a run, and is reported apart when it happens. Also prints how much of the
machine other processes used while it ran: a figure taken on a busy machine says so, and the
seconds each model that runs here spent scoring (its stored rows' ``latency_s``, one run's worth):
an asset's seconds hold every partition (seniority_predictions also runs the fine-tuned
classifier) and the loading and storing around the scoring. The embedded LLM's scoring seconds are
what ``bench_cpu_ceiling.py --llm-seconds`` compares with its floor.

Run: python benchmarks/bench_default_graph.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _machine import machine_busy_seconds, own_cpu_seconds

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 15 * 60


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="use (and keep) this data directory instead of a temporary one")
    args = parser.parse_args()
    os.environ.setdefault("RESUMEBIAS_MODEL_CACHE", str(REPO / "data" / "test-cache"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-graph-"))
    os.environ["RESUMEBIAS_DATA_DIR"] = str(folder)
    os.environ.pop("DAGSTER_HOME", None)
    os.environ.pop("RESUMEBIAS_TABLES_URL", None)
    from resumebias_dagster.runner import run_study

    out = io.StringIO()
    busy, own, start = machine_busy_seconds(), own_cpu_seconds(), time.perf_counter()
    try:
        status = run_study(out=out)
        wall = time.perf_counter() - start
        scoring = scoring_seconds(folder / "resumebias.duckdb")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    text = out.getvalue()
    others = float("nan")
    if busy is not None:
        others = max(0.0, machine_busy_seconds() - busy - (own_cpu_seconds() - own)) / wall
    section = re.search(r"SECONDS PER ASSET \(all partitions\)\n((?:  .*\n)+)", text)
    print(
        f"exit status {status}; whole graph {wall:.0f} s ({wall / 60:.1f} min), target {TARGET_S / 60:.0f} min: "
        f"{'meets' if status == 0 and wall < TARGET_S else 'MISSES'}"
    )
    print(f"cores other processes used meanwhile (of {os.cpu_count()}): {others:.2f}")
    print("seconds per asset:")
    sys.stdout.write(section.group(1) if section else text[-3000:])
    if scoring:
        print("scoring seconds per model that runs here (stored latency_s, one run's worth):")
        for (table, model, kind), seconds in scoring.items():
            print(f"  {table:<24}{model:<24}{kind:<12}{seconds:8.1f}")
        llm = sum(s for (_t, _m, kind), s in scoring.items() if kind == "local-llm")
        print(f"  the embedded LLM's scoring, both tasks: {llm:.0f} s (bench_cpu_ceiling.py --llm-seconds {llm:.0f})")
    return status


def scoring_seconds(database: Path) -> dict[tuple[str, str, str], float]:
    """{(table, model, kind): seconds} for the models that run here: the sum of their rows'
    ``latency_s`` (the scoring pass's seconds spread over its prompts, repeated on each run's row)
    over one run."""
    import duckdb

    from resumebias_dagster.core.common.shared_tables import SCHEMA
    from resumebias_dagster.core.models.model_config import load_models

    kinds = {spec.name: spec.kind for spec in load_models() if spec.kind in ("local-llm", "fine-tuned")}
    found: dict[tuple[str, str, str], float] = {}
    if not database.is_file() or not kinds:
        return found
    with duckdb.connect(str(database), read_only=True) as con:
        for table in ("seniority_predictions", "fit_scores"):
            rows = con.execute(
                f"SELECT model, sum(latency_s) / count(DISTINCT run) FROM {SCHEMA}.{table} "
                f"WHERE model IN ({', '.join('?' * len(kinds))}) GROUP BY model ORDER BY model",
                list(kinds),
            ).fetchall()
            for model, seconds in rows:
                found[(table, model, kinds[model])] = float(seconds)
    return found


if __name__ == "__main__":
    sys.exit(main())
