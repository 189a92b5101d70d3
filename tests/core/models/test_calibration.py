"""The CPU precision is measured, not read off a flag: fastest within TV 0.01 of fp32, cached
per machine, model and task; the real Gemma scorer at the end."""

import functools
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from resumebias_dagster.core.models import calibration
from resumebias_dagster.core.models.calibration import CACHE_FILE, TV_LIMIT, calibrated_settings, cpu_identity, measure
from resumebias_dagster.core.models.compute import ComputeSettings, resolve_compute

AUTO_CPU = ComputeSettings(device="cpu", dtype="bfloat16", num_threads=2, batch_size=4, calibrate=True)
PROMPTS = [f"prompt {i} " * (i + 1) for i in range(12)]
BASE = np.tile([0.2, 0.5, 0.3], (len(PROMPTS), 1))


class VirtualClock:
    """A clock that moves only when told: the calibration's timings are the scorer's declared
    seconds, whatever the machine's load (busy loops timed on a loaded 2-core machine swapped
    fp32 and bf16 twice, issue 41)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


CLOCK = VirtualClock()


@pytest.fixture(autouse=True)
def virtual_clock(monkeypatch):
    monkeypatch.setattr(calibration, "clock", CLOCK)
    return CLOCK


def scorer(seconds_per_prompt: dict[str, float], shift: dict[str, float] | None = None):
    """Distributions that move by ``shift[dtype]`` of mass and take ``seconds_per_prompt[dtype]``
    of (virtual) time per prompt."""
    calls = []

    def score(settings, prompts):
        calls.append(settings.dtype)
        CLOCK.advance(seconds_per_prompt[settings.dtype] * len(prompts))
        out = BASE[: len(prompts)].copy()
        d = (shift or {}).get(settings.dtype, 0.0)
        out[:, 0] += d
        out[:, 1] -= d
        return out

    score.calls = calls
    return score


def count(prompts):
    return sum(len(p.split()) for p in prompts)


def test_auto_on_a_cpu_asks_for_calibration_and_explicit_settings_do_not():
    assert resolve_compute("cpu", "auto", cuda_available=False, cpu_bf16=True).calibrate
    assert resolve_compute("cpu", "auto", cuda_available=False, cpu_bf16=False).calibrate
    assert not resolve_compute("cpu", "float32", cuda_available=False).calibrate
    assert not resolve_compute("cpu", "bfloat16", cuda_available=False).calibrate
    assert not resolve_compute("auto", "auto", cuda_available=True, cuda_bf16=True).calibrate


def test_the_faster_precision_wins_whichever_the_flags_suggest():
    # bf16 slower than fp32 (a Xeon with AVX512-BF16 and no AMX): fp32, though the flag guess was bf16.
    slow_bf16 = measure(scorer({"float32": 0.002, "bfloat16": 0.004}), AUTO_CPU, PROMPTS, count)
    assert slow_bf16.choice == "float32"
    assert slow_bf16.tokens_per_s["float32"] > slow_bf16.tokens_per_s["bfloat16"]
    fast_bf16 = measure(scorer({"float32": 0.004, "bfloat16": 0.002}), AUTO_CPU, PROMPTS, count)
    assert fast_bf16.choice == "bfloat16" and fast_bf16.max_tv == {"float32": 0.0, "bfloat16": 0.0}


def test_a_candidate_far_slower_than_fp32_after_one_batch_is_not_measured_further():
    # bf16 without native support: a quarter of fp32's rate. Warm-up plus one batch, not all three.
    score = scorer({"float32": 0.002, "bfloat16": 0.008})
    found = measure(score, AUTO_CPU, PROMPTS, count)
    assert found.choice == "float32" and found.tokens_per_s["bfloat16"] < 0.5 * found.tokens_per_s["float32"]
    assert score.calls.count("bfloat16") == 2 and score.calls.count("float32") == 1 + len(PROMPTS) // 4
    # Its TV compares the rows it scored with fp32's same rows.
    assert found.max_tv["bfloat16"] == 0.0


def test_a_faster_precision_that_moves_the_distributions_too_far_is_refused():
    found = measure(scorer({"float32": 0.004, "bfloat16": 0.001}, shift={"bfloat16": 0.02}), AUTO_CPU, PROMPTS, count)
    assert found.max_tv["bfloat16"] == pytest.approx(0.02) and found.max_tv["bfloat16"] > TV_LIMIT
    assert found.choice == "float32"


def test_a_precision_at_the_edge_of_the_limit_on_the_sample_is_refused():
    # The sample's largest TV understates the run's: bf16 on a Xeon with AMX showed 0.0100 on the
    # 16 calibration prompts and 0.0109 over 64. Within the limit on the sample is not enough.
    at_edge = measure(
        scorer({"float32": 0.004, "bfloat16": 0.001}, shift={"bfloat16": 0.0095}), AUTO_CPU, PROMPTS, count
    )
    assert at_edge.max_tv["bfloat16"] == pytest.approx(0.0095) and at_edge.max_tv["bfloat16"] <= TV_LIMIT
    assert at_edge.choice == "float32"
    assert "refused" in at_edge.summary() and f"{calibration.TV_ALLOWED_ON_SAMPLE}" in at_edge.summary()
    clear = measure(scorer({"float32": 0.004, "bfloat16": 0.001}, shift={"bfloat16": 0.008}), AUTO_CPU, PROMPTS, count)
    assert clear.choice == "bfloat16"


def test_a_choice_cached_under_another_rule_is_measured_again(monkeypatch):
    key = calibration.cache_key(AUTO_CPU, "m", "seniority")
    monkeypatch.setattr(calibration, "TV_ALLOWED_ON_SAMPLE", 0.01)
    assert calibration.cache_key(AUTO_CPU, "m", "seniority") != key


def test_a_choice_cached_for_an_older_scorer_is_measured_again(monkeypatch):
    key = calibration.cache_key(AUTO_CPU, "m", "seniority")
    monkeypatch.setattr(calibration, "SCORER_REVISION", calibration.SCORER_REVISION - 1)
    assert calibration.cache_key(AUTO_CPU, "m", "seniority") != key


def test_the_choice_is_cached_per_machine_and_measured_again_elsewhere(tmp_path, monkeypatch):
    logged = []
    score = scorer({"float32": 0.003, "bfloat16": 0.001})
    settings, found = calibrated_settings(
        AUTO_CPU, score, PROMPTS, count, model="gemma", task="seniority", cache_dir=tmp_path, log=logged.append
    )
    assert settings.dtype == "bfloat16" and not settings.calibrate and found.measured
    assert "gemma (seniority): CPU precision bfloat16 (measured: float32" in logged[0]
    cached = json.loads((tmp_path / CACHE_FILE).read_text())
    assert len(cached) == 1 and next(iter(cached)).startswith(cpu_identity())
    n_calls = len(score.calls)
    again, found = calibrated_settings(
        AUTO_CPU, score, PROMPTS, count, model="gemma", task="seniority", cache_dir=tmp_path
    )
    assert again.dtype == "bfloat16" and not found.measured and len(score.calls) == n_calls
    # Another task, or oneDNN limited to another instruction set: measured anew.
    calibrated_settings(AUTO_CPU, score, PROMPTS, count, model="gemma", task="fit", cache_dir=tmp_path)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
    calibrated_settings(AUTO_CPU, score, PROMPTS, count, model="gemma", task="seniority", cache_dir=tmp_path)
    assert len(json.loads((tmp_path / CACHE_FILE).read_text())) == 3


def test_the_cached_choice_is_read_back_per_task_and_a_bad_record_is_none(tmp_path):
    """What `bench_cpu_ceiling.py` reads to price each task's floor in its chosen precision."""
    assert calibration.cached_choice(AUTO_CPU, "gemma", "seniority", tmp_path) is None  # no file yet
    score = scorer({"float32": 0.003, "bfloat16": 0.001})
    calibrated_settings(AUTO_CPU, score, PROMPTS, count, model="gemma", task="seniority", cache_dir=tmp_path)
    assert calibration.cached_choice(AUTO_CPU, "gemma", "seniority", tmp_path) == "bfloat16"
    assert calibration.cached_choice(AUTO_CPU, "gemma", "fit", tmp_path) is None
    key = next(iter(json.loads((tmp_path / CACHE_FILE).read_text())))
    (tmp_path / CACHE_FILE).write_text(json.dumps({key: {"choice": "int4"}}))
    assert calibration.cached_choice(AUTO_CPU, "gemma", "seniority", tmp_path) is None


