"""What a study would cost before it runs: calls, tokens and dollars per provider model.

Calls are the design's variants x the model's runs per cell; the requests are built exactly
as the prediction run builds them, so their keys tell how many the store already holds
(those cost nothing). Tokens are estimated, not counted: input as prompt characters / 4
(a rough rule for English text with the providers' tokenizers), output as the mean of the
model's stored answers when there are some, else ``DEFAULT_OUTPUT_TOKENS`` (a one-word
label). Reasoning models (GPT-5, Gemini 3 Pro) also bill thinking tokens as output, often
hundreds per call: run a few calls first and the estimate uses what they really spent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from resumebias_dagster.core.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.providers.pricing import price_for
from resumebias_dagster.core.providers.runner import normalise
from resumebias_dagster.core.providers.seniority import seniority_requests
from resumebias_dagster.core.providers.store import ResponseStore
from resumebias_dagster.core.providers.types import ProviderSettings, request_key

CHARS_PER_TOKEN = 4
DEFAULT_OUTPUT_TOKENS = 5
COLUMNS = (
    "model", "provider", "alias", "calls", "in_store", "to_call", "input_tokens", "output_tokens",
    "output_tokens_basis", "usd_to_call", "usd_all_calls", "price_as_of",
)


def design_variants(n_per_level: int = 40, seed: int = 0, catalog_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The study's variants as the assets make them by default (offline generator and
    rewriter, same seeds), without materialising anything."""
    from resumebias_dagster.core.generation import generate_resumes
    from resumebias_dagster.core.labels import STYLES
    from resumebias_dagster.core.names import name_variants
    from resumebias_dagster.core.seniority_task import variant_table
    from resumebias_dagster.core.style import rewrite_style

    base = generate_resumes(n_per_level=n_per_level, seed=seed, catalog_dir=catalog_dir)
    style = pd.DataFrame(
        [
            (r.resume_id, i, r.seniority, s, rewrite_style(r.text, s, seed=seed, catalog_dir=catalog_dir))
            for i, r in enumerate(base.itertuples(index=False))
            for s in STYLES
        ],
        columns=["resume_id", "original_idx", "seniority", "style", "text"],
    )
    return variant_table(style, name_variants(base, seed=seed, catalog_dir=catalog_dir))


def estimate_cost(
    models: Sequence[ProviderSettings],
    variants: pd.DataFrame,
    store: ResponseStore,
    template: str | None = None,
    catalog_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """One row per model with ``COLUMNS``; dollars are None where the price table lacks the model."""
    template = template if template is not None else load_prompt(SENIORITY_PROMPT, catalog_dir)
    rows = []
    for settings in models:
        requests = [normalise(settings, r) for r in seniority_requests(variants, settings, template)]
        keys = [request_key(settings, r) for r in requests]
        stored = store.get_many(keys)
        todo = [r for k, r in zip(keys, requests) if k not in stored]
        chars = sum(len(m[1]) for r in todo for m in r.messages) + sum(len(r.system or "") for r in todo)
        all_chars = sum(len(m[1]) for r in requests for m in r.messages)
        n_stored, mean_out = store.mean_output_tokens(settings.provider, settings.endpoint, settings.model)
        per_call_out = mean_out if mean_out is not None else DEFAULT_OUTPUT_TOKENS
        basis = f"store mean of {n_stored}" if mean_out is not None else f"default {DEFAULT_OUTPUT_TOKENS}"
        input_tokens = round(chars / CHARS_PER_TOKEN)
        output_tokens = round(per_call_out * len(todo))
        price = price_for(settings.model, catalog_dir)
        rows.append({
            "model": settings.name,
            "provider": settings.provider,
            "alias": settings.model,
            "calls": len(requests),
            "in_store": len(requests) - len(todo),
            "to_call": len(todo),
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "output_tokens_basis": basis,
            "usd_to_call": None if price is None else round(price.cost(input_tokens, output_tokens), 4),
            "usd_all_calls": None if price is None else round(
                price.cost(round(all_chars / CHARS_PER_TOKEN), round(per_call_out * len(requests))), 4
            ),
            "price_as_of": None if price is None else price.as_of,
        })
    return pd.DataFrame(rows, columns=list(COLUMNS))
