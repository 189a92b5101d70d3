"""Fit scoring of one job description's probe variants with the embedded Gemma: the time and
the result of each way of sharing work between prompts.

- grouped: the opening every prompt shares (instructions, the JD) computed once, and the
  longer prefix of each group of variants (what lies above a probe's edit) once per group;
- opening only: the shared opening once, every variant's résumé whole;
- nothing shared: every prompt whole (the reference).

Prints seconds, prompt tokens/s (counting every prompt's full length), the tokens actually
computed, and the largest total variation of each from the reference.

Run: python benchmarks/bench_fit_prefix.py [--jd ID] [--dtype float32|bfloat16|auto]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
from _machine import machine_busy_seconds, own_cpu_seconds

from resumebias_dagster.core.jd_audit.fit_task import local_fit_prompts
from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template, load_job_descriptions
from resumebias_dagster.core.jd_audit.local_fit import score_distribution
from resumebias_dagster.core.jd_audit.probes.variants import probe_variants, select_probe_resumes
from resumebias_dagster.core.models import local_llm, prefixes
from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.local_llm import DEFAULT_LOCAL_LLM, load_causal_lm
from resumebias_dagster.core.seniority.generation import generate_resumes

REPO = Path(__file__).resolve().parents[1]


MODES = {
    "grouped": {},
    "opening only": {"prefix_groups": lambda tails, minimum: [(list(range(len(tails))), 0)]},
    "nothing shared": {"sharing_plan": lambda sequences, minimum: (0, [(list(range(len(sequences))), 0)])},
}


def computed_tokens(encoded: list[list[int]], mode: str) -> int:
    """Tokens the scorer computes in ``mode`` (the same plan it follows, patched the same way)."""
    with mock.patch.multiple(prefixes, **MODES[mode]) if MODES[mode] else contextlib.nullcontext():
        return sum(stop - start for start, stop in prefixes.computed_spans(encoded, local_llm.MIN_SHARED_PREFIX))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jd", default=None, help="job description id (default: the first)")
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = resolve_compute(dtype=args.dtype)
    model, tokenizer = load_causal_lm(DEFAULT_LOCAL_LLM, REPO / "data" / "test-cache", settings)
    jds = load_job_descriptions()
    jd = jds[jds["jd"] == args.jd].iloc[0] if args.jd else jds.iloc[0]
    # Study 003's arm (the study003 preset: one mid-level résumé, 37 prompts a JD), as the
    # numbers recorded in docs/performance.md; the default design probes 9 résumés (351 prompts).
    arm = select_probe_resumes(generate_resumes(n_per_level=40, seed=0), "software_engineer", ["mid"], 1)
    variants = probe_variants(arm, catalog_dir="preset:study003")
    prompts = local_fit_prompts(variants, jd["text"], load_fit_template())
    encoded = tokenizer(prompts)["input_ids"]
    n_tokens = sum(map(len, encoded))
    print(
        f"JD {jd['jd']}: {len(prompts)} prompts, {n_tokens:,} tokens; {settings.dtype}, batch {settings.batch_size}, "
        f"{settings.num_threads} threads"
    )
    score_distribution(model, tokenizer, prompts[: settings.batch_size], settings)  # warm-up
    results = {}
    print(f"{'mode':<16}{'seconds':>9}{'tok/s':>9}{'computed':>10}{'max TV':>9}{'others':>8}")
    for mode in ("nothing shared", "opening only", "grouped"):
        with mock.patch.multiple(prefixes, **MODES[mode]) if MODES[mode] else contextlib.nullcontext():
            busy, own, start = machine_busy_seconds(), own_cpu_seconds(), time.perf_counter()
            results[mode], _ = score_distribution(model, tokenizer, prompts, replace(settings))
            took = time.perf_counter() - start
        others = (max(0.0, machine_busy_seconds() - busy - (own_cpu_seconds() - own)) / took) if busy else float("nan")
        tv = float(0.5 * np.abs(results[mode] - results["nothing shared"]).sum(axis=1).max())
        print(
            f"{mode:<16}{took:>9.1f}{n_tokens / took:>9,.0f}{computed_tokens(encoded, mode):>10,}{tv:>9.5f}{others:>8.2f}"
        )


if __name__ == "__main__":
    main()