def test_best_seconds_warms_up_once_and_keeps_the_fastest_call():
    durations = iter([0.05, 0.03, 0.001, 0.02])  # the warm-up's is never counted
    calls = []

    def call():
        calls.append(1)
        CLOCK.advance(next(durations))

    best = calibration.best_seconds(call, repeats=3)
    assert len(calls) == 4
    assert best == pytest.approx(0.001)


def test_a_damaged_cache_is_measured_over_not_trusted(tmp_path):
    (tmp_path / CACHE_FILE).write_text("{not json")
    settings, found = calibrated_settings(
        AUTO_CPU,
        scorer({"float32": 0.001, "bfloat16": 0.003}),
        PROMPTS,
        count,
        model="gemma",
        task="seniority",
        cache_dir=tmp_path,
    )
    assert settings.dtype == "float32" and found.measured
    key = next(iter(json.loads((tmp_path / CACHE_FILE).read_text())))
    (tmp_path / CACHE_FILE).write_text(json.dumps({key: {"choice": "int4"}}))
    assert calibrated_settings(
        AUTO_CPU,
        scorer({"float32": 0.001, "bfloat16": 0.003}),
        PROMPTS,
        count,
        model="gemma",
        task="seniority",
        cache_dir=tmp_path,
    )[1].measured


