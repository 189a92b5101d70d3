"""The wires: one entry per provider wire, naming its client's module and class.

A client module imports its SDK, so it is imported by name, only when a model of that wire
runs (``importlib``): importing the package imports no SDK, and ``base.py`` never imports a
client (each client imports ``base``). Adding a provider is a client module subclassing
``base.ProviderClient`` plus one entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

from resumebias_dagster.core.providers import types as t

WIRES: dict[str, tuple[str, str]] = {
    "openai": ("resumebias_dagster.core.providers.openai_client", "OpenAIClient"),
    "anthropic": ("resumebias_dagster.core.providers.anthropic_client", "AnthropicClient"),
    "google": ("resumebias_dagster.core.providers.google_client", "GoogleClient"),
    # A scoring endpoint of the user's (kind: http): no SDK, httpx2 directly.
    "http": ("resumebias_dagster.core.providers.http_client", "HttpScorerClient"),
}


# The batch protocol of each wire that has one (``batch_api.BatchBackend``); a scoring endpoint has none.
BATCH_WIRES: dict[str, tuple[str, str]] = {
    "openai": ("resumebias_dagster.core.providers.batch_openai", "OpenAIBatchBackend"),
    "anthropic": ("resumebias_dagster.core.providers.batch_anthropic", "AnthropicBatchBackend"),
    "google": ("resumebias_dagster.core.providers.batch_gemini", "GeminiBatchBackend"),
}


def client_class(settings: t.ProviderSettings) -> type:
    """The client class of ``settings.provider`` (its module imported now)."""
    entry = WIRES.get(settings.provider)
    if entry is None:
        raise t.ProviderConfigError(
            f"model {settings.name!r}: unknown provider {settings.provider!r} (known: {', '.join(WIRES)})"
        )
    module, name = entry
    return getattr(importlib.import_module(module), name)


def make_client(settings: t.ProviderSettings, api_key: t.Secret | None, **kwargs: Any):
    """The client of ``settings.provider``; imports only that provider's SDK."""
    return client_class(settings)(settings, api_key, **kwargs)


def make_batch_backend(settings: t.ProviderSettings, api_key: t.Secret | None):
    """The batch backend of ``settings.provider``, or None where its wire has no batch protocol."""
    entry = BATCH_WIRES.get(settings.provider)
    if entry is None:
        return None
    module, name = entry
    return getattr(importlib.import_module(module), name)(settings, api_key)
