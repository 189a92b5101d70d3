"""Shared tables: Parquet per table and partition, on a local folder and on a real S3 server
(moto on 127.0.0.1)."""

import duckdb
import pandas as pd
import pytest

from resumebias_dagster.core.common.shared_tables import (
    SharedTables,
    SharedTablesError,
    check_tables_url,
    pull_into_duckdb,
)


@pytest.fixture(scope="module")
def bucket(s3_server):
    s3_server.create_bucket("audit-bucket")
    return s3_server


@pytest.fixture
def shared(tables_url):
    return SharedTables(tables_url)


def frame(model, jd, n=3):
    return pd.DataFrame(
        {
            "model": [model] * n,
            "jd": [jd] * n,
            "score": [float(i) for i in range(n)],
            "count": list(range(n)),
            "note": [None] * n,
        }
    )


def test_partitions_are_written_apart_and_read_back_with_their_types(shared):
    shared.write("audit", "fit_scores", frame("m/a", "jd 1"), {"model": "m/a", "jd": "jd 1"})
    shared.write("audit", "fit_scores", frame("m/b", "jd 1", 2), {"model": "m/b", "jd": "jd 1"})
    everything = shared.read("audit", "fit_scores")
    assert len(everything) == 5
    assert everything["score"].dtype == "float64" and everything["count"].dtype == "int64"
    one = shared.read("audit", "fit_scores", [{"jd": "jd 1", "model": "m/b"}])
    assert set(one["model"]) == {"m/b"} and len(one) == 2
    # A value with "/" stays one folder level (percent-encoded), and reads back as it was.
    assert {tuple(sorted(p.items())) for p in shared.partitions("audit", "fit_scores").values()} == {
        (("jd", "jd 1"), ("model", "m/a")),
        (("jd", "jd 1"), ("model", "m/b")),
    }


def test_rewriting_a_partition_replaces_only_it(shared):
    shared.write("audit", "t", frame("a", "x"), {"model": "a"})
    shared.write("audit", "t", frame("b", "x"), {"model": "b"})
    shared.write("audit", "t", frame("a", "x", 1), {"model": "a"})
    counts = shared.read("audit", "t").groupby("model").size().to_dict()
    assert counts == {"a": 1, "b": 3}


def test_unpartitioned_table_is_replaced_whole_and_missing_tables_read_as_none(shared):
    assert shared.read("audit", "nothing") is None
    shared.write("audit", "summary", frame("a", "x", 4))
    shared.write("audit", "summary", pd.DataFrame({"other": [1]}))
    assert list(shared.read("audit", "summary").columns) == ["other"]
    # Partitions asked for that were never stored: no rows.
    shared.write("audit", "t2", frame("a", "x"), {"model": "a"})
    assert shared.read("audit", "t2", [{"model": "zzz"}]).empty


def test_empty_partition_is_stored_and_read(shared):
    shared.write("audit", "t3", frame("a", "x").iloc[0:0], {"model": "a"})
    assert shared.read("audit", "t3") is not None and shared.read("audit", "t3").empty


def test_pull_makes_a_local_duckdb_file_of_every_table(shared, tmp_path):
    shared.write("audit", "fit_scores", frame("a", "x"), {"model": "a", "jd": "x"})
    shared.write("audit", "fit_scores", frame("b", "x"), {"model": "b", "jd": "x"})
    shared.write("audit", "summary", frame("a", "x", 2))
    counts, skipped = pull_into_duckdb(shared, "audit", tmp_path / "pulled.duckdb")
    assert skipped == []
    assert counts == {"fit_scores": 6, "summary": 2}
    with duckdb.connect(str(tmp_path / "pulled.duckdb"), read_only=True) as con:
        assert con.execute("select model, count(*) from audit.fit_scores group by all order by 1").fetchall() == [
            ("a", 3),
            ("b", 3),
        ]


def test_objects_on_s3_follow_the_documented_layout(bucket, monkeypatch):
    for k, v in bucket.env().items():
        monkeypatch.setenv(k, v)
    shared = SharedTables("s3://audit-bucket/layout")
    shared.write("audit", "fit_scores", frame("m/a", "jd1"), {"model": "m/a", "jd": "jd1"})
    shared.write("audit", "summary", frame("a", "x"))
    assert bucket.keys("audit-bucket", "layout/") == [
        "layout/audit/fit_scores/jd=jd1/model=m%2Fa/data.parquet",
        "layout/audit/summary/data.parquet",
    ]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("s3://key:secret@bucket/p", "carries credentials"),
        ("s3://bucket/p?X-Amz-Credential=abc", "carries credentials"),
        ("s3:///p", "names no bucket"),
        ("file://relative/p", "absolute folder"),
        ("http://example.com/x", "is not a shared-tables URL"),
        ("/plain/path", "is not a shared-tables URL"),
    ],
)
def test_bad_urls_are_refused_naming_the_setting_and_never_echoing_secrets(url, message):
    with pytest.raises(SharedTablesError) as e:
        check_tables_url(url, "RESUMEBIAS_TABLES_URL")
    assert message in str(e.value) and str(e.value).startswith("RESUMEBIAS_TABLES_URL: ")
    assert "secret" not in str(e.value) and "abc" not in str(e.value)


def test_a_bad_endpoint_is_refused(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "ftp://127.0.0.1:1")
    with pytest.raises(SharedTablesError, match="AWS_ENDPOINT_URL: .* is not an http"):
        SharedTables("s3://b/p").read("audit", "t")
