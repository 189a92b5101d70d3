"""Partitions, read from the models config and the fit audit's design (``fit_design.yaml``:
its job descriptions) when the definitions load (small files; no model is loaded)."""

import dagster as dg

from resumebias_dagster.core.jd_audit.design import design_job_descriptions
from resumebias_dagster.core.models.kinds import kind_of
from resumebias_dagster.core.models.model_config import load_models, tasks_of

_models = load_models()
# Each task's partitions hold the models that can run it (``tasks_of``): a classifier labels
# seniority only; an http scorer runs the tasks its answer paths give.
model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models if "seniority" in tasks_of(m)])
fit_model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models if "fit" in tasks_of(m)])
# The design's job descriptions only (every one with `job_descriptions: all`).
jd_partitions = dg.StaticPartitionsDefinition(design_job_descriptions())
model_jd_partitions = dg.MultiPartitionsDefinition({"model": fit_model_partitions, "jd": jd_partitions})
# The ranking task needs a model that reads several résumés at once: not a classifier, nor a
# scorer of the user's (its contract scores one résumé).
rank_model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models if "ranking" in tasks_of(m)])
rank_model_jd_partitions = dg.MultiPartitionsDefinition({"model": rank_model_partitions, "jd": jd_partitions})
# The pairwise task (two résumés, which is more qualified): chat models and embedded LLMs only.
pairwise_model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models if "pairwise" in tasks_of(m)])
pairwise_model_jd_partitions = dg.MultiPartitionsDefinition({"model": pairwise_model_partitions, "jd": jd_partitions})


def jds_by_model(partition_keys, partitions_def: dg.MultiPartitionsDefinition) -> dict[str, list[str]]:
    """The job descriptions of each model among a run's (model, jd) partition keys, in their order."""
    out: dict[str, list[str]] = {}
    for key in partition_keys:
        dims = partitions_def.get_partition_key_from_str(str(key)).keys_by_dimension
        out.setdefault(dims["model"], []).append(dims["jd"])
    return out


def kind_tags(task: str) -> set[str]:
    """The kind tags (``dagster/kind/...``) of the asset holding ``task``'s answers: what each
    model that runs it is (its kind's tag: pytorch, openai, api, ...), and DuckDB, where the
    rows are stored."""
    return {kind_of(m.kind).tag(m) for m in _models if task in tasks_of(m)} | {"duckdb"}
