"""``kind: fine-tuned``: a sequence classifier fine-tuned here from ``base_model`` on the
generated résumés (``training``: the settings of ``TRAINING_FIELDS``) that labels seniority.
It is trained by the ``fine_tuned_classifiers`` asset and read from the runtime's table."""

from __future__ import annotations

import time

from resumebias_dagster.core.models.kinds.base import ModelKind
from resumebias_dagster.core.models.spec import ModelConfigError

TRAINING_FIELDS = frozenset(
    {"max_length", "epochs", "batch_size", "learning_rate", "weight_decay", "warmup_ratio", "heldout_fraction", "seed"}
)


def _check(entry, where: str) -> None:
    training = entry.get("training") or {}
    if not isinstance(training, dict) or set(training) - TRAINING_FIELDS:
        bad = sorted(set(training) - TRAINING_FIELDS) if isinstance(training, dict) else training
        raise ModelConfigError(f"{where}: training has unknown setting(s) {bad}; allowed: {sorted(TRAINING_FIELDS)}")


def _predict(spec, work, runtime, progress):
    from resumebias_dagster.core.models.finetune import classify, load_classifier, trained_metrics

    trained = runtime.classifier(spec.name)
    model, tokenizer = load_classifier(trained.path, runtime.compute)
    metrics = trained_metrics(trained.path)
    assert metrics is not None  # load_classifier has refused a classifier that is not finished
    texts = work.texts()
    started = time.perf_counter()
    probs = classify(model, tokenizer, texts, runtime.compute, metrics["config"]["max_length"])
    per_item = (time.perf_counter() - started) / max(1, len(texts))
    resolved = f"{spec.name}@{trained.fingerprint}"
    return work.from_label_probs(spec, probs, resolved_model=resolved, per_item_s=per_item), None


KIND = ModelKind(
    name="fine-tuned",
    summary="a sequence classifier fine-tuned here that labels seniority",
    fields=frozenset({"base_model", "training"}),
    required=frozenset({"base_model"}),
    tasks=("seniority",),
    predict=_predict,
    deterministic=True,
    check=_check,
    ui_kind=lambda spec: "pytorch",
)
