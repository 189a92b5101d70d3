"""The seniority task: which texts a model reads, and how its answers become prediction rows.

``predict_seniority`` is the one place that runs the task on a model of any kind: an
embedded LLM (label distribution from next-token probabilities), a fine-tuned classifier or a
Hugging Face classifier of the user's (``kind: hf-classifier``), a provider model or a scoring
endpoint (``kind: http``) through a ``run`` callable (the transport of ``core.providers``), or a
Python function of the user's (``kind: python``, ``core/models/python_scorer.py``).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.common.parsing import parse_label
from resumebias_dagster.core.common.prompts import seniority_prompt
from resumebias_dagster.core.models.model_config import ModelSpec
from resumebias_dagster.core.models.runtime import ModelRuntime, Progress
from resumebias_dagster.core.providers.fanout import Transport
from resumebias_dagster.core.tables import SeniorityPredictions, conform

PROB_COLUMNS = tuple(f"p_{label}" for label in SENIORITY_LEVELS)
VARIANT_COLUMNS = ("variant_kind", "original_idx", "variant", "true_seniority", "name", "text")


def variant_table(style_variants: pd.DataFrame, name_variants: pd.DataFrame) -> pd.DataFrame:
    """Every text the seniority models classify: the style variants, then the name variants."""
    styles = pd.DataFrame(
        {
            "variant_kind": "style",
            "original_idx": style_variants["original_idx"].to_numpy(),
            "variant": style_variants["style"].to_numpy(),
            "true_seniority": style_variants["seniority"].to_numpy(),
            "name": None,
            "text": style_variants["text"].to_numpy(),
        }
    )
    names = pd.DataFrame(
        {
            "variant_kind": "demographic",
            "original_idx": name_variants["original_idx"].to_numpy(),
            "variant": name_variants["demographic"].to_numpy(),
            "true_seniority": name_variants["seniority"].to_numpy(),
            "name": name_variants["name"].to_numpy(),
            "text": name_variants["text"].to_numpy(),
        }
    )
    table = pd.concat([styles, names], ignore_index=True)
    return table.astype({"original_idx": "int64", "name": object})


def rows_from_distributions(
    variants: pd.DataFrame,
    probs: np.ndarray,
    samples: np.ndarray,
    *,
    model: str,
    resolved_model: str,
    latency_s: np.ndarray,
    label_mass: np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per (variant, run): the sampled label plus the distribution it was drawn from.

    ``samples`` holds label indices, shape (n_variants, runs).
    """
    n, runs = samples.shape
    rep = np.repeat(np.arange(n), runs)
    out = pd.DataFrame(
        {
            "variant_kind": variants["variant_kind"].to_numpy()[rep],
            "original_idx": variants["original_idx"].to_numpy()[rep],
            "variant": variants["variant"].to_numpy()[rep],
            "model": model,
            "run": np.tile(np.arange(runs, dtype=np.int64), n),
            "prediction": np.asarray(SENIORITY_LEVELS, dtype=object)[samples.reshape(-1)],
            "true_seniority": variants["true_seniority"].to_numpy()[rep],
            "name": variants["name"].to_numpy()[rep],
            "resolved_model": resolved_model,
            "latency_s": np.asarray(latency_s, dtype=float)[rep],
            "error": None,
        }
    )
    for j, column in enumerate(PROB_COLUMNS):
        out[column] = probs[rep, j]
    out["label_mass"] = np.nan if label_mass is None else np.asarray(label_mass, dtype=float)[rep]
    return out.astype({"error": object, "name": object})


