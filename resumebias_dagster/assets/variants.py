import functools
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
from pydantic import Field

from resumebias_dagster.assets._metadata import table_metadata
from resumebias_dagster.core.diffing import unexplained_changes
from resumebias_dagster.core.embedding import DEFAULT_EMBEDDING_MODEL, embed_texts
from resumebias_dagster.core.labels import STYLES
from resumebias_dagster.core.llm_generation import llm_style_variants
from resumebias_dagster.core.model_sources import resolve_model_source
from resumebias_dagster.core.names import name_tokens
from resumebias_dagster.core.names import name_variants as make_name_variants
from resumebias_dagster.core.style import extract_facts, load_tone_lexicon, rewrite_style
from resumebias_dagster.core.validation import style_validation_table, word_count
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource, progress_logger, stats_metadata
from resumebias_dagster.schemas import NameVariantsType, StyleValidationType, StyleVariantsType
from resumebias_dagster.settings import checked_path


class StyleVariantsConfig(dg.Config):
    seed: int = Field(default=0, description="varies the rewriter's word choices deterministically")
    rewriter_model: str = Field(
        default="",
        description="an enabled provider model that rewrites with the seed 004 overstated/understated prompts "
        "instead of the offline rewriter (empty = offline rewriter)",
    )


@dg.asset(
    dagster_type=StyleVariantsType,
    group_name="seniority_study",
    kinds={"python", "duckdb"},
    code_version="rewriter-v1",
)
def style_variants(
    context: dg.AssetExecutionContext,
    config: StyleVariantsConfig,
    catalog: CatalogResource,
    providers: ProvidersResource,
    base_resumes: pd.DataFrame,
) -> pd.DataFrame:
    """Every base résumé as neutral, overstated and understated text (seed Test 2)."""
    if config.rewriter_model:
        run = functools.partial(providers.run, config.rewriter_model, progress=progress_logger(context.log))
        df, stats = llm_style_variants(run, base_resumes, catalog_dir=catalog.folder())
        context.add_output_metadata(stats_metadata(stats))
    else:
        rows = []
        for original_idx, resume in enumerate(base_resumes.itertuples(index=False)):
            for style in STYLES:
                text = rewrite_style(resume.text, style, seed=config.seed, catalog_dir=catalog.folder())
                rows.append((resume.resume_id, original_idx, resume.seniority, style, text))
        df = pd.DataFrame(rows, columns=["resume_id", "original_idx", "seniority", "style", "text"])
    words = df.assign(words=df["text"].map(word_count)).groupby("style")["words"].mean().round(1)
    context.add_output_metadata(table_metadata(df, mean_words=dg.MetadataValue.json(words.to_dict())))
    return df


@dg.asset_check(asset=style_variants, blocking=True, description="employers, dates, degrees and skills are identical across the three styles")
def style_facts_identical(style_variants: pd.DataFrame) -> dg.AssetCheckResult:
    facts = style_variants.assign(facts=style_variants["text"].map(lambda t: repr(extract_facts(t))))
    distinct = facts.groupby("original_idx")["facts"].nunique()
    bad = distinct[distinct > 1].index.tolist()
    return dg.AssetCheckResult(
        passed=not bad,
        description=None if not bad else f"facts differ between styles for original_idx {bad[:10]}",
        metadata={"resumes_with_differing_facts": len(bad)},
    )


class StyleValidationConfig(dg.Config):
    embedding_model: str = Field(
        default=DEFAULT_EMBEDDING_MODEL,
        description="pypi:<package>/<folder>, a local folder, or a hub id already in the local cache",
    )


@dg.asset(
    dagster_type=StyleValidationType,
    group_name="seniority_study",
    kinds={"python", "pytorch", "duckdb"},
    code_version="validation-v1",
)
def style_validation(
    context: dg.AssetExecutionContext,
    config: StyleValidationConfig,
    catalog: CatalogResource,
    compute: ComputeResource,
    style_variants: pd.DataFrame,
) -> pd.DataFrame:
    """Seed 004 validation: word counts, tone score and similarity to the neutral version per style."""
    if not config.embedding_model.startswith("pypi:") and Path(config.embedding_model).expanduser().exists():
        # A local folder named in run config must lie under the allowed folders.
        checked_path(config.embedding_model, "style_validation.embedding_model")
    source = resolve_model_source(config.embedding_model, setting="style_validation.embedding_model")
    embeddings = embed_texts(style_variants["text"].tolist(), source, compute.settings())
    table = style_validation_table(style_variants, embeddings, load_tone_lexicon(catalog.folder()))
    order_ok = bool(np.all(np.diff(table.set_index("style").reindex(STYLES)["tone_score"].to_numpy()[[1, 0, 2]]) < 0))
    context.add_output_metadata(
        {
            "table": dg.MetadataValue.md(table.round(3).to_markdown(index=False)),
            "tone_order_overstated_neutral_understated": dg.MetadataValue.bool(order_ok),
            "min_similarity": dg.MetadataValue.float(float(table["similarity_to_neutral_min"].min())),
            "embedding_model": dg.MetadataValue.text(config.embedding_model),
        }
    )
    return table


class NameVariantsConfig(dg.Config):
    seed: int = Field(default=0, description="seed of the name draws from the pools")


@dg.asset(
    dagster_type=NameVariantsType,
    group_name="seniority_study",
    kinds={"python", "duckdb"},
    code_version="names-v1",
)
def name_variants(
    context: dg.AssetExecutionContext,
    config: NameVariantsConfig,
    catalog: CatalogResource,
    base_resumes: pd.DataFrame,
) -> pd.DataFrame:
    """Every neutral résumé under four demographic names (seed Test 3); the name changes everywhere."""
    df = make_name_variants(base_resumes, seed=config.seed, catalog_dir=catalog.folder())
    context.add_output_metadata(
        table_metadata(
            df.drop(columns=["text"]),
            by_demographic=dg.MetadataValue.json(df["demographic"].value_counts().sort_index().to_dict()),
        )
    )
    return df


@dg.asset_check(asset=name_variants, blocking=True, description="the variants of one résumé differ only in name tokens")
def name_variants_differ_only_in_names(name_variants: pd.DataFrame) -> dg.AssetCheckResult:
    problems = []
    for original_idx, group in name_variants.groupby("original_idx", sort=True):
        first = group.iloc[0]
        allowed_first = name_tokens(first["first_name"], first["last_name"])
        for other in group.iloc[1:].itertuples(index=False):
            extra = unexplained_changes(
                first["text"], other.text, allowed_first, name_tokens(other.first_name, other.last_name)
            )
            if extra:
                problems.append(f"original_idx {original_idx} ({other.demographic}): {sorted(set(extra))[:5]}")
    return dg.AssetCheckResult(
        passed=not problems,
        description=None if not problems else "; ".join(problems[:5]),
        metadata={"variant_pairs_with_other_changes": len(problems)},
    )
