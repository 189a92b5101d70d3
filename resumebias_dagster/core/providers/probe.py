"""What a model alias resolves to right now: one small live call, bypassing the store.

Floating aliases (``mistral-large-latest``, ``claude-sonnet``, ``gpt-5``) move to new
snapshots silently (seed 003); the answer's reported model is the snapshot.
"""

from __future__ import annotations

import asyncio

from resumebias_dagster.core.providers.base import make_client
from resumebias_dagster.core.providers.types import ChatRequest, ProviderSettings, Secret

PROBE_PROMPT = "Reply with the single word OK."


class ProbeError(RuntimeError):
    """The probe call failed; the message names the model and the error kind (never the key)."""


def probe_resolved_model(settings: ProviderSettings, api_key: Secret | None) -> str:
    async def call() -> str:
        client = make_client(settings, api_key)
        try:
            result = await client.complete(ChatRequest.from_prompt(PROBE_PROMPT, max_tokens=16, temperature=0.0), "probe")
        finally:
            await client.aclose()
        if not result.ok and result.resolved_model is None:
            raise ProbeError(f"model {settings.name!r}: probe failed ({result.error_kind}: {result.error_message})")
        if not result.resolved_model:
            raise ProbeError(f"model {settings.name!r}: the provider reported no model version")
        return result.resolved_model

    return asyncio.run(call())
