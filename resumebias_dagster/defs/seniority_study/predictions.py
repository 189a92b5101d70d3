import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.models.model_config import model_by_name
from resumebias_dagster.core.seniority.prediction_import import (
    empty_prediction_table,
    read_prediction_files,
)
from resumebias_dagster.core.seniority.task import predict_seniority, variant_table
from resumebias_dagster.core.tables import SeniorityPredictions, conform
from resumebias_dagster.defs._metadata import table_metadata
from resumebias_dagster.partitions import kind_tags, model_partitions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import (
    ProvidersResource,
    progress_logger,
    stats_metadata,
)
from resumebias_dagster.resources.runtime import model_runtime
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import EMPTY_UNTIL_MATERIALISED
from resumebias_dagster.schemas import SeniorityPredictionsType
from resumebias_dagster.settings import checked_path


def build_seniority_predictions(
    partitions_def: dg.PartitionsDefinition, kinds: set[str] | None = None
) -> dg.AssetsDefinition:
    """The predictions asset over the given model partitions (the models config's by default)."""

    @dg.asset(
        name="seniority_predictions",
        dagster_type=SeniorityPredictionsType,
        partitions_def=partitions_def,
        metadata={"partition_expr": "model"},
        kinds=kinds if kinds is not None else kind_tags("seniority"),
        backfill_policy=dg.BackfillPolicy.single_run(),
        # The blocking check style_validation: rules_hold then stops a run whose style set fails notebook 004's rules.
        deps=["style_validation"],
    )
    def seniority_predictions(
        context: dg.AssetExecutionContext,
        compute: ComputeResource,
        catalog: CatalogResource,
        providers: ProvidersResource,
        shared_files: SharedFilesResource,
        style_variants: pd.DataFrame,
        name_variants: pd.DataFrame,
        fine_tuned_classifiers: pd.DataFrame,
    ) -> pd.DataFrame:
        """One row per (variant, model, run) for every model partition: the sampled label and,
        for scoring models, the label distribution it was drawn from (one forward pass per
        variant, never one per sample); provider models answer through the response store."""
        variants = variant_table(style_variants, name_variants)
        runtime = model_runtime(
            compute, providers, fine_tuned_classifiers, shared=shared_files.files(), log=context.log.info
        )
        template = load_prompt(SENIORITY_PROMPT, catalog.folder())
        frames = []
        for name in context.partition_keys:
            spec = model_by_name(name, catalog_dir=catalog.folder())
            frame, stats = predict_seniority(spec, variants, runtime, template, progress_logger(context.log, name))
            if stats is not None:
                prefix = f"{name}/" if len(context.partition_keys) > 1 else ""
                context.add_output_metadata({prefix + k: v for k, v in stats_metadata(stats).items()})
            frames.append(frame)
        df = pd.concat(frames, ignore_index=True)
        # The name experiment's rows say how their names were swapped (the metric tables carry it).
        scope = name_variants["name_scope"].iloc[0] if len(name_variants) else None
        df["name_scope"] = df["variant_kind"].map({"demographic": scope}).astype(object)
        # Every kind of model stores the same columns (a classifier has no label_mass, a provider no distribution).
        df = conform(df, SeniorityPredictions)
        invalid = df["prediction"].isin(["unknown", "error"]).sum()
        context.add_output_metadata(
            table_metadata(
                df.drop(columns=["name"]),
                models=dg.MetadataValue.json(list(context.partition_keys)),
                variants=dg.MetadataValue.int(len(variants)),
                invalid_predictions=dg.MetadataValue.int(int(invalid)),
                mean_latency_s=dg.MetadataValue.float(float(df["latency_s"].mean())),
            )
        )
        return df

    return seniority_predictions


seniority_predictions = build_seniority_predictions(model_partitions)


class ImportedPredictionsConfig(dg.Config):
    import_paths: list[str] = Field(
        default_factory=list,
        description="prediction CSVs in the seniority study's style or social format to (re-)analyse",
    )


@dg.asset(
    dagster_type=SeniorityPredictionsType,
    kinds={"python", "duckdb"},
    # No job materialises it unasked (a re-run would drop an import): until then it reads as none.
    metadata={EMPTY_UNTIL_MATERIALISED: "SeniorityPredictions"},
)
def imported_predictions(context: dg.AssetExecutionContext, config: ImportedPredictionsConfig) -> pd.DataFrame:
    """Predictions of an existing study read from the seniority study's CSV formats (empty unless configured)."""
    # Run config names these paths: only files under the allowed folders are read.
    paths = [checked_path(path, "imported_predictions.import_paths") for path in config.import_paths]
    df = conform(read_prediction_files(paths) if paths else empty_prediction_table(), SeniorityPredictions)
    context.add_output_metadata(
        table_metadata(
            df,
            sources=dg.MetadataValue.json(list(config.import_paths)),
            models=dg.MetadataValue.json(sorted(df["model"].unique().tolist())),
        )
    )
    return df
