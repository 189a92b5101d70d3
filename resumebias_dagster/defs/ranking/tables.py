"""Selection rates, impact ratios and position bias of the rankings (``core/ranking/tables.py``)."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.ranking.tables import DEFAULT_TOP_K, position_table, selection_table
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, table_metadata
from resumebias_dagster.schemas import RankingPositionsType, RankingSelectionType


class RankingSelectionConfig(dg.Config):
    top_k: int = Field(
        default=DEFAULT_TOP_K, ge=1, description="a candidate ranked in the first top_k places counts as in the top k"
    )


@dg.asset(dagster_type=RankingSelectionType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def ranking_selection(
    context: dg.AssetExecutionContext, config: RankingSelectionConfig, rankings: pd.DataFrame
) -> pd.DataFrame:
    """Per (model, JD, group of names), over the valid rankings: how often the group's candidate
    was shown first (equal across groups by design) and ranked first, the selection rate (share
    ranked first) against chance, the top-k rate, the impact ratios against the highest group
    and the four-fifths flag; an embedded LLM's exact expected rate beside its sampled one."""
    df = selection_table(rankings, config.top_k)
    context.add_output_metadata(
        table_metadata(
            df,
            preview_rows=60,
            flagged_groups=dg.MetadataValue.int(int(df["below_four_fifths"].sum())),
            rankings_without_a_ranking=dg.MetadataValue.int(int(rankings["error"].notna().sum())),
        )
    )
    return df


@dg.asset(dagster_type=RankingPositionsType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def ranking_positions(context: dg.AssetExecutionContext, rankings: pd.DataFrame) -> pd.DataFrame:
    """Position bias per (model, JD, shown position): the share of valid rankings that put the
    candidate shown at that position first, against chance (1/N)."""
    df = position_table(rankings)
    context.add_output_metadata(table_metadata(df, preview_rows=60))
    return df
