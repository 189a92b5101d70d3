"""The ``ModelRuntime`` an asset hands to a task's dispatcher, built from its resources."""

from __future__ import annotations

import pandas as pd

from resumebias_dagster.core.models.runtime import ModelRuntime, classifiers_from_table
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.settings import model_cache_dir


def model_runtime(
    compute: ComputeResource, providers: ProvidersResource, fine_tuned_classifiers: pd.DataFrame | None = None
) -> ModelRuntime:
    """Local models on ``compute``, provider models through ``providers.run`` (the store and
    the fan-out), fine-tuned classifiers from the ``fine_tuned_classifiers`` table."""
    return ModelRuntime(
        resolve_compute=compute.settings,
        cache_dir=model_cache_dir(),
        provider_run=lambda model, requests, progress: providers.run(model, requests, progress=progress),
        classifiers=classifiers_from_table(fine_tuned_classifiers) if fine_tuned_classifiers is not None else {},
    )
