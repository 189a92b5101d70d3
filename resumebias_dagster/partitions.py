"""Partitions, read from the models config and the fit audit's design (``fit_design.yaml``:
its job descriptions) when the definitions load (small files; no model is loaded)."""

import dagster as dg

from resumebias_dagster.core.jd_audit.design import design_job_descriptions
from resumebias_dagster.core.models.model_config import load_models

# Kinds that can read a job description and give a fit score (a classifier cannot).
FIT_KINDS = ("local-llm", "provider")

_models = load_models()
model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models])
fit_model_partitions = dg.StaticPartitionsDefinition([m.name for m in _models if m.kind in FIT_KINDS])
# The design's job descriptions only (every one with `job_descriptions: all`).
jd_partitions = dg.StaticPartitionsDefinition(design_job_descriptions())
model_jd_partitions = dg.MultiPartitionsDefinition({"model": fit_model_partitions, "jd": jd_partitions})
