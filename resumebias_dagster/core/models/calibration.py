"""Pick the embedded LLM's CPU precision by measuring it, once per machine, model and task.

A CPU flag does not say which precision is faster: on a Xeon with AVX512-BF16 but no AMX,
bf16 autocast scored 597 prompt tokens/s against fp32's 714 (and 734 against 886 here with
oneDNN limited to that instruction set), while with AMX bf16 is ~1.45x faster than fp32. So
when the compute resource's dtype is ``auto`` on a CPU, the first load times a few batches of
the task's own prompts in each candidate precision, measures how far each moves the task's
distributions from fp32 (total variation), and keeps the fastest within ``TV_LIMIT`` with a
margin (``TV_ALLOWED_ON_SAMPLE``: the sample's largest TV understates a whole run's). The
choice is cached in ``<model cache>/calibration.json`` under a key naming the CPU (model name,
instruction-set flags, oneDNN's ISA limit), torch, threads, batch size, model and task; a
different machine or setting measures again.

Candidates not kept, after measuring them here: int8 dynamic quantisation of the linear layers
(1.3-1.4x fp32's speed, but TV 0.23-0.90 from fp32 whichever layers were quantised: Gemma's
activation outliers), ``torch.compile`` (+17% on fp32 before the band attention; since, the
compiled decoder scored 1,063 prompt tokens/s against the band attention's 1,039 uncompiled, after
132 s compiling, and compiling only the MLPs and norms was slower) and llama.cpp
(llama-cpp-python 0.3.36 built here, on the same Q4_K_M GGUF or requantised to Q8_0: 522-552
prompt tokens/s on a 2-core Xeon where torch fp32 scored ~900).

The encoders (fine-tuning, classification, embeddings) are almost all matrix products and have
no label distribution of their own to compare, so ``encoder_settings`` decides for them from one
timed matrix product per precision instead (``matmul_rates``).
"""

from __future__ import annotations

import json
import os
import platform
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.settings import onednn_isa

CANDIDATES = ("float32", "bfloat16")
TV_LIMIT = 0.01
# A candidate is kept only with this much headroom on the sample: its largest TV over a whole run
# is larger than over 16 prompts (bf16 on a Xeon with AMX: 0.0100 on the sample, 0.0109 over 64).
TV_ALLOWED_ON_SAMPLE = 0.009
SAMPLE_PROMPTS = 16
GIVE_UP_BELOW = 0.5  # of fp32's rate: a candidate this slow after a batch cannot win
MIN_PROMPTS = 8  # fewer prompts than this: the flag-based guess (measuring would cost more than it saves)
CACHE_FILE = "calibration.json"
# Bumped when the scorer changes speed or rounding in a way that can reorder the candidates (2: the
# CPU band attention, which speeds up the fp32 attention both candidates share; 3: oneDNN layers,
# whose fused MLP moves bf16 about half as far from fp32), so old choices are measured again.
SCORER_REVISION = 3
# CPU flags that change which kernels a precision runs on.
RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile", "amx_int8")

# One MiniLM batch (16 x 256 tokens) through its feed-forward layer: (rows, inputs, outputs).
ENCODER_MATMUL = (4096, 384, 1536)
# bf16 autocast is kept for an encoder only when its matrix product is measured this much faster
# than fp32's: far from every CPU measured (AMX ~3-5x, AVX512-BF16 without AMX 0.57x, AVX2 far
# below), so timing noise cannot flip the choice, and with it a trained classifier, run to run.
ENCODER_BF16_GAIN = 1.25

