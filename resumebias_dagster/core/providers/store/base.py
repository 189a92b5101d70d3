"""What every response store does, written once: the rules of a row, claims and snapshots.

A backend (``sqlite.SQLiteStore``, ``postgres.PostgresStore``) brings a connection, its
transactions and a few words of its SQL dialect; the statements below are written with ``?``
placeholders and run unchanged on both.

Rules of a row: an answer or a terminal error (refusal, content filter, a 2xx body the
client could not read, kept raw) is final and never replaced; an empty answer is called again
until its key has had ``EMPTY_CALL_LIMIT`` calls, then final; a transient error (rate limit,
5xx, timeout, connection, ...) is kept for the record and replaced by whatever the next call
of that key brings, until the key's calls were billed ``BILLED_CALL_LIMIT`` times (abandoned
generations, errors inside a 200): then it is final too, so no key is paid for without bound.
``calls``, ``attempts`` and ``billed_attempts`` add up over every call of the key across runs.
The text is stored exactly as it came, lone surrogates and all (a backend that cannot hold one
as text keeps the text's bytes); parsing happens after it is stored, so an answer no parser
can read is still kept (and paid for only once). Each answer is its own committed transaction.

Claims. A run claims each key just before calling it (table ``claims``), and the stored
answer releases the claim in the same transaction. A run that finds a key claimed by another
live run waits for that run's answer instead of paying for its own; a claim of a process
that died on this machine is taken over at once, one of another machine when its lease ends.
A claim is taken in three statements in one transaction, in this order: insert the claim if
the key has none, lock the claim row there, look for a final row; then decide. Under
SQLite the transaction holds the write lock; under PostgreSQL (each statement reading what
was committed before it began) the order is what matters: once the claim row is ours or
locked, any answer that released it is already committed, so the look for a final row sees
it and the key is not paid twice.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from resumebias_dagster.core.common.processes import pid_alive
from resumebias_dagster.core.providers.store.batches import BATCH_HOST, BatchRecords, batch_token
from resumebias_dagster.core.providers.store.batches import BATCH_LEASE_S as BATCH_LEASE_S
from resumebias_dagster.core.providers.store.operation import _operation, json_text, now_iso
from resumebias_dagster.core.providers.store.schema import CLAIM_COLUMNS, COLUMNS, UPSERT
from resumebias_dagster.core.providers.types import (
    BILLED_CALL_LIMIT,
    EMPTY,
    EMPTY_CALL_LIMIT,
    TERMINAL_KINDS,
    ChatRequest,
    ChatResult,
    ProviderSettings,
    task_of,
)
from resumebias_dagster.settings import STORE_URL_ENV, store_url

STORE_FILE = "responses.sqlite"
# A store shared by several machines: a PostgreSQL URL (postgresql://user@host:port/db).
URL_SCHEMES = ("postgresql", "postgres")

_CHUNK = 500
# Claim states.
CLAIMED, BUSY, DONE = "claimed", "busy", "done"


class StoreError(RuntimeError):
    """The store cannot be used (not a store, unreachable, refused); the message names the
    file or the setting, never a password."""


@dataclass(frozen=True)
class ClaimOwner:
    """Who holds a claim: this machine's name, the process id and a token per run."""

    host: str
    pid: int
    token: str

    @classmethod
    def this_process(cls) -> ClaimOwner:
        return cls(socket.gethostname(), os.getpid(), f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}")


def batch_owner(submission_id: str) -> ClaimOwner:
    """The owner of a recorded batch's claims (store/batches.py): never a process of a machine."""
    return ClaimOwner(BATCH_HOST, 0, batch_token(submission_id))


def default_store_path() -> Path:
    from resumebias_dagster.settings import data_dir

    return data_dir() / STORE_FILE


def is_store_url(target: str | os.PathLike | None) -> bool:
    """Whether ``target`` is a URL (``scheme://...``) rather than a file path."""
    return isinstance(target, str) and "://" in target


