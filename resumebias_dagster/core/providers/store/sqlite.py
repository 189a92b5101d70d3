"""The response store on one machine: one SQLite file (``<data dir>/responses.sqlite`` by default).

Why SQLite and not the project's DuckDB file: DuckDB lets one process write at a time and
holds its lock for the life of the connection, so four partitions materialising at once
(four processes) could not all record their calls. SQLite in WAL mode lets any number of
processes read while one writes, hands the write lock over per transaction (a few
microseconds here), and waits for it up to ``busy_timeout`` instead of failing. Each
response is its own committed transaction, so a process killed with SIGKILL loses only the
calls still in flight. ``synchronous=NORMAL`` (the default here) makes a commit survive the
process dying; ``durable=True`` (``synchronous=FULL``) also survives the machine losing power,
at the price of an fsync per call. WAL needs a local disk: a store on a network filesystem
is refused (``core/common/filesystems.py``); machines share a PostgreSQL store instead
(``postgres.py``).

The rules of a row, claims and snapshots are the ones of every store (``base.py``). Every
transaction that writes is ``BEGIN IMMEDIATE``: it holds the file's write lock from its
first statement, so a claim's three steps run with no other writer in between.

The file is the store's own: it carries ``PRAGMA application_id``; a file that is neither
empty, nor a store, nor a store of an earlier version is refused untouched.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from resumebias_dagster.core.common.parsing import valid_utf8
from resumebias_dagster.core.providers.store.base import (
    ResponseStore,
    StoreError,
    default_store_path,
)
from resumebias_dagster.core.providers.store.schema import (
    ANSWER,
    BATCH_INDEX,
    BATCH_ITEMS,
    BATCHES,
    CACHE_COLUMNS,
    CLAIMS,
    COLUMNS,
    INTEGER,
    REAL,
    RESPONSES_CREATED,
    SNAPSHOT_EPOCHS,
    SNAPSHOTS,
    TEXT,
    add_columns,
    create_table,
)

# "RBrs": marks the file as a response store of this project.
APPLICATION_ID = 0x52427273
# 4: snapshot_epochs (each snapshot keeps its epoch); a store of version 3 gains the table at open.
# 5: responses.cached_input_tokens and cache_write_tokens (prompt caching); a store of an earlier
# version gains them when opened for writing, and one of version 4 opened read-only reads them as
# NULL.
# 6: batches and batch_items (provider batch mode); an older store gains them when opened for
# writing; one of version 4 or 5 opened read-only lists no batches.
_SCHEMA_VERSION = 6
_READABLE_VERSION = 4
# The portable types of base.py's tables in SQLite's words (an answer that cannot be text is
# kept as a BLOB of its bytes in its TEXT column).
TYPES = {TEXT: "TEXT", INTEGER: "INTEGER", REAL: "REAL", ANSWER: "TEXT"}
_CREATE = "CREATE TABLE IF NOT EXISTS"
_TABLES = "\n".join(
    (
        create_table(RESPONSES_CREATED, TYPES, prefix=_CREATE),
        "CREATE INDEX IF NOT EXISTS responses_model ON responses (model);",
        create_table(SNAPSHOTS, TYPES, prefix=_CREATE),
        create_table(SNAPSHOT_EPOCHS, TYPES, prefix=_CREATE),
        create_table(CLAIMS, TYPES, prefix=_CREATE),
    )
)
# Version 6: the provider batches.
_BATCH_TABLES = "\n".join(
    (create_table(BATCHES, TYPES, prefix=_CREATE), create_table(BATCH_ITEMS, TYPES, prefix=_CREATE), BATCH_INDEX)
)
# Version 2 (before claims): the same responses table with parsed_json, without task and
# billed_attempts. Migrated in place; its keys stay valid.
_V2_COLUMNS = {
    "key",
    "model",
    "provider",
    "endpoint",
    "alias",
    "resolved_model",
    "request_json",
    "text",
    "parsed_json",
    "finish_reason",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
    "latency_s",
    "attempts",
    "logprobs_json",
    "error_kind",
    "error_message",
    "done",
    "calls",
    "created_at",
    "updated_at",
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


class SQLiteStore(ResponseStore):
    """``read_only``: open an existing store without writing anything (a missing file raises
    ``StoreError``; nothing is created)."""

    backend = "sqlite"
    # Epoch seconds from the system clock (the same clock as time.time()).
    _now_sql = "((julianday('now') - 2440587.5) * 86400.0)"

    def __init__(
        self,
        target: str | os.PathLike | None = None,
        durable: bool = False,
        busy_timeout_s: float = 120.0,
        read_only: bool = False,
        setting: str | None = None,
    ):
        from resumebias_dagster.core.common.filesystems import require_local_disk

        self.path = Path(target) if target else default_store_path()
        self.location = str(self.path)
        self.read_only = read_only
        require_local_disk(
            self.path,
            "the response store",
            "Give it a path on a local disk (the providers resource's store_path, or RESUMEBIAS_DATA_DIR); "
            "machines share answers through a PostgreSQL store (store_url, RESUMEBIAS_STORE_URL), not a "
            "mounted folder (deploy/README.md).",
        )
        if read_only and not self.path.is_file():
            raise StoreError(f"response store {self.path} does not exist")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            if read_only:
                self._conn = sqlite3.connect(
                    f"{self.path.absolute().as_uri()}?mode=ro",
                    uri=True,
                    timeout=busy_timeout_s,
                    isolation_level=None,
                    check_same_thread=False,
                )
            else:
                self._conn = sqlite3.connect(
                    self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
                )
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
        tables = sorted(
            r[0]
            for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        )
        app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        ours = app_id == APPLICATION_ID
        v2 = (
            app_id == 0
            and version == 2
            and tables == ["responses", "snapshots"]
            and self._columns("responses") == _V2_COLUMNS
        )
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
            if v2 or fresh or version < _READABLE_VERSION:
                raise StoreError(
                    f"{self.path}: response store of an older version; open it once for writing to upgrade it"
                )
            self._absent = frozenset(COLUMNS) - self._columns("responses")
            self._batch_tables = {BATCHES.name, BATCH_ITEMS.name} <= set(tables)
            return
        # Switching to WAL takes a lock of its own; once set it is a property of the file.
        if self._conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
        if ours and version == _SCHEMA_VERSION:
            return
        with self._transaction():
            # Another process may have done this while we waited for the lock.
            ours_now = self._conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
            if not ours_now or self._conn.execute("PRAGMA user_version").fetchone()[0] < _SCHEMA_VERSION:
                # Statement by statement: executescript would commit the open transaction first.
                # _TABLES creates only what is missing: a store of version 3 gains snapshot_epochs.
                script = (_MIGRATE_V2 if v2 and not ours_now else "") + _TABLES + "\n" + _BATCH_TABLES
                for statement in filter(str.strip, script.split(";")):
                    self._conn.execute(statement)
                # Version 5, for a new store as for an old one: the columns added since, where missing.
                present = self._columns("responses")
                missing = tuple(c for c in CACHE_COLUMNS if c.name not in present)
                for statement in filter(str.strip, add_columns("responses", missing, TYPES).split(";")):
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")

    def _columns(self, table: str) -> set[str]:
        return {r[1] for r in self._conn.execute(f"PRAGMA table_info({table})")}

    # ------------------------------------------------------------------ hooks of base.ResponseStore

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        return self._conn.execute(sql, tuple(args)).fetchall()

    def _execute(self, sql: str, args: Iterable[Any] = ()) -> None:
        self._conn.execute(sql, tuple(args))

    def _encode(self, values: dict[str, Any]) -> list[Any]:
        # sqlite3 binds a str as UTF-8 and raises on a lone surrogate (an answer holding the
        # JSON escape \ud800, a body kept surrogate-escaped): the answer would be lost and paid
        # again every run. Such a text is stored as its bytes (surrogatepass: a BLOB in the
        # column, read back to the same str); names and messages are made valid instead.
        encoded = []
        for column in COLUMNS:
            value = values[column]
            if isinstance(value, str) and not value.isascii():
                if column == "text":
                    try:
                        value.encode("utf-8")
                    except UnicodeEncodeError:
                        value = value.encode("utf-8", "surrogatepass")
                else:
                    value = valid_utf8(value)
            encoded.append(value)
        return encoded

    def _decode(self, record: dict[str, Any]) -> dict[str, Any]:
        if isinstance(record["text"], bytes):
            record["text"] = record["text"].decode("utf-8", "surrogatepass")
        return record

    def _statements(self, *statements: tuple[str, Iterable[Any]]) -> list[list[tuple] | int]:
        results = []
        for sql, args in statements:
            cursor = self._conn.execute(sql, tuple(args))
            results.append(cursor.fetchall() if cursor.description else cursor.rowcount)
        return results

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _close(self) -> None:
        self._conn.close()
