"""Audit snapshots in the shared tables (issue 44: "kept in the tables' storage, the shared
tables at scale"): on a local folder and on a real S3 server (moto on 127.0.0.1), the same
snapshots as the DuckDB file, written once, the listing last."""

import re

import pandas as pd
import pytest

from resumebias_dagster.cli import main
from resumebias_dagster.core.common.shared_tables import SharedTables
from resumebias_dagster.core.history.store import SharedSnapshotStore, SnapshotStore
from resumebias_dagster.core.jd_audit.fit_pooled import level_units
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.tables import AuditSnapshots
from resumebias_dagster.testing.calibration import ARMS, _fit_scores
from tests.core.history.test_store import SETTINGS, _identity, _rates


@pytest.fixture
def url(tables_url):
    return tables_url


def _audit(seed: int, penalty: float = 0.0):
    scores = _fit_scores(seed, {})
    return fit_verdicts(scores, SETTINGS, arms=ARMS), _rates(penalty), level_units(scores.assign(model="m"))


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False)


def test_the_shared_store_keeps_what_the_duckdb_file_keeps(url, tmp_path):
    shared, local = SharedSnapshotStore(url), SnapshotStore(tmp_path / "audit_history.duckdb")
    assert not shared.exists() and not len(shared.snapshots()) and shared.latest_pair("m") is None
    first, second = _audit(1), _audit(2, penalty=2)
    ids = {}
    for name, store in (("shared", shared), ("local", local)):
        a, new_a = store.add("m", first[0], _identity("2026-12-01T10:00:00+00:00"), rates=first[1], units=first[2])
        again = store.add("m", first[0], _identity("2026-12-01T11:00:00+00:00"), rates=first[1], units=first[2])
        b, new_b = store.add("m", second[0], _identity("2026-12-02T10:00:00+00:00", "v2"), rates=second[1])
        assert new_a and again == (a, False) and new_b
        ids[name] = (a, b)
    assert ids["shared"] == ids["local"] and shared.exists()
    a, b = ids["shared"]
    assert shared.latest_pair("m") == (a, b) and shared.previous(b) == a and shared.previous(a) is None
    listing = AuditSnapshots.validate(shared.snapshots())
    _same(listing, local.snapshots())
    assert list(listing["tool_version"]) == ["v1", "v2"] and not len(shared.snapshots("other"))
    for snapshot in (a, b):
        _same(shared.verdicts(snapshot), local.verdicts(snapshot))
        _same(shared.rates(snapshot), local.rates(snapshot))
    _same(shared.units(a), local.units(a))
    assert len(shared.units(a)) == len(first[2]) and shared.units(b).empty  # b was kept without units
    with pytest.raises(KeyError) as err:
        shared.verdicts("m@nowhere")
    assert "'m@nowhere'" in str(err.value) and "/history" in str(err.value)


def test_a_snapshot_is_listed_only_once_all_of_it_is_stored(tmp_path, monkeypatch):
    """A worker stopped while writing leaves files but no listing row: the snapshot does not
    exist, and adding it again writes it whole."""
    store = SharedSnapshotStore(f"file://{tmp_path}/tables")
    verdicts, rates, units = _audit(1)
    written = SharedTables.write

    def stop_at_the_listing(self, schema, table, frame, partition=None):
        if table == "snapshots":
            raise OSError("connection reset")
        return written(self, schema, table, frame, partition)

    monkeypatch.setattr(SharedTables, "write", stop_at_the_listing)
    with pytest.raises(OSError):
        store.add("m", verdicts, _identity("2026-12-01T10:00:00+00:00"), rates=rates, units=units)
    assert not len(store.snapshots()) and store.tables.exists("history", "snapshot_verdicts")
    monkeypatch.undo()
    a, new = store.add("m", verdicts, _identity("2026-12-01T10:00:00+00:00"), rates=rates, units=units)
    assert new and list(store.snapshots()["snapshot_id"]) == [a]
    assert len(store.verdicts(a)) == len(verdicts)


@pytest.mark.parametrize("backend", ["shared", "local"])
def test_a_stored_snapshot_is_never_replaced(tmp_path, backend):
    """The same verdicts again at the same second, after another audit came between: the id
    already names a stored snapshot, which is refused rather than written twice."""
    store = (
        SharedSnapshotStore(f"file://{tmp_path}/tables")
        if backend == "shared"
        else SnapshotStore(tmp_path / "audit_history.duckdb")
    )
    first, second = _audit(1), _audit(2)
    a, _ = store.add("m", first[0], _identity("2026-12-01T10:00:00+00:00"))
    store.add("m", second[0], _identity("2026-12-02T10:00:00+00:00"))
    with pytest.raises(
        FileExistsError, match=re.escape(f"audit snapshot '{a}' is already stored; it is never replaced")
    ):
        store.add("m", first[0], _identity("2026-12-01T10:00:00+00:00"))
    assert len(store.snapshots()) == 2


def test_resumebias_audits_lists_the_shared_snapshots(url, tmp_path, monkeypatch, capsys):
    store = SharedSnapshotStore(url)
    a, _ = store.add("m", _audit(1)[0], _identity("2026-12-01T10:00:00+00:00"))
    assert main(["audits", "--tables-url", url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 audit snapshot(s) in ") and "/history\n" in out and a in out
    # The deployment's setting is the default; --data-dir names one machine's file instead.
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", url)
    assert main(["audits", "--json"]) == 0 and a in capsys.readouterr().out
    assert main(["audits", "--data-dir", str(tmp_path / "elsewhere")]) == 0
    assert "(no audit kept yet)" in capsys.readouterr().out


def test_resumebias_audits_refuses_a_bad_or_unreachable_url_in_one_line(tmp_path, monkeypatch, capsys):
    assert main(["audits", "--tables-url", "ftp://host/x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --tables-url: ftp://host/x is not a shared-tables URL") and err.count("\n") == 1
    # Nothing listens on port 9 of 127.0.0.1: the store cannot be read.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", "s3://nowhere/p")
    assert main(["audits"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: RESUMEBIAS_TABLES_URL: cannot read s3://nowhere/p: ") and err.count("\n") == 1


def test_pull_tables_brings_the_listed_snapshots_into_the_duckdb_file(tmp_path, monkeypatch, capsys):
    """``resumebias pull-tables`` copies ``history/`` beside the audit tables, as listed: the
    files of a snapshot whose writing stopped (no listing row) are not pulled."""
    import duckdb

    url = f"file://{tmp_path}/tables"
    store = SharedSnapshotStore(url)
    verdicts, rates, units = _audit(1)
    a, _ = store.add("m", verdicts, _identity("2026-12-01T10:00:00+00:00"), rates=rates, units=units)
    # A second audit stopped before its listing row: its verdict file is there, unlisted.
    store.tables.write("history", "snapshot_verdicts", verdicts.assign(snapshot_id="m@half"), {"snapshot_id": "m@half"})
    out = tmp_path / "pulled.duckdb"
    assert main(["pull-tables", "--url", url, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"history.snapshots: 1 rows\nhistory.snapshot_verdicts: {len(verdicts)} rows\n" in printed
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("select snapshot_id from history.snapshots").fetchall() == [(a,)]
        assert con.execute("select distinct snapshot_id from history.snapshot_verdicts").fetchall() == [(a,)]
        assert con.execute("select count(*) from history.snapshot_units").fetchone() == (len(units),)
