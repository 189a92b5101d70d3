"""What a provider's batch protocol offers the batch runner (``batch.py``), one implementation per
wire: OpenAI's Batch API (``batch_openai.py``), Anthropic's Message Batches
(``batch_anthropic.py``), Gemini's batch mode (``batch_gemini.py``).

A batch is half the list price and answers within a day instead of a second. Each request of a
batch carries its request key as its id (``custom_id``, Gemini's request ``metadata``), so every
answer finds its key whatever order the provider returns them in. An answer is read by the same
code that reads the wire's live answer (text, usage, resolved model, typed errors), so a batch
answer and a live answer of the same key are stored alike.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret

# Our words for a batch's state (each backend maps its provider's own words onto them).
SUBMITTING = "submitting"  # recorded in the store, its submission not yet confirmed
IN_PROGRESS = "in_progress"  # the provider holds it and has not finished it
ENDED = "ended"  # finished: its results can be read (some items may have failed)
FAILED = "failed"  # the provider refused the whole batch (validation): no item was run
EXPIRED = "expired"  # the provider's window passed: items without a result were not run
CANCELLED = "cancelled"  # cancelled: items without a result were not run
COLLECTED = "collected"  # every result read and stored; the batch is closed
NOT_SUBMITTED = "not_submitted"  # never reached the provider (refused, no batch API, lost): closed
# States of a closed batch: its keys are free again.
CLOSED_STATES = frozenset({COLLECTED, NOT_SUBMITTED})
# States whose results (if any) can be read now.
FINISHED_STATES = frozenset({ENDED, FAILED, EXPIRED, CANCELLED})
# States of a batch that may still answer: its keys are not called live or batched again.
OPEN_STATES = frozenset({SUBMITTING, IN_PROGRESS})

# The error kind of a batch item the provider did not run (its batch expired or was cancelled
# first): transient, so the next run asks for it again.
NOT_RUN = "batch_not_run"


@dataclass
class BatchStatus:
    """A batch as the provider reports it now."""

    batch_id: str
    state: str  # one of our states above (never SUBMITTING or COLLECTED)
    provider_state: str  # the provider's own word (``in_progress``, ``ended``, ``JOB_STATE_RUNNING`` ...)
    total: int | None = None
    succeeded: int | None = None
    errored: int | None = None
    message: str | None = None  # why a batch failed, scrubbed of the key


@dataclass(frozen=True)
class UnconfirmedRecord:
    """What the store knows of a submission the provider never confirmed."""

    requests: int  # its size
    recorded_at: datetime  # when the store recorded it, just before the submission
    known: frozenset[str]  # every batch id the store holds: none of them is this one


class BatchUnsupported(Exception):
    """The endpoint speaks no batch protocol (an OpenAI-compatible server without ``/batches``:
    404 or 405 at submission). Nothing was submitted; the run makes live calls instead."""


class BatchError(Exception):
    """A batch call failed (after the SDK's retries): ``kind`` is an error kind of ``types``
    (``auth``, ``server_error``, ``connection`` ...), the message is scrubbed of the key."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class BatchBackend(ABC):
    """One provider model's batch protocol, through the provider's SDK pointed at the model's
    endpoint with its key (the same client set-up as the live client: explicit base URL, the
    key only to that host, the SDK's retries and timeout)."""

    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        self.settings = settings
        self._api_key = api_key

    @abstractmethod
    async def submit(self, items: Sequence[tuple[str, ChatRequest]], submission_id: str) -> str:
        """Submit ``items`` (request key, request: already normalised, sent exactly as the live
        client sends it) as one batch labelled ``submission_id`` where the provider keeps a
        label (OpenAI ``metadata``, Gemini ``display_name``); return the provider's batch id.
        Raises ``BatchUnsupported`` (no batch endpoint) or ``BatchError``."""

    @abstractmethod
    async def status(self, batch_id: str) -> BatchStatus:
        """The batch's state now. Raises ``BatchError``."""

    @abstractmethod
    async def results(self, batch_id: str) -> list[ChatResult]:
        """One result per item the provider reports on (call once the batch is finished), its
        ``key`` the item's id: an answer read as the live client reads one (``cost_usd`` left
        None: the runner prices it at the batch rate), a failed item as a typed error
        (``base.status_kind`` of its status), an item the provider reports as not run
        (expired, cancelled) as ``NOT_RUN``, and an item whose answer no reader can read as
        ``malformed_response`` holding its raw line (or raw answer body), as it came; a line
        whose id itself cannot be read gets ``key=""`` (the runner counts it; it belongs to no
        key). Items the provider does not mention are the runner's to mark ``NOT_RUN``.
        ``billed_attempts`` 1 for an answer (malformed ones included), else 0; ``attempts`` 1;
        names and messages valid UTF-8 and scrubbed of the key.
        Raises ``BatchError`` when the results cannot be fetched at all."""

    # Whether ``find`` reads a label the submission put on the batch (exact) or, where the
    # provider keeps none, matches a batch by its size and time (``find``'s docstring).
    finds_by_label = True

    async def find(self, submission_id: str, record: UnconfirmedRecord | None = None) -> str | None:
        """The id of a batch submitted with ``submission_id`` (a run killed between its
        submission and the store's record of the id), or None when the provider shows none.
        ``record`` lets a provider without labels match it instead; a match is checked again
        by its results, whose ids are the request keys."""
        return None

    async def aclose(self) -> None:
        """Close the SDK client."""
