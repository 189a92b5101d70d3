import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.assets._metadata import table_metadata
from resumebias_dagster.core.importer import empty_prediction_table, read_prediction_files
from resumebias_dagster.schemas import SeniorityPredictionsType


class SeniorityPredictionsConfig(dg.Config):
    import_paths: list[str] = Field(
        default_factory=list,
        description="prediction CSVs in the seed's style or social format to (re-)analyse",
    )


@dg.asset(
    dagster_type=SeniorityPredictionsType,
    group_name="seniority_study",
    kinds={"python", "duckdb"},
)
def seniority_predictions(context: dg.AssetExecutionContext, config: SeniorityPredictionsConfig) -> pd.DataFrame:
    """One row per (variant, model, run): the table every seniority metric reads."""
    df = read_prediction_files(config.import_paths) if config.import_paths else empty_prediction_table()
    context.add_output_metadata(
        table_metadata(
            df,
            sources=dg.MetadataValue.json(list(config.import_paths)),
            models=dg.MetadataValue.json(sorted(df["model"].unique().tolist())),
        )
    )
    return df
