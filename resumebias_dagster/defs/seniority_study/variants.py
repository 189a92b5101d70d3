import enum
from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.models.embedding import (
    DEFAULT_EMBEDDING_MODEL,
    embed_texts,
)
from resumebias_dagster.core.models.model_sources import resolve_model_source
from resumebias_dagster.core.seniority.llm_generation import llm_style_variants
from resumebias_dagster.core.seniority.names import (
    DEFAULT_NAME_SCOPE,
    NAME_SCOPES,
    name_variants_skipping,
    variant_problems,
)
from resumebias_dagster.core.seniority.names import name_variants as make_name_variants
from resumebias_dagster.core.seniority.style import resumes_with_differing_facts
from resumebias_dagster.core.seniority.style import style_variants as rewrite_styles_offline
from resumebias_dagster.core.seniority.style_validation import (
    load_tone_lexicon,
    load_validation_thresholds,
    pair_similarities,
    style_similarity_table,
    style_validation_table,
    validation_failures,
    word_count,
)
from resumebias_dagster.defs._metadata import json_by_key, table_metadata
from resumebias_dagster.defs.user_resumes.source import RESUMES_DESCRIPTION, ResumeSource
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import (
    ProvidersResource,
    stats_metadata,
)
from resumebias_dagster.schemas import (
    NameVariantsType,
    StyleSimilarityType,
    StyleValidationType,
    StyleVariantsType,
)
from resumebias_dagster.settings import checked_path


class StyleVariantsConfig(dg.Config):
    seed: int = Field(default=0, description="varies the rewriter's word choices deterministically")
    rewriter_model: str = Field(
        default="",
        description="an enabled provider model that rewrites with notebook 004 overstated/understated prompts "
        "instead of the offline rewriter (empty = offline rewriter)",
    )


