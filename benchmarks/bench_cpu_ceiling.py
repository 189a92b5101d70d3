"""How fast the default graph's embedded-LLM work could possibly run on this CPU.

The LLM's work is fixed by the study: every seniority variant and every fit prompt of every job
description of the design (catalog/fit_design.yaml), less what the scorer shares between prompts (``prefixes.computed_spans``, the plan
it follows). This script counts that work in FLOPs (the decoder's linear layers at every computed
position, its attention over the keys each position sees; the vocabulary projection, at one
position per prompt, apart), times the decoder's matrix products in each precision here, and
prints two floors: the seconds that work takes if every FLOP ran at the fastest matrix-product
rate here (torch's own or oneDNN's, which the scorer uses on a CPU, in any precision), and the
floor **within the results' tolerance**: each task's work in the precision the calibration chose
for it on this machine (calibration.json in the model cache, or ``--precision``), with the
attention blocks at fp32's rate, since under 16-bit autocast the scorer keeps them in fp32 (the
only way a 16-bit precision stays within 0.01 total variation of fp32). Then it scores a sample
of seniority prompts with the real scorer in fp32 and says what fraction of fp32's rate it reaches.

Nothing here is a target; it says whether one is reachable. `bench_default_graph.py` measures the
whole graph.

Run: python benchmarks/bench_cpu_ceiling.py [--sample 16] [--threads 0] [--llm-seconds S]
     [--precision seniority=float32 fit=bfloat16]
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
from resumebias_dagster.core.models import local_llm, onednn_layers, prefixes
from resumebias_dagster.core.models.calibration import best_seconds, cached_choice, cpu_identity, matmul_rates
from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.decoder_hooks import ATTENTION_MODULE_SUFFIX
from resumebias_dagster.core.models.local_llm import DEFAULT_LOCAL_LLM, load_causal_lm, score_labels_with_mass
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.names import name_variants
from resumebias_dagster.core.seniority.style import style_variants
from resumebias_dagster.core.seniority.task import variant_table

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 15 * 60
# The default graph's inputs (the assets' config defaults).
N_PER_LEVEL, SEED = 40, 0


def decoder_shape(model) -> tuple[float, float, list[int | None], int]:
    """(linear FLOPs per position in the decoder layers, the part of them in the attention blocks,
    each layer's attention window or None, query heads x head size): what a position costs apart
    from its attention span."""
    import torch

    linear = attention = 0.0
    for name, module in model.get_decoder().named_modules():
        if isinstance(module, torch.nn.Linear):
            flops = 2.0 * module.in_features * module.out_features
            linear += flops
            if ATTENTION_MODULE_SUFFIX in name.split("."):
                attention += flops
    config = model.config
    kinds = getattr(config, "layer_types", None) or ["full_attention"] * config.num_hidden_layers
    windows = [config.sliding_window if kind == "sliding_attention" else None for kind in kinds]
    width = config.num_attention_heads * getattr(config, "head_dim", config.hidden_size // config.num_attention_heads)
    return linear, attention, windows, width


def work(encoded: list[list[int]], shape) -> tuple[int, float, float]:
    """(positions computed, FLOPs, the FLOPs of them in the attention blocks) of scoring ``encoded``
    together, as the scorer shares them."""
    linear, attention_linear, windows, width = shape
    positions, flops, attention = 0, 0.0, 0.0
    for start, stop in prefixes.computed_spans(encoded, local_llm.MIN_SHARED_PREFIX):
        seen = np.arange(start, stop) + 1  # keys position p attends to in a full layer
        positions += stop - start
        flops += linear * (stop - start)
        attention += attention_linear * (stop - start)
        for window in windows:  # q.k and weights.v: 2 x 2 FLOPs per head dimension and key
            scores = 4.0 * width * float(np.minimum(seen, window).sum() if window else seen.sum())
            flops += scores
            attention += scores
    return positions, flops, attention


def onednn_rates(shape: tuple[int, int, int], candidates) -> dict[str, float]:
    """GFLOP/s of oneDNN's product (what the scorer calls on a CPU, ``onednn_layers``) in each
    candidate that runs here, best of 3 after a warm-up."""
    import torch

    rows, inputs, outputs = shape
    rates = {}
    for dtype in candidates:
        if not onednn_layers.runs_in(dtype):
            continue
        x = torch.randn(rows, inputs).to(getattr(torch, dtype))
        weight = (torch.randn(outputs, inputs) / inputs**0.5).to(x.dtype)
        with torch.inference_mode():
            best = best_seconds(lambda: torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [], ""))
        rates[dtype] = 2 * rows * inputs * outputs / best / 1e9
    return rates


def shape_rates(model, candidates) -> dict[str, dict[tuple[int, int], float]]:
    """{dtype: {(in, out): GFLOP/s}}: oneDNN's rate in each distinct linear shape of the decoder,
    a batch of two ~620-token prompts deep, in each candidate that runs here."""
    import torch

    shapes = sorted(
        {(m.in_features, m.out_features) for m in model.get_decoder().modules() if isinstance(m, torch.nn.Linear)}
    )
    found: dict[str, dict[tuple[int, int], float]] = {}
    for i, o in shapes:
        for dtype, rate in onednn_rates((1240, i, o), candidates).items():
            found.setdefault(dtype, {})[(i, o)] = rate
    return found


def chosen_precisions(settings, cache: Path, given: list[str]) -> dict[str, str]:
    """Each task's precision: ``--precision task=dtype``, else the calibration's choice on this
    machine (the model cache's calibration.json), else fp32."""
    chosen = dict(item.split("=", 1) for item in given)
    for task in ("seniority", "fit"):
        if task not in chosen:
            found = cached_choice(settings, DEFAULT_LOCAL_LLM, task, cache)
            if found is None:
                print(f"{task}: no calibration on this machine in {cache}; fp32 assumed (--precision sets it)")
            chosen[task] = found or "float32"
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=16, help="seniority prompts the real scorer times")
    parser.add_argument("--threads", type=int, default=0, help="0: every core")
    parser.add_argument(
        "--precision",
        nargs="*",
        default=[],
        metavar="TASK=DTYPE",
        help="each task's precision (seniority, fit); default: the calibration's choice on this machine",
    )
    parser.add_argument(
        "--llm-seconds",
        type=float,
        help="the embedded LLM's scoring seconds in both tasks, as bench_default_graph.py prints them "
        "(not the assets' seconds, which hold the fine-tuned classifier too): prints their ratio to the floor "
        "(issue 29's target: <= 1.15)",
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
    candidates = ("float32", "bfloat16", "float16")
    widest = [(config.hidden_size, config.intermediate_size), (config.intermediate_size, config.hidden_size)]
    torch_rates: dict[str, float] = {}
    for inputs, outputs in widest:
        for dtype, rate in matmul_rates(settings, shape=(1240, inputs, outputs), candidates=candidates).items():
            torch_rates[dtype] = max(torch_rates.get(dtype, 0.0), rate)
    # oneDNN in every shape (the narrow attention projections too); the floor takes the widest.
    by_shape = shape_rates(model, candidates)
    onednn = {dtype: max(r[s] for s in widest) for dtype, r in by_shape.items()}
    rates = {d: max(torch_rates.get(d, 0.0), onednn.get(d, 0.0)) for d in candidates}
    print(
        "matrix products in the decoder's shapes, GFLOP/s: torch (16-bit as autocast over fp32 weights) "
        + ", ".join(f"{d} {r:.0f}" for d, r in torch_rates.items())
        + "; oneDNN "
        + (", ".join(f"{d} {r:.0f}" for d, r in onednn.items()) or "not here")
    )
    for dtype, measured in by_shape.items():
        print(
            f"oneDNN {dtype} by shape (in x out: GFLOP/s): "
            + ", ".join(f"{i}x{o}: {r:.0f}" for (i, o), r in measured.items())
        )
    best = max(rates, key=rates.get)
    precision = chosen_precisions(settings, cache, args.precision)
    print(
        f"decoder: {shape[0] / 1e6:.0f} MFLOP per position in linear layers ({shape[1] / 1e6:.0f} in attention "
        f"blocks), {len(shape[2])} layers (windows {sorted({w or 0 for w in shape[2]})}, 0 = full); "
        f"precision chosen here: " + ", ".join(f"{t} {d}" for t, d in precision.items())
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

    print(f"\n{'task':<10}{'prompts':>8}{'tokens':>10}{'computed':>10}{'TFLOP':>8}{'floor s':>9}{'in tol. s':>10}")
    total_floor = total_tolerated = 0.0
    for task, calls in tasks.items():
        n = sum(len(c) for c in calls)
        tokens = sum(len(p) for c in calls for p in c)
        computed, flops, attention = map(sum, zip(*(work(c, shape) for c in calls)))
        floor = flops / (rates[best] * 1e9)
        # Within tolerance: 16-bit autocast leaves the attention blocks in fp32.
        tolerated = (flops - attention) / (rates[precision[task]] * 1e9) + attention / (rates["float32"] * 1e9)
        total_floor += floor
        total_tolerated += tolerated
        print(f"{task:<10}{n:>8,}{tokens:>10,}{computed:>10,}{flops / 1e12:>8.1f}{floor:>9.0f}{tolerated:>10.0f}")
    print(
        f"floor of the default graph's LLM work at {best}'s {rates[best]:.0f} GFLOP/s: {total_floor:.0f} s "
        f"({total_floor / 60:.1f} min); within the results' tolerance: {total_tolerated:.0f} s; "
        f"the whole graph's target is {TARGET_S / 60:.0f} min"
    )

    # What the real scorer reaches of that rate (fp32: the precision within TV 0.01 of itself).
    sample = [seniority_prompt(t, template) for t in variants["text"][: args.sample]]
    fp32 = replace(settings, dtype="float32")
    labels = list(SENIORITY_LEVELS)
    score_labels_with_mass(model, tokenizer, sample[:2], labels, fp32)  # warm-up
    start = time.perf_counter()
    score_labels_with_mass(model, tokenizer, sample, labels, fp32)
    took = time.perf_counter() - start
    _computed, flops, _attention = work(tokenizer(sample)["input_ids"], shape)
    efficiency = flops / took / (rates["float32"] * 1e9)
    print(
        f"\nthe scorer in fp32 on {len(sample)} seniority prompts: {flops / took / 1e9:.0f} GFLOP/s, "
        f"{efficiency:.0%} of fp32's matrix-product rate (ratio {1 / efficiency:.2f} to its fp32 floor)"
    )
    if args.llm_seconds:
        print(
            f"ratio of the embedded LLM's measured {args.llm_seconds:.0f} s of scoring to the floor: "
            f"{args.llm_seconds / total_floor:.2f} ({total_floor:.0f} s, every FLOP at the fastest rate); "
            f"{args.llm_seconds / total_tolerated:.2f} ({total_tolerated:.0f} s, within the results' tolerance); "
            "target <= 1.15"
        )


if __name__ == "__main__":
    main()
