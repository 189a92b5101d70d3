"""Wall time of ``resumebias demo`` (the newcomer's first audit; target: under 120 s on 2 cores).

Runs the command as a user does, in a subprocess, into a fresh folder, and prints the wall
time, the CPU seconds it and its children used, the CPU model (/proc/cpuinfo) and core count,
how much of the machine other processes took meanwhile (a figure taken on a busy machine says
so), and the demo's own seconds per asset (from its run.log).

Run: python benchmarks/bench_demo.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import cpu_model, machine_busy_seconds, own_cpu_seconds

TARGET_S = 120


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", metavar="DIR", help="run into DIR (new or empty) and keep it")
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-demo-"))
    out = work / "resumebias-demo"
    # No model hub, and no settings of the caller's: the demo drops those itself.
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    busy0, cpu0, t0 = machine_busy_seconds(), own_cpu_seconds(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "resumebias_dagster.cli", "demo", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    cpu = own_cpu_seconds() - cpu0
    busy = machine_busy_seconds()
    if proc.returncode != 0:
        print(proc.stdout[-4000:], proc.stderr[-4000:], sep="\n")
        print(f"resumebias demo failed with exit status {proc.returncode}")
        return 1
    cores = os.cpu_count() or 1
    others = None if busy is None or busy0 is None else max(0.0, (busy - busy0) - cpu)
    print(f"CPU: {cpu_model()}, {cores} cores")
    print(f"resumebias demo: {wall:.1f} s wall, {cpu:.1f} s CPU (it and its children); target under {TARGET_S} s")
    if others is not None:
        print(f"other processes used {others:.1f} CPU-seconds meanwhile ({others / (wall * cores):.0%} of the machine)")
    log = (out / "run.log").read_text(encoding="utf-8")
    per_asset = log.split("SECONDS PER ASSET (all partitions)", 1)[-1].splitlines()[1:9]
    print("slowest assets (s):", "; ".join(" ".join(line.split()) for line in per_asset if re.search(r"\d$", line)))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if wall < TARGET_S else 2


if __name__ == "__main__":
    sys.exit(main())
