"""The response store: every provider call is written down the moment it returns.

One SQLite file (``<data dir>/responses.sqlite`` by default), one row per request key.

Why SQLite and not the project's DuckDB file: DuckDB lets one process write at a time and
holds its lock for the life of the connection, so four partitions materialising at once
(four processes) could not all record their calls. SQLite in WAL mode lets any number of
processes read while one writes, hands the write lock over per transaction (a few
microseconds here), and waits for it up to ``busy_timeout`` instead of failing. Each
response is its own committed transaction, so a process killed with SIGKILL loses only the
calls still in flight. ``synchronous=NORMAL`` (the default here) makes a commit survive the
process dying; ``durable=True`` (``synchronous=FULL``) also survives the machine losing power,
at the price of an fsync per call. WAL needs a local file system (not NFS).

Rules of a row: an answer or a terminal error (refusal, content filter, empty) is final and
never replaced; a transient error (rate limit, 5xx, timeout, connection, ...) is kept for
the record and replaced by whatever the next call of that key brings. ``calls`` counts the
calls made for the key across runs.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from resumebias_dagster.core.providers.types import TERMINAL_KINDS, ChatRequest, ChatResult, ProviderSettings

STORE_FILE = "responses.sqlite"
_SCHEMA_VERSION = 2
_COLUMNS = (
    "key", "model", "provider", "endpoint", "alias", "resolved_model", "request_json", "text", "parsed_json",
    "finish_reason", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd", "latency_s", "attempts",
    "logprobs_json", "error_kind", "error_message", "done", "calls", "created_at", "updated_at",
)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    alias TEXT NOT NULL,
    resolved_model TEXT,
    request_json TEXT NOT NULL,
    text TEXT,
    parsed_json TEXT,
    finish_reason TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    reasoning_tokens INTEGER,
    cost_usd REAL,
    latency_s REAL,
    attempts INTEGER,
    logprobs_json TEXT,
    error_kind TEXT,
    error_message TEXT,
    done INTEGER NOT NULL,
    calls INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_model ON responses (model);
CREATE TABLE IF NOT EXISTS snapshots (
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    alias TEXT NOT NULL,
    resolved_model TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (provider, endpoint, alias)
);
PRAGMA user_version = {_SCHEMA_VERSION};
"""
_UPDATABLE = [c for c in _COLUMNS if c not in ("key", "calls", "created_at")]
_UPSERT = (
    f"INSERT INTO responses ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)}) "
    f"ON CONFLICT(key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _UPDATABLE)}, "
    "calls = responses.calls + 1 WHERE responses.done = 0"
)
_CHUNK = 500


def default_store_path() -> Path:
    from resumebias_dagster.settings import data_dir

    return data_dir() / STORE_FILE


