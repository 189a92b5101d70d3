"""The job-description audit's plots: PNG files under the data directory, shown inline in the UI."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.plots import heatmap_png, volcano_png
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, publish_pngs
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import ReportFilesType


@dg.asset(dagster_type=ReportFilesType, kinds={"python"}, automation_condition=UPDATE_WITH_UPSTREAM)
def fit_plots(
    context: dg.AssetExecutionContext, shared_files: SharedFilesResource, fit_effects: pd.DataFrame
) -> pd.DataFrame:
    """Volcano plot (delta vs -log10 p, q < 0.05 highlighted) and a heatmap (axis-level x JD) per model."""
    pngs = {"volcano": volcano_png(fit_effects)}
    for model in sorted(fit_effects["model"].unique()):
        pngs[f"heatmap_{model}"] = heatmap_png(fit_effects, model)
    return publish_pngs(context, pngs, shared_files.files())