def store_target(target: str | os.PathLike | None) -> str | os.PathLike:
    """``target``, or when empty: ``$RESUMEBIAS_STORE_URL``, else ``<data dir>/responses.sqlite``."""
    if target:
        return target
    return store_url() or default_store_path()


def check_store_url(url: str, setting: str) -> None:
    """Refuse a URL of a scheme no backend serves, naming ``setting`` (never echoing the URL:
    it may hold a password)."""
    scheme = url.split("://", 1)[0].strip().lower()
    if scheme not in URL_SCHEMES:
        shown = scheme if scheme.isascii() and scheme.replace("+", "").isalnum() and len(scheme) < 20 else "?"
        raise StoreError(
            f"{setting}: a response store URL must start with postgresql:// (got {shown}://); give "
            "postgresql://user@host:port/database for a store shared by several machines, or a file path for "
            "one machine's SQLite store"
        )


# Backend name -> its class, imported by name when a store of that kind opens (the backends
# subclass ResponseStore here, so this module never imports them; psycopg loads only for a URL).
BACKENDS = {
    "postgresql": ("resumebias_dagster.core.providers.store.postgres", "PostgresStore"),
    "sqlite": ("resumebias_dagster.core.providers.store.sqlite", "SQLiteStore"),
}


def backend_class(target: str | os.PathLike | None, setting: str | None = None) -> type[ResponseStore]:
    """The store class serving ``target`` (after ``store_target``)."""
    import importlib

    target = store_target(target)
    if is_store_url(target):
        check_store_url(str(target), setting or STORE_URL_ENV)
        module, name = BACKENDS["postgresql"]
    else:
        module, name = BACKENDS["sqlite"]
    return getattr(importlib.import_module(module), name)


def row_values(settings: ProviderSettings, request: ChatRequest, result: ChatResult) -> dict[str, Any]:
    """The row of ``result``, as a fresh first call of its key would store it."""
    now = now_iso()
    done = (
        result.error_kind is None
        or result.error_kind in TERMINAL_KINDS
        or (result.error_kind == EMPTY and EMPTY_CALL_LIMIT <= 1)
        or (result.billed_attempts or 0) >= BILLED_CALL_LIMIT
    )
    return {
        "key": result.key,
        "model": settings.name,
        "provider": settings.provider,
        "endpoint": settings.endpoint,
        "alias": settings.model,
        "resolved_model": result.resolved_model,
        "task": task_of(request),
        "request_json": json_text(request.as_json(), sort_keys=True),
        "text": result.text,
        "finish_reason": result.finish_reason,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "reasoning_tokens": result.reasoning_tokens,
        "cached_input_tokens": result.cached_input_tokens,
        "cache_write_tokens": result.cache_write_tokens,
        "cost_usd": result.cost_usd,
        "latency_s": result.latency_s,
        "attempts": result.attempts,
        "billed_attempts": result.billed_attempts,
        "logprobs_json": None if result.logprobs is None else json_text(result.logprobs),
        "error_kind": result.error_kind,
        "error_message": result.error_message,
        "done": int(done),
        "calls": 1,
        "created_at": now,
        "updated_at": now,
    }


def result_of(record: dict[str, Any]) -> ChatResult:
    return ChatResult(
        key=record["key"],
        text=record["text"],
        input_tokens=record["input_tokens"],
        output_tokens=record["output_tokens"],
        reasoning_tokens=record["reasoning_tokens"],
        cached_input_tokens=record["cached_input_tokens"],
        cache_write_tokens=record["cache_write_tokens"],
        resolved_model=record["resolved_model"],
        latency_s=record["latency_s"],
        attempts=record["attempts"] or 0,
        billed_attempts=record["billed_attempts"] or 0,
        logprobs=None if record["logprobs_json"] is None else json.loads(record["logprobs_json"]),
        finish_reason=record["finish_reason"],
        error_kind=record["error_kind"],
        error_message=record["error_message"],
        cost_usd=record["cost_usd"],
        from_store=True,
    )


