"""Batch mode: a run's missing requests sent as provider batches (half the list price), polled
until they end, each answer stored by the store's rules (raw answer first, typed errors).

The store is the batch's memory. Before a batch is submitted its keys are claimed for it and the
batch is recorded with its requests (``record_batch``), the provider's batch id as soon as the
provider confirms it (``batch_submitted``). So a run killed at any point after the record finds
the batch again: the next run polls it and submits nothing, and no run calls a key of an open
batch live (its claim is the batch's until the batch is collected). A run killed between the
record and the provider's confirmation leaves a batch without an id: the next run asks the
provider for a batch of that label (OpenAI's metadata, Gemini's display name); where none is
found the keys are free again. Anthropic keeps no label: there the next run takes the one batch
the store does not know of the same size created within minutes of the record
(``batch_anthropic.find``), whose results are matched by request key; where there is none, or
more than one, it says so before it submits those keys again.

A run polls every ``batch_poll_s`` for at most ``batch_wait_s``; then it stops with
``BatchesPending``, naming the batches and their state, and the next run picks them up. A poll
that fails for a reason that passes (a connection, a time-out, a 5xx, a rate limit: after the
SDK's own retries) is said and tried again at the next poll; one that will not pass (a refused
key, an unknown batch) stops the run with its reason, the batch kept for the next run.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from resumebias_dagster.core.providers.batch_api import (
    FAILED,
    FINISHED_STATES,
    NOT_RUN,
    NOT_SUBMITTED,
    BatchBackend,
    BatchError,
    BatchStatus,
    BatchUnsupported,
    UnconfirmedRecord,
)
from resumebias_dagster.core.providers.store import CLAIMED, ClaimOwner, ResponseStore
from resumebias_dagster.core.providers.store.base import batch_owner
from resumebias_dagster.core.providers.types import (
    CONNECTION,
    RATE_LIMITED,
    SERVER_ERROR,
    TIMEOUT,
    ChatRequest,
    ChatResult,
    ProviderSettings,
)

# The most requests and bytes of one batch, under each provider's documented limits
# (OpenAI: 50,000 requests, 200 MB file; Anthropic: 100,000 requests, 256 MB; Gemini inline
# requests: 20 MB in all): larger runs are cut into several batches.
LIMITS = {"openai": (50_000, 190_000_000), "anthropic": (100_000, 240_000_000), "google": (10_000, 19_000_000)}
# A batch recorded but never confirmed is looked for at the provider; so young a record may
# belong to a run still submitting it, so it is left alone.
UNCONFIRMED_GRACE_S = 600.0
# Why a poll (status, results, finding a batch) may fail and the next poll succeed.
PASSING_POLL_ERRORS = frozenset({CONNECTION, TIMEOUT, SERVER_ERROR, RATE_LIMITED})

Notify = Callable[[str], None]


class BatchRefused(RuntimeError):
    """The provider refused a batch whole (no item run): the run stops with the provider's
    reason, which the rows, the store and ``resumebias batches`` carry too."""


# A batch refused for the provider's quota (OpenAI's enqueued-token limit) is submitted again
# only this long after the refusal: at once it would be refused the same way.
QUOTA_CODES = ("token_limit_exceeded", "quota", "rate_limit")
QUOTA_WAIT_S = 900.0


def quota_refusal(store: ResponseStore, model: str, now: datetime | None = None) -> tuple[str, float] | None:
    """(the provider's reason, seconds left to wait) when ``model``'s newest batch was refused
    for a quota less than ``QUOTA_WAIT_S`` ago; None otherwise."""
    rows = store.batches(model)
    message = str(rows[0].get("message") or "") if rows else ""
    if not any(code in message for code in QUOTA_CODES):
        return None
    refused_at = _parsed_time(str(rows[0].get("updated_at") or ""))
    if refused_at is None:
        return None
    left = QUOTA_WAIT_S - ((now or datetime.now(timezone.utc)) - refused_at).total_seconds()
    return (message, left) if left > 0 else None


class BatchesPending(RuntimeError):
    """The run's wait for its batches ran out before they ended; nothing is lost: the next run
    polls the same batches and submits none of their requests again."""


@dataclass
class BatchRun:
    """One run's batch work for one model: what it needs and what it found."""

    settings: ProviderSettings
    store: ResponseStore
    backend: BatchBackend
    owner: ClaimOwner
    price: Callable[[ChatResult], float | None]
    notify: Notify
    # Results of this run's keys, by key.
    fresh: dict[str, ChatResult] = field(default_factory=dict)
    submissions: int = 0
    answers: int = 0
    states: dict[str, str] = field(default_factory=dict)
    # The last poll of a batch that failed for a passing reason, by submission id (gone once one succeeds).
    poll_errors: dict[str, str] = field(default_factory=dict)
    # "batch ID: the provider's reason" of each batch the provider refused whole.
    refused: list[str] = field(default_factory=list)

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], lease_s: float) -> list[tuple[str, ChatRequest]]:
        """Submit ``items`` in batches; return the items left to live calls: those another run
        holds or answered, and all of them where the endpoint has no batch protocol."""
        taken: list[tuple[str, ChatRequest]] = []
        left: list[tuple[str, ChatRequest]] = []
        for key, request in items:
            (taken if self.store.claim(key, self.owner, lease_s) == CLAIMED else left).append((key, request))
        sent = 0  # items of ``taken`` in batches submitted so far
        for chunk in chunks(self.settings.provider, taken):
            submission_id = f"rb-{uuid.uuid4().hex[:20]}"
            self.store.record_batch(self.settings, submission_id, chunk, self.owner)
            try:
                batch_id = await self.backend.submit(chunk, submission_id)
            except BatchUnsupported as exc:
                self.store.close_batch(submission_id, NOT_SUBMITTED, message=str(exc))
                self.notify(
                    f"{self.settings.name}: {exc}; making live calls instead, at the list price: twice what the "
                    f"batch would have cost for these {len(taken) - sent:,} requests"
                )
                return left + taken[sent:]
            except BatchError as exc:
                self.store.close_batch(submission_id, NOT_SUBMITTED, message=str(exc))
                for key, _ in taken[sent:]:
                    self.fresh[key] = ChatResult(
                        key=key, error_kind=exc.kind, error_message=f"batch not submitted: {exc}"
                    )
                return left
            self.store.batch_submitted(submission_id, batch_id)
            sent += len(chunk)
            self.submissions += 1
            self.notify(f"{self.settings.name}: batch {batch_id} submitted ({len(chunk):,} requests)")
        return left

    async def collect(self, records: list[dict[str, Any]], *, wait_s: float, poll_s: float) -> list[str]:
        """Poll the batches of ``records`` until each has ended and its results are stored, or
        ``wait_s`` has passed (then ``BatchesPending``). Returns the submission ids found never
        submitted (their keys are free again)."""
        deadline = time.monotonic() + wait_s
        pending = {r["submission_id"]: r for r in records}
        dropped: list[str] = []
        while pending:
            for submission_id, record in list(pending.items()):
                try:
                    if not record.get("batch_id") and not await self._confirm(record):
                        del pending[submission_id]
                        dropped.append(submission_id)
                        continue
                    status = await self.backend.status(record["batch_id"])
                    self._note(submission_id, record, status)
                    if status.state in FINISHED_STATES:
                        await self._store_results(submission_id, record, status)
                        del pending[submission_id]
                        if status.state == FAILED:
                            self.refused.append(f"batch {record['batch_id']}: {status.message or 'no reason given'}")
                    self.poll_errors.pop(submission_id, None)
                except BatchError as exc:
                    if exc.kind not in PASSING_POLL_ERRORS:
                        raise
                    # The results are fetched whole before any is stored, so a failed poll stored nothing.
                    self.poll_errors[submission_id] = f"{exc.kind}: {exc}"
                    self.notify(
                        f"{self.settings.name}: could not read the state of batch {record.get('batch_id') or submission_id} "
                        f"({exc.kind}: {exc}); polling again in {poll_s:g} s"
                    )
            if not pending:
                break
            if time.monotonic() + poll_s > deadline:
                raise BatchesPending(self._pending_message(pending))
            await asyncio.sleep(poll_s)
        return dropped

    async def _confirm(self, record: dict[str, Any]) -> bool:
        """Whether a batch recorded without an id reached the provider (its id is stored then)."""
        submission_id = record["submission_id"]
        recorded_at = _parsed_time(record["created_at"])
        known = frozenset(b["batch_id"] for b in self.store.batches() if b.get("batch_id"))
        found = await self.backend.find(
            submission_id, None if recorded_at is None else UnconfirmedRecord(record["requests"], recorded_at, known)
        )
        if found:
            self.store.batch_submitted(submission_id, found)
            record["batch_id"] = found
            if not self.backend.finds_by_label:
                self.notify(
                    f"{self.settings.name}: batch submission {submission_id} was interrupted before the provider "
                    f"confirmed it; batch {found} has its size ({record['requests']:,} requests) and time and is "
                    "taken for it: its answers are matched by request key, and keys it does not answer are asked again"
                )
            return True
        if _age_s(record["created_at"]) < UNCONFIRMED_GRACE_S:
            raise BatchesPending(
                f"{self.settings.name}: batch submission {submission_id} ({record['requests']:,} requests) was "
                "recorded moments ago and is not confirmed yet (another run may be submitting it); run again "
                "in a few minutes"
            )
        self.store.close_batch(submission_id, NOT_SUBMITTED, message="the provider shows no batch of this submission")
        self.notify(
            f"{self.settings.name}: batch submission {submission_id} was interrupted before the provider confirmed "
            f"it and the provider shows no batch labelled so; its {record['requests']:,} requests are asked again"
            + (
                " (this provider keeps no batch label, and no single unknown batch of this size was created within "
                "minutes of it: if the interrupted submission did reach it, those requests are answered twice)"
                if not self.backend.finds_by_label
                else ""
            )
        )
        return False

    def _note(self, submission_id: str, record: dict[str, Any], status: BatchStatus) -> None:
        self.store.set_batch_state(
            submission_id,
            status.state,
            provider_state=status.provider_state,
            succeeded=status.succeeded,
            errored=status.errored,
            message=status.message,
        )
        line = (
            f"{self.settings.name}: batch {record['batch_id']} {status.provider_state}"
            + (f", {status.succeeded or 0:,} answered" if status.succeeded is not None else "")
            + (f", {status.errored:,} failed" if status.errored else "")
            + f" of {record['requests']:,}"
        )
        if self.states.get(submission_id) != line:
            self.states[submission_id] = line
            self.notify(line)

    async def _store_results(self, submission_id: str, record: dict[str, Any], status: BatchStatus) -> None:
        """Store every result of an ended batch (its answers priced at the batch rate), mark
        items the provider did not run (with the provider's reason), and close the batch."""
        items = {
            key: ChatRequest.from_json(data, task or "") for key, task, data in self.store.batch_requests(submission_id)
        }
        owner = batch_owner(submission_id)
        seen: set[str] = set()
        stray = 0
        for result in await self.backend.results(record["batch_id"]):
            if result.key not in items or result.key in seen:
                stray += 1
                continue
            seen.add(result.key)
            result.cost_usd = self.price(result)
            # Stored first, as it came, releasing the batch's claim of the key in the same transaction.
            self.store.put(self.settings, items[result.key], result, owner=owner)
            self.fresh[result.key] = result
            self.answers += int(result.ok)
        for key in items.keys() - seen:
            self.fresh[key] = ChatResult(
                key=key,
                error_kind=NOT_RUN,
                error_message=f"batch {record['batch_id']} ended without running it"
                + (f": {status.message}" if status.message else ""),
            )
        self.store.close_batch(submission_id)
        if stray:
            self.notify(f"{self.settings.name}: batch {record['batch_id']}: {stray} result line(s) of no request of it")

    def _pending_message(self, pending: dict[str, dict[str, Any]]) -> str:
        lines = [
            (self.states.get(sid) or f"batch {r.get('batch_id') or sid}: {r['state']}")
            + (
                f" (its state could not be read ({error}) at the last poll)"
                if (error := self.poll_errors.get(sid))
                else ""
            )
            for sid, r in pending.items()
        ]
        return (
            f"{self.settings.name}: {len(pending)} batch(es) still running after batch_wait_s "
            f"({self.settings.batch_wait_s:g} s): " + "; ".join(lines) + ". Nothing is lost: materialise again "
            "to collect them (no request is submitted twice)"
        )


