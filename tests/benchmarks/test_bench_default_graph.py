"""The scoring seconds `bench_default_graph.py` reads from a run's DuckDB file (what
`bench_cpu_ceiling.py --llm-seconds` compares with its floor)."""

import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
from bench_default_graph import scoring_seconds  # noqa: E402


def write_tables(path: Path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA audit")
        con.execute("CREATE TABLE audit.seniority_predictions (model VARCHAR, run INTEGER, latency_s DOUBLE)")
        con.execute("CREATE TABLE audit.fit_scores (model VARCHAR, run INTEGER, latency_s DOUBLE)")
        # Gemma: 3 variants x 5 runs, each row repeating its variant's share of one scoring pass.
        con.executemany(
            "INSERT INTO audit.seniority_predictions VALUES (?, ?, ?)",
            [("gemma3-270m", run, 0.5) for _variant in range(3) for run in range(5)]
            + [("minilm-classifier", 0, 0.25) for _variant in range(3)]
            + [("gpt-5", run, 9.0) for run in range(5)],  # a provider's calls: not scored here
        )
        con.executemany(
            "INSERT INTO audit.fit_scores VALUES (?, ?, ?)",
            [("gemma3-270m", run, 2.0) for _ in range(2) for run in range(5)],
        )


def test_each_local_model_gets_one_runs_worth_of_its_latency(tmp_path):
    write_tables(tmp_path / "resumebias.duckdb")
    assert scoring_seconds(tmp_path / "resumebias.duckdb") == pytest.approx(
        {
            ("seniority_predictions", "gemma3-270m", "local-llm"): 1.5,
            ("seniority_predictions", "minilm-classifier", "fine-tuned"): 0.75,
            ("fit_scores", "gemma3-270m", "local-llm"): 4.0,
        }
    )


def test_no_database_no_figures(tmp_path):
    assert scoring_seconds(tmp_path / "missing.duckdb") == {}
