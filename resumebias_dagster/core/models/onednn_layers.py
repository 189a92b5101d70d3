"""A decoder's linear layers on oneDNN for scoring on a CPU, with the MLP's activation and gate
fused into its matrix products.

On a CPU, torch's ``F.linear`` in fp32 calls MKL's sgemm. oneDNN's matrix product (what
``torch.compile`` calls on a CPU, ``torch.ops.mkldnn._linear_pointwise``) ran Gemma 3 270M's
shapes at 1,240 rows 5-13% faster on an AMD EPYC with AVX-512, and it can apply an activation,
or a product with another tensor, to each result before writing it. A gated MLP,
``down(act(gate(x)) * up(x))``, then writes and reads two intermediate tensors fewer: Gemma's MLP
took 55 ms instead of 73 in fp32, 27 instead of 30 in bf16 (``benchmarks/bench_local_llm.py
--layers`` compares whole scoring passes).

The results equal the layers' own to float rounding: oneDNN sums the products in another order,
and in bf16 the activation and the gate are applied to fp32 sums before one rounding instead of
after two. Autocast's policy is kept by hand (``torch.ops.mkldnn`` is outside autocast's lists):
where autocast is on, inputs and weights go in its dtype, as ``F.linear`` under autocast would.
Weights are cast once per block, not once per call.

``local_llm.next_token_probs`` installs it for the time of one scoring call, on a CPU and where
torch has the operator and it runs in the dtype asked for (``installed``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

from .compute import ComputeSettings

# transformers' activation names -> oneDNN's post-op and its algorithm (torch.compile's names).
POST_OPS = {"gelu_pytorch_tanh": ("gelu", "tanh"), "silu": ("swish", "")}


def activation_of(config) -> str | None:
    """The MLP activation a transformers config names (Gemma: ``hidden_activation``)."""
    return getattr(config, "hidden_activation", None) or getattr(config, "hidden_act", None)


@functools.cache
def runs_in(dtype_name: str) -> bool:
    """Whether oneDNN's linear runs here in ``dtype_name`` (bf16 and fp16 need CPU support)."""
    import torch

    op = getattr(getattr(torch.ops, "mkldnn", None), "_linear_pointwise", None)
    if op is None or not torch.backends.mkldnn.is_available():
        return False
    dtype = getattr(torch, dtype_name)
    try:
        with torch.inference_mode():
            x, w = torch.ones(4, 8, dtype=dtype), torch.ones(2, 8, dtype=dtype)
            ok = bool(torch.equal(op(x, w, None, "none", [], "").float(), torch.full((4, 2), 8.0)))
    except (RuntimeError, NotImplementedError):
        return False
    return ok


class _Layers:
    """The cast weights and the forward functions of one installation."""

    def __init__(self, settings: ComputeSettings):
        import torch

        self.torch = torch
        self.op = torch.ops.mkldnn._linear_pointwise
        self.device_type = settings.device_type
        self.cast: dict[tuple[int, object], object] = {}

    def dtype(self, weight):
        torch = self.torch
        if torch.is_autocast_enabled(self.device_type):
            return torch.get_autocast_dtype(self.device_type)
        return weight.dtype

    def param(self, tensor, dtype):
        if tensor is None or tensor.dtype == dtype:
            return tensor
        key = (id(tensor), dtype)
        if key not in self.cast:
            self.cast[key] = tensor.detach().to(dtype)
        return self.cast[key]

    def linear(self, module, x):
        dtype = self.dtype(module.weight)
        rows = x.reshape(-1, x.shape[-1]).to(dtype)
        out = self.op(rows, self.param(module.weight, dtype), self.param(module.bias, dtype), "none", [], "")
        return out.view(*x.shape[:-1], out.shape[-1])

    def gated_mlp(self, mlp, x, post: tuple[str, str]):
        """``down(act(gate(x)) * up(x))``: the activation in the gate's product, the gate in up's."""
        dtype = self.dtype(mlp.gate_proj.weight)
        rows = x.reshape(-1, x.shape[-1]).to(dtype)
        gate = self.op(
            rows, self.param(mlp.gate_proj.weight, dtype), self.param(mlp.gate_proj.bias, dtype), post[0], [], post[1]
        )
        hidden = self.op.binary(
            rows, gate, self.param(mlp.up_proj.weight, dtype), self.param(mlp.up_proj.bias, dtype), "mul"
        )
        return self.linear(mlp.down_proj, hidden.view(*x.shape[:-1], hidden.shape[-1]))


def _is_gated_mlp(module, linear_type) -> bool:
    return all(isinstance(getattr(module, name, None), linear_type) for name in ("gate_proj", "up_proj", "down_proj"))


def supported(model, settings: ComputeSettings) -> bool:
    return settings.device_type == "cpu" and runs_in(settings.dtype) and hasattr(model, "get_decoder")


@contextlib.contextmanager
def installed(model, settings: ComputeSettings) -> Iterator[None]:
    """Inside the block, the decoder's linear layers run on oneDNN and its gated MLPs fused (where
    ``supported``); every module gets its own ``forward`` back on exit, also after an error."""
    if not supported(model, settings):
        yield
        return
    import torch

    layers = _Layers(settings)
    post = POST_OPS.get(activation_of(model.config) or "")
    replaced: list[tuple[object, object]] = []
    fused: set[int] = set()

    def replace_forward(module, forward) -> None:
        replaced.append((module, module.__dict__.get("forward")))
        setattr(module, "forward", forward)  # an instance attribute: hooks still run around it

    # named_modules lists a module before its children: a fused MLP's projections come after it.
    for _name, module in model.get_decoder().named_modules():
        if post is not None and _is_gated_mlp(module, torch.nn.Linear):
            replace_forward(module, functools.partial(layers.gated_mlp, module, post=post))
            fused.update(id(getattr(module, n)) for n in ("gate_proj", "up_proj", "down_proj"))
        elif isinstance(module, torch.nn.Linear) and id(module) not in fused:
            replace_forward(module, functools.partial(layers.linear, module))
    try:
        yield
    finally:
        for module, own in replaced:
            if own is None:
                delattr(module, "forward")
            else:
                setattr(module, "forward", own)
