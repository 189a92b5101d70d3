"""Time to read every partition of `fit_scores` at 1M rows from the shared tables (Parquet per
(model, JD) partition), on a local S3 server (moto on 127.0.0.1) and on a local folder; and the
time to write them and to pull them into a local DuckDB file (`resumebias pull-tables`).

The rows carry every FitScores column, validated by its pandera model, with a 300-character
justification and lists of strengths and concerns, like a provider's answer. Default: 10
models x 17 JDs = 170 partitions of ~5,900 rows. moto runs in a thread of this process, so the
S3 figures include its CPU time on the same 2 cores and leave out a network's latency.

Run: python benchmarks/bench_shared_tables.py [--rows 1000000] [--models 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.shared_tables import SharedTables, pull_into_duckdb
from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions
from resumebias_dagster.core.tables import FitScores
from resumebias_dagster.testing.s3 import S3Server


def fit_scores(rows: int, models: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    jds = load_job_descriptions()["jd"].tolist()
    per_cell = rows // (models * len(jds))
    variants = [f"v{i:03d}" for i in range(-(-per_cell // 5))]
    model_col = np.repeat([f"provider/model-{m}" for m in range(models)], len(jds) * per_cell)
    jd_col = np.tile(np.repeat(jds, per_cell), models)
    n = len(model_col)
    variant = np.tile(np.repeat(variants, 5)[:per_cell], models * len(jds))
    score = rng.integers(1, 11, n).astype(float)
    words = np.array("strong relevant experience leads teams ships products measured impact clear growth".split())
    justification = [" ".join(rng.choice(words, 40)) for _ in range(1000)]
    frame = pd.DataFrame(
        {
            "model": model_col,
            "jd": jd_col,
            "resume_id": "mid-0000",
            "variant": variant,
            "arm": "probe",
            "axis": "name",
            "level": "x",
            "run": np.tile(np.arange(5), n // 5 + 1)[:n],
            "score": score,
            "recommend": np.where(score >= 7, "yes", "no"),
            "justification": np.array(justification, dtype=object)[rng.integers(0, 1000, n)],
            "strengths": '["a", "b", "c"]',
            "concerns": '["x", "y", "z"]',
            "resolved_model": "model-2026-01-01",
            "latency_s": rng.random(n),
            "error": None,
            "expected_score": np.nan,
            "score_distribution": None,
            "note": None,
        }
    )
    # Repeated variants within a cell would break the one-row-per-run rule: give each row its own résumé.
    frame["resume_id"] = [f"r{i}" for i in range(n)]
    return FitScores.validate(frame)


def write_partitions(shared: SharedTables, frame: pd.DataFrame) -> int:
    groups = list(frame.groupby(["model", "jd"], sort=False))
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda g: shared.write("audit", "fit_scores", g[1], {"model": g[0][0], "jd": g[0][1]}), groups))
    return len(groups)


def measure(label: str, shared: SharedTables, frame: pd.DataFrame, repeat: int, workdir: Path) -> None:
    t = time.perf_counter()
    parts = write_partitions(shared, frame)
    write_s = time.perf_counter() - t
    reads = []
    for _ in range(repeat):
        t = time.perf_counter()
        back = shared.read("audit", "fit_scores")
        reads.append(time.perf_counter() - t)
        assert len(back) == len(frame)
    t = time.perf_counter()
    pull_into_duckdb(shared, "audit", workdir / f"{label}.duckdb")
    pull_s = time.perf_counter() - t
    print(
        f"{label:>6}: {len(frame):,} rows in {parts} partitions | write {write_s:.2f} s | read all "
        f"best {min(reads):.2f} s, median {sorted(reads)[len(reads) // 2]:.2f} s "
        f"({len(frame) / min(reads):,.0f} rows/s) | pull into DuckDB {pull_s:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    t = time.perf_counter()
    frame = fit_scores(args.rows, args.models)
    print(
        f"fit_scores: {len(frame):,} rows, {frame.memory_usage(deep=True).sum() / 1e6:,.0f} MB in pandas "
        f"(built and validated in {time.perf_counter() - t:.1f} s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        measure("folder", SharedTables(f"file://{work}/tables"), frame, args.repeat, work)
        with S3Server() as s3:
            s3.create_bucket("bench")
            os.environ.update(s3.env())
            measure("s3", SharedTables("s3://bench/study"), frame, args.repeat, work)


if __name__ == "__main__":
    main()
