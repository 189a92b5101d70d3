"""How far two fine-tunings of the default classifier differ when only their randomness differs.

Fine-tunes the packaged `fine-tuned` entry of models.yaml (MiniLM) on the default graph's
training set once per seed (`training.seed` sets the held-out split, the new head's initial
weights, the order of the batches and dropout's masks), labels the default graph's 840 seniority
variants with each, and prints per seed the held-out accuracy, the accuracy on the variants and
the seniority bias summary's figures, then their spread (mean, SD, min-max).

That spread is the tolerance between fine-tunings: another machine (CUDA's random stream and
bf16 autocast), another dropout generator or another torch changes only this randomness, so its
classifier counts as the same result when its figures fall within the range of the seeds
(docs/performance.md records it). Nothing here is a timing target; it prints seconds per seed.

Run: python benchmarks/bench_finetune_spread.py [--seeds 0 1 2 3 4] [--dtype auto]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from resumebias_dagster.core.models.calibration import cpu_identity
from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.finetune import FineTuneConfig, train_classifier
from resumebias_dagster.core.models.model_config import load_models, models_of_kind
from resumebias_dagster.core.models.runtime import ModelRuntime, TrainedClassifier
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.seniority.metrics import bias_summary
from resumebias_dagster.core.seniority.names import name_variants
from resumebias_dagster.core.seniority.style import style_variants
from resumebias_dagster.core.seniority.task import predict_seniority, variant_table

# The default graph's inputs (the assets' config defaults).
N_PER_LEVEL, SEED, TRAIN_PER_LEVEL, TRAIN_SEED = 40, 0, 128, 1000
FIGURES = ("inconsistency_rate", "racial_bias", "gender_bias", "extreme_bias")


def one_seed(spec, train, variants, settings, seed: int, folder: Path) -> dict:
    config = FineTuneConfig(base_model=spec.option("base_model"), **{**(spec.option("training") or {}), "seed": seed})
    started = time.perf_counter()
    metrics = train_classifier(train, config, settings, folder, log=lambda _m: None)
    took = time.perf_counter() - started
    trained = {spec.name: TrainedClassifier(str(folder), fingerprint=f"seed{seed}")}
    runtime = ModelRuntime(resolve_compute=lambda: settings, cache_dir=folder, classifiers=trained)
    predictions, _ = predict_seniority(spec, variants, runtime, "{resume}")
    row = {
        "seed": seed,
        "seconds": took,
        "heldout_accuracy": metrics["heldout_accuracy"],
        "variant_accuracy": float((predictions["prediction"] == predictions["true_seniority"]).mean()),
    }
    summary = bias_summary(predictions)
    for _, figures in summary.iterrows():
        for figure in FIGURES:
            if figure in summary.columns and pd.notna(figures[figure]):
                row[f"{figures['variant_kind']}:{figure}"] = float(figures[figure])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2, 3, 4])
    parser.add_argument("--dtype", default="auto", help="compute dtype (auto: as a run picks it)")
    parser.add_argument("--threads", type=int, default=0, help="0: every core")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    settings = replace(resolve_compute(dtype=args.dtype, num_threads=args.threads), calibrate=False)
    spec = models_of_kind(load_models(), "fine-tuned")[0]
    base = generate_resumes(n_per_level=N_PER_LEVEL, seed=SEED)
    train = generate_resumes(
        n_per_level=TRAIN_PER_LEVEL, seed=TRAIN_SEED, exclude_people=frozenset(base["name"]), id_prefix="t"
    )
    variants = variant_table(style_variants(base, seed=SEED), name_variants(base, seed=SEED))
    print(f"CPU: {cpu_identity()}, {settings.num_threads} threads, {settings.device}/{settings.dtype}")
    print(f"{spec.name}: {len(train)} training résumés, {len(variants)} variants labelled, seeds {args.seeds}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-spread-") as tmp:
        for seed in args.seeds:
            rows.append(one_seed(spec, train, variants, settings, seed, Path(tmp) / f"seed{seed}"))
            print(", ".join(f"{k} {v:.4g}" for k, v in rows[-1].items()), flush=True)
    table = pd.DataFrame(rows).set_index("seed").drop(columns="seconds")
    print(f"\n{'figure':<36}{'mean':>9}{'SD':>9}{'min':>9}{'max':>9}")
    for column in table.columns:
        values = table[column].to_numpy(dtype=float)
        print(
            f"{column:<36}{values.mean():>9.4f}{values.std(ddof=1) if len(values) > 1 else np.nan:>9.4f}"
            f"{values.min():>9.4f}{values.max():>9.4f}"
        )


if __name__ == "__main__":
    main()
