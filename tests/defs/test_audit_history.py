"""Audits over time through the assets (issue 44): two audits of one model kept as two
snapshots in the data directory's audit_history.duckdb (or the shared tables), `resumebias
audits` listing them, and audit_changes finding the name penalty that doubled between them."""

import json

import dagster as dg
import pytest

from resumebias_dagster.cli import main
from resumebias_dagster.core.history.store import SnapshotStore
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.reporting.render import ReportTables, render_report
from resumebias_dagster.core.tables import (
    AuditChanges,
    AuditSnapshots,
    BiasAuditRates,
    FitModelSummary,
    SeniorityBiasSummary,
    Verdicts,
    empty_table,
)
from resumebias_dagster.defs.report.history import audit_changes, audit_snapshots
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, _fit_scores

NAME = "fit_level:firstName_black_female"


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def _snapshot(penalty: float, seed: int):
    scores = _fit_scores(seed, {"firstName_black_female": penalty}, resumes=60)
    verdicts = fit_verdicts(scores, load_inference_settings(), {"firstName": NAME_LEVELS}, ARMS)
    return audit_snapshots(
        dg.build_asset_context(),
        catalog=CatalogResource(),
        seniority_verdicts=empty_table(Verdicts),
        fit_verdicts=verdicts,
        validity_verdicts=empty_table(Verdicts),
        seniority_bias_summary=empty_table(SeniorityBiasSummary),
        fit_model_summary=empty_table(FitModelSummary),
        bias_audit_rates=empty_table(BiasAuditRates),
        fit_scores=scores,
    )


def test_two_audits_are_two_snapshots_and_the_doubled_penalty_is_changed(data, capsys):
    first = AuditSnapshots.validate(_snapshot(-1.0, 1))
    assert len(first) == 1 and first["model"].iloc[0] == "m"
    assert len(_snapshot(-1.0, 1)) == 1  # the same verdicts again: no new snapshot
    listing = AuditSnapshots.validate(_snapshot(-2.0, 2))
    assert len(listing) == 2 and (data / "audit_history.duckdb").is_file()

    changes = AuditChanges.validate(
        audit_changes(dg.build_asset_context(), catalog=CatalogResource(), audit_snapshots=listing)
    )
    row = changes.set_index("finding").loc[NAME]
    assert row["verdict"] == "beyond_noise" and row["estimate"] < 0
    # Both snapshots kept their units of the same résumés: the levels are compared résumé by résumé.
    assert row["test"] == "t_resume" and row["n_resumes"] == 60
    assert list(changes["base_snapshot_id"].unique()) == [listing["snapshot_id"].iloc[0]]

    # The second audit's report says what changed, worse first, in the tool's first screen.
    html = render_report(
        ReportTables(
            verdicts=SnapshotStore(data / "audit_history.duckdb").verdicts(listing["snapshot_id"].iloc[1]),
            changes=changes,
        )
    )
    since = html[html.index("<h3>Since the last audit</h3>") : html.index("<h3>What moved its answers")]
    assert "<li>A Black or African American female name: worse, from -1" in since  # the first line: worse first
    assert "points on the 1–10 fit scale (change -0." in since
    assert f"Against the audit {listing['snapshot_id'].iloc[0]}: " in since
    # The count does not silently cover the impact ratios, which are not compared.
    kept = SnapshotStore(data / "audit_history.duckdb").verdicts(listing["snapshot_id"].iloc[1])
    ratios = int(kept["kind"].eq("impact_ratio").sum())
    assert ratios > 1 and f"Its {ratios} impact ratios are not compared between audits" in since

    assert main(["audits", "--data-dir", str(data)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"2 audit snapshot(s) in {data / 'audit_history.duckdb'}")
    assert all(s in out for s in listing["snapshot_id"])
    assert main(["audits", "--data-dir", str(data), "--json"]) == 0
    assert [r["snapshot_id"] for r in json.loads(capsys.readouterr().out)] == list(listing["snapshot_id"])


def test_audits_of_a_data_directory_without_history_says_so(tmp_path, capsys):
    assert main(["audits", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 audit snapshot(s)") and "(no audit kept yet)" in out
    assert not (tmp_path / "audit_history.duckdb").exists()


def test_with_shared_tables_the_snapshots_are_kept_there(data, tmp_path, monkeypatch, capsys):
    """A deployment's workers share no disk: with RESUMEBIAS_TABLES_URL the assets keep and
    compare the snapshots under the shared tables' history/, and no machine's file holds them."""
    from resumebias_dagster.core.history.store import SharedSnapshotStore

    url = f"file://{tmp_path}/shared"
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", url)
    _snapshot(-1.0, 1)
    listing = AuditSnapshots.validate(_snapshot(-2.0, 2))
    assert len(listing) == 2 and not (data / "audit_history.duckdb").exists()
    assert list(SharedSnapshotStore(url).snapshots()["snapshot_id"]) == list(listing["snapshot_id"])
    changes = audit_changes(dg.build_asset_context(), catalog=CatalogResource(), audit_snapshots=listing)
    assert changes.set_index("finding").loc[NAME, "verdict"] == "beyond_noise"
    assert main(["audits"]) == 0
    assert capsys.readouterr().out.startswith(f"2 audit snapshot(s) in {url}/history\n")