def test_explicit_dtypes_and_tiny_runs_are_not_calibrated(tmp_path):
    score = scorer({"float32": 0.001, "bfloat16": 0.001})
    explicit = replace(AUTO_CPU, calibrate=False)
    assert calibrated_settings(explicit, score, PROMPTS, count, model="m", task="t", cache_dir=tmp_path) == (
        explicit,
        None,
    )
    few = PROMPTS[: calibration.MIN_PROMPTS - 1]
    assert calibrated_settings(AUTO_CPU, score, few, count, model="m", task="t", cache_dir=tmp_path) == (AUTO_CPU, None)
    assert score.calls == [] and not (tmp_path / CACHE_FILE).exists()


def test_cpu_identity_names_the_model_and_the_precision_flags(monkeypatch):
    info = (
        "processor : 0\nmodel name : Intel(R) Xeon(R) Platinum 8488C\nflags : fpu avx2 avx512f avx512_bf16 amx_bf16\n"
    )
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    assert cpu_identity(info) == "Intel(R) Xeon(R) Platinum 8488C [avx2+avx512f+avx512_bf16+amx_bf16] isa=default"


def test_an_encoder_keeps_bf16_only_where_its_matrix_product_is_clearly_faster():
    encoder = calibration.encoder_settings
    # A Xeon with AVX512-BF16 but no AMX: bf16 autocast at 170 GFLOP/s against fp32's 300.
    assert encoder(AUTO_CPU, {"float32": 300.0, "bfloat16": 170.0}) == replace(
        AUTO_CPU, dtype="float32", calibrate=False
    )
    assert encoder(AUTO_CPU, {"float32": 300.0, "bfloat16": 1200.0}).dtype == "bfloat16"  # AMX
    assert encoder(AUTO_CPU, {"float32": 300.0, "bfloat16": 360.0}).dtype == "float32"  # within the margin
    # An explicit dtype (or a GPU, which never calibrates) is the user's, measured or not.
    explicit = replace(AUTO_CPU, calibrate=False)
    assert encoder(explicit, {"float32": 300.0, "bfloat16": 170.0}) is explicit


def test_matrix_product_rates_are_measured_once_per_process(monkeypatch):
    import torch

    monkeypatch.setattr(calibration, "_matmul_rates", {})
    settings = replace(AUTO_CPU, num_threads=1)
    rates = calibration.matmul_rates(settings, shape=(64, 32, 48))
    assert set(rates) == {"float32", "bfloat16"} and min(rates.values()) > 0

    def no_more(*args, **kwargs):
        raise AssertionError("measured again")

    monkeypatch.setattr(torch.nn.functional, "linear", no_more)
    assert calibration.matmul_rates(settings, shape=(64, 32, 48)) is rates
    with pytest.raises(AssertionError, match="measured again"):
        calibration.matmul_rates(settings, shape=(64, 32, 16))