@dg.asset(
    dagster_type=StyleVariantsType,
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
    """Every base résumé as neutral, overstated and understated text (the seniority study's Test 2)."""
    if config.rewriter_model:
        run = providers.run_of(config.rewriter_model, context.log)
        df, stats = llm_style_variants(run, base_resumes, catalog_dir=catalog.folder())
        if stats is not None:  # None: no résumé to rewrite
            context.add_output_metadata(stats_metadata(stats))
    else:
        df = rewrite_styles_offline(base_resumes, seed=config.seed, catalog_dir=catalog.folder())
    words = df.assign(words=df["text"].map(word_count)).groupby("style")["words"].mean().round(1)
    context.add_output_metadata(table_metadata(df, mean_words=json_by_key(words)))
    return df


@dg.asset_check(
    asset=style_variants,
    blocking=True,
    description="employers, dates, degrees and skills are identical across the three styles",
)
def style_facts_identical(style_variants: pd.DataFrame) -> dg.AssetCheckResult:
    bad = resumes_with_differing_facts(style_variants)
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


@dg.multi_asset(
    name="style_validation",
    outs={
        "style_validation": dg.AssetOut(
            dagster_type=StyleValidationType,
            kinds={"python", "pytorch", "duckdb"},
            description="Notebook 004 validation per style: mean words, power and humble words of the "
            "independent lexicon (catalog/tone_lexicon.yaml), tone score.",
        ),
        "style_similarity": dg.AssetOut(
            dagster_type=StyleSimilarityType,
            kinds={"python", "pytorch", "duckdb"},
            description="Notebook 004 similarity between the versions of a résumé, per pair of styles: "
            "TF-IDF cosine and embedding cosine, mean and minimum, with the threshold each pair is held to.",
        ),
    },
    code_version="validation-v2",
)
def style_validation(
    config: StyleValidationConfig,
    catalog: CatalogResource,
    compute: ComputeResource,
    style_variants: pd.DataFrame,
):
    """Notebook 004 validation of the style set: word counts and tone per style, similarity per pair."""
    if not config.embedding_model.startswith("pypi:") and Path(config.embedding_model).expanduser().exists():
        # A local folder named in run config must lie under the allowed folders.
        checked_path(config.embedding_model, "style_validation.embedding_model")
    source = resolve_model_source(config.embedding_model, setting="style_validation.embedding_model")
    thresholds = load_validation_thresholds(catalog.folder())
    validation = style_validation_table(style_variants, load_tone_lexicon(catalog.folder()))
    embeddings = embed_texts(style_variants["text"].tolist(), source, compute.settings())
    similarity = style_similarity_table(pair_similarities(style_variants, embeddings), thresholds)
    failures = validation_failures(validation, similarity, thresholds)
    yield dg.Output(
        validation,
        output_name="style_validation",
        metadata={
            "table": dg.MetadataValue.md(validation.round(3).to_markdown(index=False)),
            "passes_seed_004_rules": dg.MetadataValue.bool(not failures),
            "failures": dg.MetadataValue.json(failures),
        },
    )
    yield dg.Output(
        similarity,
        output_name="style_similarity",
        metadata={
            "table": dg.MetadataValue.md(similarity.round(3).to_markdown(index=False)),
            "embedding_model": dg.MetadataValue.text(config.embedding_model),
        },
    )


@dg.asset_check(
    asset="style_validation",
    name="rules_hold",  # shown beside its asset: "style_validation: rules_hold"
    additional_ins={"style_similarity": dg.AssetIn("style_similarity")},
    blocking=True,
    description="the style set meets notebook 004's rules (catalog/style_validation.yaml): similarity between "
    "versions, tone order with its minimum steps, tone signs, word-count order; the seniority predictions of "
    "the run wait for it",
)
def style_validation_passes(
    catalog: CatalogResource, style_validation: pd.DataFrame, style_similarity: pd.DataFrame
) -> dg.AssetCheckResult:
    failures = validation_failures(style_validation, style_similarity, load_validation_thresholds(catalog.folder()))
    return dg.AssetCheckResult(
        passed=not failures,
        description=None if not failures else "; ".join(failures),
        metadata={"failed_rules": len(failures)},
    )


# An enum, so a bad value is a config error naming the setting before anything runs.
NameScope = enum.Enum("NameScope", {scope: scope for scope in NAME_SCOPES})  # type: ignore[misc]  # members from the one list in core


class NameVariantsConfig(dg.Config):
    seed: int = Field(default=0, description="seed of the name draws from the pools")
    name_scope: NameScope = Field(
        default=NameScope[DEFAULT_NAME_SCOPE],
        description="everywhere: the name is replaced in the whole résumé (e-mail, LinkedIn slug, any mention); "
        "first_line: notebook 004's swap, only the name line changes (the original name stays in the e-mail)",
    )
    resumes: ResumeSource = Field(
        default=ResumeSource.generated,
        description=RESUMES_DESCRIPTION + ", each with its seniority label (labels.csv or the CSV's label column) "
        "and the name found in it; a résumé whose name cannot be swapped is skipped and listed in the metadata",
    )


def _user_name_variants(
    context: dg.AssetExecutionContext, config: NameVariantsConfig, catalog: CatalogResource, user_resumes: pd.DataFrame
) -> tuple[pd.DataFrame, dict]:
    """The four name variants of each user résumé; a refused swap skips the résumé, listed in the metadata."""
    if not len(user_resumes):
        raise dg.Failure(
            "name_variants: resumes 'user', but user_resumes has no résumé: materialise user_resumes with a "
            "folder (or csv) of your résumés first"
        )
    unlabelled = user_resumes.loc[user_resumes["seniority"].isna(), "source"].tolist()
    if unlabelled:
        listed = ", ".join(unlabelled[:20]) + (f" (and {len(unlabelled) - 20} more)" if len(unlabelled) > 20 else "")
        raise dg.Failure(
            f"name_variants: the seniority study needs each résumé's true seniority, and {len(unlabelled)} of your "
            f"résumés have none: {listed}. Give the labels in the folder's labels.csv (columns file, seniority) or "
            "in the CSV's label column (user_resumes' label_column), then materialise user_resumes again"
        )
    df, skipped = name_variants_skipping(
        user_resumes, seed=config.seed, catalog_dir=catalog.folder(), scope=config.name_scope.value
    )
    source = user_resumes.set_index("resume_id")["source"]
    listing = [f"- {source[r]} ({r}): {why}" for r, why in zip(skipped["resume_id"], skipped["reason"])]
    for line in listing:
        context.log.warning(f"name_variants: skipped {line[2:]}")
    if len(skipped) == len(user_resumes):
        raise dg.Failure(
            "name_variants: the name swap is refused for every one of your résumés:\n" + "\n".join(listing[:20])
        )
    return df, {
        "resume_source": dg.MetadataValue.text(ResumeSource.user.value),
        "skipped_resumes": dg.MetadataValue.int(len(skipped)),
        "skipped": dg.MetadataValue.md("\n".join(listing) or "(none)"),
    }


@dg.asset(
    dagster_type=NameVariantsType,
    kinds={"python", "duckdb"},
    code_version="names-v2",
)
def name_variants(
    context: dg.AssetExecutionContext,
    config: NameVariantsConfig,
    catalog: CatalogResource,
    base_resumes: pd.DataFrame,
    user_resumes: pd.DataFrame,
) -> pd.DataFrame:
    """Every neutral résumé under four demographic names (the seniority study's Test 3); ``name_scope`` says
    whether the name changes everywhere (default) or on the first line only (notebook 004). With
    ``resumes: user``: your own labelled résumés, each under four names in place of the name found in
    it; one whose name cannot be swapped cleanly is skipped and listed in the metadata."""
    if config.resumes is ResumeSource.user:
        df, meta = _user_name_variants(context, config, catalog, user_resumes)
    else:
        df = make_name_variants(
            base_resumes, seed=config.seed, catalog_dir=catalog.folder(), scope=config.name_scope.value
        )
        meta = {"resume_source": dg.MetadataValue.text(ResumeSource.generated.value)}
    context.add_output_metadata(
        table_metadata(
            df.drop(columns=["text"]),
            by_demographic=json_by_key(df["demographic"].value_counts().sort_index()),
            name_scope=dg.MetadataValue.text(config.name_scope.value),
            **meta,
        )
    )
    return df


@dg.asset_check(
    asset=name_variants,
    name="differ_only_in_names",  # shown beside its asset: "name_variants: differ_only_in_names"
    blocking=True,
    description="the variants of one résumé differ only in name tokens (name_scope first_line: only in line 1)",
)
def name_variants_differ_only_in_names(name_variants: pd.DataFrame) -> dg.AssetCheckResult:
    problems = variant_problems(name_variants)
    return dg.AssetCheckResult(
        passed=not problems,
        description=None if not problems else "; ".join(problems[:5]),
        metadata={"variant_pairs_with_other_changes": len(problems)},
    )
