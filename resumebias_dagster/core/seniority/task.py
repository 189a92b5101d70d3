"""The seniority task: which texts a model reads, and how each form of answer becomes
prediction rows (``SeniorityWork``).

``predict_seniority`` runs the task on a model of any kind through the kind's runner
(``core/models/kinds``): an embedded LLM's label distribution, a classifier's probabilities
(fine-tuned here or the user's), a provider's chat answers or an endpoint's replies through the
transport (``core.providers``), a Python function's answers.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.common.parsing import parse_label
from resumebias_dagster.core.common.prompts import seniority_prompt
from resumebias_dagster.core.models.kinds import run_task
from resumebias_dagster.core.models.runtime import ModelRuntime, Progress
from resumebias_dagster.core.models.spec import ModelSpec
from resumebias_dagster.core.providers.fanout import Transport
from resumebias_dagster.core.providers.http_scorer import ScorerWork
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
    frame, stats = SeniorityWork(variants, template).with_chat(spec, run)
    return conform(frame, SeniorityPredictions), stats


class SeniorityWork(ScorerWork):
    """The seniority task on ``variants`` (``variant_table``), in every form of answer it reads."""

    task = "seniority"
    table = SeniorityPredictions

    def __init__(self, variants: pd.DataFrame, template: str):
        self.variants = variants
        self.template = template

    def chat_requests(self, spec) -> list:
        missing = set(VARIANT_COLUMNS) - set(self.variants.columns)
        if missing:
            raise ValueError(f"variants lack column(s) {', '.join(sorted(missing))}")
        return seniority_requests(self.variants, spec.runs_per_cell, self.template)

    def from_chat(self, spec, results, stats) -> pd.DataFrame:
        predictions, errors = zip(*map(_prediction, results)) if results else ((), ())
        stats.errors["unparsable"] += sum(p == "unknown" for p in predictions)
        return answered_rows(
            self.variants, spec.name, spec.runs_per_cell, predictions=predictions, errors=errors, results=results
        )

    def with_causal_lm(self, spec, runtime: ModelRuntime, progress: Progress | None) -> pd.DataFrame:
        return predict_with_local_llm(
            spec,
            self.variants,
            runtime.compute,
            runtime.cache_dir,
            template=self.template,
            progress=progress,
            log=runtime.log,
        )

    def scorer_items(self) -> list[dict[str, Any]]:
        return [
            {"id": seniority_item_id(row), "task": "seniority", "resume": row.text, "job_description": None}
            for row in self.variants.itertuples(index=False)
        ]

    def from_answers(self, spec, answers, resolved_model: str) -> pd.DataFrame:
        """A scorer's distribution is sampled ``runs_per_cell`` times as a classifier's is
        (``p_*`` hold it at the configured temperature); a bare label is the prediction of every
        run, with no distribution (``p_*`` NaN, as a provider's rows)."""
        from resumebias_dagster.core.models.local_llm import sample_labels, sampling_seed, tempered

        probs = np.asarray([a.probs for a in answers], dtype=float).reshape(len(answers), len(SENIORITY_LEVELS))
        # A bare label is one-hot: every draw at any temperature is that label.
        samples = sample_labels(probs, spec.temperature, spec.runs_per_cell, sampling_seed(spec.name))
        dist = tempered(probs, spec.temperature) if len(answers) else probs
        dist[[a.label is not None for a in answers]] = np.nan
        return rows_from_distributions(
            self.variants,
            dist,
            samples,
            model=spec.name,
            resolved_model=resolved_model,
            latency_s=np.asarray([a.latency_s for a in answers], dtype=float),
        )

    def from_replies(self, spec, results, replies) -> pd.DataFrame:
        """One row per call: a label is the prediction; a distribution is kept in ``p_*`` and its
        most probable label (the first of a tie) is the prediction (each run is its own call, so
        nothing is sampled). Failed calls and unreadable replies are rows with their reason."""
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
        df = answered_rows(
            self.variants, spec.name, spec.runs_per_cell, predictions=predictions, errors=errors, results=results
        )
        for j, column in enumerate(PROB_COLUMNS):
            df[column] = probs[:, j]
        return df

    def texts(self) -> list[str]:
        return self.variants["text"].tolist()

    def from_label_probs(self, spec, probs, *, resolved_model: str, per_item_s: float) -> pd.DataFrame:
        return sampled_rows(spec, self.variants, probs, resolved_model=resolved_model, per_variant=per_item_s)


def predict_seniority(
    spec: ModelSpec, variants: pd.DataFrame, runtime: ModelRuntime, template: str, progress: Progress | None = None
) -> tuple[pd.DataFrame, Any]:
    """``SeniorityPredictions`` rows of model ``spec`` for ``variants``, and the transport run's
    stats (None for a model that runs here), by the kind's runner (``core/models/kinds``)."""
    return run_task(spec, SeniorityWork(variants, template), runtime, progress)