class ResponseStore(BatchRecords):
    """The response store: thread-safe within a process, safe across processes (and, with
    PostgreSQL, across machines).

    ``ResponseStore(target)`` opens the backend ``target`` names: a ``postgresql://`` URL, or
    a file path (SQLite); empty: ``$RESUMEBIAS_STORE_URL``, else ``<data dir>/responses.sqlite``.
    ``read_only``: open an existing store without writing anything. ``setting`` names where
    the target came from, for error messages.
    """

    backend = ""
    # Words of the backend's SQL: a row lock on a SELECT, and the time now in epoch seconds
    # (the database's own clock, so that leases mean the same on every machine).
    _for_update = ""
    _now_sql = ""

    def __new__(cls, target: str | os.PathLike | None = None, *args: Any, **kwargs: Any) -> ResponseStore:
        if cls is ResponseStore:
            cls = backend_class(target, kwargs.get("setting"))
        return super().__new__(cls)

    # What a backend's __init__ sets: location (for messages, never a password), read_only.
    location: str
    read_only: bool
    _lock: threading.RLock
    # Columns of responses a store opened read-only lacks (one a version behind, not migrated:
    # nothing is written to it); they read as NULL.
    _absent: frozenset[str] = frozenset()

    # ------------------------------------------------------------------ backend hooks

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        raise NotImplementedError

    def _execute(self, sql: str, args: Iterable[Any] = ()) -> None:
        """Run a statement (within a transaction its outcome may come back only at commit)."""
        raise NotImplementedError

    def _statements(self, *statements: tuple[str, Iterable[Any]]) -> list[list[tuple] | int]:
        """Run ``statements`` in order; for each, its rows (a query) or the number of rows it
        changed. A backend may send them together (one round trip)."""
        raise NotImplementedError

    def _transaction(self) -> AbstractContextManager[None]:
        """A write transaction: committed at the end, rolled back on an exception."""
        raise NotImplementedError

    def _lock_snapshots(self) -> None:
        """Within a transaction: keep other writers of ``snapshots`` out until it ends."""

    def _encode(self, values: dict[str, Any]) -> list[Any]:
        """A row's values, in COLUMNS order, as the backend stores them."""
        return [values[c] for c in COLUMNS]

    def _decode(self, record: dict[str, Any]) -> dict[str, Any]:
        return record

    def _reconnected_after(self, exc: Exception) -> bool:
        return False

    def _close(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ reading

    def _records(self, sql: str, args: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return [self._decode(dict(zip(COLUMNS, row))) for row in self._query(sql, args)]

    @property
    def _selected(self) -> str:
        """The SELECT list of a whole row, in COLUMNS order (NULL for an absent column)."""
        return ", ".join(f"NULL AS {c}" if c in self._absent else c for c in COLUMNS)

    @_operation
    def get_many(self, keys: Iterable[str], include_transient: bool = False) -> dict[str, ChatResult]:
        """The stored outcomes of ``keys`` that are final (and transient ones if asked)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, ChatResult] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            where = f"key IN ({', '.join('?' for _ in chunk)})" + ("" if include_transient else " AND done = 1")
            for record in self._records(f"SELECT {self._selected} FROM responses WHERE {where}", chunk):
                found[record["key"]] = result_of(record)
        return found

    def rows(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row (of one model's name if given), as dicts, oldest first."""
        yield from self._all_rows(model)

    @_operation
    def _all_rows(self, model: str | None) -> list[dict[str, Any]]:
        sql = f"SELECT {self._selected} FROM responses"
        args: tuple = ()
        if model is not None:
            sql += " WHERE model = ?"
            args = (model,)
        return self._records(sql + " ORDER BY created_at, key", args)

    @_operation
    def mean_output_tokens(
        self, provider: str, endpoint: str, alias: str, task: str | None = None
    ) -> tuple[int, float | None]:
        """(answers stored, their mean output tokens) for one model alias at one endpoint,
        of one task (seniority, fit, judge, generation) if given."""
        sql = (
            "SELECT COUNT(output_tokens), AVG(CAST(output_tokens AS DOUBLE PRECISION)) FROM responses "
            "WHERE provider = ? AND endpoint = ? AND alias = ? AND error_kind IS NULL"
        )
        args: tuple = (provider, endpoint, alias)
        if task is not None:
            sql += " AND task = ?"
            args += (task,)
        n, mean = self._query(sql, args)[0]
        return int(n), None if mean is None else float(mean)

    @_operation
    def count(self, done: bool | None = None) -> int:
        sql = "SELECT COUNT(*) FROM responses" + ("" if done is None else f" WHERE done = {int(done)}")
        return int(self._query(sql)[0][0])

    @_operation
    def claims(self) -> list[dict[str, Any]]:
        """The claims held now (keys being called by some run)."""
        rows = self._query(f"SELECT {', '.join(CLAIM_COLUMNS)} FROM claims ORDER BY key")
        return [dict(zip(CLAIM_COLUMNS, r)) for r in rows]

    # ------------------------------------------------------------------ writing

    @_operation
    def claim(self, key: str, owner: ClaimOwner, lease_s: float) -> str:
        """Claim ``key`` for a call: ``"claimed"`` (call it now), ``"done"`` (a final row is
        stored: read it) or ``"busy"`` (another live run is calling it: wait for its answer).

        A claim expires after ``lease_s`` (on the database's clock); one held by a process of
        this machine that no longer exists is taken over at once.
        """
        mine = (owner.token, owner.host, owner.pid, float(lease_s))
        with self._transaction():
            while True:
                inserted, held, done = self._statements(
                    (
                        f"INSERT INTO claims ({', '.join(CLAIM_COLUMNS)}) VALUES (?, ?, ?, ?, {self._now_sql} + ?) "
                        "ON CONFLICT (key) DO NOTHING",
                        (key, *mine),
                    ),
                    (
                        f"SELECT owner, host, pid, expires_at < {self._now_sql} FROM claims WHERE key = ?"
                        f"{self._for_update}",
                        (key,),
                    ),
                    ("SELECT 1 FROM responses WHERE key = ? AND done = 1", (key,)),
                )
                if held:
                    break
                # Released between the two statements (PostgreSQL): again.
            if done:
                if inserted:
                    self._execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, owner.token))
                return DONE
            if inserted:
                return CLAIMED
            # A query's result: its rows.
            holder, host, pid, expired = cast(list[tuple], held)[0]
            # A batch's claim (host "batch", pid 0) is no process's: it ends when its batch is
            # closed, or when its lease does; pid 0 would name our own process group.
            batch = host == BATCH_HOST or str(holder).startswith(batch_token(""))
            dead = host == owner.host and not batch and int(pid) > 0 and not pid_alive(int(pid))
            if holder == owner.token or expired or dead:
                self._execute(
                    f"UPDATE claims SET owner = ?, host = ?, pid = ?, expires_at = {self._now_sql} + ? WHERE key = ?",
                    (*mine, key),
                )
                return CLAIMED
            return BUSY

    @_operation
    def release(self, owner: ClaimOwner, keys: Iterable[str] | None = None) -> None:
        """Drop ``owner``'s claims (of ``keys``, or all of them)."""
        if keys is None:
            self._execute("DELETE FROM claims WHERE owner = ?", (owner.token,))
            return
        keys = list(keys)
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            self._execute(
                f"DELETE FROM claims WHERE owner = ? AND key IN ({', '.join('?' for _ in chunk)})",
                (owner.token, *chunk),
            )

    @_operation
    def put(
        self, settings: ProviderSettings, request: ChatRequest, result: ChatResult, owner: ClaimOwner | None = None
    ) -> None:
        """Record ``result`` at once (its own transaction) and release ``owner``'s claim of
        its key in the same transaction; a final row is never replaced."""
        values = self._encode(row_values(settings, request, result))
        if owner is None:
            self._execute(UPSERT, values)
            return
        self._put_releasing(values, result.key, owner)

    def _put_releasing(self, values: list[Any], key: str, owner: ClaimOwner) -> None:
        with self._transaction():
            self._execute(UPSERT, values)
            self._execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, owner.token))

    # ------------------------------------------------------------------ snapshots

    _SNAPSHOT = "SELECT resolved_model, epoch, seen_at FROM snapshots WHERE provider = ? AND endpoint = ? AND alias = ?"

    @_operation
    def snapshot(self, settings: ProviderSettings) -> tuple[str, int] | None:
        """(resolved model, epoch) last seen for the settings' alias, or None if never probed."""
        rows = self._query(self._SNAPSHOT, (settings.provider, settings.endpoint, settings.model))
        return (rows[0][0], int(rows[0][1])) if rows else None

    _HISTORY = (
        "SELECT resolved_model, epoch, first_seen, last_seen FROM snapshot_epochs "
        "WHERE provider = ? AND endpoint = ? AND alias = ? ORDER BY epoch"
    )
    _SEEN = (
        "INSERT INTO snapshot_epochs (provider, endpoint, alias, resolved_model, epoch, first_seen, last_seen) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (provider, endpoint, alias, resolved_model) "
        "DO UPDATE SET last_seen = excluded.last_seen"
    )

    @_operation
    def snapshot_history(self, settings: ProviderSettings) -> list[dict[str, Any]]:
        """Every snapshot the settings' alias was seen resolving to, oldest epoch first:
        ``{"resolved_model", "epoch", "first_seen", "last_seen"}`` (UTC, ISO 8601)."""
        rows = self._query(self._HISTORY, (settings.provider, settings.endpoint, settings.model))
        return [dict(zip(("resolved_model", "epoch", "first_seen", "last_seen"), r)) for r in rows]

    @_operation
    def observe_snapshot(self, settings: ProviderSettings, resolved_model: str) -> tuple[bool, int]:
        """Record what the alias resolves to now; (moved, epoch). The first sighting sets the
        baseline (epoch 0, not a move). Each snapshot keeps the epoch it was first given
        (``snapshot_epochs``): a move back to one seen before returns to its epoch, so its
        stored answers (keyed by the epoch) are served again; a new snapshot gets the next
        epoch, never one of another snapshot."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        alias = (settings.provider, settings.endpoint, settings.model)
        with self._transaction():
            self._lock_snapshots()
            rows = self._query(self._SNAPSHOT, alias)
            row = rows[0] if rows else None
            known = {r[0]: int(r[1]) for r in self._query(self._HISTORY, alias)}
            if row is not None and row[0] not in known:
                # A store from before the history was kept knows only the current snapshot:
                # older ones' epochs are lost, so a return to one of them gets a new epoch.
                known[row[0]] = int(row[1])
                self._execute(self._SEEN, (*alias, row[0], int(row[1]), row[2], row[2]))
            moved = row is not None and row[0] != resolved_model
            if resolved_model in known:
                epoch = known[resolved_model]
            else:
                epoch = max([*known.values(), *([int(row[1])] if row else [])], default=-1) + 1
            if row is None or moved:
                self._execute(
                    "INSERT INTO snapshots (provider, endpoint, alias, resolved_model, epoch, seen_at) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (provider, endpoint, alias) "
                    "DO UPDATE SET resolved_model = excluded.resolved_model, epoch = excluded.epoch, "
                    "seen_at = excluded.seen_at",
                    (*alias, resolved_model, epoch, now),
                )
            self._execute(self._SEEN, (*alias, resolved_model, epoch, now, now))
        return moved, epoch

    def close(self) -> None:
        with self._lock:
            self._close()

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"