def predict_with_local_llm(
    spec, variants: pd.DataFrame, settings, cache_dir, *, template: str, progress=None, log=None
) -> pd.DataFrame:
    """Score every variant once with an embedded LLM and sample ``runs_per_cell`` labels."""
    import time

    from resumebias_dagster.core.common.prompts import seniority_prompt
    from resumebias_dagster.core.models.calibration import calibrated_settings
    from resumebias_dagster.core.models.local_llm import (
        count_prompt_tokens,
        load_causal_lm,
        sample_labels,
        sampling_seed,
        score_labels_with_mass,
        tempered,
    )
    from resumebias_dagster.core.models.model_sources import resolved_source

    source = spec.option("source")
    model, tokenizer = load_causal_lm(source, cache_dir, settings, setting=f"models.{spec.name}.source")
    prompts = [seniority_prompt(text, template) for text in variants["text"]]
    labels = list(SENIORITY_LEVELS)
    settings, _ = calibrated_settings(
        settings,
        lambda st, ps: score_labels_with_mass(model, tokenizer, ps, labels, st)[0],
        prompts,
        functools.partial(count_prompt_tokens, tokenizer),
        model=source,
        task="seniority",
        cache_dir=cache_dir,
        log=log,
    )
    started = time.perf_counter()
    probs, mass = score_labels_with_mass(model, tokenizer, prompts, labels, settings, progress=progress)
    per_variant = (time.perf_counter() - started) / max(1, len(prompts))
    # Samples and the stored distribution are both at the configured temperature, so the
    # expected-value metrics are the exact expectation of the sampled ones.
    dist = tempered(probs, spec.temperature)
    samples = sample_labels(probs, spec.temperature, spec.runs_per_cell, sampling_seed(spec.name))
    return rows_from_distributions(
        variants,
        dist,
        samples,
        model=spec.name,
        resolved_model=resolved_source(source),
        latency_s=np.full(len(variants), per_variant),
        label_mass=mass,
    )


def predict_with_classifier(spec, variants: pd.DataFrame, settings, model_dir, fingerprint: str) -> pd.DataFrame:
    """Classify every variant once with a fine-tuned classifier and sample ``runs_per_cell`` labels."""
    import time

    from resumebias_dagster.core.models.finetune import classify, load_classifier, trained_metrics

    model, tokenizer = load_classifier(model_dir, settings)
    metrics = trained_metrics(model_dir)
    assert metrics is not None  # load_classifier has refused a classifier that is not finished
    max_length = metrics["config"]["max_length"]
    started = time.perf_counter()
    probs = classify(model, tokenizer, variants["text"].tolist(), settings, max_length)
    per_variant = (time.perf_counter() - started) / max(1, len(variants))
    return sampled_rows(spec, variants, probs, resolved_model=f"{spec.name}@{fingerprint}", per_variant=per_variant)


def sampled_rows(spec, variants: pd.DataFrame, probs: np.ndarray, *, resolved_model: str, per_variant: float):
    """Rows of a classifier that labelled each variant once: ``runs_per_cell`` labels sampled from
    its distribution at the entry's temperature, which ``p_*`` hold."""
    from resumebias_dagster.core.models.local_llm import sample_labels, sampling_seed, tempered

    samples = sample_labels(probs, spec.temperature, spec.runs_per_cell, sampling_seed(spec.name))
    return rows_from_distributions(
        variants,
        tempered(probs, spec.temperature),
        samples,
        model=spec.name,
        resolved_model=resolved_model,
        latency_s=np.full(len(variants), per_variant),
    )


def predict_with_hf_classifier(spec, variants: pd.DataFrame, settings, *, log=None) -> pd.DataFrame:
    """Rows of a Hugging Face classifier of the user's (``kind: hf-classifier``), as a fine-tuned
    classifier's: every variant classified once, ``runs_per_cell`` labels sampled from its
    distribution (``p_*`` hold it at the entry's temperature); ``resolved_model`` is
    ``hf:<source>@<hash of its config and weights>``."""
    import time

    from resumebias_dagster.core.models.hf_classifier import classifier_probabilities, load_hf_classifier

    classifier = load_hf_classifier(spec, settings, log=log)
    started = time.perf_counter()
    probs = classifier_probabilities(classifier, variants["text"].tolist(), settings)
    per_variant = (time.perf_counter() - started) / max(1, len(variants))
    frame = sampled_rows(spec, variants, probs, resolved_model=classifier.identity, per_variant=per_variant)
    return conform(frame, SeniorityPredictions)


