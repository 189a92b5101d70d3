"""How fast the default graph's embedded-LLM work could possibly run on this CPU.

The LLM's work is fixed by the study: every seniority variant and every fit prompt of every job
description of the design (catalog/fit_design.yaml), less what the scorer shares between prompts (``prefixes.computed_spans``, the plan
it follows). This script counts that work in FLOPs (the decoder's linear layers at every computed
position, its attention over the keys each position sees; the vocabulary projection, at one
position per prompt, apart), times the decoder's matrix products in each precision here, and
prints the floor: the seconds that work takes if every FLOP ran at the fastest matrix-product
rate. Then it scores a sample of seniority prompts with the real scorer and says what fraction
of that rate it reaches, and what the default graph's LLM time is at that fraction.

Nothing here is a target; it says whether one is reachable. `bench_default_graph.py` measures the
whole graph.

Run: python benchmarks/bench_cpu_ceiling.py [--sample 16] [--threads 0]
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt, seniority_prompt
from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.jd_audit.fit_task import local_fit_prompts
from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template, load_job_descriptions
from resumebias_dagster.core.jd_audit.probes.variants import probe_variants, select_probe_resumes
from resumebias_dagster.core.models import local_llm, prefixes
from resumebias_dagster.core.models.calibration import cpu_identity, matmul_rates
from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.local_llm import DEFAULT_LOCAL_LLM, load_causal_lm, score_labels_with_mass
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.names import name_variants
from resumebias_dagster.core.seniority.style import style_variants
from resumebias_dagster.core.seniority.task import variant_table

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 15 * 60
# The default graph's inputs (the assets' config defaults).
N_PER_LEVEL, SEED = 40, 0


def decoder_shape(model) -> tuple[float, list[int | None], int]:
    """(linear FLOPs per position in the decoder layers, each layer's attention window or None,
    query heads x head size): what a position costs apart from its attention span."""
    import torch

    linear = sum(
        2 * m.in_features * m.out_features
        for name, m in model.get_decoder().named_modules()
        if isinstance(m, torch.nn.Linear)
    )
    config = model.config
    kinds = getattr(config, "layer_types", None) or ["full_attention"] * config.num_hidden_layers
    windows = [config.sliding_window if kind == "sliding_attention" else None for kind in kinds]
    width = config.num_attention_heads * getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    return float(linear), windows, width


def work(encoded: list[list[int]], shape) -> tuple[int, float]:
    """(positions computed, FLOPs) of scoring ``encoded`` together, as the scorer shares them."""
    linear, windows, width = shape
    positions, flops = 0, 0.0
    for start, stop in prefixes.computed_spans(encoded, local_llm.MIN_SHARED_PREFIX):
        seen = np.arange(start, stop) + 1  # keys position p attends to in a full layer
        positions += stop - start
        flops += linear * (stop - start)
        for window in windows:  # q.k and weights.v: 2 x 2 FLOPs per head dimension and key
            flops += 4.0 * width * float(np.minimum(seen, window).sum() if window else seen.sum())
    return positions, flops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=16, help="seniority prompts the real scorer times")
    parser.add_argument("--threads", type=int, default=0, help="0: every core")
    parser.add_argument(
        "--llm-seconds",
        type=float,
        help="seniority_predictions + fit_scores seconds as bench_default_graph.py measured them here: "
        "prints their ratio to the floor (issue 29's target: <= 1.15)",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = replace(resolve_compute(num_threads=args.threads), calibrate=False)
    cache = Path(os.environ.get("RESUMEBIAS_MODEL_CACHE", REPO / "data" / "test-cache"))
    model, tokenizer = load_causal_lm(DEFAULT_LOCAL_LLM, cache, settings)
    shape = decoder_shape(model)
    print(f"CPU: {cpu_identity()}, {settings.num_threads} threads")

    # The decoder's widest products, a batch of two ~620-token prompts deep.
    config = model.config
    rates = {}
    for rows, inputs, outputs in [
        (1240, config.hidden_size, config.intermediate_size),
        (1240, config.intermediate_size, config.hidden_size),
    ]:
        for dtype, rate in matmul_rates(
            settings, shape=(rows, inputs, outputs), candidates=("float32", "bfloat16", "float16")
        ).items():
            rates[dtype] = max(rates.get(dtype, 0.0), rate)
    print(
        "matrix products in the decoder's shapes, GFLOP/s (16-bit as autocast over fp32 weights): "
        + ", ".join(f"{d} {r:.0f}" for d, r in rates.items())
    )
    best = max(rates, key=rates.get)
    print(
        f"decoder: {shape[0] / 1e6:.0f} MFLOP per position in linear layers, {len(shape[1])} layers "
        f"(windows {sorted({w or 0 for w in shape[1]})}, 0 = full)"
    )

    base = generate_resumes(n_per_level=N_PER_LEVEL, seed=SEED)
    template = load_prompt(SENIORITY_PROMPT)
    variants = variant_table(style_variants(base, seed=SEED), name_variants(base, seed=SEED))
    seniority = tokenizer([seniority_prompt(t, template) for t in variants["text"]])["input_ids"]
    tasks = {"seniority": [seniority]}
    # The fit audit's design (catalog/fit_design.yaml): its arm against its job descriptions.
    design = load_fit_design()
    probes = probe_variants(select_probe_resumes(base, **design.arm()))
    fit_template = load_fit_template()
    jds = load_job_descriptions()
    tasks["fit"] = [
        tokenizer(local_fit_prompts(probes, jd, fit_template))["input_ids"]
        for jd in jds.loc[jds["jd"].isin(design.job_descriptions), "text"]
    ]

    print(f"\n{'task':<10}{'prompts':>8}{'tokens':>10}{'computed':>10}{'TFLOP':>8}{'floor s':>9}")
    total_floor = 0.0
    for task, calls in tasks.items():
        n = sum(len(c) for c in calls)
        tokens = sum(len(p) for c in calls for p in c)
        computed, flops = map(sum, zip(*(work(c, shape) for c in calls)))
        floor = flops / (rates[best] * 1e9)
        total_floor += floor
        print(f"{task:<10}{n:>8,}{tokens:>10,}{computed:>10,}{flops / 1e12:>8.1f}{floor:>9.0f}")
    print(
        f"floor of the default graph's LLM work at {best}'s {rates[best]:.0f} GFLOP/s: {total_floor:.0f} s "
        f"({total_floor / 60:.1f} min); the whole graph's target is {TARGET_S / 60:.0f} min"
    )

    # What the real scorer reaches of that rate (fp32: the precision within TV 0.01 of itself).
    sample = [seniority_prompt(t, template) for t in variants["text"][: args.sample]]
    fp32 = replace(settings, dtype="float32")
    labels = list(SENIORITY_LEVELS)
    score_labels_with_mass(model, tokenizer, sample[:2], labels, fp32)  # warm-up
    start = time.perf_counter()
    score_labels_with_mass(model, tokenizer, sample, labels, fp32)
    took = time.perf_counter() - start
    _computed, flops = work(tokenizer(sample)["input_ids"], shape)
    efficiency = flops / took / (rates["float32"] * 1e9)
    print(
        f"\nthe scorer in fp32 on {len(sample)} seniority prompts: {flops / took / 1e9:.0f} GFLOP/s, "
        f"{efficiency:.0%} of fp32's matrix-product rate"
    )
    floor32 = total_floor * rates[best] / rates["float32"]
    print(
        f"the default graph's LLM work at that efficiency: {floor32 / efficiency:.0f} s "
        f"({floor32 / efficiency / 60:.1f} min), before fine-tuning, calibration and the other assets; "
        f"ratio to the floor {1 / efficiency:.2f} (the scorer alone, on this sample)"
    )
    if args.llm_seconds:
        print(
            f"ratio of the two LLM assets' measured {args.llm_seconds:.0f} s to the floor of {total_floor:.0f} s: "
            f"{args.llm_seconds / total_floor:.2f} (target <= 1.15)"
        )


if __name__ == "__main__":
    main()
