"""Gemini's batch mode on the Gemini API through ``google-genai``'s async client: every request
goes up inlined in one call (the body ``batches.create`` sends), each with its request key as its
``metadata``, and the answers come back inlined in the finished batch job, each with the
metadata of its request.

Each inlined request takes the live client's ``contents`` and ``config``
(``google_client.generate_request``) and each answer is read by the live client's reader
(``google_client.result_of_response``) after the SDK's own conversion of an inlined response,
so a batch answer and a live one of the same request are stored alike.

The job is read as JSON through the SDK's API client (its base URL, key header, retries and
timeout), not through ``batches.get``: the SDK's ``BatchJob`` on the Gemini API drops the
batch's counts (``batchStats``) and a failed batch's error, and it validates every inlined
answer at once, so one answer it cannot read would make the whole batch unreadable. Here each
inlined response is converted and validated on its own, and one that fails is kept, as JSON,
as ``malformed_response``. ``find`` lists the jobs the same way.

Vertex AI's batch prediction reads its requests from Cloud Storage or BigQuery and writes its
answers there: a Vertex model is not batched (``BatchUnsupported``).

``extra_body``: the SDK would merge it into the batch's own body, not into its requests, so the
batch's body is built by the SDK's own converter (what ``batches.create`` sends) and the extra
fields are merged into each inlined request as the SDK merges them into a live one
(``recursive_dict_update``); the body is sent through the SDK's API client.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import urlencode

from google.genai import _common as genai_common
from google.genai import batches as genai_batches
from google.genai import errors as genai_errors
from google.genai import types as gt
from google.genai._transformers import t_batch_job_name, t_batch_job_source, t_job_state

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import (
    client_secrets,
    finish_result,
    guard_logs,
    malformed_line,
    plain_http_client,
    status_kind,
)
from resumebias_dagster.core.providers.batch_api import (
    CANCELLED,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    BatchBackend,
    BatchError,
    BatchStatus,
    BatchUnsupported,
    UnconfirmedRecord,
)
from resumebias_dagster.core.providers.google_client import (
    classify_error,
    generate_request,
    result_of_response,
    sdk_client,
)
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret

# The SDK's words for a job's state (``t_job_state`` turns the Gemini API's BATCH_STATE_* into
# them); any other word is a state the job may still leave.
_STATES = {
    "JOB_STATE_SUCCEEDED": ENDED,
    "JOB_STATE_PARTIALLY_SUCCEEDED": ENDED,
    "JOB_STATE_FAILED": FAILED,
    "JOB_STATE_CANCELLED": CANCELLED,
    "JOB_STATE_EXPIRED": EXPIRED,
}
# An inlined response's error is a google.rpc.Status: its code is a gRPC code, read as the
# HTTP status Google's APIs give it, so it types as the live client's error would.
_HTTP_OF_GRPC = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400}
_HTTP_OF_GRPC.update({12: 501, 13: 500, 14: 503, 15: 500, 16: 401})
_LIST_PAGE = 100
BATCH_API_VERSION = "v1beta"


class GeminiBatchBackend(BatchBackend):
    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        super().__init__(settings, api_key)
        self._secrets = client_secrets(settings, api_key)
        guard_logs(*self._secrets)
        self._http: Any = None
        self._sdk: Any = None
        if not settings.vertex:
            self._http = plain_http_client(settings)
            # Configured as GoogleClient configures it, without extra_body (merged per request).
            # The API version Google's batch guide documents (the SDK's default is v1, issue 40).
            self._sdk = sdk_client(settings, api_key, self._http, api_version=BATCH_API_VERSION)

    async def submit(self, items: Sequence[tuple[str, ChatRequest]], submission_id: str) -> str:
        if self._sdk is None:
            raise BatchUnsupported(self._vertex_message())
        src = []
        for key, request in items:
            contents, config = generate_request(self.settings, request)
            src.append({"contents": contents, "config": config, "metadata": {"key": key}})
        try:
            path, body = self._create_body(src, submission_id)
            response = await self._sdk._api_client.async_request("post", path, body)
        except genai_errors.APIError as exc:
            if exc.code in (404, 405):
                raise BatchUnsupported(
                    f"{self.settings.name}: the endpoint has no Gemini batch mode (HTTP {exc.code} at submission)"
                ) from None
            raise self._error(exc) from None
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        try:
            name = json.loads(response.body or "{}").get("name")
        except Exception:  # noqa: BLE001 - not JSON, or not an object
            name = None
        if not name or not isinstance(name, str):
            raise BatchError(t.MALFORMED_RESPONSE, f"{self.settings.name}: the batch was created without a name")
        return name

    def _create_body(self, src: list[dict[str, Any]], submission_id: str) -> tuple[str, dict[str, Any]]:
        """The path and body ``batches.create`` would send for ``src``, with the model's
        ``extra_body`` merged into each inlined request (not into the batch)."""
        client = self._sdk._api_client
        parameters = gt._CreateBatchJobParameters(
            model=self.settings.model,
            src=t_batch_job_source(client, [gt.InlinedRequest.model_validate(r) for r in src]),
            config=gt.CreateBatchJobConfig(display_name=submission_id),
        )
        body = genai_batches._CreateBatchJobParameters_to_mldev(client, parameters)
        path = "{model}:batchGenerateContent".format_map(body.pop("_url", None) or {})
        if body.get("_query"):
            path = f"{path}?{urlencode(body.pop('_query'))}"
        body.pop("config", None)  # as batches.create does: its fields are in the body already
        body = cast(dict[str, Any], genai_common.encode_unserializable_types(genai_common.convert_to_dict(body)))
        if self.settings.extra_body:
            for item in body["batch"]["inputConfig"]["requests"]["requests"]:
                genai_common.recursive_dict_update(item["request"], copy.deepcopy(self.settings.extra_body))
        return path, body

    async def status(self, batch_id: str) -> BatchStatus:
        job = await self._job(batch_id)
        metadata = _dict(job.get("metadata"))
        word = t_job_state(str(metadata.get("state") or "JOB_STATE_UNSPECIFIED"))
        state = _STATES.get(word, IN_PROGRESS)
        stats = _dict(metadata.get("batchStats"))
        message = None
        if state == FAILED:
            error = _dict(job.get("error"))
            detail = f"{error.get('code', 'error')}: {error.get('message', '')}" if error else "the batch failed"
            message = t.scrub(detail, self._secrets)
        return BatchStatus(
            batch_id=str(job.get("name") or batch_id),
            state=state,
            provider_state=word,
            total=_count(stats, "requestCount"),
            succeeded=_count(stats, "successfulRequestCount"),
            errored=_count(stats, "failedRequestCount"),
            message=message,
        )

    async def results(self, batch_id: str) -> list[ChatResult]:
        job = await self._job(batch_id)
        metadata = _dict(job.get("metadata"))
        word = t_job_state(str(metadata.get("state") or "JOB_STATE_UNSPECIFIED"))
        if _STATES.get(word, IN_PROGRESS) == IN_PROGRESS:
            raise BatchError(t.BAD_REQUEST, f"batch {batch_id} has no results yet ({word})")
        # Where the SDK reads them (metadata.output), else the operation's response.
        output = _dict(metadata.get("output")) or _dict(job.get("response"))
        if output.get("responsesFile"):
            raise BatchError(
                t.MALFORMED_RESPONSE, f"batch {batch_id} wrote its answers to a file, not inline as submitted"
            )
        entries = _dict(output.get("inlinedResponses")).get("inlinedResponses") or []
        if not isinstance(entries, list):
            raise BatchError(t.MALFORMED_RESPONSE, f"batch {batch_id}: its inlined responses are not a list")
        return [finish_result(_read_entry(entry), self._secrets) for entry in entries]

    async def find(self, submission_id: str, record: UnconfirmedRecord | None = None) -> str | None:
        if self._sdk is None:
            return None
        seen: set[str] = set()
        token = ""
        while True:
            query = {"pageSize": _LIST_PAGE, **({"pageToken": token} if token else {})}
            page = await self._read_json(f"batches?{urlencode(query)}", "the batch list")
            for operation in page.get("operations") or []:
                if _dict(_dict(operation).get("metadata")).get("displayName") == submission_id:
                    return str(operation.get("name") or "") or None
            token = str(page.get("nextPageToken") or "")
            # A server handing out the same page token again would list forever.
            if not token or token in seen:
                return None
            seen.add(token)

    async def aclose(self) -> None:
        if self._sdk is not None:
            # Closes what the SDK opened itself; the httpx client handed to it is ours to close.
            self._sdk.close()
            await self._sdk.aio.aclose()
        if self._http is not None:
            await self._http.aclose()

    # ------------------------------------------------------------------ inside

    def _vertex_message(self) -> str:
        return (
            f"{self.settings.name}: Gemini batch mode on Vertex AI reads its requests from Cloud Storage or "
            "BigQuery and writes its answers there; only the Gemini API takes inlined requests, so the run "
            "makes live calls"
        )

    def _error(self, exc: BaseException) -> BatchError:
        kind, message = classify_error(exc, self.settings, self._secrets)
        return BatchError(kind, t.scrub(message, self._secrets) or kind)

    async def _job(self, batch_id: str) -> dict[str, Any]:
        """The batch job (a long-running operation) as the Gemini API sends it."""
        if self._sdk is None:
            raise BatchError(t.BAD_REQUEST, self._vertex_message())
        try:
            name = t_batch_job_name(self._sdk._api_client, batch_id)
        except ValueError as exc:
            raise BatchError(t.BAD_REQUEST, t.scrub(str(exc), self._secrets) or "invalid batch name") from None
        return await self._read_json(f"batches/{name}", f"batch {batch_id}")

    async def _read_json(self, path: str, what: str) -> dict[str, Any]:
        """A JSON object read from ``path`` by the SDK's API client (its retries, timeout, key)."""
        try:
            response = await self._sdk._api_client.async_request("get", path, {})
        except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed BatchError
            raise self._error(exc) from None
        try:
            body = json.loads(response.body or "{}")
        except Exception as exc:  # noqa: BLE001 - RecursionError included: a body nested too deep
            raise BatchError(t.MALFORMED_RESPONSE, f"{what}: the answer is not JSON ({type(exc).__name__})") from None
        if not isinstance(body, dict):
            raise BatchError(t.MALFORMED_RESPONSE, f"{what}: the answer is not a JSON object")
        return body


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(stats: dict[str, Any], name: str) -> int | None:
    """A count of ``batchStats`` (an int64, so a JSON string), or None where it is missing."""
    try:
        return int(stats[name])
    except (KeyError, TypeError, ValueError):
        return None


