"""Models behind APIs as a Dagster resource: keys checked at set-up, calls through the store.

Keys never pass through Dagster config: the models file names each key's environment
variable (``api_key_env``) and set-up reads them. Importing this module imports no SDK.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import dagster as dg
from pydantic import Field, PrivateAttr

from resumebias_dagster.catalog import PACKAGED_DIR
from resumebias_dagster.core.models.model_config import load_judges, load_models, models_file
from resumebias_dagster.core.providers.base import guard_logs, scrubbed_exception
from resumebias_dagster.core.providers.fanout import RunStats, Transport, run_requests
from resumebias_dagster.core.providers.registry import BATCH_WIRES
from resumebias_dagster.core.providers.store import (
    STORE_FILE,
    STORE_URL_ENV,
    ResponseStore,
    StoreError,
    check_store_url,
    store_target,
)
from resumebias_dagster.core.providers.types import (
    HTTP_WIRE,
    ChatRequest,
    ChatResult,
    ProviderConfigError,
    ProviderSettings,
    Secret,
    check_credentials,
)
from resumebias_dagster.settings import STORE_URLS_ENV, checked_path, store_urls


class ProvidersResource(dg.ConfigurableResource):
    """The enabled provider models and scoring endpoints (kind http) of the models config, and
    the response store.

    Set-up fails, naming the environment variable, when a model's key is missing: before
    any step calls anything.
    """

    models_file: str = Field(default="", description="models config; empty = $RESUMEBIAS_MODELS_FILE or packaged")
    catalog_dir: str = Field(default="", description="folder overriding packaged catalog files (prices, prompts)")
    store_path: str = Field(
        default="",
        description=f"response store file (SQLite, one machine); empty = "
        f"${STORE_URL_ENV} if set, else <data dir>/{STORE_FILE}",
    )
    store_url: str = Field(
        default="",
        description="response store shared by several machines: postgresql://user@host:port/database, "
        f"one the deployment lists in ${STORE_URL_ENV} or $RESUMEBIAS_STORE_URLS, without a password (run config is kept with each run: give it in ${STORE_URL_ENV}, PGPASSWORD or "
        f"~/.pgpass); empty = store_path, else ${STORE_URL_ENV}, else <data dir>/{STORE_FILE}",
    )
    durable: bool = Field(default=False, description="fsync every stored response (survives power loss, slower)")
    batch: bool = Field(
        default=False,
        description="send every provider model's missing requests as provider batches (half the list price, "
        "answers within a day), as `batch: true` on each model entry does; a scoring endpoint (kind http) "
        "has no batch protocol and keeps calling live",
    )

    _models: dict[str, ProviderSettings] = PrivateAttr(default_factory=dict)
    _audited: list[str] = PrivateAttr(default_factory=list)
    _judges: list[str] = PrivateAttr(default_factory=list)
    _keys: dict[str, Secret | None] = PrivateAttr(default_factory=dict)
    _store: ResponseStore | None = PrivateAttr(default=None)
    _catalog_dir: str | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # Paths here can come from run config, which anyone who reaches the UI can write:
        # they must lie under the allowed folders (settings.checked_path).
        catalog_dir = str(checked_path(self.catalog_dir, "providers.catalog_dir")) if self.catalog_dir else None
        file = models_file(self.models_file or None, catalog_dir)
        if self.models_file and PACKAGED_DIR not in file.resolve().parents:
            checked_path(file, "providers.models_file")
        if self.store_path:
            checked_path(self.store_path, "providers.store_path")
        _check_store_url(self.store_url, self.store_path)
        if context.log is not None:
            context.log.info(f"models config: {file}")
        specs = load_models(file, catalog_dir)
        models = [ProviderSettings.from_spec(s) for s in specs if s.kind == "provider"]
        self._audited = [m.name for m in models]
        # A judge may be disabled as an audited model and still judge: its key is needed too.
        judges = load_judges(file, catalog_dir)
        self._judges = [j.name for j in judges]
        models += [ProviderSettings.from_spec(j) for j in judges if j.name not in self._audited]
        # Scoring endpoints of the user's (kind http): the same store and fan-out, no alias to probe.
        models += [ProviderSettings.from_spec(s) for s in specs if s.kind == "http"]
        if self.batch:
            models = [replace(m, batch=True) if m.provider in BATCH_WIRES else m for m in models]
        self._keys = check_credentials(models)
        guard_logs(*(k.reveal() for k in self._keys.values() if k), *(s for m in models for s in m.secrets_in_url))
        self._models = {m.name: m for m in models}
        self._catalog_dir = catalog_dir

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def model_names(self) -> list[str]:
        """The enabled (audited) provider models (not the http endpoints)."""
        return list(self._audited)

    @property
    def tool_names(self) -> list[str]:
        """Every audited model behind an API: the provider models, then the scoring endpoints
        (kind http). The weekly re-audit runs them all."""
        return [*self._audited, *(n for n, m in self._models.items() if m.provider == HTTP_WIRE)]

    @property
    def versioned_names(self) -> list[str]:
        """The models whose version can be probed: every provider model (its alias's snapshot)
        and each scoring endpoint with a ``version`` source."""
        return [n for n in self.tool_names if self._models[n].provider != HTTP_WIRE or self._models[n].version_source]

    @property
    def judge_names(self) -> list[str]:
        """The judges of the models config (`judges:`), first the headline judge."""
        return list(self._judges)

    def settings(self, name: str) -> ProviderSettings:
        """The model's settings at its current snapshot epoch (see ``model_alias_sensor``)."""
        if name not in self._models:
            raise ProviderConfigError(
                f"no enabled provider model named {name!r} (enabled: {', '.join(self._models) or 'none'})"
            )
        settings = self._models[name]
        seen = self.store().snapshot(settings)
        return replace(settings, snapshot_epoch=seen[1]) if seen else settings

    def probe(self, names: Sequence[str] | None = None, timeout_s: float | None = None) -> dict[str, Any]:
        """What each model's alias resolves to now (default: every enabled model), from one
        small live call per model, all at once, each with a short timeout and no retries
        (``core.providers.alias_probe``; never stored). ``{name: resolved model}``, or for a model
        whose probe failed or was too slow, its ``ProbeError`` (redacted): never raises for one."""
        from resumebias_dagster.core.providers.alias_probe import probe_resolved_models

        names = self.versioned_names if names is None else [names] if isinstance(names, str) else list(names)
        for name in names:
            if name not in self._models:
                raise ProviderConfigError(
                    f"no enabled provider model named {name!r} (enabled: {', '.join(self._models) or 'none'})"
                )
        with _scrubbed_errors():
            return probe_resolved_models({n: (self._models[n], self._keys.get(n)) for n in names}, timeout_s)

    def store(self) -> ResponseStore:
        """The response store: ``store_url``, else ``store_path``, else ``$RESUMEBIAS_STORE_URL``,
        else the SQLite file in the data directory (opened at the first call)."""
        if self._store is None:
            target: str | os.PathLike
            if self.store_url:
                target, setting = self.store_url, "providers.store_url"
            elif self.store_path:
                target, setting = self.store_path, "providers.store_path"
            else:
                target, setting = store_target(None), STORE_URL_ENV
            self._store = ResponseStore(target, durable=self.durable, setting=setting)
        return self._store

    def run(
        self,
        name: str,
        requests: Sequence[ChatRequest],
        progress: Callable[[int, int], None] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> tuple[list[ChatResult], RunStats]:
        """``requests`` through model ``name``: stored answers first, then only missing calls."""
        with _scrubbed_errors():
            return run_requests(
                self.settings(name),
                requests,
                self.store(),
                api_key=self._keys.get(name),
                progress=progress,
                catalog_dir=self._catalog_dir,
                notify=notify,
            )

    def run_of(self, name: str, log: Any) -> Transport:
        """The ``run`` callable a task takes for provider model ``name``, its progress logged to
        ``log``, and what its batches do (submitted, their state at each change, collected)."""
        progress = progress_logger(log)
        notify = getattr(log, "info", None)
        return lambda requests: self.run(name, requests, progress=progress, notify=notify)


def _store_identity(url: str) -> tuple[str, tuple[tuple[str, int], ...], str, tuple[tuple[str, str], ...]]:
    """(user, hosts and ports, database, query parameters but passwords) of a PostgreSQL URL:
    everything libpq reads to decide where a password goes. The query counts too: libpq takes
    ``?host=``, ``?hostaddr=`` and ``?port=`` over the URL's own host (issue 40)."""
    parts = urlsplit(url.strip())
    hosts: list[tuple[str, int]] = []
    for host in parts.netloc.rpartition("@")[2].split(","):
        name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        name = name if port.isdigit() else host
        hosts.append((name.strip("[]").lower(), int(port) if port.isdigit() else 5432))
    query = sorted(
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ("password", "sslpassword")
    )
    return unquote(parts.username or ""), tuple(hosts), unquote(parts.path.strip("/")), tuple(query)


def check_store_url_allowed(store_url: str, setting: str) -> None:
    """Refuse ``store_url`` unless ``$RESUMEBIAS_STORE_URL`` or ``$RESUMEBIAS_STORE_URLS`` names
    the same user, hosts, ports, database and query parameters (never echoing a URL: it may
    hold a password)."""
    listed = store_urls()
    if _store_identity(store_url) in {_store_identity(u) for u in listed if u.strip()}:
        return
    raise StoreError(
        f"{setting}: not a store this deployment lists: run config may only pick a store named in ${STORE_URL_ENV} "
        f"or ${STORE_URLS_ENV} on the workers (the worker's PostgreSQL password goes to the server a store URL names)"
    )


def _check_store_url(store_url: str, store_path: str) -> None:
    """``store_url`` as run config may give it: a PostgreSQL URL the deployment lists, without
    a password (run config is stored with the run and shown in the UI), and not together with
    ``store_path``."""
    if not store_url:
        return
    if store_path:
        raise StoreError(
            "providers.store_url and providers.store_path are both set: give one (a URL for a store "
            "shared by several machines, a file for one machine's store)"
        )
    check_store_url(store_url, "providers.store_url")
    from resumebias_dagster.core.providers.store.postgres import StoreURL

    if StoreURL(store_url, "providers.store_url").has_password:
        raise StoreError(
            "providers.store_url holds a password: run config is kept with each run and shown in the UI, so the "
            f"store's password cannot go there; set the whole URL in ${STORE_URL_ENV} on each worker, or give the "
            "password with PGPASSWORD or a ~/.pgpass file"
        )
    check_store_url_allowed(store_url, "providers.store_url")


@contextmanager
def _scrubbed_errors():
    """An exception leaving a provider run with a key in its text or chain is re-raised
    redacted, without the chain: Dagster would store it in the event log and show it in the UI."""
    try:
        yield
    except Exception as exc:
        clean = scrubbed_exception(exc)
        if clean is None:
            raise
        raise clean from None


def stats_metadata(stats: RunStats) -> dict[str, Any]:
    """Asset metadata of a provider run: calls made and served, tokens, dollars, errors."""
    d = stats.as_dict()
    return {
        "provider_calls_made": dg.MetadataValue.int(d["calls_made"]),
        "provider_calls_from_store": dg.MetadataValue.int(d["served_from_store"]),
        "provider_http_attempts": dg.MetadataValue.int(d["http_attempts"]),
        # Attempts the provider may bill: answers, and attempts abandoned at their timeout.
        "provider_billed_attempts": dg.MetadataValue.int(d["billed_attempts"]),
        "provider_billed_attempts_per_answer": dg.MetadataValue.float(d["billed_attempts_per_answer"] or 0.0),
        "provider_calls_answered_by_other_runs": dg.MetadataValue.int(d["waited_for_other_runs"]),
        "provider_input_tokens": dg.MetadataValue.int(d["input_tokens"]),
        # Of the input tokens: read from the provider's prompt cache (billed at its cached rate).
        "provider_cached_input_tokens": dg.MetadataValue.int(d["cached_input_tokens"]),
        "provider_output_tokens": dg.MetadataValue.int(d["output_tokens"]),
        "provider_cost_usd": dg.MetadataValue.float(d["cost_usd"]),
        "provider_cost_usd_incl_store": dg.MetadataValue.float(d["cost_usd_incl_store"]),
        "provider_calls_without_price": dg.MetadataValue.int(d["cost_unknown_calls"]),
        "provider_errors": dg.MetadataValue.json(d["errors"]),
        "provider_resolved_models": dg.MetadataValue.json(d["resolved_models"]),
    }


def progress_logger(log: Any, what: str = "provider calls", steps: int = 10) -> Callable[[int, int], None]:
    """A ``progress`` callback logging about ``steps`` times over a run, whatever the step
    size of its calls (one per answer, or one per batch of a local model)."""
    logged = [-1]

    def report(done: int, total: int) -> None:
        step = done * steps // max(1, total)
        if done == total or step > logged[0]:
            logged[0] = step
            log.info(f"{what}: {done}/{total}")

    return report
