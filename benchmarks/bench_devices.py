"""The embedded models on another machine: CPU precisions and batch sizes on its cores, the CUDA
path of scoring (label distributions against CPU fp32) and of fine-tuning.

Meant for a machine that has torch and transformers but not this project's other dependencies
(a GPU box, a colleague's Xeon): the prompts and training texts are exported here, where the
whole project is installed, and read there.

    python benchmarks/bench_devices.py --export DIR          # here: DIR/inputs.json
    python benchmarks/bench_devices.py --inputs DIR/inputs.json --source model.gguf \\
        [--cpu] [--cuda] [--train-base FOLDER] [--cache-dir DIR]      # there

--cpu prints prompt tokens/s of the seniority prompts per precision and batch size with each
one's largest total variation (TV) from fp32, then what the calibration (core.models.calibration)
picks on this CPU, and the grouped fit scoring's rate. Pin the cores with taskset to stand for a
smaller machine, and set ONEDNN_MAX_CPU_ISA (e.g. AVX512_CORE_BF16) to stand for a CPU without
AMX. --cuda scores the same prompts on the GPU in bf16 and fp32 and prints rates and TV from CPU
fp32; --train-base fine-tunes that encoder folder on the exported résumés on the GPU.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.local_llm import (
    count_prompt_tokens,
    load_causal_lm,
    score_labels_with_mass,
)

N_SENIORITY = 64


def export(folder: Path) -> None:
    """Seniority prompts, one JD's fit prompts and training résumés, as the graph builds them."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_local_llm import resume_texts

    from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt, seniority_prompt
    from resumebias_dagster.core.jd_audit.fit_task import local_fit_prompts
    from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template, load_job_descriptions
    from resumebias_dagster.core.jd_audit.probes.variants import probe_variants, select_probe_resumes
    from resumebias_dagster.core.seniority.generation import generate_resumes

    template = load_prompt(SENIORITY_PROMPT)
    seniority = [seniority_prompt(t, template) for t in resume_texts(N_SENIORITY, 0)]
    resumes = generate_resumes(n_per_level=40, seed=0)
    jd = load_job_descriptions().iloc[0]
    # Study 003's arm (the study003 preset: 37 prompts), as the numbers recorded in docs/performance.md.
    variants = probe_variants(
        select_probe_resumes(resumes, "software_engineer", ["mid"], 1), catalog_dir="preset:study003"
    )
    fit = local_fit_prompts(variants, jd["text"], load_fit_template())
    train = resumes[["resume_id", "seniority", "text"]].to_dict(orient="list")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "inputs.json").write_text(json.dumps({"seniority": seniority, "fit": fit, "train": train}))
    print(
        f"{folder / 'inputs.json'}: {len(seniority)} seniority prompts, {len(fit)} fit prompts, "
        f"{len(train['text'])} training résumés"
    )


def tv(p: np.ndarray, q: np.ndarray) -> float:
    return float(0.5 * np.abs(p - q).sum(axis=1).max())


def timed(fn, repeats: int):
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def cpu_part(model, tokenizer, source: str, inputs: dict, threads: int, repeats: int, batches: list[int]) -> np.ndarray:
    from resumebias_dagster.core.jd_audit.local_fit import score_distribution
    from resumebias_dagster.core.models.calibration import calibrated_settings, cpu_identity

    prompts, labels = inputs["seniority"], list(SENIORITY_LEVELS)
    n_tokens = count_prompt_tokens(tokenizer, prompts)
    base = resolve_compute(device="cpu", num_threads=threads)
    print(f"CPU: {cpu_identity()}; {base.num_threads} threads; seniority: {len(prompts)} prompts, {n_tokens} tokens")
    reference = None
    print(f"{'dtype':<10}{'batch':>6}{'tok/s':>8}{'max TV':>9}")
    for batch in batches:
        for dtype in ("float32", "bfloat16"):
            st = replace(base, dtype=dtype, batch_size=batch, calibrate=False)
            score_labels_with_mass(model, tokenizer, prompts[:1], labels, st)  # warm-up
            (probs, _mass), took = timed(
                lambda st=st: score_labels_with_mass(model, tokenizer, prompts, labels, st), repeats
            )
            reference = probs if reference is None else reference
            print(f"{dtype:<10}{batch:>6}{n_tokens / took:>8.0f}{tv(probs, reference):>9.4f}", flush=True)

    def score(st, ps):
        return score_labels_with_mass(model, tokenizer, ps, labels, st)[0]

    with tempfile.TemporaryDirectory() as fresh:
        start = time.perf_counter()
        chosen, found = calibrated_settings(
            replace(base, calibrate=True),
            score,
            prompts,
            functools.partial(count_prompt_tokens, tokenizer),
            model=source,
            task="seniority",
            cache_dir=fresh,
        )
        print(f"calibration ({time.perf_counter() - start:.0f} s): {found.summary()}")
    (probs, _mass), took = timed(lambda: score_labels_with_mass(model, tokenizer, prompts, labels, chosen), repeats)
    print(
        f"chosen {chosen.dtype}, batch {chosen.batch_size}: {n_tokens / took:.0f} prompt tok/s over all "
        f"{len(prompts)} prompts, max TV {tv(probs, reference):.4f}"
    )
    fit = inputs["fit"]
    fit_tokens = count_prompt_tokens(tokenizer, fit)
    (fit_probs, _mass), took = timed(lambda: score_distribution(model, tokenizer, fit, chosen), 1)
    print(
        f"fit, one JD ({len(fit)} prompts, {fit_tokens} tokens, grouped prefixes), {chosen.dtype}: {took:.1f} s, "
        f"{fit_tokens / took:.0f} prompt tok/s"
    )
    return reference


