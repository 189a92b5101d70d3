"""Selection rates and impact ratios by perceived group (Local Law 144 style), both studies."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.assets._metadata import UPDATE_WITH_UPSTREAM, table_metadata
from resumebias_dagster.core.common.snapshots import separate_snapshots, snapshots_of
from resumebias_dagster.core.fairness.impact import DEFAULT_SCORE_CUT, name_groups
from resumebias_dagster.core.fairness.impact import fit_impact_ratios as compute_fit_impact_ratios
from resumebias_dagster.core.fairness.impact import seniority_impact_ratios as compute_seniority_impact_ratios
from resumebias_dagster.core.seniority.importer import combine_predictions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.schemas import (
    FitImpactRatios,
    FitImpactRatiosType,
    SeniorityImpactRatios,
    SeniorityImpactRatiosType,
    empty_table,
)


def _finish(context: dg.AssetExecutionContext, df: pd.DataFrame, rows: pd.DataFrame, schema) -> pd.DataFrame:
    df = df if len(df) else empty_table(schema).drop(columns="resolved_models")
    df["resolved_models"] = df["model"].map(snapshots_of(rows)).astype(object)
    context.add_output_metadata(
        table_metadata(
            df.drop(columns="group_source"),
            preview_rows=60,
            flagged_groups=dg.MetadataValue.int(int(df["below_four_fifths"].sum())),
        )
    )
    return df


@dg.asset(
    dagster_type=SeniorityImpactRatiosType,
    group_name="seniority_study",
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def seniority_impact_ratios(
    context: dg.AssetExecutionContext, seniority_predictions: pd.DataFrame, imported_predictions: pd.DataFrame
) -> pd.DataFrame:
    """Name experiment, per model: selection rate by perceived sex, race and both (from the
    name pools), impact ratio to the highest group with its 95% Katz interval, and the
    four-fifths flag; selected = predicted senior, or predicted at or above the true level."""
    predictions = separate_snapshots(combine_predictions(seniority_predictions, imported_predictions))
    return _finish(context, compute_seniority_impact_ratios(predictions), predictions, SeniorityImpactRatios)


class FitImpactRatiosConfig(dg.Config):
    score_cut: float = Field(
        default=DEFAULT_SCORE_CUT, ge=1, le=10, description="a score at or above this counts as selected"
    )


@dg.asset(
    dagster_type=FitImpactRatiosType,
    group_name="jd_audit",
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
)
def fit_impact_ratios(
    context: dg.AssetExecutionContext, config: FitImpactRatiosConfig, catalog: CatalogResource, fit_scores: pd.DataFrame
) -> pd.DataFrame:
    """Name variants of the audit, per model over all JDs: selection rate by the perceived
    group each name declares in probe_axes.yaml, impact ratio with its 95% Katz interval and
    the four-fifths flag; selected = recommend yes, or a score at or above `score_cut`."""
    scores = separate_snapshots(fit_scores, partition=("model", "jd"))
    df = (
        compute_fit_impact_ratios(scores, name_groups(catalog.folder()), config.score_cut)
        if len(scores)
        else pd.DataFrame()
    )
    return _finish(context, df, scores, FitImpactRatios)
