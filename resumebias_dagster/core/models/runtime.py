"""What a task needs to run on any kind of model.

Each task (the seniority label, the fit score) has one dispatcher in core that reads a
model's ``kind`` and runs it: an embedded LLM on ``compute``, a fine-tuned classifier from
``classifiers``, a provider model through ``provider_run`` (the transport: the response
store and the request fan-out, which assets get from ``ProvidersResource.run``). Assets
build a runtime and call the dispatcher; they never look at a model's kind themselves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from resumebias_dagster.core.models.compute import ComputeSettings

Progress = Callable[[int, int], None]
# (model name, requests, progress) -> (one result per request, the run's stats)
ProviderRun = Callable[[str, Sequence[Any], Progress | None], tuple[list[Any], Any]]


@dataclass(frozen=True)
class TrainedClassifier:
    """A fine-tuned classifier on disk, the hash of what shaped it, and the hash of its files."""

    path: str
    fingerprint: str
    content_sha256: str | None = None


@dataclass(frozen=True)
class ModelRuntime:
    # Resolved on first use: resolving the device imports torch, which a run of provider
    # models alone never needs.
    resolve_compute: Callable[[], ComputeSettings]
    cache_dir: Path
    provider_run: ProviderRun | None = None
    classifiers: Mapping[str, TrainedClassifier] = field(default_factory=dict)
    # A classifier trained on another machine: its folder fetched here by content hash (the
    # shared files of several machines), or None on one machine.
    fetch_classifier: Callable[[TrainedClassifier], TrainedClassifier] | None = None
    # Where a task says what it chose (e.g. the measured CPU precision): the run's log.
    log: Callable[[str], None] | None = None

    @functools.cached_property
    def compute(self) -> ComputeSettings:
        return self.resolve_compute()

    def run_for(self, model: str, progress: Progress | None = None):
        """The ``run(requests) -> (results, stats)`` callable of provider or http model ``model``."""
        if self.provider_run is None:
            raise ValueError(f"{model}: a provider or http model needs the providers resource; none was given")
        return lambda requests: self.provider_run(model, requests, progress)

    def classifier(self, model: str) -> TrainedClassifier:
        if model not in self.classifiers:
            raise ValueError(f"{model}: no trained classifier; materialise fine_tuned_classifiers first")
        trained = self.classifiers[model]
        if not Path(trained.path).is_dir():
            if self.fetch_classifier is None:
                raise ValueError(
                    f"{model}: its classifier folder {trained.path} is not on this machine, and no shared "
                    f"files are configured to fetch it from (RESUMEBIAS_TABLES_URL); re-materialise "
                    f"fine_tuned_classifiers here"
                )
            trained = self.fetch_classifier(trained)
        return trained


def classifiers_from_table(trained) -> dict[str, TrainedClassifier]:
    """The ``fine_tuned_classifiers`` table as ``{model: TrainedClassifier}``."""
    return {
        str(row.model): TrainedClassifier(str(row.path), str(row.fingerprint), getattr(row, "content_sha256", None))
        for row in trained.itertuples(index=False)
    }