# (settings, prompts) -> one distribution row per prompt
Scorer = Callable[[ComputeSettings, Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Calibration:
    choice: str
    tokens_per_s: dict[str, float]
    max_tv: dict[str, float]
    prompts: int
    measured: bool  # False: read from the cache

    def summary(self) -> str:
        figures = ", ".join(
            f"{d} {self.tokens_per_s[d]:,.0f} tok/s (TV {self.max_tv[d]:.4f})" for d in self.tokens_per_s
        )
        refused = [d for d in self.max_tv if d != "float32" and self.max_tv[d] > TV_ALLOWED_ON_SAMPLE]
        note = f"; refused over TV {TV_ALLOWED_ON_SAMPLE} on the sample: {', '.join(refused)}" if refused else ""
        return (
            f"{self.choice} ({'measured' if self.measured else 'cached'}: {figures}; TV limit {TV_LIMIT}, "
            f"{TV_ALLOWED_ON_SAMPLE} on the calibration sample{note})"
        )


def cpu_identity(cpuinfo: str | None = None) -> str:
    """The CPU's model name and the flags that matter for precision, plus oneDNN's ISA limit."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.exists() else ""
    name, flags = platform.processor() or platform.machine(), set()
    for line in cpuinfo.splitlines():
        if line.startswith("model name") and ":" in line:
            name = line.split(":", 1)[1].strip()
        elif line.startswith("flags") and ":" in line:
            flags = set(line.split(":", 1)[1].split())
            break
    present = "+".join(f for f in RELEVANT_FLAGS if f in flags) or "-"
    return f"{name} [{present}] isa={onednn_isa()}"


def cache_key(settings: ComputeSettings, model: str, task: str) -> str:
    import torch

    # The rule is part of the key: a choice made under a looser rule is measured again.
    return " | ".join(
        [
            cpu_identity(),
            f"torch {torch.__version__}",
            f"threads {settings.num_threads}",
            f"batch {settings.batch_size}",
            model,
            task,
            f"TV <= {TV_ALLOWED_ON_SAMPLE} on the sample",
            f"scorer {SCORER_REVISION}",
        ]
    )


def _read_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def cached_choice(settings: ComputeSettings, model: str, task: str, cache_dir: str | os.PathLike) -> str | None:
    """The precision the calibration chose for ``task`` on this machine, if it has measured it."""
    record = _read_cache(Path(cache_dir) / CACHE_FILE).get(cache_key(settings, model, task))
    choice = record.get("choice") if isinstance(record, dict) else None
    return choice if choice in CANDIDATES else None


# The clock every timing here reads (a test puts a virtual one in its place: a busy loop timed
# on a loaded machine is not what a test may depend on, issue 41).
clock: Callable[[], float] = time.perf_counter


def best_seconds(call: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` timed calls of ``call``, after one untimed warm-up call."""
    call()
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        call()
        best = min(best, clock() - start)
    return max(best, 1e-9)


def _write_cache(path: Path, key: str, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = _read_cache(path)
    data[key] = record
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True))
    partial.replace(path)


def measure(
    score: Scorer,
    settings: ComputeSettings,
    prompts: Sequence[str],
    count_tokens: Callable[[Sequence[str]], int],
    candidates: Sequence[str] = CANDIDATES,
) -> Calibration:
    """Time ``score`` on ``prompts``, one batch at a time, in each candidate precision (after
    a one-prompt warm-up) and compare each one's distributions with fp32's. A candidate under
    ``GIVE_UP_BELOW`` of fp32's rate after a batch cannot win and is not measured further
    (bf16 without native support ran at a quarter of fp32's rate: 200 s of a 260 s calibration)."""
    step = max(1, settings.batch_size)
    batches = [list(prompts[i : i + step]) for i in range(0, len(prompts), step)]
    rates: dict[str, float] = {}
    results: dict[str, np.ndarray] = {}
    for dtype in ("float32", *[c for c in candidates if c != "float32"]):
        trial = replace(settings, dtype=dtype)
        # First calls load kernels and allocate; one prompt does it (a batch of bf16 emulated on
        # AVX2 took a minute).
        score(trial, batches[0][:1])
        rows, tokens, elapsed = [], 0, 0.0
        for batch in batches:
            start = clock()
            rows.append(np.asarray(score(trial, batch), dtype=float))
            elapsed += clock() - start
            tokens += count_tokens(batch)
            if dtype != "float32" and tokens / max(elapsed, 1e-9) < GIVE_UP_BELOW * rates["float32"]:
                break
        results[dtype] = np.vstack(rows)
        rates[dtype] = tokens / max(elapsed, 1e-9)
    reference = results["float32"]
    tv = {d: float(0.5 * np.abs(p - reference[: len(p)]).sum(axis=1).max()) for d, p in results.items()}
    allowed = [d for d in rates if d == "float32" or tv[d] <= TV_ALLOWED_ON_SAMPLE]
    choice = max(allowed, key=lambda d: rates[d])
    return Calibration(choice, rates, tv, len(prompts), measured=True)


def calibrated_settings(
    settings: ComputeSettings,
    score: Scorer,
    prompts: Sequence[str],
    count_tokens: Callable[[Sequence[str]], int],
    *,
    model: str,
    task: str,
    cache_dir: str | os.PathLike,
    log: Callable[[str], None] | None = None,
) -> tuple[ComputeSettings, Calibration | None]:
    """``settings`` with the measured dtype where the resource left it to measurement
    (``settings.calibrate``), and the calibration (None when nothing was measured or cached).

    On CUDA, dtype auto scores in fp32: on an H100 bf16 put the default graph's label
    distributions up to 0.0155 TV from CPU fp32, past the limit, for a few seconds saved."""
    if settings.dtype_auto and settings.device.startswith("cuda") and settings.dtype != "float32":
        if log is not None:
            log(
                f"{model} ({task}): CUDA precision fp32 (bf16 moved label distributions past the {TV_LIMIT} "
                "total-variation limit on an H100; compute.dtype: bfloat16 asks for it anyway)"
            )
        return replace(settings, dtype="float32", dtype_auto=False), None
    if not settings.calibrate or len(prompts) < MIN_PROMPTS:
        return settings, None
    path = Path(cache_dir) / CACHE_FILE
    key = cache_key(settings, model, task)
    record = _read_cache(path).get(key)
    if isinstance(record, dict) and record.get("choice") in CANDIDATES:
        found = Calibration(**{**record, "measured": False})
    else:
        sample = list(prompts[:SAMPLE_PROMPTS])
        found = measure(score, settings, sample, count_tokens)
        _write_cache(path, key, {k: v for k, v in asdict(found).items() if k != "measured"})
    if log is not None:
        log(f"{model} ({task}): CPU precision {found.summary()}")
    return replace(settings, dtype=found.choice, calibrate=False), found


_matmul_rates: dict[tuple, dict[str, float]] = {}


def matmul_rates(
    settings: ComputeSettings, shape: tuple[int, int, int] = ENCODER_MATMUL, candidates: Sequence[str] = CANDIDATES
) -> dict[str, float]:
    """GFLOP/s of one ``shape`` matrix product in each candidate precision, run as the encoders
    run it (fp32 weights, autocast for the 16-bit candidates); the best of 3 after a warm-up.
    Measured once per process, device, thread count and shape (~0.3 s on a 2-core CPU)."""
    import torch

    key = (settings.device, settings.num_threads, shape, tuple(candidates))
    if key not in _matmul_rates:
        settings.apply()
        rows, inputs, outputs = shape
        x = torch.randn(rows, inputs, device=settings.device)
        weight = torch.nn.Parameter(torch.randn(outputs, inputs, device=settings.device) / inputs**0.5)
        rates = {}
        with torch.no_grad():
            for dtype in candidates:
                with replace(settings, dtype=dtype).autocast_context():
                    best = best_seconds(lambda: torch.nn.functional.linear(x, weight))
                rates[dtype] = 2 * rows * inputs * outputs / best / 1e9
        _matmul_rates[key] = rates
    return _matmul_rates[key]


def encoder_settings(settings: ComputeSettings, rates: dict[str, float] | None = None) -> ComputeSettings:
    """``settings`` for an encoder (fine-tuning, classification, embeddings). Where the resource
    left the CPU precision to measurement (``settings.calibrate``), bf16 autocast only when its
    matrix product is at least ``ENCODER_BF16_GAIN`` x fp32's on this machine, else fp32: on a
    Xeon with AVX512-BF16 but no AMX, bf16 ran at 170 GFLOP/s against fp32's 300, and a
    fine-tuning step took 2.96 s against 2.63. Explicit dtypes and GPUs keep theirs."""
    if not settings.calibrate:
        return settings
    rates = rates if rates is not None else matmul_rates(settings)
    faster = rates.get("bfloat16", 0.0) >= ENCODER_BF16_GAIN * rates["float32"]
    return replace(settings, dtype="bfloat16" if faster else "float32", calibrate=False)
