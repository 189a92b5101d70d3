"""The store's memory of provider batches (core/providers/batch.py): each submission recorded
with its requests before it is sent, its provider id once confirmed, its state as polled, and
closed once its results are stored. A recorded batch holds the claims of its keys (owner
``batch:<submission id>``, on host ``batch``, pid 0) until it is closed, so no run calls them
live or batches them again meanwhile; ``base.ResponseStore.claim`` never takes such a claim
over as a dead process's."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from resumebias_dagster.core.providers.batch_api import CLOSED_STATES, COLLECTED, IN_PROGRESS, SUBMITTING
from resumebias_dagster.core.providers.store.operation import _operation, json_text, now_iso
from resumebias_dagster.core.providers.store.schema import BATCH_ITEMS, BATCHES
from resumebias_dagster.core.providers.types import ChatRequest, ProviderSettings, task_of

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

# A batch's claims last as long as a provider keeps a batch open (24 hours) with ample room: a
# batch is closed, and its claims dropped, when its results are stored.
BATCH_LEASE_S = 30 * 86400.0
BATCH_HOST = "batch"
_CHUNK = 500
# Items per INSERT: one round trip per 200 rows (800 parameters, within both backends' limits).
_ROWS = 200
# An open batch holding at most this many items per key asked is read whole (by its
# submission_id index) rather than probed key by key.
_SCAN_RATIO = 4
_CLOSED = ", ".join(f"'{s}'" for s in sorted(CLOSED_STATES))
_COLUMNS = ", ".join(BATCHES.names)


class _Holder(Protocol):
    """A claim's owner (``base.ClaimOwner``; base.py imports this module, not the reverse)."""

    @property
    def token(self) -> str: ...


def batch_token(submission_id: str) -> str:
    """The claim owner token of a recorded batch."""
    return f"batch:{submission_id}"


def _storable(text: str | None) -> str | None:
    """A provider's message as every text column holds it: NUL (PostgreSQL) and lone
    surrogates (both backends) replaced, so recording why a batch failed never fails."""
    if text is None or text.isascii() and "\x00" not in text:
        return text
    return text.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")


