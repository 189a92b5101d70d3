"""Which torch device, dtype, thread count and batch size a run uses.

The one place that picks a device: every torch code path receives a ``ComputeSettings``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("auto", "float32", "bfloat16", "float16")
CPU_BATCH_SIZE = 2


@dataclass(frozen=True)
class ComputeSettings:
    device: str
    dtype: str
    num_threads: int
    batch_size: int
    # dtype "auto" on a CPU: ``dtype`` is the flag-based guess, and the embedded LLM measures
    # the candidates on its first load instead (core/models/calibration.py).
    calibrate: bool = False
    # dtype "auto" on CUDA: the encoders train in ``dtype`` (bf16), the embedded LLM scores in
    # fp32 (calibration.calibrated_settings says why).
    dtype_auto: bool = False

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    @property
    def autocast(self) -> bool:
        """bf16/fp16 run as autocast over fp32 weights, which keeps the label
        distributions within a few thousandths of fp32 while the matmuls run in 16 bit."""
        return self.dtype != "float32"

    @property
    def device_type(self) -> str:
        """The device without its index ("cuda:1" -> "cuda"), as torch.autocast names it."""
        return self.device.split(":", 1)[0]

    def autocast_context(self):
        """``torch.autocast`` in ``dtype`` on this device, or a no-op context for fp32."""
        import contextlib

        import torch

        if not self.autocast:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device_type, dtype=self.torch_dtype)

    def apply(self) -> None:
        import torch

        if self.num_threads > 0:
            torch.set_num_threads(self.num_threads)


def cpu_supports_bf16(cpuinfo: str | None = None) -> bool:
    """True when the CPU has native bf16 matrix instructions (AVX512-BF16 or AMX)."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.exists() else ""
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
            break
    return bool({"avx512_bf16", "amx_bf16"} & flags)


def resolve_compute(
    device: str = "auto",
    dtype: str = "auto",
    num_threads: int = 0,
    batch_size: int = 0,
    *,
    cuda_available: bool | None = None,
    cuda_bf16: bool | None = None,
    cpu_bf16: bool | None = None,
) -> ComputeSettings:
    """Resolve ``auto`` settings against the hardware (probes injectable for tests)."""
    base = device.split(":", 1)[0]
    if base not in DEVICES:
        raise ValueError(f"compute.device: {device!r} is not one of {', '.join(DEVICES)} (optionally cuda:N)")
    if dtype not in DTYPES:
        raise ValueError(f"compute.dtype: {dtype!r} is not one of {', '.join(DTYPES)}")
    if num_threads < 0 or batch_size < 0:
        raise ValueError("compute.num_threads and compute.batch_size must be >= 0 (0 = automatic)")
    if cuda_available is None or (cuda_bf16 is None and base in ("auto", "cuda")):
        import torch

        if cuda_available is None:
            cuda_available = torch.cuda.is_available()
        if cuda_bf16 is None:
            cuda_bf16 = bool(cuda_available and torch.cuda.is_bf16_supported())
    if base == "auto":
        device = "cuda" if cuda_available else "cpu"
    elif base == "cuda" and not cuda_available:
        raise ValueError(f"compute.device: {device!r} requested but CUDA is not available on this machine")
    on_cuda = device.startswith("cuda")
    calibrate = dtype == "auto" and device == "cpu"
    dtype_auto = dtype == "auto" and on_cuda
    if dtype == "auto":
        if on_cuda:
            dtype = "bfloat16" if cuda_bf16 else "float16"
        else:
            if cpu_bf16 is None:
                cpu_bf16 = cpu_supports_bf16()
            dtype = "bfloat16" if (device == "cpu" and cpu_bf16) else "float32"
    if num_threads == 0 and not on_cuda:
        num_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if batch_size == 0:
        # On a CPU two prompts per pass beat eight (benchmarks/bench_devices.py, 2 cores, seniority
        # prompts): a Xeon with AMX 1,043 against 780 tok/s in bf16, 724 against 620 in fp32;
        # an AVX2 EPYC ~400 against ~340 in fp32. Eight prompts' activations spill out of the
        # caches. A GPU wants far larger batches.
        batch_size = 64 if on_cuda else CPU_BATCH_SIZE
    return ComputeSettings(
        device=device,
        dtype=dtype,
        num_threads=num_threads,
        batch_size=batch_size,
        calibrate=calibrate,
        dtype_auto=dtype_auto,
    )
