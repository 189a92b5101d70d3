"""The banded CPU attention equals masked attention, alone and inside the scorer."""

import numpy as np
import pytest

from resumebias_dagster.core.models import band_attention, local_llm
from resumebias_dagster.core.models.band_attention import causal_band_attention
from resumebias_dagster.core.models.compute import ComputeSettings

torch = pytest.importorskip("torch")
F = torch.nn.functional

CPU = ComputeSettings(device="cpu", dtype="float32", num_threads=0, batch_size=3)


def masked_reference(query, key, value, window=None, softcap=None):
    """Every query against every key, then masked: query i at key slot Lk - Lq + i sees slot j
    when j <= it and (with a window) it - j < window."""
    heads, kv_heads, q_len, k_len = query.shape[1], key.shape[1], query.shape[2], key.shape[2]
    key = key.repeat_interleave(heads // kv_heads, dim=1)
    value = value.repeat_interleave(heads // kv_heads, dim=1)
    q_slot = torch.arange(k_len - q_len, k_len)[:, None]
    k_slot = torch.arange(k_len)[None, :]
    visible = k_slot <= q_slot
    if window is not None:
        visible &= (q_slot - k_slot) < window
    scores = query @ key.transpose(-1, -2) * query.shape[-1] ** -0.5
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    scores = scores.masked_fill(~visible, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ value).transpose(1, 2)


@pytest.mark.parametrize(
    ("q_len", "k_len", "window", "softcap"),
    [
        (40, 40, None, None),  # full attention, no prefix
        (40, 40, 8, None),  # sliding window shorter than the text
        (20, 50, None, None),  # a cached prefix of 30 positions
        (20, 50, 16, None),  # a prefix longer than the window
        (1, 25, 8, 30.0),  # one query (the follow token) with a logit cap
    ],
)
def test_band_equals_masked_attention(monkeypatch, q_len, k_len, window, softcap):
    monkeypatch.setattr(band_attention, "QUERY_BLOCK", 7)  # several blocks, the last one partial
    gen = torch.Generator().manual_seed(0)
    query = torch.randn(2, 4, q_len, 16, generator=gen)
    key = torch.randn(2, 2, k_len, 16, generator=gen)
    value = torch.randn(2, 2, k_len, 16, generator=gen)
    got, weights = causal_band_attention(
        None, query, key, value, None, scaling=16**-0.5, sliding_window=window, softcap=softcap
    )
    assert weights is None
    assert got.shape == (2, q_len, 4, 16)
    torch.testing.assert_close(got, masked_reference(query, key, value, window, softcap), rtol=1e-5, atol=1e-5)


def test_attention_it_does_not_compute_is_refused_by_name():
    q = torch.zeros(1, 2, 3, 4)
    with pytest.raises(NotImplementedError, match="'s_aux' is not supported"):
        causal_band_attention(None, q, q, q, None, s_aux=torch.zeros(2))
    with pytest.raises(NotImplementedError, match="dropout is for training"):
        causal_band_attention(None, q, q, q, None, dropout=0.1)


# --------------------------------------------------------------------------- inside the scorer

WORDS = [
    "the",
    "candidate",
    "led",
    "a",
    "team",
    "of",
    "engineers",
    "and",
    "shipped",
    "payments",
    "on",
    "time",
    "junior",
    "mid",
    "senior",
    "python",
    "sql",
    "managed",
    "five",
    "interns",
    "for",
    "years",
    "two",
]


@pytest.fixture(scope="module")
def tiny_gemma():
    """A real Gemma 3 decoder, 4 layers of which 3 slide over 16 positions, random weights, and a
    real word-level tokenizer: small enough to run in a second, shaped like the embedded model."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[PAD]": 0, "[UNK]": 1, "[BOS]": 2, **{w: i + 3 for i, w in enumerate(WORDS)}}
    raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="[PAD]", unk_token="[UNK]")
    config = transformers.Gemma3TextConfig(
        vocab_size=64,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=16,
        sliding_window=16,
        max_position_embeddings=512,
        layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
    )
    torch.manual_seed(0)
    model = transformers.Gemma3ForCausalLM(config).eval()
    model.set_attn_implementation("sdpa")
    return model, tokenizer


def _prompts():
    rng = np.random.default_rng(1)
    opening = " ".join(rng.choice(WORDS, 70))  # over MIN_SHARED_PREFIX: computed once and cached
    groups = [" ".join(rng.choice(WORDS, 30)) for _ in range(2)]  # each shared by a group of variants
    return [f"{opening} {groups[i % 2]} " + " ".join(rng.choice(WORDS, 3 + 5 * i)) for i in range(7)]


def test_scoring_with_the_band_equals_scoring_with_sdpa(tiny_gemma, monkeypatch):
    model, tokenizer = tiny_gemma
    prompts = _prompts()
    ids = [tokenizer.convert_tokens_to_ids(w) for w in ("junior", "mid", "senior")]
    assert band_attention.supported(model, "cpu")
    calls = []
    real = band_attention.causal_band_attention
    monkeypatch.setattr(band_attention, "causal_band_attention", lambda *a, **k: calls.append(1) or real(*a, **k))
    band, band_follow = local_llm.next_token_probs(model, tokenizer, prompts, ids, CPU, follow_token=ids[0])
    assert calls, "the scorer did not use the band attention"
    assert model.config._attn_implementation == "sdpa", "the model's own attention is restored"
    monkeypatch.setattr(band_attention, "supported", lambda *_: False)
    sdpa, sdpa_follow = local_llm.next_token_probs(model, tokenizer, prompts, ids, CPU, follow_token=ids[0])
    np.testing.assert_allclose(band, sdpa, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(band_follow, sdpa_follow, rtol=1e-5, atol=1e-7)


def test_the_models_attention_is_restored_when_scoring_fails(tiny_gemma):
    model, _ = tiny_gemma
    with pytest.raises(RuntimeError, match="boom"), band_attention.installed(model, "cpu"):
        assert model.config._attn_implementation == band_attention.NAME
        raise RuntimeError("boom")
    assert model.config._attn_implementation == "sdpa"


def test_only_cpu_and_known_decoders_get_the_band(tiny_gemma):
    model, _ = tiny_gemma
    assert not band_attention.supported(model, "cuda:0")


def test_on_cuda_the_scorer_uses_eager_attention_not_the_fused_kernels(tiny_gemma):
    """Measured on an H100 (2026-11-26, torch 2.11, transformers 5.24): with the model's own
    ``sdpa`` attention the scorer moved 4-9 of 360 style-variant prompts of the default graph
    (all over Gemma 3's 512-position sliding window) by a total variation of 0.38-0.87 from CPU
    fp32, in fp32 as in bf16, and flipped a seniority verdict; ``eager`` attention kept every one
    within 0.016 (bf16) of CPU fp32. So scoring on CUDA runs eager, and restores the model's own after."""
    model, _ = tiny_gemma
    for device in ("cuda", "cuda:1"):
        with band_attention.installed(model, device):
            assert model.config._attn_implementation == "eager"
        assert model.config._attn_implementation == "sdpa"

    class Other:
        class config:
            model_type = "gpt_oss"  # attention sinks: not what the band computes

    assert not band_attention.supported(Other(), "cpu")


def test_scores_equal_the_models_own_forward_pass_of_each_prompt_alone(tiny_gemma):
    """The whole CPU scorer (band attention, shared prefixes, right padding, the last layer computed
    only at the scored positions, the vocabulary projection over several batches) against the
    model's own forward pass on each prompt alone."""
    model, tokenizer = tiny_gemma
    prompts = _prompts()
    ids = [tokenizer.convert_tokens_to_ids(w) for w in ("junior", "mid", "senior")]
    got, got_follow = local_llm.next_token_probs(model, tokenizer, prompts, ids, CPU, follow_token=ids[1])
    for i, prompt in enumerate(prompts):
        tokens = tokenizer(prompt, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            logits = model(torch.cat([tokens, torch.tensor([[ids[1]]])], dim=1)).logits[0, -2:].float()
        probs = torch.softmax(logits, dim=-1)[:, ids].double().numpy()
        np.testing.assert_allclose(got[i], probs[0], rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(got_follow[i], probs[1], rtol=1e-5, atol=1e-8)


def test_a_transformers_that_cannot_switch_attention_keeps_its_own():
    class Older:
        class config:
            model_type = "gemma3_text"
            _attn_implementation = "sdpa"

    model = Older()
    with band_attention.installed(model, "cpu"):
        assert model.config._attn_implementation == "sdpa"
