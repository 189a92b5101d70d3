"""Audits over time through the assets (issue 44): two audits of one model kept as two
snapshots in the data directory's audit_history.duckdb (or the shared tables), `resumebias
audits` listing them, and audit_changes finding the name penalty that doubled between them."""

import json
import re

import dagster as dg
import pandas as pd
import pytest
import yaml

from resumebias_dagster.cli import main
from resumebias_dagster.core.compliance.summary import bias_audit_rates, with_prior
from resumebias_dagster.core.history.store import SnapshotStore
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.reporting.render import ReportTables, render_report
from resumebias_dagster.core.seniority.prediction_import import empty_prediction_table
from resumebias_dagster.core.tables import (
    AuditChanges,
    AuditSnapshots,
    BiasAuditRates,
    FitModelSummary,
    SeniorityBiasSummary,
    Verdicts,
    empty_table,
)
from resumebias_dagster.defs.report.history import (
    audit_changes,
    audit_snapshots,
    latest_audits,
    prior_rates,
    replaced_models,
)
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, _fit_scores

NAME = "fit_level:firstName_black_female"
PACKAGED_AXES = "resumebias_dagster/catalog/probe_axes.yaml"


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def catalog(data):
    """A catalog whose firstName axis declares the simulated name levels' groups (the snapshot
    keeps the impact ratios' units by them, as fit_verdicts reads them)."""
    axes = yaml.safe_load(open(PACKAGED_AXES, encoding="utf-8"))
    names = axes["axes"]["firstName"]
    names["levels"] = {level: [f"Name {level.title().replace('_', '')}"] for level in NAME_LEVELS}
    names["groups"] = NAME_LEVELS
    folder = data / "catalog"
    folder.mkdir(parents=True)
    (folder / "probe_axes.yaml").write_text(yaml.safe_dump(axes, sort_keys=False), encoding="utf-8")
    return CatalogResource(catalog_dir=str(folder))


def _snapshot(penalty: float, seed: int, catalog: CatalogResource, model: str = "m", *, rates: bool = False):
    scores = _fit_scores(seed, {"firstName_black_female": penalty}, resumes=60).assign(model=model)
    verdicts = fit_verdicts(scores, load_inference_settings(), {"firstName": NAME_LEVELS}, ARMS)
    ll144 = bias_audit_rates({"jd_audit": scores}, groups={"firstName": NAME_LEVELS})[0] if rates else None
    return audit_snapshots(
        dg.build_asset_context(),
        catalog=catalog,
        seniority_verdicts=empty_table(Verdicts),
        fit_verdicts=verdicts,
        validity_verdicts=empty_table(Verdicts),
        seniority_bias_summary=empty_table(SeniorityBiasSummary),
        fit_model_summary=empty_table(FitModelSummary),
        bias_audit_rates=ll144 if ll144 is not None else empty_table(BiasAuditRates),
        fit_scores=scores,
        seniority_predictions=empty_prediction_table(),
        imported_predictions=empty_prediction_table(),
    )


def test_two_audits_are_two_snapshots_and_the_doubled_penalty_is_changed(data, catalog, capsys):
    first = AuditSnapshots.validate(_snapshot(-1.0, 1, catalog))
    assert len(first) == 1 and first["model"].iloc[0] == "m"
    assert len(_snapshot(-1.0, 1, catalog)) == 1  # the same verdicts again: no new snapshot
    listing = AuditSnapshots.validate(_snapshot(-2.0, 2, catalog))
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
    since = since.replace("&#39;", "'")
    assert "<li>A Black or African American female name: worse, from -1" in since  # the first line: worse first
    assert "points on the 1–10 fit scale (change -0." in since
    assert f"Against the audit {listing['snapshot_id'].iloc[0]}: " in since
    # The impact ratios are compared too (the later ratio over the earlier); the counts cover
    # every finding of the audit, and what could not be compared is said.
    kept = SnapshotStore(data / "audit_history.duckdb").verdicts(listing["snapshot_id"].iloc[1])
    ratios = changes[changes["kind"] == "impact_ratio"]
    assert len(ratios) > 1 and ratios["finding"].isin(kept["finding"]).all()
    left = len(kept) - len(changes)
    assert "impact ratios are not compared" not in since
    assert (f" {left} of this audit's findings" in since) if left else ("not compared" not in since)
    counts = re.search(r"(\d+) changed beyond noise, (\d+) unchanged within their margin, (\d+) not decided", since)
    assert counts is not None and sum(map(int, counts.groups())) == len(changes)

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


