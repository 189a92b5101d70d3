"""Anthropic's Message Batches through the ``anthropic`` SDK's async client: every request goes
up in one call (``messages.batches.create``) with its key as ``custom_id``, and the answers
come back as one JSONL file of results.

Each item's ``params`` are the live client's (``anthropic_client.message_params``, the prompt
cache marker included) with the model's ``extra_body`` among them, and each answer is read by
the live client's reader (``anthropic_client.result_of_message``), so a batch answer and a live
one of the same request are stored alike.

Anthropic keeps no label on a batch, so ``find`` looks an interrupted submission up by what it
can see: a batch the store does not know, of the same number of requests, created within
``FIND_WINDOW_S`` of the store's record (which is written just before the submission). Only a
single such batch is taken. Its results are matched to requests by ``custom_id``, which is the
request key, so a batch that was not ours after all answers none of our keys: they are marked
not run and asked again by the next run, and nothing is stored under a wrong key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import anthropic
import httpx2
from anthropic.types import Message

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.anthropic_client import _NO_KEY, message_params, result_of_message
from resumebias_dagster.core.providers.base import (
    client_secrets,
    finish_result,
    guard_logs,
    jsonl_lines,
    malformed_line,
    plain_http_client,
    stainless_error,
)
from resumebias_dagster.core.providers.batch_api import (
    ENDED,
    IN_PROGRESS,
    NOT_RUN,
    BatchBackend,
    BatchError,
    BatchStatus,
    BatchUnsupported,
    UnconfirmedRecord,
)
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret
from resumebias_dagster.core.providers.urls import split_query

# What Anthropic accepts as a custom_id; our request keys (64 hex digits of sha256) fit it.
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_STATES = {"in_progress": IN_PROGRESS, "canceling": IN_PROGRESS, "ended": ENDED}
# How far from the store's record an interrupted submission's batch may have been created
# (clock skew between this machine and Anthropic's, and the submission's own retries).
FIND_WINDOW_S = 900.0
# The error types of an errored item, as the error kinds of the live client's HTTP statuses.
ERROR_KINDS = {
    "invalid_request_error": t.BAD_REQUEST,
    "request_too_large": t.BAD_REQUEST,
    "authentication_error": t.AUTH,
    "permission_error": t.AUTH,
    "billing_error": t.AUTH,
    "not_found_error": t.NOT_FOUND,
    "rate_limit_error": t.RATE_LIMITED,
    "timeout_error": t.TIMEOUT,
    "api_error": t.SERVER_ERROR,
    "overloaded_error": t.SERVER_ERROR,
}


class AnthropicBatchBackend(BatchBackend):
    finds_by_label = False

    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        super().__init__(settings, api_key)
        self._secrets = client_secrets(settings, api_key)
        guard_logs(*self._secrets)
        self._http = plain_http_client(settings)
        self._base_url, query = split_query(settings.sdk_base_url)
        # Configured as AnthropicClient configures its SDK: key and base URL explicit, so
        # nothing in the environment sends the key to another host.
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key.reveal() if api_key else _NO_KEY,
            base_url=self._base_url,
            default_query=query or None,
            max_retries=settings.max_retries,
            timeout=settings.timeout_s,
            http_client=self._http,
        )

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], submission_id: str) -> str:
        requests = []
        for key, request in items:
            if not CUSTOM_ID.fullmatch(key):
                raise ValueError(f"request key {key[:80]!r} is no Anthropic custom_id (1 to 64 of [a-zA-Z0-9_-])")
            requests.append(
                {"custom_id": key, "params": {**message_params(self.settings, request), **self.settings.extra_body}}
            )
        try:
            # Plain dicts: the params are sent as the live client sends them, not as the SDK types them.
            batch = await self._sdk.messages.batches.create(requests=requests)  # type: ignore[arg-type]
        except anthropic.APIStatusError as exc:
            if exc.status_code in (404, 405):
                raise BatchUnsupported(
                    f"{self.settings.name}: the endpoint has no Message Batches API (HTTP {exc.status_code} at submission)"
                ) from None
            raise self._error(exc) from None
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self._sdk.messages.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        c = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            state=_STATES.get(batch.processing_status, IN_PROGRESS),
            provider_state=batch.processing_status,
            total=_total(c),
            succeeded=c.succeeded,
            errored=c.errored,
        )

    async def results(self, batch_id: str) -> list[ChatResult]:
        try:
            batch = await self._sdk.messages.batches.retrieve(batch_id)
            if not batch.results_url:
                raise BatchError(t.BAD_REQUEST, f"batch {batch_id} has no results yet ({batch.processing_status})")
            response = await self._sdk.get(
                self._results_path(batch.id, batch.results_url),
                cast_to=httpx2.Response,
                options={"headers": {"Accept": "application/binary"}},
            )
        except BatchError:
            raise
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        return [finish_result(_read_line(line), self._secrets) for line in jsonl_lines(response.content)]

    async def find(self, submission_id: str, record: UnconfirmedRecord | None = None) -> str | None:
        if record is None or record.requests <= 0:
            return None  # nothing to match a batch by
        matches = []
        try:
            async for batch in self._sdk.messages.batches.list(limit=100):
                offset = (batch.created_at - record.recorded_at).total_seconds()
                if offset < -FIND_WINDOW_S:
                    break  # the list is newest first: every batch from here on is older still
                if batch.id in record.known or offset > FIND_WINDOW_S:
                    continue
                if _total(batch.request_counts) == record.requests:
                    matches.append(batch.id)
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        return matches[0] if len(matches) == 1 else None

    async def aclose(self) -> None:
        await self._sdk.close()
        await self._http.aclose()

    # ------------------------------------------------------------------ inside

    def _results_path(self, batch_id: str, results_url: str) -> str:
        """Where the results are read: ``results_url`` where it is on the configured host, else
        the documented path under the configured base URL. The SDK would send the key to
        whatever host ``results_url`` names; a gateway's key must not leave the gateway."""
        here, there = urlsplit(self._base_url), urlsplit(results_url)
        if (there.scheme, there.netloc) == (here.scheme, here.netloc):
            return results_url
        return f"/v1/messages/batches/{batch_id}/results"

    def _error(self, exc: BaseException) -> BatchError:
        kind, message = stainless_error(anthropic, exc, self.settings, self._secrets)
        return BatchError(kind, t.scrub(message, self._secrets) or kind)


