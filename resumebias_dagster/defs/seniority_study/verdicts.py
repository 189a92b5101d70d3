"""The seniority study's verdicts: each finding beyond noise, ruled out or undecided."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts as compute_seniority_verdicts
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, verdicts_metadata
from resumebias_dagster.defs.seniority_study.metrics import analysed_predictions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.schemas import VerdictsType


@dg.asset(dagster_type=VerdictsType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def seniority_verdicts(
    context: dg.AssetExecutionContext,
    catalog: CatalogResource,
    seniority_predictions: pd.DataFrame,
    imported_predictions: pd.DataFrame,
) -> pd.DataFrame:
    """Per model: style shifts, name contrasts, inconsistency and impact ratios estimated within
    résumé (the résumé is the unit, names a random effect), with 95% intervals, family-adjusted p,
    equivalence tests against the margins of inference.yaml, minimal detectable effects, and
    a verdict each: beyond_noise, equivalent, within_noise or inconclusive."""
    settings = load_inference_settings(catalog.folder())
    df = compute_seniority_verdicts(analysed_predictions(seniority_predictions, imported_predictions), settings)
    context.add_output_metadata(verdicts_metadata(df))
    return df
