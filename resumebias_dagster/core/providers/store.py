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
at the price of an fsync per call. WAL needs a local disk: a store on a network filesystem
is refused (``core/common/filesystems.py``).

Rules of a row: an answer or a terminal error (refusal, content filter) is final and never
replaced; an empty answer is called again until its key has had ``EMPTY_CALL_LIMIT`` calls,
then final; a transient error (rate limit, 5xx, timeout, connection, ...) is kept for the
record and replaced by whatever the next call of that key brings. ``calls``, ``attempts``
and ``billed_attempts`` add up over every call of the key across runs. The text is stored
exactly as it came; parsing happens after it is stored, so an answer no parser can read is
still kept (and paid for only once).

Claims. A run claims each key just before calling it (table ``claims``), and the stored
answer releases the claim in the same transaction. A run that finds a key claimed by another
live run waits for that run's answer instead of paying for its own; a claim of a process
that died on this machine is taken over at once, one of another machine when its lease ends.

The file is the store's own: it carries ``PRAGMA application_id``; a file that is neither
empty, nor a store, nor a store of an earlier version is refused untouched.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from resumebias_dagster.core.common.processes import pid_alive
from resumebias_dagster.core.providers.types import (
    EMPTY,
    EMPTY_CALL_LIMIT,
    TERMINAL_KINDS,
    ChatRequest,
    ChatResult,
    ProviderSettings,
    task_of,
)

STORE_FILE = "responses.sqlite"
# "RBrs": marks the file as a response store of this project.
APPLICATION_ID = 0x52427273
_SCHEMA_VERSION = 3
_COLUMNS = (
    "key", "model", "provider", "endpoint", "alias", "resolved_model", "task", "request_json", "text",
    "finish_reason", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd", "latency_s", "attempts",
    "billed_attempts", "logprobs_json", "error_kind", "error_message", "done", "calls", "created_at", "updated_at",
)
_TABLES = f"""
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    alias TEXT NOT NULL,
    resolved_model TEXT,
    task TEXT,
    request_json TEXT NOT NULL,
    text TEXT,
    finish_reason TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    reasoning_tokens INTEGER,
    cost_usd REAL,
    latency_s REAL,
    attempts INTEGER,
    billed_attempts INTEGER,
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
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires_at REAL NOT NULL
);
"""
# Version 2 (before claims): the same responses table with parsed_json, without task and
# billed_attempts. Migrated in place; its keys stay valid.
_V2_COLUMNS = {
    "key", "model", "provider", "endpoint", "alias", "resolved_model", "request_json", "text", "parsed_json",
    "finish_reason", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd", "latency_s", "attempts",
    "logprobs_json", "error_kind", "error_message", "done", "calls", "created_at", "updated_at",
}
_MIGRATE_V2 = """
ALTER TABLE responses ADD COLUMN task TEXT;
ALTER TABLE responses ADD COLUMN billed_attempts INTEGER;
ALTER TABLE responses DROP COLUMN parsed_json;
UPDATE responses SET task = CASE
    WHEN json_extract(request_json, '$.tag') = 'audit-judge' THEN 'judge'
    WHEN json_extract(request_json, '$.tag') = 'fields'
      OR json_extract(request_json, '$.tag') LIKE 'neutral/%'
      OR json_extract(request_json, '$.tag') LIKE 'overstated/%'
      OR json_extract(request_json, '$.tag') LIKE 'understated/%' THEN 'generation'
    WHEN json_extract(request_json, '$.json_mode') THEN 'fit'
    ELSE 'seniority' END;
"""
_UPDATABLE = [c for c in _COLUMNS if c not in ("key", "calls", "created_at", "attempts", "billed_attempts", "done")]
# A row that is not final takes the new call's outcome; its counters add up. An empty answer
# is final once its key has had EMPTY_CALL_LIMIT calls.
_UPSERT = (
    f"INSERT INTO responses ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)}) "
    f"ON CONFLICT(key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _UPDATABLE)}, "
    "calls = responses.calls + 1, "
    "attempts = COALESCE(responses.attempts, 0) + COALESCE(excluded.attempts, 0), "
    "billed_attempts = COALESCE(responses.billed_attempts, 0) + COALESCE(excluded.billed_attempts, 0), "
    f"done = CASE WHEN excluded.error_kind = '{EMPTY}' THEN responses.calls + 1 >= {EMPTY_CALL_LIMIT} "
    "ELSE excluded.done END "
    "WHERE responses.done = 0"
)
_CHUNK = 500
# Claim states.
CLAIMED, BUSY, DONE = "claimed", "busy", "done"


