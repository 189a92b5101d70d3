"""The (model, job description) cells of a partitioned task asset (fit_scores, validity_scores,
rankings, pairwise_choices): one loop over the run's partitions, one check that each job
description was materialised, and the transport stats of each cell in the asset's metadata."""

from collections.abc import Iterator
from typing import Any

import dagster as dg
import pandas as pd

from resumebias_dagster.core.models.model_config import model_by_name
from resumebias_dagster.core.models.spec import ModelSpec
from resumebias_dagster.partitions import jds_by_model
from resumebias_dagster.resources.providers import stats_metadata


def model_jd_cells(
    context: dg.AssetExecutionContext,
    partitions_def: dg.MultiPartitionsDefinition,
    *,
    catalog_dir,
    job_descriptions: pd.DataFrame,
    asset: str,
) -> Iterator[tuple[ModelSpec, str, str]]:
    """(model spec, jd, the job description's text) of every partition the run covers."""
    jd_text = job_descriptions.set_index("jd")["text"]
    for model_name, jds in jds_by_model(context.partition_keys, partitions_def).items():
        spec = model_by_name(model_name, catalog_dir=catalog_dir)
        for jd in jds:
            if jd not in jd_text.index:
                raise dg.Failure(f"{asset}: job description {jd!r} is not in job_descriptions; re-materialise it")
            yield spec, jd, str(jd_text[jd])


def record_cell(
    context: dg.AssetExecutionContext, spec: ModelSpec, jd: str, frame: pd.DataFrame, stats: Any, what: str
):
    """A cell's transport stats (where it ran through one) in the metadata, and its row count in the log."""
    if stats is not None:
        context.add_output_metadata({f"{spec.name}/{jd}/{k}": v for k, v in stats_metadata(stats).items()})
    context.log.info(f"{spec.name} x {jd}: {len(frame)} {what}")
