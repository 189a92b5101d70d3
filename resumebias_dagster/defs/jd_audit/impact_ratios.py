"""Selection rates and impact ratios by perceived group (Local Law 144 style) of the audit's name variants."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.common.snapshots import separate_snapshots, snapshots_of
from resumebias_dagster.core.jd_audit.impact import DEFAULT_SCORE_CUT, name_groups
from resumebias_dagster.core.jd_audit.impact import (
    fit_impact_ratios as compute_fit_impact_ratios,
)
from resumebias_dagster.defs._metadata import (
    UPDATE_WITH_UPSTREAM,
    impact_ratios_metadata,
)
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.schemas import FitImpactRatiosType


class FitImpactRatiosConfig(dg.Config):
    score_cut: float = Field(
        default=DEFAULT_SCORE_CUT, ge=1, le=10, description="a score at or above this counts as selected"
    )


@dg.asset(dagster_type=FitImpactRatiosType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def fit_impact_ratios(
    context: dg.AssetExecutionContext, config: FitImpactRatiosConfig, catalog: CatalogResource, fit_scores: pd.DataFrame
) -> pd.DataFrame:
    """Name variants of the audit, per model over all JDs: selection rate by the perceived
    group each name declares in probe_axes.yaml, impact ratio with its 95% Katz interval and
    the four-fifths flag; selected = recommend yes, or a score at or above `score_cut`."""
    scores = separate_snapshots(fit_scores, partition=("model", "jd"))
    df = compute_fit_impact_ratios(scores, name_groups(catalog.folder()), config.score_cut, snapshots_of(scores))
    context.add_output_metadata(impact_ratios_metadata(df))
    return df