class StoreError(RuntimeError):
    """The store file cannot be used (not a store, unreadable); the message names the file."""


@dataclass(frozen=True)
class ClaimOwner:
    """Who holds a claim: this machine's name, the process id and a token per run."""

    host: str
    pid: int
    token: str

    @classmethod
    def this_process(cls) -> ClaimOwner:
        return cls(socket.gethostname(), os.getpid(), f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}")


def default_store_path() -> Path:
    from resumebias_dagster.settings import data_dir

    return data_dir() / STORE_FILE


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class ResponseStore:
    """Thread-safe within a process, safe across processes (see the module doc).

    ``read_only``: open an existing store without writing anything (a missing file raises
    ``StoreError``; nothing is created).
    """

    def __init__(self, path: str | os.PathLike | None = None, durable: bool = False, busy_timeout_s: float = 120.0,
                 read_only: bool = False):
        from resumebias_dagster.core.common.filesystems import require_local_disk

        self.path = Path(path) if path else default_store_path()
        self.read_only = read_only
        require_local_disk(
            self.path, "the response store",
            "Give it a path on a local disk (the providers resource's store_path, or RESUMEBIAS_DATA_DIR); "
            "machines share answers through the scale-out storage, not a mounted folder (deploy/README.md).",
        )
        if read_only and not self.path.is_file():
            raise StoreError(f"response store {self.path} does not exist")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            if read_only:
                self._conn = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro", uri=True,
                                             timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
            else:
                self._conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                                             check_same_thread=False)
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            self._open_when_unlocked(durable, busy_timeout_s)
        except StoreError:
            self._conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            conn = getattr(self, "_conn", None)
            if conn is not None:
                conn.close()
            raise StoreError(
                f"{self.path} is not a response store (not an SQLite database: {exc}); give the response store a "
                "new file or an existing store"
            ) from None

    def _open_when_unlocked(self, durable: bool, busy_timeout_s: float) -> None:
        """``_open``, again while another process holds the file: two processes opening a new
        store at once can both want its exclusive lock (switching to WAL, creating the tables),
        and SQLite then answers "database is locked" to one of them at once instead of waiting."""
        deadline = time.monotonic() + busy_timeout_s
        pause = 0.01
        while True:
            try:
                return self._open(durable)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if time.monotonic() + pause > deadline:
                    raise StoreError(
                        f"{self.path} is locked by another process for longer than {busy_timeout_s:g} s; "
                        "try again when the other run has opened it"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def _open(self, durable: bool) -> None:
        tables = sorted(r[0] for r in self._conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
        app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        ours = app_id == APPLICATION_ID
        v2 = (app_id == 0 and version == 2 and tables == ["responses", "snapshots"]
              and self._columns("responses") == _V2_COLUMNS)
        fresh = not tables and app_id == 0
        if not (ours or v2 or fresh):
            listed = ", ".join(tables[:8]) + (", ..." if len(tables) > 8 else "") or "no tables"
            raise StoreError(
                f"{self.path} is not a response store (it holds {listed}); give the response store a new file or "
                "an existing store; nothing was written to this one"
            )
        if ours and version > _SCHEMA_VERSION:
            raise StoreError(f"{self.path}: response store of a newer version ({version}); upgrade resumebias_dagster")
        if self.read_only:
            if v2 or fresh or version < _SCHEMA_VERSION:
                raise StoreError(f"{self.path}: response store of an older version; open it once for writing to upgrade it")
            return
        # Switching to WAL takes a lock of its own; once set it is a property of the file.
        if self._conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        if ours and version == _SCHEMA_VERSION:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have done this while we waited for the lock.
            if self._conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                # Statement by statement: executescript would commit the open transaction first.
                script = (_MIGRATE_V2 if v2 else "") + _TABLES
                for statement in filter(str.strip, script.split(";")):
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def _columns(self, table: str) -> set[str]:
        return {r[1] for r in self._conn.execute(f"PRAGMA table_info({table})")}

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

    def mean_output_tokens(self, provider: str, endpoint: str, alias: str, task: str | None = None) -> tuple[int, float | None]:
        """(answers stored, their mean output tokens) for one model alias at one endpoint,
        of one task (seniority, fit, judge, generation) if given."""
        sql = ("SELECT COUNT(output_tokens), AVG(output_tokens) FROM responses "
               "WHERE provider = ? AND endpoint = ? AND alias = ? AND error_kind IS NULL")
        args: tuple = (provider, endpoint, alias)
        if task is not None:
            sql += " AND task = ?"
            args += (task,)
        with self._lock:
            n, mean = self._conn.execute(sql, args).fetchone()
        return n, mean

    def count(self, done: bool | None = None) -> int:
        sql = "SELECT COUNT(*) FROM responses" + ("" if done is None else f" WHERE done = {int(done)}")
        with self._lock:
            return self._conn.execute(sql).fetchone()[0]

    def claims(self) -> list[dict[str, Any]]:
        """The claims held now (keys being called by some run)."""
        with self._lock:
            rows = self._conn.execute("SELECT key, owner, host, pid, expires_at FROM claims ORDER BY key").fetchall()
        return [dict(zip(("key", "owner", "host", "pid", "expires_at"), r)) for r in rows]

    # ------------------------------------------------------------------ writing

    def claim(self, key: str, owner: ClaimOwner, lease_s: float) -> str:
        """Claim ``key`` for a call: ``"claimed"`` (call it now), ``"done"`` (a final row is
        stored: read it) or ``"busy"`` (another live run is calling it: wait for its answer).

        A claim expires after ``lease_s``; one held by a process of this machine that no
        longer exists is taken over at once.
        """
        now = time.time()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if self._conn.execute("SELECT 1 FROM responses WHERE key = ? AND done = 1", (key,)).fetchone():
                    state = DONE
                else:
                    row = self._conn.execute("SELECT owner, host, pid, expires_at FROM claims WHERE key = ?",
                                             (key,)).fetchone()
                    if row is None or row[0] == owner.token or row[3] < now or (row[1] == owner.host and not pid_alive(row[2])):
                        self._conn.execute(
                            "INSERT INTO claims VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                            "owner = excluded.owner, host = excluded.host, pid = excluded.pid, expires_at = excluded.expires_at",
                            (key, owner.token, owner.host, owner.pid, now + lease_s),
                        )
                        state = CLAIMED
                    else:
                        state = BUSY
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return state

    def release(self, owner: ClaimOwner, keys: Iterable[str] | None = None) -> None:
        """Drop ``owner``'s claims (of ``keys``, or all of them)."""
        with self._lock:
            if keys is None:
                self._conn.execute("DELETE FROM claims WHERE owner = ?", (owner.token,))
            else:
                keys = list(keys)
                for i in range(0, len(keys), _CHUNK):
                    chunk = keys[i : i + _CHUNK]
                    self._conn.execute(
                        f"DELETE FROM claims WHERE owner = ? AND key IN ({', '.join('?' for _ in chunk)})",
                        (owner.token, *chunk),
                    )

    def put(self, settings: ProviderSettings, request: ChatRequest, result: ChatResult,
            owner: ClaimOwner | None = None) -> None:
        """Record ``result`` at once (its own transaction) and release ``owner``'s claim of
        its key in the same transaction; a final row is never replaced."""
        now = _now()
        done = result.error_kind is None or result.error_kind in TERMINAL_KINDS
        values = {
            "key": result.key,
            "model": settings.name,
            "provider": settings.provider,
            "endpoint": settings.endpoint,
            "alias": settings.model,
            "resolved_model": result.resolved_model,
            "task": task_of(request),
            "request_json": json.dumps(request.as_json(), ensure_ascii=False, sort_keys=True),
            "text": result.text,
            "finish_reason": result.finish_reason,
            "input_tokens": result.input_tokens,
            "output_tokens": result.output_tokens,
            "reasoning_tokens": result.reasoning_tokens,
            "cost_usd": result.cost_usd,
            "latency_s": result.latency_s,
            "attempts": result.attempts,
            "billed_attempts": result.billed_attempts,
            "logprobs_json": None if result.logprobs is None else json.dumps(result.logprobs, ensure_ascii=False),
            "error_kind": result.error_kind,
            "error_message": result.error_message,
            "done": int(done),
            "calls": 1,
            "created_at": now,
            "updated_at": now,
        }
        with self._lock:
            if owner is None:
                self._conn.execute(_UPSERT, [values[c] for c in _COLUMNS])
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(_UPSERT, [values[c] for c in _COLUMNS])
                self._conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (result.key, owner.token))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

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
        input_tokens=record["input_tokens"],
        output_tokens=record["output_tokens"],
        reasoning_tokens=record["reasoning_tokens"],
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
