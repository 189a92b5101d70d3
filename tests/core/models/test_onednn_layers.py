"""The scorer's oneDNN layers (core.models.onednn_layers): the same scores as the models' own layers
to float rounding, autocast's precision policy kept, every module restored."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from resumebias_dagster.core.models import local_llm, onednn_layers
from resumebias_dagster.core.models.compute import resolve_compute

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CPU = resolve_compute("cpu", "float32", num_threads=1)
pytestmark = pytest.mark.skipif(not onednn_layers.runs_in("float32"), reason="torch here has no oneDNN linear")
WORDS = "the a senior junior mid lead engineer led built team years of python data systems managed two five".split()


def _tokenizer():
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[PAD]": 0, "[UNK]": 1, **{w: i + 2 for i, w in enumerate(WORDS)}}
    raw = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    raw.pre_tokenizer = Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="[PAD]", unk_token="[UNK]")


def _model(kind: str, activation: str | None = None):
    """A real decoder of the family, small and with random weights large enough that the MLPs
    move the scores (at the default 0.02 a wrong activation went unnoticed)."""
    torch.manual_seed(0)
    shape = dict(
        vocab_size=32,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=4,
        initializer_range=0.25,
    )
    if kind == "gemma":
        config = transformers.Gemma3TextConfig(
            **shape, num_key_value_heads=1, head_dim=16, sliding_window=16, max_position_embeddings=256
        )
        if activation:
            config.hidden_activation = activation
        model = transformers.Gemma3ForCausalLM(config)
    else:
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**shape, num_key_value_heads=2))
    return model.eval()


def _prompts():
    rng = np.random.default_rng(3)
    opening = " ".join(rng.choice(WORDS, 70))
    return [f"{opening} " + " ".join(rng.choice(WORDS, 4 + 6 * i)) for i in range(6)]


def _score(model, settings, *, onednn: bool, monkeypatch):
    tokenizer = _tokenizer()
    ids = [tokenizer.convert_tokens_to_ids(w) for w in ("junior", "mid", "senior")]
    with monkeypatch.context() as patch:
        if not onednn:
            patch.setattr(onednn_layers, "supported", lambda *_: False)
        probs, _ = local_llm.next_token_probs(model, tokenizer, _prompts(), ids, settings)
    return probs


def _own_forwards(model) -> list[str]:
    return [name for name, m in model.named_modules() if "forward" in m.__dict__]


@pytest.mark.parametrize("kind", ["gemma", "llama"])
def test_fp32_scores_on_onednn_equal_the_models_own_layers(kind, monkeypatch):
    """Gemma's gelu (tanh) and Llama's silu fused into the gate's product, the rest on oneDNN."""
    model = _model(kind)
    fused = []
    real = onednn_layers._Layers.gated_mlp
    monkeypatch.setattr(
        onednn_layers._Layers, "gated_mlp", lambda self, *a, **k: fused.append(1) or real(self, *a, **k)
    )
    got = _score(model, CPU, onednn=True, monkeypatch=monkeypatch)
    assert fused, "the scorer did not run the fused MLP"
    own = _score(model, CPU, onednn=False, monkeypatch=monkeypatch)
    np.testing.assert_allclose(got, own, rtol=2e-5, atol=1e-8)
    assert _own_forwards(model) == [], "every module gets its own forward back"


@pytest.mark.skipif(not onednn_layers.runs_in("bfloat16"), reason="no bf16 oneDNN linear on this CPU")
def test_bf16_keeps_attention_in_fp32_and_rounds_the_mlp_less(monkeypatch):
    """Under bf16 autocast the attention blocks still compute in fp32 (the scorer's precision policy)
    and the MLPs in bf16; fusing the activation and the gate into the products rounds once where
    autocast rounds twice, so the scores move less from fp32 than plain autocast's do."""
    model = _model("gemma")
    bf16 = replace(CPU, dtype="bfloat16")
    seen: dict[str, set] = {"attention": set(), "mlp": set()}
    layer = model.get_decoder().layers[0]
    layer.self_attn.q_proj.register_forward_hook(lambda _m, _a, out: seen["attention"].add(out.dtype))
    layer.mlp.register_forward_hook(lambda _m, _a, out: seen["mlp"].add(out.dtype))
    fused = _score(model, bf16, onednn=True, monkeypatch=monkeypatch)
    assert seen == {"attention": {torch.float32}, "mlp": {torch.bfloat16}}
    plain = _score(model, bf16, onednn=False, monkeypatch=monkeypatch)
    exact = _score(model, CPU, onednn=False, monkeypatch=monkeypatch)
    fused_error, plain_error = np.abs(fused - exact).mean(), np.abs(plain - exact).mean()
    assert 0 < fused_error < plain_error


def test_an_activation_without_a_fused_form_keeps_its_mlp_and_moves_only_the_products(monkeypatch):
    model = _model("gemma", activation="relu")
    assert onednn_layers.POST_OPS.get(onednn_layers.activation_of(model.config)) is None
    calls = []
    monkeypatch.setattr(onednn_layers._Layers, "gated_mlp", lambda *a, **k: calls.append(1))
    linear = []
    real = onednn_layers._Layers.linear
    monkeypatch.setattr(onednn_layers._Layers, "linear", lambda self, *a, **k: linear.append(1) or real(self, *a, **k))
    got = _score(model, CPU, onednn=True, monkeypatch=monkeypatch)
    assert not calls and linear
    np.testing.assert_allclose(got, _score(model, CPU, onednn=False, monkeypatch=monkeypatch), rtol=2e-5, atol=1e-8)


def test_modules_are_restored_when_scoring_fails():
    model = _model("llama")
    with pytest.raises(RuntimeError, match="boom"), onednn_layers.installed(model, CPU):
        assert "forward" in model.get_decoder().layers[0].mlp.__dict__
        assert "forward" in model.get_decoder().layers[0].self_attn.q_proj.__dict__
        raise RuntimeError("boom")
    assert _own_forwards(model) == []


def test_nothing_is_installed_off_the_cpu_or_where_the_dtype_does_not_run(monkeypatch):
    model = _model("llama")
    for settings in (replace(CPU, device="cuda"), replace(CPU, device="mps")):
        with onednn_layers.installed(model, settings):
            assert _own_forwards(model) == []
    monkeypatch.setattr(onednn_layers, "runs_in", lambda dtype: dtype != "float16")
    with onednn_layers.installed(model, replace(CPU, dtype="float16")):
        assert _own_forwards(model) == []


def test_the_probe_says_no_where_torch_has_no_onednn_linear(monkeypatch):
    onednn_layers.runs_in.cache_clear()
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: False)
    try:
        assert onednn_layers.runs_in("float32") is False
    finally:
        onednn_layers.runs_in.cache_clear()
