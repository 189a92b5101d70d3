import dagster as dg
import pandas as pd

from resumebias_dagster.assets._metadata import table_metadata
from resumebias_dagster.core.metrics import bias_summary, format_markdown, group_metrics
from resumebias_dagster.schemas import SeniorityBiasSummaryType, SeniorityGroupMetricsType


@dg.asset(dagster_type=SeniorityGroupMetricsType, group_name="seniority_study", kinds={"python", "duckdb"})
def seniority_group_metrics(context: dg.AssetExecutionContext, seniority_predictions: pd.DataFrame) -> pd.DataFrame:
    """Seed 001 metrics per model and group: accuracy, rank difference, senior/junior shares,
    promotions and demotions, with invalid predictions counted apart."""
    df = group_metrics(seniority_predictions)
    context.add_output_metadata(table_metadata(df, preview_rows=30))
    return df


@dg.asset(dagster_type=SeniorityBiasSummaryType, group_name="seniority_study", kinds={"python", "duckdb"})
def seniority_bias_summary(context: dg.AssetExecutionContext, seniority_predictions: pd.DataFrame) -> pd.DataFrame:
    """Seed 001 headline figures per model: inconsistency rate and the racial, gender and
    extreme bias indicators with their ±0.05 readings."""
    df = bias_summary(seniority_predictions)
    context.add_output_metadata(
        table_metadata(df, preview_rows=30, report=dg.MetadataValue.md(format_markdown(seniority_predictions) or "(no predictions)"))
    )
    return df