def answered_rows(variants: pd.DataFrame, model: str, runs: int, *, predictions, errors, results) -> pd.DataFrame:
    """Rows of a model that answers each call (a provider, an http endpoint): one per variant and
    run, variant-major, with each call's prediction, error, resolved model and latency."""
    rep = np.repeat(np.arange(len(variants)), runs)
    df = pd.DataFrame(
        {
            "variant_kind": variants["variant_kind"].to_numpy()[rep],
            "original_idx": variants["original_idx"].to_numpy(dtype="int64")[rep],
            "variant": variants["variant"].to_numpy()[rep],
            "model": model,
            "run": np.tile(np.arange(runs, dtype=np.int64), len(variants)),
            "prediction": list(predictions),
            "true_seniority": variants["true_seniority"].to_numpy()[rep],
            "name": variants["name"].to_numpy()[rep],
            "resolved_model": [r.resolved_model for r in results],
            "latency_s": np.asarray([r.latency_s for r in results], dtype="float64"),
            "error": list(errors),
        }
    )
    return df.astype({"name": object, "error": object})


def seniority_item_id(row: Any) -> str:
    """The id a Python-function model sees for one variant: ``<variant_kind>:<original_idx>:<variant>``."""
    return f"{row.variant_kind}:{row.original_idx}:{row.variant}"


def predict_with_python(spec, variants: pd.DataFrame) -> pd.DataFrame:
    """Prediction rows of a Python-function model: a distribution is sampled ``runs_per_cell``
    times as a classifier's is (``p_*`` hold it at the configured temperature); a bare label is
    the prediction of every run, with no distribution (``p_*`` NaN, as a provider's rows)."""
    from resumebias_dagster.core.models.local_llm import sample_labels, sampling_seed, tempered
    from resumebias_dagster.core.models.python_scorer import resolved_model, score_items

    items = [
        {"id": seniority_item_id(row), "task": "seniority", "resume": row.text, "job_description": None}
        for row in variants.itertuples(index=False)
    ]
    answers = score_items(spec, items)
    probs = np.asarray([a.probs for a in answers], dtype=float).reshape(len(answers), len(SENIORITY_LEVELS))
    # A bare label is one-hot: every draw at any temperature is that label.
    samples = sample_labels(probs, spec.temperature, spec.runs_per_cell, sampling_seed(spec.name))
    dist = tempered(probs, spec.temperature) if len(answers) else probs
    dist[[a.label is not None for a in answers]] = np.nan
    return rows_from_distributions(
        variants,
        dist,
        samples,
        model=spec.name,
        resolved_model=resolved_model(spec),
        latency_s=np.asarray([a.latency_s for a in answers], dtype=float),
    )


def predict_with_http(run: Transport, variants: pd.DataFrame, spec) -> tuple[pd.DataFrame, Any]:
    """Prediction rows of a scoring endpoint (one call per variant and run, through the store)
    and the run's stats. A label is the prediction; a distribution is kept in ``p_*`` and its
    most probable label (the first of a tie) is the prediction: each run is its own call, so
    nothing is sampled here. Failed calls and unreadable replies are rows with their reason."""
    from resumebias_dagster.core.providers.http_scorer import score_over_http

    runs = spec.runs_per_cell
    items = [
        {"id": seniority_item_id(row), "task": "seniority", "resume": row.text, "job_description": None}
        for row in variants.itertuples(index=False)
    ]
    results, replies, stats = score_over_http(run, spec, items, "seniority")
    probs = np.full((len(replies), len(SENIORITY_LEVELS)), np.nan)
    predictions = []
    for i, reply in enumerate(replies):
        if isinstance(reply, str):
            predictions.append("unknown" if reply.startswith("unparsable: ") else "error")
            continue
        if reply.label is not None:
            predictions.append(reply.label)
        else:
            probs[i] = reply.probs
            predictions.append(SENIORITY_LEVELS[int(np.argmax(probs[i]))])
    errors = [r if isinstance(r, str) else None for r in replies]
    df = answered_rows(variants, spec.name, runs, predictions=predictions, errors=errors, results=results)
    for j, column in enumerate(PROB_COLUMNS):
        df[column] = probs[:, j]
    return conform(df, SeniorityPredictions), stats


