"""``kind: hf-classifier``: a Hugging Face sequence classifier of the user's, from a folder (or
the hub with ``allow_download: true``), that labels seniority; ``labels`` maps each of its
labels to a seniority level (``core/models/hf_classifier.py``)."""

from __future__ import annotations

import time

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.models.kinds.base import ModelKind
from resumebias_dagster.core.models.spec import ModelConfigError


def _check(entry, where: str) -> None:
    source = entry["source"]
    if not isinstance(source, str) or not source.strip():
        raise ModelConfigError(f"{where}: source must be a folder, pypi:<package>/<folder> or a hub id, got {source!r}")
    labels = entry["labels"]
    levels = list(SENIORITY_LEVELS)
    if not isinstance(labels, dict) or not labels:
        raise ModelConfigError(
            f"{where}: labels must map each label of the classifier to a seniority level "
            f"({', '.join(levels)}), e.g. labels: {{LABEL_0: junior, LABEL_1: mid, LABEL_2: senior}}"
        )
    bad = {str(k): v for k, v in labels.items() if v not in levels}
    if bad:
        raise ModelConfigError(f"{where}: labels {bad} map to no seniority level; the levels are {', '.join(levels)}")
    unmapped = [level for level in levels if level not in labels.values()]
    if unmapped:
        raise ModelConfigError(
            f"{where}: labels map no classifier label to {', '.join(unmapped)}; every level needs one"
        )
    for key in ("max_length", "batch_size"):
        value = entry.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelConfigError(f"{where}: {key} {value!r} must be a positive integer")
    if not isinstance(entry.get("allow_download", False), bool):
        raise ModelConfigError(f"{where}: allow_download must be true or false, got {entry['allow_download']!r}")


def _predict(spec, work, runtime, progress):
    from resumebias_dagster.core.models.hf_classifier import classifier_probabilities, load_hf_classifier

    classifier = load_hf_classifier(spec, runtime.compute, log=runtime.log)
    texts = work.texts()
    started = time.perf_counter()
    probs = classifier_probabilities(classifier, texts, runtime.compute)
    per_item = (time.perf_counter() - started) / max(1, len(texts))
    return work.from_label_probs(spec, probs, resolved_model=classifier.identity, per_item_s=per_item), None


KIND = ModelKind(
    name="hf-classifier",
    summary="a Hugging Face sequence classifier of the user's that labels seniority",
    fields=frozenset({"source", "labels", "max_length", "batch_size", "allow_download"}),
    required=frozenset({"source", "labels"}),
    tasks=("seniority",),
    predict=_predict,
    deterministic=True,
    check=_check,
    ui_kind=lambda spec: "huggingface",
)