def _read_entry(entry: Any) -> ChatResult:
    """The result one inlined response reports: an answer (billed), a failed item typed by its
    status, or, where the SDK cannot read it, the entry's JSON as ``malformed_response``."""
    metadata = _dict(entry).get("metadata")
    key = _dict(metadata).get("key")
    key = key if isinstance(key, str) else ""
    try:
        # The SDK's own conversion and validation of an inlined response, one entry at a time.
        item = gt.InlinedResponse._from_response(response=genai_batches._InlinedResponse_from_mldev(entry), kwargs={})
        if item.response is None and item.error is None:
            raise ValueError("an inlined response with neither a response nor an error")
        result = _error_result(item.error) if item.response is None else result_of_response(item.response)
    except Exception as exc:  # noqa: BLE001 - an entry no reader can read is kept as it came
        return malformed_line(key, _entry_bytes(entry), exc)
    result.key = key
    result.attempts = 1
    result.billed_attempts = 0 if item.response is None else 1
    return result


def _error_result(error: Any) -> ChatResult:
    code = error.code if isinstance(error.code, int) else None
    status = 500 if code is None else _HTTP_OF_GRPC.get(code, code if code >= 100 else 500)
    message = error.message or ""
    return ChatResult(key="", error_kind=status_kind(status, message), error_message=f"error {code}: {message}")


def _entry_bytes(entry: Any) -> bytes:
    """The entry as JSON (re-serialised: the job's body is read whole, so an entry's own bytes
    are not kept), readable where it can be, escaped where it holds a lone surrogate."""
    try:
        return json.dumps(entry, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(entry).encode("ascii")
