"""The batch protocols of the fake provider server: what every wire's batch endpoints share.

A wire's batches (``batch_openai.py``, ``batch_anthropic.py``, ``batch_gemini.py``) keep their
batches here and answer each item as the server answers the same request live (``answer_for``:
the same text, usage and prompt cache), so a batch answer and a live one differ only in how
they travel. A batch stays in progress for ``polls_to_finish`` status reads (0: finished at
once), or until ``finish`` is called; ``hold()`` keeps every batch in progress (a run that
gives up polling), ``expire``/``cancel`` end one with some items not run, and
``fail_status_reads`` answers the next status reads with an error (a provider's outage while a run
polls). Every submission and status read is counted, so tests can assert that a resumed run
submitted nothing.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

# (status code, body bytes, content type) of one HTTP answer.
Response = tuple[int, bytes, str]


class StatusReadFailed(Exception):
    """A status read answered with an error (``fail_status_reads``): the server writes ``status``
    with a provider-style error body instead of the batch."""

    def __init__(self, status: int):
        super().__init__(f"status read failed with {status}")
        self.status = status


@dataclass
class FakeBatch:
    """One submitted batch: its items (id, the wire's request body) and what became of it."""

    batch_id: str
    items: list[tuple[str, dict[str, Any]]]
    label: str | None = None
    model: str = ""
    polls: int = 0
    # None while in progress, then "ended", "expired" or "cancelled".
    outcome: str | None = None
    # How many items were run before an expiry or cancellation (all of them when "ended").
    run_count: int = 0
    results: list[tuple[str, dict[str, Any] | None]] = field(default_factory=list)
    # Items given a scripted error instead of an answer: id -> (status code, message).
    errors: dict[str, tuple[int, str]] = field(default_factory=dict)


class FakeBatches:
    """The batches of one server. Subclasses speak a wire: ``handle`` answers its batch
    endpoints and returns None for every other request (the live path answers those)."""

    def __init__(self, server: Any, *, polls_to_finish: int = 1):
        """``server``: the ``FakeProviderServer`` these batches belong to (typed loosely: the
        server imports this module)."""
        self.server = server
        self.polls_to_finish = polls_to_finish
        # False: every batch endpoint answers 404 (a server without a batch API).
        self.enabled = True
        self.batches: dict[str, FakeBatch] = {}
        self.submissions = 0
        self.status_reads = 0
        self.result_reads = 0
        self._held = False
        self._failing_reads: list[int] = []  # the status codes the next status reads answer with
        self.failed_status_reads = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ control (tests)

    def hold(self, held: bool = True) -> None:
        """Keep every batch in progress whatever ``polls_to_finish`` says."""
        self._held = held

    def fail_status_reads(self, count: int, status: int = 503) -> None:
        """Answer the next ``count`` status reads of any batch with ``status`` (the batch is not
        read: it stays as it was)."""
        with self._lock:
            self._failing_reads = [status] * count

    def finish(self, batch_id: str | None = None) -> None:
        """End ``batch_id`` (every batch if None) now, every item run."""
        for batch in self._chosen(batch_id):
            self._end(batch, "ended", len(batch.items))

    def expire(self, batch_id: str | None = None, run_count: int = 0) -> None:
        """End ``batch_id`` (every batch if None) as expired, only its first ``run_count`` items run."""
        for batch in self._chosen(batch_id):
            self._end(batch, "expired", run_count)

    def cancel(self, batch_id: str | None = None, run_count: int = 0) -> None:
        for batch in self._chosen(batch_id):
            self._end(batch, "cancelled", run_count)

    def fail_item(self, item_id: str, status: int = 500, message: str = "internal error") -> None:
        """Answer the item ``item_id`` (a request key), in whichever batch holds it, with an error."""
        with self._lock:
            for batch in self.batches.values():
                if any(i == item_id for i, _ in batch.items):
                    batch.errors[item_id] = (status, message)

    @property
    def items_submitted(self) -> int:
        return sum(len(b.items) for b in self.batches.values())

    # ------------------------------------------------------------------ for the wires

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def add(self, batch: FakeBatch) -> FakeBatch:
        with self._lock:
            self.submissions += 1
            self.batches[batch.batch_id] = batch
        return batch

    def poll(self, batch_id: str) -> FakeBatch | None:
        """The batch after one more status read (ended now if it has had its reads), or None."""
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return None
            self.status_reads += 1
            if self._failing_reads:
                self.failed_status_reads += 1
                raise StatusReadFailed(self._failing_reads.pop(0))
            batch.polls += 1
            due = batch.polls >= self.polls_to_finish
        if batch.outcome is None and not self._held and due:
            self._end(batch, "ended", len(batch.items))
        return batch

    def answer_for(self, target: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The body the server would send for ``payload`` posted live to ``target`` (the path
        the live request goes to: the model's generateContent path on the Gemini wire)."""
        return self.server.answer_item(target, payload)

    def handle(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> Response | None:
        """The answer to a batch endpoint's request, or None when ``path`` is none of them
        (``not_found()`` for each of them while ``enabled`` is False)."""
        raise NotImplementedError

    @staticmethod
    def not_found(body: bytes = b'{"error": {"message": "Not Found", "code": 404}}') -> Response:
        return 404, body, "application/json"

    # ------------------------------------------------------------------ inside

    def _chosen(self, batch_id: str | None) -> list[FakeBatch]:
        with self._lock:
            return [b for b in self.batches.values() if batch_id is None or b.batch_id == batch_id]

    def _end(self, batch: FakeBatch, outcome: str, run_count: int) -> None:
        """Run the first ``run_count`` items (answers or their scripted errors), once."""
        with self._lock:
            if batch.outcome is not None:
                return
            batch.outcome, batch.run_count = outcome, run_count
        results: list[tuple[str, dict[str, Any] | None]] = []
        for i, (item_id, request) in enumerate(batch.items):
            results.append((item_id, self.item_result(batch, item_id, request) if i < run_count else None))
        batch.results = results

    def item_result(self, batch: FakeBatch, item_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """The answer body of one item run (the wire's live answer to the same request)."""
        raise NotImplementedError
