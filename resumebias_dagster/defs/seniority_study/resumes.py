import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.llm_generation import (
    GenerationError,
    llm_base_resumes,
)
from resumebias_dagster.defs._metadata import json_by_key, table_metadata
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.providers import (
    ProvidersResource,
    stats_metadata,
)
from resumebias_dagster.schemas import BaseResumesType


class BaseResumesConfig(dg.Config):
    n_per_level: int = Field(default=40, ge=1, description="résumés per seniority level (notebook 001: 40)")
    seed: int = Field(default=0, description="generator seed; same seed, same résumés")
    generator_model: str = Field(
        default="",
        description="an enabled provider model of the models config that writes the résumés with notebook 004 "
        "prompt, answering structured JSON that the offline generator's renderer writes out (empty = offline "
        "generator)",
    )
    generator_attempts: int = Field(
        default=3,
        ge=1,
        description="draws per résumé with generator_model before an answer that fails validation stops the "
        "asset; every draw stays in the response store, so raising it pays only for the new draws",
    )


@dg.asset(
    dagster_type=BaseResumesType,
    kinds={"python", "duckdb"},
    code_version="generator-v2",
)
def base_resumes(
    context: dg.AssetExecutionContext, config: BaseResumesConfig, catalog: CatalogResource, providers: ProvidersResource
) -> pd.DataFrame:
    """Synthetic résumés, equal numbers per seniority level, seniority carried by facts only;
    offline or by a provider model, both rendered in the one layout the probes parse."""
    if config.generator_model:
        run = providers.run_of(config.generator_model, context.log)
        try:
            df, stats = llm_base_resumes(
                run, config.n_per_level, catalog_dir=catalog.folder(), max_attempts=config.generator_attempts
            )
        except GenerationError as exc:
            raise dg.Failure(f"base_resumes: {exc}") from exc
        context.add_output_metadata(stats_metadata(stats))
    else:
        df = generate_resumes(n_per_level=config.n_per_level, seed=config.seed, catalog_dir=catalog.folder())
    context.add_output_metadata(
        table_metadata(
            df.drop(columns=["text"]),
            by_seniority=json_by_key(df["seniority"].value_counts().sort_index()),
            occupations=json_by_key(df["occupation"].value_counts().sort_index()),
            example=dg.MetadataValue.md("```\n" + df["text"].iloc[0] + "\n```"),
        )
    )
    return df
