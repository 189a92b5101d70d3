"""Partitions, read from the models config and the job descriptions when the definitions
load (small files; no model is loaded)."""

import dagster as dg

from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions
from resumebias_dagster.core.models.model_config import load_models

# Kinds that can read a job description and give a fit score (a classifier cannot).
FIT_KINDS = ("local-llm", "provider")

_models = load_models()
model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models])
fit_model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models if m.kind in FIT_KINDS])
jd_partitions = dg.StaticPartitionsDefinition(load_job_descriptions()["jd"].tolist())
model_jd_partitions = dg.MultiPartitionsDefinition({"model": fit_model_partitions, "jd": jd_partitions})
