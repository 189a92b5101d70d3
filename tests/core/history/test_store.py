"""Audit snapshots in a real DuckDB file (issue 44): kept as they were, never overwritten, an
identical re-run adds nothing, an unknown snapshot is refused naming it."""

import duckdb
import pandas as pd
import pytest

from resumebias_dagster.core.history.store import AuditIdentity, SnapshotStore
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.tables import AuditSnapshots
from resumebias_dagster.testing.calibration import ARMS, _fit_scores

SETTINGS = load_inference_settings()


def _identity(when: str, version: str = "v1") -> AuditIdentity:
    return AuditIdentity(
        created_at=when,
        code_version="0.1.0",
        tool_versions={"m": version},
        design={"resumes": 9},
        prompts={"fit": "Score {resume_text}"},
    )


def test_snapshots_are_kept_as_they_were_and_a_rerun_never_overwrites_one(tmp_path):
    store = SnapshotStore(tmp_path / "audit_history.duckdb")
    assert not len(store.snapshots()) and store.latest_pair("m") is None
    first = fit_verdicts(_fit_scores(1, {}), SETTINGS, arms=ARMS)
    second = fit_verdicts(_fit_scores(2, {}), SETTINGS, arms=ARMS)
    a, new_a = store.add("m", first, _identity("2026-12-01T10:00:00+00:00"))
    again, new_again = store.add("m", first, _identity("2026-12-01T11:00:00+00:00"))
    assert new_a and not new_again and again == a  # the same verdicts: no new snapshot
    b, new_b = store.add("m", second, _identity("2026-12-02T10:00:00+00:00", "v2"))
    assert new_b and b != a and b.startswith("m@20261202T100000+0000-")
    listing = AuditSnapshots.validate(store.snapshots())
    assert list(listing["snapshot_id"]) == [a, b] and list(listing["tool_version"]) == ["v1", "v2"]
    assert store.latest_pair("m") == (a, b)
    kept = store.verdicts(a)
    assert kept[["finding", "estimate", "verdict"]].equals(
        first.sort_values(["study", "finding"])[["finding", "estimate", "verdict"]].reset_index(drop=True)
    )
    with duckdb.connect(str(tmp_path / "audit_history.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from history.snapshot_verdicts").fetchone()[0] == len(first) + len(second)


def test_an_unknown_snapshot_is_refused_naming_it_and_the_file(tmp_path):
    store = SnapshotStore(tmp_path / "audit_history.duckdb")
    with pytest.raises(KeyError) as err:
        store.verdicts("m@nowhere")
    assert "'m@nowhere'" in str(err.value) and "audit_history.duckdb" in str(err.value)
    assert not (tmp_path / "audit_history.duckdb").exists()  # reading creates nothing


def test_a_file_kept_before_a_column_was_declared_takes_new_snapshots(tmp_path):
    """A history file whose verdict rows predate ``unit_low`` / ``unit_high``: a new snapshot adds
    the columns, the old one reads them as missing (so its changes are never called unchanged)."""
    store = SnapshotStore(tmp_path / "audit_history.duckdb")
    old = fit_verdicts(_fit_scores(1, {}), SETTINGS, arms=ARMS).drop(columns=["unit_low", "unit_high"])
    a, _ = store.add(
        "m", old.assign(unit_low=float("nan"), unit_high=float("nan")), _identity("2026-12-01T10:00:00+00:00")
    )
    with duckdb.connect(str(tmp_path / "audit_history.duckdb")) as con:
        con.execute("ALTER TABLE history.snapshot_verdicts DROP COLUMN unit_low")
        con.execute("ALTER TABLE history.snapshot_verdicts DROP COLUMN unit_high")
    b, new = store.add(
        "m", fit_verdicts(_fit_scores(2, {}), SETTINGS, arms=ARMS), _identity("2026-12-02T10:00:00+00:00")
    )
    assert new
    assert store.verdicts(a)["unit_low"].isna().all() and (store.verdicts(b)["unit_low"] == -9).all()


def _rates(penalty: float = 0.0):
    """The LL144 rates of compliance's hand-made scores, Black female names ``penalty`` lower."""
    from resumebias_dagster.core.compliance.summary import bias_audit_rates
    from tests.core.compliance.test_ll144 import GROUPS, hand_scores

    scores = hand_scores()
    scores.loc[scores["level"] == "bf", "score"] -= penalty
    rates, problems = bias_audit_rates({"jd_audit": scores}, groups=GROUPS)
    assert not problems
    return rates.assign(model="m")


def test_a_snapshot_keeps_the_local_law_144_rates_it_was_audited_with(tmp_path):
    """Issue 44: the yearly summary is produced from a snapshot, so the snapshot keeps the rates."""
    from resumebias_dagster.core.tables import BiasAuditRates

    store = SnapshotStore(tmp_path / "audit_history.duckdb")
    verdicts = fit_verdicts(_fit_scores(1, {}), SETTINGS, arms=ARMS)
    rates = _rates()
    a, _ = store.add("m", verdicts, _identity("2026-12-01T10:00:00+00:00"), rates=rates)
    kept = BiasAuditRates.validate(store.rates(a))
    keys = ["study", "job_description", "measure", "outcome", "dimension", "category"]
    assert (
        kept.sort_values(keys)
        .reset_index(drop=True)[["category", "n", "impact_ratio"]]
        .equals(rates.sort_values(keys).reset_index(drop=True)[["category", "n", "impact_ratio"]])
    )
    # The same verdicts and rates: the same snapshot; other rates (a re-scored pool): a new one.
    assert store.add("m", verdicts, _identity("2026-12-01T11:00:00+00:00"), rates=rates) == (a, False)
    b, new = store.add("m", verdicts, _identity("2026-12-02T10:00:00+00:00"), rates=_rates(penalty=2))
    assert new and b != a
    # Only the snapshot's model's rows are kept.
    c, _ = store.add(
        "m", verdicts, _identity("2026-12-03T10:00:00+00:00"), rates=pd.concat([rates, rates.assign(model="other")])
    )
    assert set(store.rates(c)["model"]) == {"m"}
    # A snapshot kept without rates (verdicts only, or a file from before) has none: an empty table.
    d, _ = store.add("m", fit_verdicts(_fit_scores(3, {}), SETTINGS, arms=ARMS), _identity("2026-12-04T10:00:00+00:00"))
    assert store.rates(d).empty and list(store.rates(d).columns) == list(kept.columns)
    assert store.previous(d) == c and store.previous(a) is None
    with pytest.raises(KeyError, match="no audit snapshot 'm@nowhere'"):
        store.rates("m@nowhere")
    with pytest.raises(KeyError, match="no audit snapshot 'm@nowhere'"):
        store.previous("m@nowhere")