def test_with_shared_tables_the_snapshots_are_kept_there(data, catalog, tmp_path, monkeypatch, capsys):
    """A deployment's workers share no disk: with RESUMEBIAS_TABLES_URL the assets keep and
    compare the snapshots under the shared tables' history/, and no machine's file holds them."""
    from resumebias_dagster.core.history.store import SharedSnapshotStore

    url = f"file://{tmp_path}/shared"
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", url)
    _snapshot(-1.0, 1, catalog)
    listing = AuditSnapshots.validate(_snapshot(-2.0, 2, catalog))
    assert len(listing) == 2 and not (data / "audit_history.duckdb").exists()
    assert list(SharedSnapshotStore(url).snapshots()["snapshot_id"]) == list(listing["snapshot_id"])
    changes = audit_changes(dg.build_asset_context(), catalog=CatalogResource(), audit_snapshots=listing)
    assert changes.set_index("finding").loc[NAME, "verdict"] == "beyond_noise"
    assert main(["audits"]) == 0
    assert capsys.readouterr().out.startswith(f"2 audit snapshot(s) in {url}/history\n")


def test_a_model_s_first_audit_is_compared_with_the_one_it_replaces(data, catalog, monkeypatch, capsys):
    """`succeeds` in the models file: the vendor's new model is compared, on its first audit, with
    the latest audit of the model it replaces (which may have left the models file)."""
    models = data / "models.yaml"
    models.write_text(
        yaml.safe_dump({"models": [{"name": "tool-v2", "kind": "python", "entry_point": "x:y", "succeeds": "tool-v1"}]})
    )
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", str(models))
    _snapshot(-1.0, 1, catalog, model="tool-v1", rates=True)
    listing = AuditSnapshots.validate(_snapshot(-2.0, 2, catalog, model="tool-v2", rates=True))
    old, new = listing.set_index("model")["snapshot_id"][["tool-v1", "tool-v2"]]
    changes = AuditChanges.validate(audit_changes(dg.build_asset_context(), catalog=catalog, audit_snapshots=listing))
    assert set(changes["model"]) == {"tool-v2"} and set(changes["base_snapshot_id"]) == {old}
    row = changes.set_index("finding").loc[NAME]
    assert row["verdict"] == "beyond_noise" and row["test"] == "t_resume"  # the same résumés and names

    # Its Local Law 144 summary sets the replaced model's latest audit beside it, as its prior audit.
    kept = latest_audits(listing, replaced_models(catalog.folder()))
    assert kept.audits["tool-v2"].prior_snapshot_id == old and kept.audits["tool-v1"].prior_snapshot_id == ""
    assert set(kept.prior_rates["model"]) == {"tool-v2"}
    beside = with_prior(kept.rates, kept.prior_rates)
    assert beside["prior_impact_ratio"].notna().any() and set(beside["model"]) == {"tool-v1", "tool-v2"}
    summary = pd.DataFrame({"model": ["tool-v2", "tool-v2"], "prior_snapshot_id": [old, old]})
    assert prior_rates(summary).equals(kept.prior_rates)

    # Any two snapshots, from the command line: the same comparison.
    assert main(["audits", "--data-dir", str(data), "--compare", old, new]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{new} against {old}: {len(changes)} findings compared, ")
    assert "fit_level:firstName_black_female" in out and "beyond_noise" in out
    assert main(["audits", "--data-dir", str(data), "--compare", old, new, "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert {r["finding"]: r["verdict"] for r in records}[NAME] == "beyond_noise"
    assert main(["audits", "--data-dir", str(data), "--compare", old, "tool-v3@never"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"error: {data / 'audit_history.duckdb'}: no audit snapshot 'tool-v3@never' (resumebias audits lists them)\n"
    )
