"""``resumebias pull-tables`` against a hostile or broken bucket, and the CLI's other
tracebacks (issue 25, items 6 and 9). Each test failed on the code before issue 25."""

from __future__ import annotations

import socket

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from resumebias_dagster.cli import main
from resumebias_dagster.core.common.shared_tables import SharedTables, pull_into_duckdb

INJECTED = 'x" AS SELECT 1; COPY (SELECT 42 AS pwned) TO \'pwned.csv\'; CREATE TABLE "audit"."y'


def test_a_table_folder_named_like_sql_writes_nothing(tmp_path, capsys, monkeypatch):
    url = f"file://{tmp_path}/shared"
    shared = SharedTables(url)
    shared.write("audit", "fit_scores", pd.DataFrame({"model": ["a"], "score": [1.0]}), {"model": "a"})
    shared.write("audit", INJECTED, pd.DataFrame({"a": [1]}))
    shared.write("audit", "not_an_asset", pd.DataFrame({"a": [1]}))
    work = tmp_path / "analyst"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert main(["pull-tables", "--url", url, "--out", str(tmp_path / "pulled.duckdb")]) == 0
    captured = capsys.readouterr()
    assert not (work / "pwned.csv").exists() and not list(tmp_path.rglob("pwned.csv"))
    assert "audit.fit_scores: 1 rows" in captured.out
    assert "skipped 2 folders that are no table of this project" in captured.err
    assert "not_an_asset" in captured.err


def test_pull_into_duckdb_takes_only_the_declared_tables(tmp_path):
    shared = SharedTables(f"file://{tmp_path}/shared")
    shared.write("audit", "summary", pd.DataFrame({"a": [1, 2]}))
    shared.write("audit", INJECTED, pd.DataFrame({"a": [1]}))
    counts, skipped = pull_into_duckdb(shared, "audit", tmp_path / "p.duckdb", tables={"summary", INJECTED})
    assert counts == {"summary": 2} and skipped == [INJECTED]


def test_partitions_of_conflicting_column_types_are_named(tmp_path, capsys):
    url = f"file://{tmp_path}/shared"
    folder = tmp_path / "shared" / "audit" / "fit_scores"
    for model, score in (("a", pa.array([1.5])), ("b", pa.array(["high"]))):
        (folder / f"model={model}").mkdir(parents=True)
        pq.write_table(pa.table({"model": [model], "score": score}), folder / f"model={model}" / "data.parquet")
    assert main(["pull-tables", "--url", url, "--out", str(tmp_path / "p.duckdb")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "audit/fit_scores" in err and "score" in err and "column types differ" in err


def test_an_unreachable_object_store_is_a_message(tmp_path, capsys, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3-secret-9f8e7d")
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert main(["pull-tables", "--url", "s3://bucket/prefix", "--out", str(tmp_path / "p.duckdb")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "s3-secret-9f8e7d" not in err
    assert "--url: cannot read s3://bucket/prefix" in err


def test_estimate_cost_with_more_people_than_the_pool_is_a_message(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert main(["estimate-cost", "--all", "--n-per-level", "2701"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --n-per-level 2701: need 8103 distinct people") and "Traceback" not in err
