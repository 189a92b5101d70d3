"""Plots and the report on several machines: every plot drawn is also put in the shared files,
and the report, built on any worker, takes a plot another worker drew from there."""

import dagster as dg
import pandas as pd

from resumebias_dagster.defs._metadata import publish_pngs
from resumebias_dagster.defs.report.audit_report import _plots
from resumebias_dagster.resources.shared_files import SharedFilesResource


def test_a_plot_drawn_on_one_worker_reaches_the_report_on_another(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", f"file://{tmp_path}/shared")
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "worker-a"))

    @dg.asset
    def plots(context: dg.AssetExecutionContext, shared_files: SharedFilesResource) -> pd.DataFrame:
        return publish_pngs(context, {"fit_volcano": b"\x89PNG-volcano"}, shared_files.files())

    result = dg.materialize([plots], resources={"shared_files": SharedFilesResource()})
    table = result.output_for_node("plots")
    meta = result.asset_materializations_for_node("plots")[0].metadata
    assert meta["fit_volcano_shared"].value.endswith("/files/reports/fit_volcano.png")
    assert SharedFilesResource().files().get_file("fit_volcano.png") == b"\x89PNG-volcano"

    # Worker B: its own data directory, no such file on its disk.
    (tmp_path / "worker-a" / "reports" / "fit_volcano.png").unlink()
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "worker-b"))
    assert _plots(table, shared=SharedFilesResource().files()) == {"fit_volcano": b"\x89PNG-volcano"}


def test_on_one_machine_a_missing_plot_is_left_out(tmp_path, monkeypatch):
    monkeypatch.delenv("RESUMEBIAS_TABLES_URL", raising=False)
    table = pd.DataFrame({"plot": ["x"], "path": [str(tmp_path / "x.png")], "bytes": [1]})
    assert _plots(table, shared=SharedFilesResource().files()) == {}
