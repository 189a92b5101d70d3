"""The seniority study's metric tables (notebook 001) over every partition and any imported study."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.snapshots import separate_snapshots, snapshots_of
from resumebias_dagster.core.seniority.metrics import bias_summary, group_metrics
from resumebias_dagster.core.seniority.prediction_import import combine_predictions
from resumebias_dagster.core.seniority.tables_text import format_markdown
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, table_metadata
from resumebias_dagster.schemas import (
    SeniorityBiasSummaryType,
    SeniorityGroupMetricsType,
)


@dg.asset(
    dagster_type=SeniorityGroupMetricsType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def seniority_group_metrics(
    context: dg.AssetExecutionContext, seniority_predictions: pd.DataFrame, imported_predictions: pd.DataFrame
) -> pd.DataFrame:
    """Notebook 001 metrics per model and group: accuracy, rank difference, senior/junior shares,
    promotions and demotions, invalid predictions counted apart; sampled and expected values;
    ``name_scope`` says how the name variants behind the demographic rows swapped the name."""
    df = group_metrics(analysed_predictions(seniority_predictions, imported_predictions))
    context.add_output_metadata(table_metadata(df, preview_rows=30))
    return df


def analysed_predictions(seniority_predictions: pd.DataFrame, imported_predictions: pd.DataFrame) -> pd.DataFrame:
    """All predictions, a model answered by two provider snapshots analysed as two models."""
    return separate_snapshots(combine_predictions(seniority_predictions, imported_predictions))


@dg.asset(
    dagster_type=SeniorityBiasSummaryType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def seniority_bias_summary(
    context: dg.AssetExecutionContext, seniority_predictions: pd.DataFrame, imported_predictions: pd.DataFrame
) -> pd.DataFrame:
    """Notebook 001 headline figures per model: inconsistency rate and the racial, gender and
    extreme bias indicators with their ±0.05 readings, each next to its test-retest floor
    (the same figure for identical texts: sampling noise alone), the name scope, and the
    snapshots they describe."""
    predictions = analysed_predictions(seniority_predictions, imported_predictions)
    df = bias_summary(predictions, snapshots=snapshots_of(predictions))
    context.add_output_metadata(
        table_metadata(
            df, preview_rows=30, report=dg.MetadataValue.md(format_markdown(predictions) or "(no predictions)")
        )
    )
    return df
