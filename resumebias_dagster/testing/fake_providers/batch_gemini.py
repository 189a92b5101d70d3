"""Gemini's batch mode on the fake server, as ``google-genai`` speaks it on the Gemini API
(inlined requests): ``POST /{version}/models/{model}:batchGenerateContent`` makes a batch and
answers with its long-running operation, ``GET /{version}/batches/{id}`` polls it,
``GET /{version}/batches`` lists them (``pageSize``/``pageToken``, ``nextPageToken``) and
``POST /{version}/batches/{id}:cancel`` cancels one. Every batch is an operation whose
``metadata`` is the batch (``state`` in ``BATCH_STATE_*`` words, ``batchStats``); a finished one
carries one inlined response per item run, with the item's request ``metadata``, in
``metadata.output`` (where the SDK reads it) and in the operation's ``response``.

Tests can see the key of every batch request (``keys``, the ``x-goog-api-key`` header), refuse
keys other than ``expected_key`` (401, the key echoed as a careless server would), replace an
item's inlined response by any JSON value (``garble``), drop its metadata (``drop_key``) and
fail a whole batch (``fail_batch``).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from typing import Any

from resumebias_dagster.testing.fake_providers.batch import FakeBatch, FakeBatches, Response
from resumebias_dagster.testing.fake_providers.replies import _GEMINI_STATUS

_PATH = re.compile(r"/(?P<version>v1[a-z0-9]*)/(?P<rest>models/[^/:]+:batchGenerateContent|batches(?:/[^/]+)?)")
_TYPE = "type.googleapis.com/google.ai.generativelanguage.{version}.GenerateContentBatch"
_OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.{version}.GenerateContentBatchOutput"
_STATE = {
    None: "BATCH_STATE_PENDING",
    "ended": "BATCH_STATE_SUCCEEDED",
    "expired": "BATCH_STATE_EXPIRED",
    "cancelled": "BATCH_STATE_CANCELLED",
    "failed": "BATCH_STATE_FAILED",
}
# An item's error is a google.rpc.Status: a gRPC code, not an HTTP status.
_GRPC_CODE = {400: 3, 401: 16, 403: 7, 404: 5, 409: 10, 429: 8, 499: 1, 500: 13, 501: 12, 503: 14, 504: 4}


def _json(code: int, payload: Any) -> Response:
    return code, json.dumps(payload).encode(), "application/json"


def _error(code: int, message: str) -> Response:
    return _json(code, {"error": {"code": code, "message": message, "status": _GEMINI_STATUS.get(code, "UNKNOWN")}})


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


class GeminiBatches(FakeBatches):
    def __init__(self, server: Any, *, polls_to_finish: int = 1):
        super().__init__(server, polls_to_finish=polls_to_finish)
        self.keys: list[str | None] = []
        self.expected_key: str | None = None
        # Every create request's body, as it came (tests compare items with live requests).
        self.bodies: list[dict[str, Any]] = []
        self.created: dict[str, float] = {}
        self.versions: dict[str, str] = {}
        # Why a batch failed as a whole, by batch id.
        self.failures: dict[str, str] = {}
        self.raw_entries: dict[str, Any] = {}
        self.dropped_keys: set[str] = set()

    # ------------------------------------------------------------------ control (tests)

    def garble(self, item_id: str, entry: Any = None) -> None:
        """Write ``entry`` (default: an answer the SDK cannot read) in place of the inlined
        response of ``item_id``."""
        if entry is None:
            entry = {"metadata": {"key": item_id}, "response": {"usageMetadata": {"promptTokenCount": "many"}}}
        self.raw_entries[item_id] = entry

    def drop_key(self, item_id: str) -> None:
        """Leave the metadata (the request key) out of the inlined response of ``item_id``."""
        self.dropped_keys.add(item_id)

    def fail_batch(self, batch_id: str, message: str = "the batch failed validation") -> None:
        """End ``batch_id`` as failed as a whole: no item run."""
        with self._lock:
            batch = self.batches[batch_id]
            if batch.outcome is None:
                batch.outcome, batch.run_count, batch.results = "failed", 0, []
                self.failures[batch_id] = message

    # ------------------------------------------------------------------ endpoints

    def handle(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> Response | None:
        match = _PATH.fullmatch(path)
        if match is None:
            return None
        if not self.enabled:
            return self.not_found()
        key = headers.get("x-goog-api-key")
        self.keys.append(key)
        if self.expected_key is not None and key != self.expected_key:
            return _error(401, f"API key not valid: {key}")
        version, rest = match["version"], match["rest"]
        if rest.startswith("models/"):
            if method != "POST":
                return _error(405, "method not allowed")
            return self._create(version, rest.removeprefix("models/").split(":", 1)[0], body)
        if rest == "batches":
            return self._list(query) if method == "GET" else _error(405, "method not allowed")
        batch_id, _, verb = rest.removeprefix("batches/").partition(":")
        if batch_id not in self.batches:
            return _error(404, f"Batch batches/{batch_id} not found.")
        if method == "GET" and not verb:
            polled = self.poll(batch_id)
            assert polled is not None  # found above; batches are never removed
            return _json(200, self._operation(polled))
        if method == "POST" and verb == "cancel":
            self.cancel(batch_id)
            return _json(200, {})
        return _error(405, "method not allowed")

    def _create(self, version: str, model: str, body: bytes) -> Response:
        try:
            payload = json.loads(body)
            batch_json = payload["batch"]
            requests = batch_json["inputConfig"]["requests"]["requests"]
            if not isinstance(requests, list) or not requests:
                raise TypeError("no requests")
        except (ValueError, KeyError, TypeError) as exc:
            return _error(400, f"Invalid batch request ({type(exc).__name__}).")
        self.bodies.append(payload)
        items = []
        for n, item in enumerate(requests):
            metadata = item.get("metadata") or {}
            items.append((str(metadata.get("key", f"item-{n}")), item.get("request") or {}))
        batch = FakeBatch(self.new_id("fakebatch"), items, label=batch_json.get("displayName"), model=model)
        self.versions[batch.batch_id] = version
        self.created[batch.batch_id] = datetime.now(timezone.utc).timestamp()
        self.add(batch)
        return _json(200, self._operation(batch))

    def _list(self, query: str) -> Response:
        params = dict(p.partition("=")[::2] for p in query.split("&") if p)
        size = int(params.get("pageSize") or 50)
        start = int(params.get("pageToken") or 0)
        with self._lock:
            ordered = sorted(self.batches.values(), key=lambda b: b.batch_id, reverse=True)
        page: dict[str, Any] = {"operations": [self._operation(b) for b in ordered[start : start + size]]}
        if start + size < len(ordered):
            page["nextPageToken"] = str(start + size)
        return _json(200, page)

    # ------------------------------------------------------------------ what Gemini writes

    def item_result(self, batch: FakeBatch, item_id: str, request: dict[str, Any]) -> dict[str, Any]:
        if item_id in batch.errors:
            status, message = batch.errors[item_id]
            return {"error": {"code": _GRPC_CODE.get(status, 2), "message": message}}
        target = f"/{self.versions.get(batch.batch_id, 'v1beta')}/models/{batch.model}:generateContent"
        return {"response": self.answer_for(target, request)}

    def _operation(self, batch: FakeBatch) -> dict[str, Any]:
        """The batch's long-running operation, as ``batches.get`` and the create answer it."""
        version = self.versions.get(batch.batch_id, "v1beta")
        created = self.created.get(batch.batch_id, 0.0)
        name = f"batches/{batch.batch_id}"
        # Written once every item's result is in (an outcome set from a test's thread comes first).
        finished = batch.outcome == "failed" or (batch.outcome is not None and len(batch.results) == len(batch.items))
        entries = self._entries(batch) if finished and batch.outcome != "failed" else []
        succeeded = sum(1 for _, r in batch.results if r is not None and "response" in r) if finished else 0
        failed = sum(1 for _, r in batch.results if r is not None and "error" in r) if finished else 0
        metadata: dict[str, Any] = {
            "@type": _TYPE.format(version=version),
            "model": f"models/{batch.model}",
            "displayName": batch.label,
            "createTime": _iso(created),
            "updateTime": _iso(created + batch.polls),
            "batchStats": {
                "requestCount": str(len(batch.items)),
                "successfulRequestCount": str(succeeded),
                "failedRequestCount": str(failed),
                "pendingRequestCount": str(0 if finished else len(batch.items)),
            },
            "state": _STATE[batch.outcome] if finished or batch.outcome is None else "BATCH_STATE_RUNNING",
            "name": name,
        }
        operation: dict[str, Any] = {"name": name, "metadata": metadata}
        if not finished:
            return operation
        metadata["endTime"] = _iso(created + batch.polls)
        operation["done"] = True
        if batch.outcome == "failed":
            operation["error"] = {"code": 3, "message": self.failures.get(batch.batch_id, "the batch failed")}
            return operation
        output = {"inlinedResponses": {"inlinedResponses": entries}}
        metadata["output"] = output
        operation["response"] = {"@type": _OUTPUT_TYPE.format(version=version), **output}
        return operation

    def _entries(self, batch: FakeBatch) -> list[Any]:
        """One inlined response per item run (items not run are left out, as Gemini does)."""
        entries: list[Any] = []
        for item_id, result in batch.results:
            if result is None:
                continue
            if item_id in self.raw_entries:
                entries.append(self.raw_entries[item_id])
                continue
            entry = dict(result)
            if item_id not in self.dropped_keys:
                entry["metadata"] = {"key": item_id}
            entries.append(entry)
        return entries