def seniority_requests(variants: pd.DataFrame, runs: int, template: str) -> list:
    """One provider request per variant and run, variant-major (all runs of a variant together)."""
    from resumebias_dagster.core.providers.types import ChatRequest

    requests = []
    for text in variants["text"]:
        prompt = seniority_prompt(text, template)
        requests += [ChatRequest.from_prompt(prompt, sample_index=run, task="seniority") for run in range(runs)]
    return requests


def _prediction(result: Any) -> tuple[str, str | None]:
    if not result.ok:
        return "error", f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
    parsed = parse_label(result.text)
    if parsed.ok:
        return parsed.value, None
    return "unknown", f"unparsable: {parsed.reason}"


def predict_with_provider(run: Transport, variants: pd.DataFrame, spec, template: str) -> tuple[pd.DataFrame, Any]:
    """Prediction rows (one per variant x run) of a provider model and the run's stats;
    ``run(requests) -> (results, stats)`` is the transport (the store and the fan-out).

    ``prediction`` is the strictly parsed label; "error" when the call failed (``error``
    holds the kind and a short message) and "unknown" only for an answer that names no
    single level (``error`` = "unparsable: <why>"). Unparsable answers are counted in the
    stats' errors too.
    """
    missing = set(VARIANT_COLUMNS) - set(variants.columns)
    if missing:
        raise ValueError(f"variants lack column(s) {', '.join(sorted(missing))}")
    runs = spec.runs_per_cell
    results, stats = run(seniority_requests(variants, runs, template))
    predictions, errors = zip(*map(_prediction, results)) if results else ((), ())
    stats.errors["unparsable"] += sum(p == "unknown" for p in predictions)
    df = answered_rows(variants, spec.name, runs, predictions=predictions, errors=errors, results=results)
    return conform(df, SeniorityPredictions), stats


def predict_seniority(
    spec: ModelSpec, variants: pd.DataFrame, runtime: ModelRuntime, template: str, progress: Progress | None = None
) -> tuple[pd.DataFrame, Any]:
    """``SeniorityPredictions`` rows of model ``spec`` for ``variants``, and the provider run's
    stats (None for a model that runs here)."""
    if spec.kind == "local-llm":
        frame = predict_with_local_llm(
            spec, variants, runtime.compute, runtime.cache_dir, template=template, progress=progress, log=runtime.log
        )
        return conform(frame, SeniorityPredictions), None
    if spec.kind == "fine-tuned":
        trained = runtime.classifier(spec.name)
        frame = predict_with_classifier(spec, variants, runtime.compute, trained.path, trained.fingerprint)
        return conform(frame, SeniorityPredictions), None
    if spec.kind == "provider":
        return predict_with_provider(runtime.run_for(spec.name, progress), variants, spec, template)
    if spec.kind == "python":
        return conform(predict_with_python(spec, variants), SeniorityPredictions), None
    if spec.kind == "http":
        return predict_with_http(runtime.run_for(spec.name, progress), variants, spec)
    if spec.kind == "hf-classifier":
        return predict_with_hf_classifier(spec, variants, runtime.compute, log=runtime.log), None
    raise ValueError(f"models.{spec.name}.kind: {spec.kind!r} cannot run the seniority task")
