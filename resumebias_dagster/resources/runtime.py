"""The ``ModelRuntime`` an asset hands to a task's dispatcher, built from its resources."""

from __future__ import annotations

import pandas as pd

from resumebias_dagster.core.common.shared_files import SharedFiles
from resumebias_dagster.core.models.runtime import ModelRuntime, TrainedClassifier, classifiers_from_table
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.settings import classifiers_dir, model_cache_dir


def model_runtime(
    compute: ComputeResource,
    providers: ProvidersResource,
    fine_tuned_classifiers: pd.DataFrame | None = None,
    *,
    shared: SharedFiles | None = None,
    log=None,
) -> ModelRuntime:
    """Local models on ``compute``, provider models through ``providers.run`` (the store and
    the fan-out), fine-tuned classifiers from the ``fine_tuned_classifiers`` table (fetched
    from ``shared``, the shared files, by content hash where another machine trained them)."""
    return ModelRuntime(
        resolve_compute=compute.settings,
        cache_dir=model_cache_dir(),
        provider_run=lambda model, requests, progress: providers.run(model, requests, progress=progress, notify=log),
        classifiers=classifiers_from_table(fine_tuned_classifiers) if fine_tuned_classifiers is not None else {},
        fetch_classifier=(lambda trained: fetch_classifier(shared, trained)) if shared is not None else None,
        log=log,
    )


def fetch_classifier(shared: SharedFiles, trained: TrainedClassifier) -> TrainedClassifier:
    """``trained`` with its folder fetched from ``shared`` into this machine's classifiers folder,
    at ``fetched/<content hash>``: the table's path names the folder on the machine that
    trained it, and never where a fetched folder goes (``x/..`` would replace data/models)."""
    if not trained.content_sha256:
        raise ValueError(
            f"{trained.path}: the classifier table has no content hash to fetch the folder by; "
            f"re-materialise fine_tuned_classifiers"
        )
    local = shared.fetch_folder(
        "classifiers", trained.content_sha256, classifiers_dir() / "fetched" / trained.content_sha256
    )
    return TrainedClassifier(str(local), trained.fingerprint, trained.content_sha256)
