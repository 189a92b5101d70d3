"""Rankings by model x JD: the ranking items (``core/ranking/design.py``) through each model."""

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.ranking.design import (
    DEFAULT_RANKING_PER_LEVEL,
    RankingDesignError,
    pools_from_levels,
    ranking_items,
)
from resumebias_dagster.core.ranking.task import load_ranking_template, predict_rankings
from resumebias_dagster.defs._cells import model_jd_cells, record_cell
from resumebias_dagster.defs._metadata import json_by_key, table_metadata
from resumebias_dagster.defs.jd_audit.fit import ProbeVariantsConfig, choose_base_resumes
from resumebias_dagster.partitions import kind_tags, rank_model_jd_partitions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource, progress_logger
from resumebias_dagster.resources.runtime import model_runtime
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import RankingsType

# The axis of probe_axes.yaml whose levels are the groups and whose pools are their names.
NAME_AXIS = "firstName"
DEFAULT_PER_LEVEL = DEFAULT_RANKING_PER_LEVEL


class RankingsConfig(ProbeVariantsConfig):
    """Which base résumés are ranked (chosen as probe_variants chooses them), and between which
    groups of names."""

    per_level: int = Field(
        default=DEFAULT_PER_LEVEL,
        ge=1,
        description="base résumés per seniority level (the first ones of each); each gives one ranking "
        "item per group, every item the résumé once per group",
    )
    groups: list[str] = Field(
        default_factory=list,
        description=f"levels of probe_axes.yaml's {NAME_AXIS} axis to rank against each other (at least two); "
        "empty: every level",
    )


def name_pools(catalog_dir, groups: list[str]) -> dict[str, list[str]]:
    """Group -> its pool of "First Last" names: the levels of the name axis of ``probe_axes.yaml``
    (``groups`` of them, in that order; all, in the file's order, when empty)."""
    axis = next((a for a in load_probe_axes(catalog_dir).axes if a.id == NAME_AXIS), None)
    if axis is None:
        raise dg.Failure(f"rankings: probe_axes.yaml has no {NAME_AXIS} axis, whose levels are the groups ranked")
    pools = pools_from_levels(axis.levels)
    unknown = [g for g in groups if g not in pools]
    if unknown:
        raise dg.Failure(f"rankings: groups {unknown} are not levels of {NAME_AXIS}: {', '.join(pools)}")
    return {g: pools[g] for g in groups} if groups else pools


def build_rankings(partitions_def: dg.MultiPartitionsDefinition, kinds: set[str] | None = None) -> dg.AssetsDefinition:
    """The rankings asset over (model, jd) partitions (by default the models that can rank several
    résumés, local LLMs and provider models, and the design's job descriptions)."""

    @dg.asset(
        name="rankings",
        dagster_type=RankingsType,
        partitions_def=partitions_def,
        metadata={"partition_expr": {"model": "model", "jd": "jd"}},
        kinds=kinds if kinds is not None else kind_tags("ranking"),
        backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=17),
    )
    def rankings(
        context: dg.AssetExecutionContext,
        config: RankingsConfig,
        compute: ComputeResource,
        catalog: CatalogResource,
        providers: ProvidersResource,
        shared_files: SharedFilesResource,
        base_resumes: pd.DataFrame,
        job_descriptions: pd.DataFrame,
    ) -> pd.DataFrame:
        """For each (model, JD) partition: every ranking item (a base résumé under one name per
        group of probe_axes.yaml's firstName axis, in each rotation of the groups) ranked,
        `runs_per_cell` runs each. A provider model's answer is parsed for the names; an embedded
        LLM gives P(ranked first) of each name and samples the first choice from it."""
        chosen = choose_base_resumes(context, config, base_resumes, "rankings")
        pools = name_pools(catalog.folder(), config.groups)
        try:
            items = ranking_items(chosen, pools)
        except RankingDesignError as exc:
            raise dg.Failure(f"rankings: {exc}") from None
        template = load_ranking_template(catalog.folder())
        runtime = model_runtime(compute, providers, shared=shared_files.files(), log=context.log.info)
        frames = []
        cells = model_jd_cells(
            context, partitions_def, catalog_dir=catalog.folder(), job_descriptions=job_descriptions, asset="rankings"
        )
        for spec, jd, text in cells:
            frame, stats = predict_rankings(
                spec,
                items,
                jd=jd,
                jd_text=text,
                template=template,
                runtime=runtime,
                progress=progress_logger(context.log, f"{spec.name} x {jd}"),
            )
            record_cell(context, spec, jd, frame, stats, "rankings")
            frames.append(frame)
        df = pd.concat(frames, ignore_index=True)
        context.add_output_metadata(
            table_metadata(
                df.drop(columns=["shown", "groups", "answer", "p_first"]),
                groups=dg.MetadataValue.json(list(pools)),
                resumes=dg.MetadataValue.json(chosen["resume_id"].tolist()),
                resumes_per_level=json_by_key(chosen["seniority"].value_counts()),
                items=dg.MetadataValue.int(len(items)),
                failed_rankings=dg.MetadataValue.int(int(df["error"].notna().sum())),
            )
        )
        return df

    return rankings


rankings = build_rankings(rank_model_jd_partitions)
