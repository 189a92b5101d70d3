"""The pairwise task (issue 42): each validity twin against its set's baseline, both shown with
the job description, and the model's choice of the more qualified (or equal), by (model, JD);
and the pairwise verdicts. Run on request (``pairwise_job``), never by ``resumebias run``."""

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.snapshots import separate_snapshots
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.jd_audit.pairwise import load_pairwise_template, pairwise_items, predict_pairwise
from resumebias_dagster.core.jd_audit.pairwise_stats import pairwise_verdicts as compute_pairwise_verdicts
from resumebias_dagster.defs._cells import model_jd_cells, record_cell
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, json_by_key, table_metadata, verdicts_metadata
from resumebias_dagster.partitions import kind_tags, pairwise_model_jd_partitions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource, progress_logger
from resumebias_dagster.resources.runtime import model_runtime
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import PairwiseChoicesType, VerdictsType


def build_pairwise_choices(
    partitions_def: dg.MultiPartitionsDefinition, kinds: set[str] | None = None
) -> dg.AssetsDefinition:
    """The pairwise_choices asset over (model, jd) partitions (by default the models that have
    the pairwise task, chat models and embedded LLMs, and the design's job descriptions)."""

    @dg.asset(
        name="pairwise_choices",
        dagster_type=PairwiseChoicesType,
        partitions_def=partitions_def,
        metadata={"partition_expr": {"model": "model", "jd": "jd"}},
        kinds=kinds if kinds is not None else kind_tags("pairwise"),
        backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=17),
    )
    def pairwise_choices(
        context: dg.AssetExecutionContext,
        compute: ComputeResource,
        catalog: CatalogResource,
        providers: ProvidersResource,
        shared_files: SharedFilesResource,
        validity_pairs: pd.DataFrame,
        job_descriptions: pd.DataFrame,
    ) -> pd.DataFrame:
        """For each (model, JD) partition: every better, worse and equal twin of validity_pairs
        beside its set's baseline, shown as candidates A and B both ways, `runs_per_cell` runs
        each: which is more qualified, or are they equal? A chat model's answer is parsed for A,
        B or Equal; an embedded LLM gives P(A), P(B), P(Equal) and samples its choice from them."""
        template = load_pairwise_template(catalog.folder())
        runtime = model_runtime(compute, providers, shared=shared_files.files(), log=context.log.info)
        frames = []
        cells = model_jd_cells(
            context,
            partitions_def,
            catalog_dir=catalog.folder(),
            job_descriptions=job_descriptions,
            asset="pairwise_choices",
        )
        for spec, jd, text in cells:
            try:
                items = pairwise_items(validity_pairs, jd)
            except ValueError as exc:
                raise dg.Failure(str(exc)) from None
            if not items:
                raise dg.Failure(
                    f"pairwise_choices: validity_pairs has no pair for job description {jd!r}; "
                    "re-materialise it with this job description in fit_design.yaml"
                )
            frame, stats = predict_pairwise(
                spec,
                items,
                jd=jd,
                jd_text=text,
                template=template,
                runtime=runtime,
                progress=progress_logger(context.log, f"{spec.name} x {jd}"),
            )
            record_cell(context, spec, jd, frame, stats, "choices")
            frames.append(frame)
        df = pd.concat(frames, ignore_index=True)
        context.add_output_metadata(
            table_metadata(
                df.drop(columns=["answer", "p_choice"]),
                choices=json_by_key(df["picked"].fillna("none").value_counts().sort_index()),
                failed_choices=dg.MetadataValue.int(int(df["error"].notna().sum())),
            )
        )
        return df

    return pairwise_choices


pairwise_choices = build_pairwise_choices(pairwise_model_jd_partitions)


@dg.asset(dagster_type=VerdictsType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def pairwise_verdicts(
    context: dg.AssetExecutionContext, catalog: CatalogResource, pairwise_choices: pd.DataFrame
) -> pd.DataFrame:
    """Per model, from its pairwise choices: does it choose the more qualified résumé
    (criterion validity, "equal" counting half, against chance and the target), does it call
    equal résumés equal or split evenly over the two orders (abstention on equals), both per
    name group against the design's first, and how often it chooses position A. The résumé is
    the unit; methods.md says what each interval assumes."""
    folder = catalog.folder()
    groups = load_fit_design(folder).validity.groups
    choices = separate_snapshots(pairwise_choices, partition=("model", "jd"))
    df = compute_pairwise_verdicts(choices, load_inference_settings(folder), reference=groups[0] if groups else None)
    context.add_output_metadata(verdicts_metadata(df))
    return df
