"""The seniority study's plots: PNG files under the data directory, shown inline in the UI."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.plots import seniority_bars_png
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, publish_pngs
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import ReportFilesType


@dg.asset(dagster_type=ReportFilesType, kinds={"python"}, automation_condition=UPDATE_WITH_UPSTREAM)
def seniority_plots(
    context: dg.AssetExecutionContext, shared_files: SharedFilesResource, seniority_group_metrics: pd.DataFrame
) -> pd.DataFrame:
    """Notebook 000's bar charts: accuracy and rank difference by demographic and by style, per model."""
    return publish_pngs(
        context,
        {
            "seniority_by_demographic": seniority_bars_png(seniority_group_metrics, variant_kind="demographic"),
            "seniority_by_style": seniority_bars_png(seniority_group_metrics, variant_kind="style"),
        },
        shared_files.files(),
    )
