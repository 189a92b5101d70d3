"""The store's memory of provider batches (core/providers/batch.py): each submission recorded
with its requests before it is sent, its provider id once confirmed, its state as polled, and
closed once its results are stored. A recorded batch holds the claims of its keys (owner
``batch:<submission id>``, on host ``batch``) until it is closed, so no run calls them live or
batches them again meanwhile."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from resumebias_dagster.core.providers.batch_api import CLOSED_STATES, COLLECTED, IN_PROGRESS, SUBMITTING
from resumebias_dagster.core.providers.store.operation import _operation, json_text, now_iso
from resumebias_dagster.core.providers.store.schema import BATCH_ITEMS, BATCHES
from resumebias_dagster.core.providers.types import ChatRequest, ProviderSettings, task_of

# A batch's claims last as long as a provider keeps a batch open (24 hours) with ample room: a
# batch is closed, and its claims dropped, when its results are stored.
BATCH_LEASE_S = 30 * 86400.0
BATCH_HOST = "batch"
_CHUNK = 500
_CLOSED = ", ".join(f"'{s}'" for s in sorted(CLOSED_STATES))


def batch_token(submission_id: str) -> str:
    """The claim owner token of a recorded batch."""
    return f"batch:{submission_id}"


class BatchRecords:
    """The batch operations of ``base.ResponseStore`` (which provides the SQL hooks)."""

    _now_sql: str

    @_operation
    def record_batch(
        self, settings: ProviderSettings, submission_id: str, items: Sequence[tuple[str, ChatRequest]], owner: Any
    ) -> None:
        """In one transaction: the batch (state submitting), its requests, and ``owner``'s claims
        of their keys handed to the batch (so a crash before this leaves only ordinary claims)."""
        now = now_iso()
        with self._transaction():  # type: ignore[attr-defined]
            self._execute(  # type: ignore[attr-defined]
                f"INSERT INTO batches ({', '.join(BATCHES.names)}) VALUES ({', '.join('?' for _ in BATCHES.names)})",
                (
                    submission_id,
                    settings.name,
                    settings.provider,
                    settings.endpoint,
                    settings.model,
                    None,
                    SUBMITTING,
                    None,
                    len(items),
                    None,
                    None,
                    None,
                    now,
                    now,
                ),
            )
            for key, request in items:
                self._execute(  # type: ignore[attr-defined]
                    f"INSERT INTO batch_items ({', '.join(BATCH_ITEMS.names)}) VALUES (?, ?, ?, ?)",
                    (key, submission_id, task_of(request), json_text(request.as_json(), sort_keys=True)),
                )
            keys = [key for key, _ in items]
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                self._execute(  # type: ignore[attr-defined]
                    f"UPDATE claims SET owner = ?, host = ?, pid = 0, expires_at = {self._now_sql} + ? "
                    f"WHERE owner = ? AND key IN ({', '.join('?' for _ in chunk)})",
                    (batch_token(submission_id), BATCH_HOST, BATCH_LEASE_S, owner.token, *chunk),
                )

    @_operation
    def batch_submitted(self, submission_id: str, batch_id: str) -> None:
        """The provider confirmed the batch: its id, and state in progress."""
        self._execute(  # type: ignore[attr-defined]
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
        self._execute(  # type: ignore[attr-defined]
            "UPDATE batches SET state = ?, provider_state = ?, succeeded = ?, errored = ?, message = ?, "
            "updated_at = ? WHERE submission_id = ?",
            (state, provider_state, succeeded, errored, message, now_iso(), submission_id),
        )

    @_operation
    def close_batch(self, submission_id: str, state: str = COLLECTED, message: str | None = None) -> None:
        """Close the batch (``state`` collected or not_submitted) and drop the claims it still
        holds: keys whose results were not stored may be asked again."""
        with self._transaction():  # type: ignore[attr-defined]
            self._execute(  # type: ignore[attr-defined]
                "UPDATE batches SET state = ?, message = COALESCE(?, message), updated_at = ? WHERE submission_id = ?",
                (state, message, now_iso(), submission_id),
            )
            self._execute("DELETE FROM claims WHERE owner = ?", (batch_token(submission_id),))  # type: ignore[attr-defined]

    @_operation
    def open_batches(self, keys: Iterable[str] | None = None, model: str | None = None) -> list[dict[str, Any]]:
        """The batches not closed that hold any of ``keys`` (every open batch if None), of
        ``model`` if given, oldest first."""
        where = f"b.state NOT IN ({_CLOSED})" + (" AND b.model = ?" if model is not None else "")
        extra: tuple = (model,) if model is not None else ()
        columns = ", ".join(f"b.{c}" for c in BATCHES.names)
        found: dict[str, dict[str, Any]] = {}
        if keys is None:
            rows = self._query(f"SELECT {columns} FROM batches b WHERE {where}", extra)  # type: ignore[attr-defined]
        else:
            keys = list(dict.fromkeys(keys))
            rows = []
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                rows += self._query(  # type: ignore[attr-defined]
                    f"SELECT DISTINCT {columns} FROM batches b JOIN batch_items i ON i.submission_id = b.submission_id "
                    f"WHERE {where} AND i.key IN ({', '.join('?' for _ in chunk)})",
                    (*extra, *chunk),
                )
        for row in rows:
            record = dict(zip(BATCHES.names, row))
            found[record["submission_id"]] = record
        return sorted(found.values(), key=lambda r: (r["created_at"], r["submission_id"]))

    @_operation
    def batch_requests(self, submission_id: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        """(key, task, request as JSON) of every request of the batch."""
        import json

        rows = self._query(  # type: ignore[attr-defined]
            "SELECT key, task, request_json FROM batch_items WHERE submission_id = ? ORDER BY key", (submission_id,)
        )
        return [(key, task, json.loads(text)) for key, task, text in rows]

    @_operation
    def batches(self, model: str | None = None) -> list[dict[str, Any]]:
        """Every batch of the store (of ``model`` if given), newest first."""
        sql = f"SELECT {', '.join(BATCHES.names)} FROM batches"
        args: tuple = ()
        if model is not None:
            sql, args = sql + " WHERE model = ?", (model,)
        rows = self._query(sql + " ORDER BY created_at DESC, submission_id", args)  # type: ignore[attr-defined]
        return [dict(zip(BATCHES.names, row)) for row in rows]
