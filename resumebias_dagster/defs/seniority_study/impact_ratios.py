"""Selection rates and impact ratios by perceived group (Local Law 144 style) of the name experiment."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.snapshots import snapshots_of
from resumebias_dagster.core.fairness.impact import (
    seniority_impact_ratios as compute_seniority_impact_ratios,
)
from resumebias_dagster.defs._metadata import (
    UPDATE_WITH_UPSTREAM,
    impact_ratios_metadata,
)
from resumebias_dagster.defs.seniority_study.metrics import analysed_predictions
from resumebias_dagster.schemas import SeniorityImpactRatiosType


@dg.asset(dagster_type=SeniorityImpactRatiosType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def seniority_impact_ratios(
    context: dg.AssetExecutionContext, seniority_predictions: pd.DataFrame, imported_predictions: pd.DataFrame
) -> pd.DataFrame:
    """Name experiment, per model: selection rate by perceived sex, race and both (from the
    name pools), impact ratio to the highest group with its 95% Katz interval, and the
    four-fifths flag; selected = predicted senior, or predicted at or above the true level."""
    predictions = analysed_predictions(seniority_predictions, imported_predictions)
    df = compute_seniority_impact_ratios(predictions, snapshots=snapshots_of(predictions))
    context.add_output_metadata(impact_ratios_metadata(df))
    return df