def chunks(provider: str, items: Sequence[tuple[str, ChatRequest]]) -> list[list[tuple[str, ChatRequest]]]:
    """``items`` cut under the provider's batch limits (requests and, roughly, bytes)."""
    max_requests, max_bytes = LIMITS.get(provider, (50_000, 190_000_000))
    out: list[list[tuple[str, ChatRequest]]] = []
    current: list[tuple[str, ChatRequest]] = []
    size = 0
    for key, request in items:
        # The prompt dominates a request's bytes; a margin covers the envelope of each wire.
        n = len("".join(text for _, text in request.messages).encode("utf-8", "surrogatepass")) + 1_000
        if current and (len(current) >= max_requests or size + n > max_bytes):
            out.append(current)
            current, size = [], 0
        current.append((key, request))
        size += n
    if current:
        out.append(current)
    return out


def _parsed_time(created_at: str) -> datetime | None:
    try:
        return datetime.fromisoformat(created_at)
    except (TypeError, ValueError):
        return None


def _age_s(created_at: str) -> float:
    created = _parsed_time(created_at)
    return float("inf") if created is None else (datetime.now(timezone.utc) - created).total_seconds()


async def run_batches(
    settings: ProviderSettings,
    store: ResponseStore,
    todo: list[tuple[str, ChatRequest]],
    *,
    backend_factory: Callable[[], BatchBackend | None],
    owner: ClaimOwner,
    price: Callable[[ChatResult], float | None],
    notify: Notify,
    lease_s: float,
) -> tuple[list[tuple[str, ChatRequest]], BatchRun | None]:
    """The batch part of a run: first the open batches that hold any of ``todo``'s keys are
    polled (whatever the model's ``batch`` setting: none of their keys is called again), then,
    with ``batch: true``, the rest is submitted and polled. Returns the items left to live calls
    and the batch run (its ``fresh`` results), or None where no batch was involved."""
    records = store.open_batches([key for key, _ in todo])
    if not records and not settings.batch:
        return todo, None
    backend = backend_factory()
    if backend is None:
        notify(f"{settings.name}: its wire ({settings.provider}) has no batch protocol; making live calls")
        return todo, None
    run = BatchRun(settings, store, backend, owner, price, notify)
    try:
        if records:
            notify(
                f"{settings.name}: {len(records)} batch(es) submitted earlier hold some of these requests: "
                "polling them; none of their requests is submitted or called again"
            )
            await run.collect(records, wait_s=settings.batch_wait_s, poll_s=settings.batch_poll_s)
        todo = [(key, request) for key, request in todo if key not in run.fresh]
        if settings.batch and todo and not run.refused:
            waiting = quota_refusal(store, settings.name)
            if waiting is not None:
                raise BatchRefused(
                    f"{settings.name}: the provider refused this model's last batch for a quota ({waiting[0]}); "
                    f"submitting again now would be refused the same way: run again in {waiting[1] / 60:.0f} min "
                    "(or set batch: false to call live, at twice the price)"
                )
            live = await run.submit(todo, lease_s)
            live_keys = {key for key, _ in live}
            submitted = [key for key, _ in todo if key not in live_keys and key not in run.fresh]
            records = store.open_batches(submitted) if submitted else []
            if records:
                await run.collect(records, wait_s=settings.batch_wait_s, poll_s=settings.batch_poll_s)
            todo = live
        if run.refused:
            raise BatchRefused(
                f"{settings.name}: the provider refused {len(run.refused)} batch(es) whole, running none of their "
                f"requests: {'; '.join(run.refused)}. Nothing of them was billed; their rows say why, and "
                "`resumebias batches` lists them"
            )
    finally:
        await backend.aclose()
    return todo, run