def cuda_part(model, tokenizer, inputs: dict, cpu_reference: np.ndarray | None) -> None:
    import torch

    from resumebias_dagster.core.jd_audit.local_fit import score_distribution

    print(f"CUDA: {torch.cuda.get_device_name(0)}")
    prompts, labels = inputs["seniority"], list(SENIORITY_LEVELS)
    n_tokens = count_prompt_tokens(tokenizer, prompts)
    fit = inputs["fit"]
    fit_tokens = count_prompt_tokens(tokenizer, fit)
    if cpu_reference is None:
        # The reference is fp32 on the CPU, on every core this machine has.
        cpu = replace(resolve_compute(device="cpu"), dtype="float32", calibrate=False)
        cpu_reference = score_labels_with_mass(model, tokenizer, prompts, labels, cpu)[0]
    model.to("cuda")
    results = {}
    for dtype in ("float32", "bfloat16"):
        st = replace(resolve_compute(device="cuda"), dtype=dtype)
        score_labels_with_mass(model, tokenizer, prompts[:8], labels, st)
        (probs, mass), took = timed(lambda st=st: score_labels_with_mass(model, tokenizer, prompts, labels, st), 3)
        (fit_probs, _m), fit_took = timed(lambda st=st: score_distribution(model, tokenizer, fit, st), 3)
        results[dtype] = (probs, fit_probs)
        against_cpu = f", max TV from CPU fp32 {tv(probs, cpu_reference):.4f}"
        print(
            f"  {dtype:<9} batch {st.batch_size}: seniority {n_tokens / took:,.0f} tok/s{against_cpu}; "
            f"fit {fit_tokens / fit_took:,.0f} tok/s",
            flush=True,
        )
    print(
        f"  bf16 vs fp32 on the GPU: seniority max TV {tv(results['bfloat16'][0], results['float32'][0]):.4f}, "
        f"fit max TV {tv(results['bfloat16'][1], results['float32'][1]):.4f}"
    )
    model.to("cpu")


def train_part(base: str, inputs: dict) -> None:
    import pandas as pd

    from resumebias_dagster.core.models.finetune import FineTuneConfig, train_classifier

    train = pd.DataFrame(inputs["train"])
    st = resolve_compute(device="cuda")
    with tempfile.TemporaryDirectory() as out:
        metrics = train_classifier(train, FineTuneConfig(base_model=base), st, Path(out) / "clf", log=print)
    print(
        f"fine-tuning on {st.device} ({st.dtype}): {metrics['train_seconds']} s for {metrics['steps']} steps, "
        f"held-out accuracy {metrics['heldout_accuracy']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--export", type=Path, help="write inputs.json into this folder and stop")
    parser.add_argument("--inputs", type=Path)
    parser.add_argument("--source", help="the embedded LLM: a .gguf file, a folder or pypi:<package>")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "resumebias-model-cache")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--n", type=int, default=N_SENIORITY, help="seniority prompts to time")
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 2])
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--cuda", action="store_true")
    parser.add_argument("--train-base", help="an encoder folder to fine-tune on the GPU")
    args = parser.parse_args()
    if args.export:
        export(args.export)
        return
    inputs = json.loads(args.inputs.read_text())
    inputs["seniority"] = inputs["seniority"][: args.n]
    reference = None
    if args.cpu or args.cuda:
        start = time.perf_counter()
        model, tokenizer = load_causal_lm(args.source, args.cache_dir, resolve_compute(device="cpu"))
        print(f"load: {time.perf_counter() - start:.1f} s")
        if args.cpu:
            reference = cpu_part(model, tokenizer, args.source, inputs, args.threads, args.repeats, args.batches)
        if args.cuda:
            cuda_part(model, tokenizer, inputs, reference)
    if args.train_base:
        train_part(args.train_base, inputs)


if __name__ == "__main__":
    main()
