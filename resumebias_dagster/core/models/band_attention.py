"""Causal attention for scoring on a CPU that computes only the visible band of each query.

A decoder's attention lets query position i see keys at positions <= i, and in a sliding-window
layer only the last ``window`` of them. torch's CPU attention with a mask computes every query
against every key and then masks: on Gemma 3 270M with ~620-token prompts (15 of its 18 layers
slide over 512 positions) that was 19% of a scoring pass. Here queries go in blocks of
``QUERY_BLOCK`` positions, each against only the keys some query of the block can see, with the
query heads that share a key head stacked into one matrix product; the result equals the masked
attention to float rounding (total variation from it ~4e-6) at 9-11% more prompt tokens/s on a
2-core Xeon (``benchmarks/bench_local_llm.py``).

It needs no mask because of how ``local_llm.next_token_probs`` calls the decoder: the queries
are the last positions of the keys (a cached prefix, if any, comes first) and padding sits on
the right, after each row's text, where causality already hides it from every real token. That
function alone installs it, for the time of one call (``installed``).
"""

from __future__ import annotations

import contextlib

NAME = "resumebias_causal_band"
QUERY_BLOCK = 64  # 32-256 measured; 64 was fastest (less masked work, products still large)
# Decoders whose attention passes no more than a window and a logit cap: the band is exact for them.
MODEL_TYPES = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "llama", "mistral", "qwen2", "qwen3"})
# Arguments that would change attention in ways the band does not compute.
UNSUPPORTED = ("s_aux", "position_bias", "sinks")


def causal_band_attention(
    module,
    query,
    key,
    value,
    attention_mask=None,
    *,
    dropout: float = 0.0,
    scaling: float | None = None,
    sliding_window: int | None = None,
    softcap: float | None = None,
    **kwargs,
):
    """transformers' attention-function signature: query (B, H, Lq, D), key/value (B, Hkv, Lk, D),
    returns ((B, Lq, H, D), None). Query i sits at key slot Lk - Lq + i and sees the key slots j
    with j <= that slot and, with a window W, slot - j < W (transformers' sliding-window rule)."""
    import torch

    for name in UNSUPPORTED:
        if kwargs.get(name) is not None:
            raise NotImplementedError(f"{NAME}: attention with {name!r} is not supported")
    if dropout:
        raise NotImplementedError(f"{NAME}: dropout is for training; this attention scores only")
    batch, heads, q_len, dim = query.shape
    kv_heads, k_len = key.shape[1], key.shape[2]
    group = heads // kv_heads
    offset = k_len - q_len  # key slots before the first query: a cached prefix
    scale = scaling if scaling is not None else dim**-0.5
    out = query.new_empty(batch, q_len, heads, dim)
    stacked = query.view(batch, kv_heads, group, q_len, dim)
    key_slot = torch.arange(k_len, device=query.device)
    for start in range(0, q_len, QUERY_BLOCK):
        stop = min(q_len, start + QUERY_BLOCK)
        rows = stop - start
        last = offset + stop  # one past the last key slot this block can see
        first = 0 if sliding_window is None else max(0, offset + start - sliding_window + 1)
        span = last - first
        q = stacked[:, :, :, start:stop].reshape(batch * kv_heads, group * rows, dim)
        k = key[:, :, first:last].reshape(batch * kv_heads, span, dim)
        v = value[:, :, first:last].reshape(batch * kv_heads, span, dim)
        scores = torch.bmm(q, k.transpose(1, 2)).mul_(scale)
        if softcap is not None:
            scores = torch.tanh(scores / softcap) * softcap
        q_slot = torch.arange(offset + start, offset + stop, device=query.device)[:, None]
        k_slots = key_slot[None, first:last]
        hidden = k_slots > q_slot
        if sliding_window is not None:
            hidden |= (q_slot - k_slots) >= sliding_window
        scores = scores.view(batch * kv_heads, group, rows, span).masked_fill_(hidden, float("-inf"))
        weights = torch.softmax(scores, dim=-1).view(batch * kv_heads, group * rows, span)
        block = torch.bmm(weights, v).view(batch, kv_heads, group, rows, dim)
        out[:, start:stop] = block.permute(0, 3, 1, 2, 4).reshape(batch, rows, heads, dim)
    return out, None


def supported(model, device: str) -> bool:
    """On a CPU, for the decoder families above; elsewhere torch's fused kernels are faster."""
    config = getattr(model, "config", None)
    return device.split(":", 1)[0] == "cpu" and getattr(config, "model_type", None) in MODEL_TYPES


@contextlib.contextmanager
def installed(model, device: str):
    """``model`` uses the band attention inside the block (where supported), its own after.

    On CUDA it uses ``eager`` attention inside the block instead: on an H100 (2026-11-26, torch
    2.11, transformers 5.24) the model's own ``sdpa`` moved 4-9 of the default graph's 360 style
    prompts, all longer than Gemma 3's 512-position window, by a total variation of 0.38-0.87
    from CPU fp32 (in fp32 too), and eager kept all of them within bf16 rounding of it."""
    cuda = device.split(":", 1)[0] == "cuda"
    config = getattr(model, "config", None)
    if not (supported(model, device) or (cuda and getattr(config, "model_type", None) in MODEL_TYPES)):
        yield
        return
    interface = _attention_interface()
    if interface is None or not hasattr(model, "set_attn_implementation"):
        yield  # a transformers without pluggable attention (before 4.48, or 4.5x) keeps its own
        return
    if not cuda:
        interface.register(NAME, causal_band_attention)
    before = model.config._attn_implementation
    model.set_attn_implementation("eager" if cuda else NAME)
    try:
        yield
    finally:
        model.set_attn_implementation(before)


def _attention_interface():
    """transformers' ``AttentionInterface``; None where it has none (before 4.48)."""
    try:
        from transformers import AttentionInterface
    except ImportError:
        return None
    return AttentionInterface