class BatchRecords:
    """The batch operations of ``base.ResponseStore`` (which provides the SQL hooks)."""

    _now_sql: str
    _lock: threading.RLock
    # False for a store of a version before batch mode opened read-only (nothing migrated): it
    # lists no batches.
    _batch_tables: bool = True

    if TYPE_CHECKING:

        def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]: ...
        def _execute(self, sql: str, args: Iterable[Any] = ()) -> None: ...
        def _transaction(self) -> AbstractContextManager[None]: ...

    @_operation
    def record_batch(
        self,
        settings: ProviderSettings,
        submission_id: str,
        items: Sequence[tuple[str, ChatRequest]],
        owner: _Holder,
    ) -> None:
        """In one transaction: the batch (state submitting), its requests, and ``owner``'s claims
        of their keys handed to the batch (so a crash before this leaves only ordinary claims)."""
        now = now_iso()
        names = (submission_id, settings.name, settings.provider, settings.endpoint, settings.model)
        batch = (*names, None, SUBMITTING, None, len(items), None, None, None, now, now)
        rows = [
            (key, submission_id, task_of(request), json_text(request.as_json(), sort_keys=True))
            for key, request in items
        ]
        with self._transaction():
            self._execute(f"INSERT INTO batches ({_COLUMNS}) VALUES ({', '.join('?' for _ in batch)})", batch)
            for i in range(0, len(rows), _ROWS):
                chunk = rows[i : i + _ROWS]
                self._execute(
                    f"INSERT INTO batch_items ({', '.join(BATCH_ITEMS.names)}) "
                    f"VALUES {', '.join('(?, ?, ?, ?)' for _ in chunk)}",
                    [value for row in chunk for value in row],
                )
            # One statement, the keys found by the batch's index: chunks of keys IN (...) let
            # PostgreSQL scan the run's claims by owner once per chunk.
            self._execute(
                f"UPDATE claims SET owner = ?, host = ?, pid = 0, expires_at = {self._now_sql} + ? "
                "WHERE owner = ? AND key IN (SELECT key FROM batch_items WHERE submission_id = ?)",
                (batch_token(submission_id), BATCH_HOST, BATCH_LEASE_S, owner.token, submission_id),
            )

    @_operation
    def batch_submitted(self, submission_id: str, batch_id: str) -> None:
        """The provider confirmed the batch: its id, and state in progress."""
        self._execute(
            "UPDATE batches SET batch_id = ?, state = ?, updated_at = ? WHERE submission_id = ?",
            (batch_id, IN_PROGRESS, now_iso(), submission_id),
        )

    @_operation
    def set_batch_state(
        self,
        submission_id: str,
        state: str,
        *,
        provider_state: str | None = None,
        succeeded: int | None = None,
        errored: int | None = None,
        message: str | None = None,
    ) -> None:
        """The batch as last polled: our state, the provider's word, its counts, why it failed."""
        self._execute(
            "UPDATE batches SET state = ?, provider_state = ?, succeeded = ?, errored = ?, message = ?, "
            "updated_at = ? WHERE submission_id = ?",
            (state, _storable(provider_state), succeeded, errored, _storable(message), now_iso(), submission_id),
        )

    @_operation
    def close_batch(self, submission_id: str, state: str = COLLECTED, message: str | None = None) -> None:
        """Close the batch (``state`` collected or not_submitted; ``message`` kept if None) and
        drop the claims it still holds: keys whose results were not stored may be asked again."""
        with self._transaction():
            self._execute(
                "UPDATE batches SET state = ?, message = COALESCE(?, message), updated_at = ? WHERE submission_id = ?",
                (state, _storable(message), now_iso(), submission_id),
            )
            self._execute("DELETE FROM claims WHERE owner = ?", (batch_token(submission_id),))

    @_operation
    def open_batches(self, keys: Iterable[str] | None = None, model: str | None = None) -> list[dict[str, Any]]:
        """The batches not closed that hold any of ``keys`` (every open batch if None), of
        ``model`` if given, oldest first. The open batches are read first: with none (the usual
        case) the keys are never looked up."""
        if not self._batch_tables:
            return []
        sql = f"SELECT {_COLUMNS} FROM batches WHERE state NOT IN ({_CLOSED})"
        args: tuple[str, ...] = ()
        if model is not None:
            sql, args = sql + " AND model = ?", (model,)
        records = [dict(zip(BATCHES.names, r)) for r in self._query(sql + " ORDER BY created_at, submission_id", args)]
        if keys is None or not records:
            return records
        held = self._holding(records, list(dict.fromkeys(keys)))
        return [r for r in records if r["submission_id"] in held]

    def _holding(self, records: list[dict[str, Any]], keys: list[str]) -> set[str]:
        """The submission ids of ``records`` whose items hold any of ``keys``."""
        asked, held, probe = set(keys), set(), []
        for record in records:
            if record["requests"] <= _SCAN_RATIO * len(keys):
                rows = self._query("SELECT key FROM batch_items WHERE submission_id = ?", (record["submission_id"],))
                if any(key in asked for (key,) in rows):
                    held.add(record["submission_id"])
            else:
                probe.append(record["submission_id"])
        for i in range(0, len(keys), _CHUNK):
            if not probe:
                break
            chunk = keys[i : i + _CHUNK]
            rows = self._query(
                f"SELECT DISTINCT submission_id FROM batch_items WHERE submission_id IN ({', '.join('?' for _ in probe)}) "
                f"AND key IN ({', '.join('?' for _ in chunk)})",
                (*probe, *chunk),
            )
            found = {r[0] for r in rows}
            held |= found
            probe = [s for s in probe if s not in found]
        return held

    @_operation
    def batch_requests(self, submission_id: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        """(key, task, request as ``ChatRequest.as_json`` wrote it) of every request of the
        batch, in key order (the same on both backends; a request finds its answer by key)."""
        if not self._batch_tables:
            return []
        rows = self._query(
            "SELECT key, task, request_json FROM batch_items WHERE submission_id = ? ORDER BY key", (submission_id,)
        )
        return [(key, task, json.loads(text)) for key, task, text in rows]

    @_operation
    def batches(self, model: str | None = None) -> list[dict[str, Any]]:
        """Every batch of the store (of ``model`` if given), newest first."""
        if not self._batch_tables:
            return []
        sql = f"SELECT {_COLUMNS} FROM batches"
        args: tuple[str, ...] = ()
        if model is not None:
            sql, args = sql + " WHERE model = ?", (model,)
        rows = self._query(sql + " ORDER BY created_at DESC, submission_id", args)
        return [dict(zip(BATCHES.names, row)) for row in rows]