class ResponseStore:
    """Thread-safe within a process, safe across processes (see the module doc)."""

    def __init__(self, path: str | os.PathLike | None = None, durable: bool = False, busy_timeout_s: float = 120.0):
        self.path = Path(path) if path else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        # Switching to WAL takes a lock of its own; once set it is a property of the file.
        if self._conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        if self._conn.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
            self._conn.executescript(_SCHEMA)

    # ------------------------------------------------------------------ reading

    def get_many(self, keys: Iterable[str], include_transient: bool = False) -> dict[str, ChatResult]:
        """The stored outcomes of ``keys`` that are final (and transient ones if asked)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, ChatResult] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                where = f"key IN ({', '.join('?' for _ in chunk)})" + ("" if include_transient else " AND done = 1")
                cursor = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM responses WHERE {where}", chunk)
                for row in cursor:
                    record = dict(zip(_COLUMNS, row))
                    found[record["key"]] = _result(record)
        return found

    def rows(self, model: str | None = None) -> Iterator[dict[str, Any]]:
        """Every row (of one model's name if given), as dicts, oldest first."""
        sql = f"SELECT {', '.join(_COLUMNS)} FROM responses"
        args: tuple = ()
        if model is not None:
            sql += " WHERE model = ?"
            args = (model,)
        with self._lock:
            records = [dict(zip(_COLUMNS, row)) for row in self._conn.execute(sql + " ORDER BY created_at, key", args)]
        yield from records

    def mean_output_tokens(self, provider: str, endpoint: str, alias: str) -> tuple[int, float | None]:
        """(answers stored, their mean output tokens) for one model alias at one endpoint."""
        with self._lock:
            n, mean = self._conn.execute(
                "SELECT COUNT(output_tokens), AVG(output_tokens) FROM responses "
                "WHERE provider = ? AND endpoint = ? AND alias = ? AND error_kind IS NULL",
                (provider, endpoint, alias),
            ).fetchone()
        return n, mean

    def count(self, done: bool | None = None) -> int:
        sql = "SELECT COUNT(*) FROM responses" + ("" if done is None else f" WHERE done = {int(done)}")
        with self._lock:
            return self._conn.execute(sql).fetchone()[0]

    # ------------------------------------------------------------------ writing

    def put(self, settings: ProviderSettings, request: ChatRequest, result: ChatResult) -> None:
        """Record ``result`` at once (its own transaction); a final row is never replaced."""
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        done = result.error_kind is None or result.error_kind in TERMINAL_KINDS
        values = {
            "key": result.key,
            "model": settings.name,
            "provider": settings.provider,
            "endpoint": settings.endpoint,
            "alias": settings.model,
            "resolved_model": result.resolved_model,
            "request_json": json.dumps(request.as_json(), ensure_ascii=False, sort_keys=True),
            "text": result.text,
            "parsed_json": None if result.parsed_json is None else json.dumps(result.parsed_json, ensure_ascii=False),
            "finish_reason": result.finish_reason,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "reasoning_tokens": result.reasoning_tokens,
            "cost_usd": result.cost_usd,
            "latency_s": result.latency_s,
            "attempts": result.attempts,
            "logprobs_json": None if result.logprobs is None else json.dumps(result.logprobs, ensure_ascii=False),
            "error_kind": result.error_kind,
            "error_message": result.error_message,
            "done": int(done),
            "calls": 1,
            "created_at": now,
            "updated_at": now,
        }
        with self._lock:
            self._conn.execute(_UPSERT, [values[c] for c in _COLUMNS])

    # ------------------------------------------------------------------ snapshots

    def snapshot(self, settings: ProviderSettings) -> tuple[str, int] | None:
        """(resolved model, epoch) last seen for the settings' alias, or None if never probed."""
        with self._lock:
            row = self._conn.execute(
                "SELECT resolved_model, epoch FROM snapshots WHERE provider = ? AND endpoint = ? AND alias = ?",
                (settings.provider, settings.endpoint, settings.model),
            ).fetchone()
        return None if row is None else (row[0], int(row[1]))

    def observe_snapshot(self, settings: ProviderSettings, resolved_model: str) -> tuple[bool, int]:
        """Record what the alias resolves to now; (moved, epoch). The first sighting sets the
        baseline (epoch 0, not a move); each later change bumps the epoch."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute(
                    "SELECT resolved_model, epoch FROM snapshots WHERE provider = ? AND endpoint = ? AND alias = ?",
                    (settings.provider, settings.endpoint, settings.model),
                ).fetchone()
                moved = row is not None and row[0] != resolved_model
                epoch = 0 if row is None else int(row[1]) + int(moved)
                if row is None or moved:
                    self._conn.execute(
                        "INSERT INTO snapshots VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(provider, endpoint, alias) "
                        "DO UPDATE SET resolved_model = excluded.resolved_model, epoch = excluded.epoch, "
                        "seen_at = excluded.seen_at",
                        (settings.provider, settings.endpoint, settings.model, resolved_model, epoch, now),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return moved, epoch

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _result(record: dict[str, Any]) -> ChatResult:
    return ChatResult(
        key=record["key"],
        text=record["text"],
        parsed_json=None if record["parsed_json"] is None else json.loads(record["parsed_json"]),
        input_tokens=record["input_tokens"],
        output_tokens=record["output_tokens"],
        reasoning_tokens=record["reasoning_tokens"],
        resolved_model=record["resolved_model"],
        latency_s=record["latency_s"],
        attempts=record["attempts"] or 0,
        logprobs=None if record["logprobs_json"] is None else json.loads(record["logprobs_json"]),
        finish_reason=record["finish_reason"],
        error_kind=record["error_kind"],
        error_message=record["error_message"],
        cost_usd=record["cost_usd"],
        from_store=True,
    )
