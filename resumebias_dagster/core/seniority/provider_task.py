"""The seniority task through a provider model: variants in (``seniority_task.variant_table``),
``SeniorityPredictions`` rows out."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from resumebias_dagster.core.common.parsing import parse_label
from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt, seniority_prompt
from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.fanout import RunStats, run_requests
from resumebias_dagster.core.providers.store import ResponseStore
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings
from resumebias_dagster.core.seniority.task import VARIANT_COLUMNS
from resumebias_dagster.core.tables import SeniorityPredictions, conform

PREDICTION_COLUMNS = (
    "variant_kind", "original_idx", "variant", "model", "run", "prediction", "true_seniority", "name",
    "resolved_model", "latency_s", "error",
)


def seniority_requests(variants: pd.DataFrame, settings: ProviderSettings, template: str) -> list[ChatRequest]:
    """One request per variant and run, variant-major (all runs of a variant together)."""
    requests = []
    for text in variants["text"]:
        prompt = seniority_prompt(text, template)
        requests += [ChatRequest.from_prompt(prompt, sample_index=run, task="seniority")
                     for run in range(settings.runs_per_cell)]
    return requests


def _prediction(result: ChatResult) -> tuple[str, str | None]:
    if not result.ok:
        return "error", f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
    parsed = parse_label(result.text)
    if parsed.ok:
        return parsed.value, None
    return "unknown", f"{t.UNPARSABLE}: {parsed.reason}"


def predict_seniority(
    variants: pd.DataFrame,
    settings: ProviderSettings,
    store: ResponseStore,
    *,
    template: str | None = None,
    catalog_dir: str | os.PathLike | None = None,
    **run_kwargs: Any,
) -> tuple[pd.DataFrame, RunStats]:
    """Prediction rows (one per variant x run, ``PREDICTION_COLUMNS``) and the run's stats.

    ``prediction`` is the strictly parsed label; "error" when the call failed (``error``
    holds the kind and a short message) and "unknown" only for an answer that names no
    single level (``error`` = "unparsable: <why>"). Unparsable answers are counted in the
    stats' errors too.
    """
    missing = set(VARIANT_COLUMNS) - set(variants.columns)
    if missing:
        raise ValueError(f"variants lack column(s) {', '.join(sorted(missing))}")
    template = template if template is not None else load_prompt(SENIORITY_PROMPT, catalog_dir)
    requests = seniority_requests(variants, settings, template)
    results, stats = run_requests(settings, requests, store, catalog_dir=catalog_dir, **run_kwargs)
    rows = []
    runs = settings.runs_per_cell
    for i, variant in enumerate(variants.itertuples(index=False)):
        for run in range(runs):
            result = results[i * runs + run]
            prediction, error = _prediction(result)
            if prediction == "unknown":
                stats.errors[t.UNPARSABLE] += 1
            rows.append((
                variant.variant_kind, int(variant.original_idx), variant.variant, settings.name, run, prediction,
                variant.true_seniority, variant.name, result.resolved_model, result.latency_s, error,
            ))
    df = pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))
    df = df.astype({"original_idx": "int64", "run": "int64", "latency_s": "float64"})
    return conform(df, SeniorityPredictions), stats
