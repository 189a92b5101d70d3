"""Plots as assets: PNG files under the data directory, shown inline in the Dagster UI."""

import base64

import dagster as dg
import pandas as pd

from resumebias_dagster.assets._metadata import UPDATE_WITH_UPSTREAM
from resumebias_dagster.core.common.plots import heatmap_png, seniority_bars_png, volcano_png
from resumebias_dagster.schemas import ReportFilesType
from resumebias_dagster.settings import data_dir


def _publish(context: dg.AssetExecutionContext, pngs: dict[str, bytes]) -> pd.DataFrame:
    """Write each PNG under data/reports/ and show it in the asset's metadata."""
    folder = data_dir() / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    rows, meta = [], {}
    for name, png in pngs.items():
        path = folder / f"{name}.png"
        path.write_bytes(png)
        rows.append({"plot": name, "path": str(path), "bytes": len(png)})
        meta[name] = dg.MetadataValue.md(f"![{name}](data:image/png;base64,{base64.b64encode(png).decode()})")
        meta[f"{name}_file"] = dg.MetadataValue.path(str(path))
    context.add_output_metadata(meta)
    return pd.DataFrame(rows, columns=["plot", "path", "bytes"]).astype({"bytes": "int64"})


@dg.asset(
    dagster_type=ReportFilesType,
    group_name="seniority_study",
    kinds={"python"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def seniority_plots(context: dg.AssetExecutionContext, seniority_group_metrics: pd.DataFrame) -> pd.DataFrame:
    """The seed 000 notebook's bar charts: accuracy and rank difference by demographic and by style, per model."""
    return _publish(
        context,
        {
            "seniority_by_demographic": seniority_bars_png(seniority_group_metrics, variant_kind="demographic"),
            "seniority_by_style": seniority_bars_png(seniority_group_metrics, variant_kind="style"),
        },
    )


@dg.asset(
    dagster_type=ReportFilesType,
    group_name="jd_audit",
    kinds={"python"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def fit_plots(context: dg.AssetExecutionContext, fit_effects: pd.DataFrame) -> pd.DataFrame:
    """Volcano plot (delta vs -log10 p, q < 0.05 highlighted) and a heatmap (axis-level x JD) per model."""
    pngs = {"volcano": volcano_png(fit_effects)}
    for model in sorted(fit_effects["model"].unique()):
        pngs[f"heatmap_{model}"] = heatmap_png(fit_effects, model)
    return _publish(context, pngs)
