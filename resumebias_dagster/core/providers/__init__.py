"""Models behind APIs: one small interface, three SDK clients, a durable response store.

- ``types``: ``ChatRequest``, ``ChatResult``, ``ProviderSettings``, the error kinds.
- ``openai_client`` / ``google_client`` / ``anthropic_client``: the SDKs' async clients
  (imported only when a model of that provider runs; ``registry.make_client`` picks one).
- ``store``: ``ResponseStore``, one row per request key: an SQLite file on one machine, or a
  PostgreSQL database shared by several (``postgresql://`` URL).
- ``fanout``: ``run_requests`` (store first, then only the missing calls), ``RunStats``, and
  ``Transport``, the typed ``run`` callable every task takes.
- ``registry``: wire name -> client class, imported by name; ``alias_probe``: what an alias
  resolves to now; ``pricing``: dollars per token.

Importing this package imports no provider SDK.
"""

from resumebias_dagster.core.providers.fanout import RunStats, Transport, run_requests, run_requests_async
from resumebias_dagster.core.providers.store import ResponseStore, default_store_path
from resumebias_dagster.core.providers.types import (
    TERMINAL_KINDS,
    TRANSIENT_KINDS,
    ChatRequest,
    ChatResult,
    ProviderConfigError,
    ProviderSettings,
    request_key,
)

__all__ = [
    "TERMINAL_KINDS",
    "TRANSIENT_KINDS",
    "ChatRequest",
    "ChatResult",
    "ProviderConfigError",
    "ProviderSettings",
    "ResponseStore",
    "RunStats",
    "Transport",
    "default_store_path",
    "request_key",
    "run_requests",
    "run_requests_async",
]
