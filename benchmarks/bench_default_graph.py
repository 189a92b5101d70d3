"""Wall time of the whole default graph (`resumebias run` on the embedded defaults) on a fresh
data directory, with the seconds of every asset (all its partitions together).

The converted model weights are shared with the tests (`data/test-cache`, or
$RESUMEBIAS_MODEL_CACHE): a first conversion of the Gemma GGUF (~45 s) is a one-time cost of a
machine, not of a run, and is reported apart when it happens. Also prints how much of the
machine other processes used while it ran: a figure taken on a busy machine says so.

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
    finally:
        wall = time.perf_counter() - start
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
    return status


if __name__ == "__main__":
    sys.exit(main())