def test_embeddings_use_the_measured_encoder_precision(monkeypatch):
    from resumebias_dagster.core.models.embedding import DEFAULT_EMBEDDING_MODEL, embed_texts
    from resumebias_dagster.core.models.model_sources import resolve_model_source

    source = resolve_model_source(DEFAULT_EMBEDDING_MODEL)
    texts = ["Senior engineer who led a platform team of twelve.", "Junior analyst, one year of SQL reports."]
    fp32 = embed_texts(texts, source, replace(AUTO_CPU, dtype="float32", calibrate=False))
    bf16 = embed_texts(texts, source, replace(AUTO_CPU, calibrate=False))
    assert not np.array_equal(fp32, bf16)
    monkeypatch.setattr(calibration, "matmul_rates", lambda settings: {"float32": 300.0, "bfloat16": 170.0})
    np.testing.assert_array_equal(embed_texts(texts, source, AUTO_CPU), fp32)
    monkeypatch.setattr(calibration, "matmul_rates", lambda settings: {"float32": 300.0, "bfloat16": 1200.0})
    np.testing.assert_array_equal(embed_texts(texts, source, AUTO_CPU), bf16)


@pytest.mark.slow
def test_gemma_calibration_keeps_the_distributions_within_the_limit(tmp_path):
    from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
    from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt, seniority_prompt
    from resumebias_dagster.core.models.local_llm import (
        DEFAULT_LOCAL_LLM,
        count_prompt_tokens,
        load_causal_lm,
        score_labels_with_mass,
    )
    from resumebias_dagster.core.seniority.generation import generate_resumes

    cache = Path(__file__).resolve().parents[3] / "data" / "test-cache"
    settings = resolve_compute("cpu", "auto", batch_size=4)
    model, tokenizer = load_causal_lm(DEFAULT_LOCAL_LLM, cache, settings)
    template = load_prompt(SENIORITY_PROMPT)
    prompts = [seniority_prompt(t, template) for t in generate_resumes(n_per_level=3, seed=0)["text"]]
    labels = list(SENIORITY_LEVELS)

    def score(st, ps):
        return score_labels_with_mass(model, tokenizer, ps, labels, st)[0]

    chosen, found = calibrated_settings(
        settings,
        score,
        prompts,
        functools.partial(count_prompt_tokens, tokenizer),
        model=DEFAULT_LOCAL_LLM,
        task="seniority",
        cache_dir=tmp_path,
    )
    assert found.measured and chosen.dtype == found.choice
    assert found.max_tv[found.choice] <= TV_LIMIT and set(found.tokens_per_s) == {"float32", "bfloat16"}
    # The chosen precision reproduces fp32's distributions within the limit on every prompt.
    tv = 0.5 * np.abs(score(chosen, prompts) - score(replace(chosen, dtype="float32"), prompts)).sum(axis=1)
    assert tv.max() <= TV_LIMIT


def test_on_cuda_the_embedded_llm_scores_in_fp32_unless_told_otherwise(tmp_path):
    """An H100 (2026-11-26) put bf16's label distributions up to 0.0155 TV from CPU fp32 on the
    default graph's style prompts, past the 0.01 limit, at 1.2-1.5x fp32's speed on a 15-second
    asset: dtype auto scores in fp32 on CUDA (the encoders keep bf16), an explicit dtype is kept."""
    auto = resolve_compute("cuda", "auto", cuda_available=True, cuda_bf16=True)
    assert auto.dtype == "bfloat16"  # what the encoders train in
    score = scorer({"float32": 0.0, "bfloat16": 0.0})
    lines = []
    chosen, found = calibrated_settings(
        auto, score, PROMPTS, count, model="m", task="t", cache_dir=tmp_path, log=lines.append
    )
    assert chosen.dtype == "float32" and found is None and score.calls == []
    assert lines and "fp32" in lines[0] and "0.01" in lines[0]
    explicit = resolve_compute("cuda", "bfloat16", cuda_available=True, cuda_bf16=True)
    assert calibrated_settings(explicit, score, PROMPTS, count, model="m", task="t", cache_dir=tmp_path)[0] == explicit
