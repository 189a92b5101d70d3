"""The job-description audit's verdicts: each finding beyond noise, ruled out or undecided."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.common.snapshots import separate_snapshots
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.impact import DEFAULT_SCORE_CUT, name_groups
from resumebias_dagster.core.jd_audit.probes import axis_arms
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts as compute_fit_verdicts
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, verdicts_metadata
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.schemas import VerdictsType


class FitVerdictsConfig(dg.Config):
    score_cut: float = Field(
        default=DEFAULT_SCORE_CUT,
        ge=1,
        le=10,
        description="a score at or above this counts as selected in the impact ratios (as fit_impact_ratios)",
    )


@dg.asset(dagster_type=VerdictsType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def fit_verdicts(
    context: dg.AssetExecutionContext, config: FitVerdictsConfig, catalog: CatalogResource, fit_scores: pd.DataFrame
) -> pd.DataFrame:
    """Per model: the change each probe level makes over the JDs (the résumé the unit), the
    name groups' contrasts (names a random effect) and the impact ratios, with 95% intervals,
    adjusted p within each arm's families, equivalence against inference.yaml's margins,
    minimal detectable effects and a verdict each."""
    folder = catalog.folder()
    settings = load_inference_settings(folder)
    scores = separate_snapshots(fit_scores, partition=("model", "jd"))
    df = compute_fit_verdicts(scores, settings, name_groups(folder), axis_arms(folder), config.score_cut)
    context.add_output_metadata(verdicts_metadata(df))
    return df