def _total(counts) -> int:
    """A batch's requests, whatever became of them."""
    return counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired


def _read_line(line: bytes) -> ChatResult:
    """The result one line of the results file reports (key "" where none can be read)."""
    try:
        item = json.loads(line)
        key = item["custom_id"]
        if not isinstance(key, str):
            raise TypeError(f"custom_id is {type(key).__name__}")
    except Exception as exc:  # noqa: BLE001 - an unreadable line is kept raw, with no key
        return malformed_line("", line, exc)
    try:
        result = _item_result(item["result"])
    except Exception as exc:  # noqa: BLE001 - an answer no reader can read is kept raw
        return malformed_line(key, line, exc)
    result.key = key
    return result


def _item_result(outcome: dict[str, Any]) -> ChatResult:
    """An answer (billed), an errored item typed by its error type, or an item never run."""
    kind = outcome["type"]
    if kind == "succeeded":
        # Built as the SDK builds a live answer (no validation), then read by the live reader.
        result = result_of_message(Message.model_construct(**outcome["message"]))
        result.attempts = result.billed_attempts = 1
        return result
    if kind in ("canceled", "expired"):
        return ChatResult(key="", attempts=1, error_kind=NOT_RUN, error_message=f"item {kind} before it was run")
    if kind != "errored":
        raise ValueError(f"unknown result type {kind!r}")
    error: dict[str, Any] = outcome.get("error") or {}
    # The error response ({"type": "error", "error": {"type", "message"}}) or the bare error object.
    inner = error.get("error")
    detail: dict[str, Any] = inner if isinstance(inner, dict) else error
    error_type = str(detail.get("type", ""))
    return ChatResult(
        key="",
        attempts=1,
        error_kind=ERROR_KINDS.get(error_type, t.SERVER_ERROR),
        error_message=f"{error_type}: {detail.get('message', '')}",
    )
