"""OpenAI's Batch API through the ``openai`` SDK's async client: the requests go up as a JSONL
file (``files.create``, purpose ``batch``), the batch is made of it (``batches.create``), and
its answers come back as two JSONL files, one of answers and one of failed items.

Each line's ``body`` is the live client's request body (``openai_client.chat_body``) and each
answer is read by the live client's reader (``openai_client.result_of_completion``), built
from the body the way the SDK builds a live answer (without validation), so a batch answer
and a live one of the same request are stored alike. An OpenAI-compatible server without a
Batch API answers the upload or the creation with 404 or 405: ``BatchUnsupported``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import openai
from openai.types.chat import ChatCompletion

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import (
    client_secrets,
    finish_result,
    guard_logs,
    jsonl_lines,
    malformed_line,
    plain_http_client,
    stainless_error,
    status_kind,
)
from resumebias_dagster.core.providers.batch_api import (
    CANCELLED,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    NOT_RUN,
    BatchBackend,
    BatchError,
    BatchStatus,
    BatchUnsupported,
    UnconfirmedRecord,
)
from resumebias_dagster.core.providers.openai_client import _NO_KEY, chat_body, result_of_completion
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret
from resumebias_dagster.core.providers.urls import split_query

ENDPOINT: Final = "/v1/chat/completions"
# The metadata key that labels a batch with its submission id (``find``): a plain word, since
# the provider sees it and the tool's name would say an audit is running. Batches labelled
# before then carry the old key, still read.
LABEL = "submission"
LABELS = (LABEL, "resumebias_submission")
_STATES = {
    "validating": IN_PROGRESS,
    "in_progress": IN_PROGRESS,
    "finalizing": IN_PROGRESS,
    "cancelling": IN_PROGRESS,
    "completed": ENDED,
    "failed": FAILED,
    "expired": EXPIRED,
    "cancelled": CANCELLED,
}
# The item error codes of requests the batch never ran (its window passed, it was cancelled).
_NOT_RUN_CODES = frozenset({"batch_expired", "batch_cancelled"})


class OpenAIBatchBackend(BatchBackend):
    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        super().__init__(settings, api_key)
        self._secrets = client_secrets(settings, api_key)
        guard_logs(*self._secrets)
        self._http = plain_http_client(settings)
        base_url, query = split_query(settings.sdk_base_url)
        # Configured as OpenAIClient configures its SDK: the key goes to this base URL only.
        self._sdk = openai.AsyncOpenAI(
            api_key=api_key.reveal() if api_key else _NO_KEY,
            base_url=base_url,
            default_query=query or None,
            max_retries=settings.max_retries,
            timeout=settings.timeout_s,
            http_client=self._http,
        )

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], submission_id: str) -> str:
        lines = [
            json.dumps(
                {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": chat_body(self.settings, request)},
                ensure_ascii=False,
            )
            for key, request in items
        ]
        # surrogatepass: a prompt may hold a lone surrogate, as the live client sends it.
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
        try:
            upload = await self._sdk.files.create(file=(f"{submission_id}.jsonl", data), purpose="batch")
            batch = await self._sdk.batches.create(
                input_file_id=upload.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={LABEL: submission_id},
            )
        except openai.APIStatusError as exc:
            if exc.status_code in (404, 405):
                raise BatchUnsupported(
                    f"{self.settings.name}: the endpoint has no Batch API (HTTP {exc.status_code} at submission)"
                ) from None
            raise self._error(exc) from None
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        try:
            batch = await self._sdk.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        counts = batch.request_counts
        message = None
        if batch.status == "failed":
            errors = batch.errors.data if batch.errors and batch.errors.data else []
            message = "; ".join(f"{e.code or 'error'}: {e.message}" for e in errors) or "the batch failed validation"
            message = t.scrub(message, self._secrets)
        return BatchStatus(
            batch_id=batch.id,
            state=_STATES.get(batch.status, IN_PROGRESS),
            provider_state=batch.status,
            total=counts.total if counts else None,
            succeeded=counts.completed if counts else None,
            errored=counts.failed if counts else None,
            message=message,
        )

    async def results(self, batch_id: str) -> list[ChatResult]:
        try:
            batch = await self._sdk.batches.retrieve(batch_id)
            files = [
                (await self._sdk.files.content(file_id)).content
                for file_id in (batch.output_file_id, batch.error_file_id)
                if file_id
            ]
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        return [
            finish_result(self._read_line(line), self._secrets) for content in files for line in jsonl_lines(content)
        ]

    async def find(self, submission_id: str, record: UnconfirmedRecord | None = None) -> str | None:
        try:
            async for batch in self._sdk.batches.list(limit=100):
                if any((batch.metadata or {}).get(label) == submission_id for label in LABELS):
                    return batch.id
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        return None

    async def aclose(self) -> None:
        await self._sdk.close()
        await self._http.aclose()

    # ------------------------------------------------------------------ inside

    def _error(self, exc: BaseException) -> BatchError:
        kind, message = stainless_error(openai, exc, self.settings, self._secrets)
        return BatchError(kind, t.scrub(message, self._secrets) or kind)

    def _read_line(self, line: bytes) -> ChatResult:
        """The result one line of the output or error file reports."""
        try:
            item = json.loads(line)
            key = item["custom_id"]
            if not isinstance(key, str):
                raise TypeError(f"custom_id is {type(key).__name__}")
        except Exception as exc:  # noqa: BLE001 - an unreadable line is kept raw, with no key
            return malformed_line("", line, exc)
        try:
            result = _item_result(item)
        except Exception as exc:  # noqa: BLE001 - an answer no reader can read is kept raw
            return malformed_line(key, line, exc)
        result.key = key
        return result


def _item_result(item: dict[str, Any]) -> ChatResult:
    """An answer (billed), a failed item typed by its status, or an item never run."""
    response: Any = item.get("response")
    error = item.get("error")
    if isinstance(error, dict) and not response:
        code = str(error.get("code") or "")
        kind = NOT_RUN if code in _NOT_RUN_CODES else t.SERVER_ERROR
        return ChatResult(key="", attempts=1, error_kind=kind, error_message=f"{code}: {error.get('message', '')}")
    status = response["status_code"]
    body = response["body"]
    if status == 200:
        # Built as the SDK builds a live answer (no validation), then read by the live reader.
        result = result_of_completion(ChatCompletion.model_construct(**body))
        result.attempts = result.billed_attempts = 1
        return result
    detail = body.get("error") if isinstance(body, dict) else None
    message = str(detail.get("message", "")) if isinstance(detail, dict) else json.dumps(body)[:200]
    # The whole body goes to status_kind: its code names an exhausted quota or a content filter.
    kind = status_kind(int(status), f"{message} {json.dumps(body)}")
    return ChatResult(key="", attempts=1, error_kind=kind, error_message=f"HTTP {status}: {message}")
