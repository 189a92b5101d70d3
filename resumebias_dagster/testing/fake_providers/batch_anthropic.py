"""Anthropic's Message Batches on the fake server, as the ``anthropic`` SDK speaks them:
``POST /v1/messages/batches`` (every request in one body), ``GET /v1/messages/batches/{id}``
(its ``results_url`` on this server once ended), ``GET .../results`` (JSONL, one line per
item: succeeded, errored, canceled or expired), ``GET /v1/messages/batches`` and
``POST .../cancel``.

Tests can see the key of every batch request (``keys``), refuse keys other than
``expected_key`` (401, the key echoed as a careless server would), replace an item's line by
raw bytes (``garble``) and add lines of no item (``extra_lines``).
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone
from typing import Any

from resumebias_dagster.testing.fake_providers.batch import FakeBatch, FakeBatches, Response
from resumebias_dagster.testing.fake_providers.replies import _ANTHROPIC_TYPE

_ROOT = "/v1/messages/batches"
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_NOT_RUN = {"expired": "expired", "cancelled": "canceled"}


def _json(code: int, payload: Any) -> Response:
    return code, json.dumps(payload).encode(), "application/json"


def _error(code: int, message: str) -> Response:
    return _json(code, {"type": "error", "error": {"type": _ANTHROPIC_TYPE.get(code, "api_error"), "message": message}})


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


class AnthropicBatches(FakeBatches):
    def __init__(self, server: Any, *, polls_to_finish: int = 1):
        super().__init__(server, polls_to_finish=polls_to_finish)
        self.created: dict[str, float] = {}
        self.keys: list[str | None] = []
        self.expected_key: str | None = None
        self.raw_lines: dict[str, bytes] = {}
        self.extra_lines: list[bytes] = []
        # Where results_url points (None: this server); a test points it at another host.
        self.results_host: str | None = None

    def garble(self, item_id: str, line: bytes = b'{"custom_id": "') -> None:
        """Write ``line`` in place of the result line of ``item_id``."""
        self.raw_lines[item_id] = line

    def handle(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> Response | None:
        if path.rstrip("/") != _ROOT and not path.startswith(_ROOT + "/"):
            return None
        if not self.enabled:
            return self.not_found()
        auth = headers.get("authorization", "")
        key = headers.get("x-api-key") or (auth[7:] if auth.lower().startswith("bearer ") else None)
        self.keys.append(key)
        if self.expected_key is not None and key != self.expected_key:
            return _error(401, f"invalid x-api-key: {key}")
        parts = path[len(_ROOT) :].strip("/").split("/") if path.rstrip("/") != _ROOT else []
        if method == "POST" and not parts:
            return self._create(body)
        if method == "GET" and not parts:
            return self._list()
        batch = self.batches.get(parts[0]) if parts else None
        if batch is None:
            return _error(404, f"no message batch {parts[0] if parts else ''!r}")
        if method == "GET" and len(parts) == 1:
            polled = self.poll(parts[0])
            assert polled is not None  # found above; batches are never removed
            return _json(200, self._batch_json(polled))
        if method == "GET" and parts[1:] == ["results"]:
            return self._results(batch)
        if method == "POST" and parts[1:] == ["cancel"]:
            self.cancel(batch.batch_id)
            return _json(200, self._batch_json(batch))
        return self.not_found()

    # ------------------------------------------------------------------ endpoints

    def _create(self, body: bytes) -> Response:
        try:
            requests = json.loads(body)["requests"]
        except (ValueError, KeyError, TypeError):
            return _error(400, "requests: field required")
        items: list[tuple[str, dict[str, Any]]] = []
        for n, request in enumerate(requests if isinstance(requests, list) else []):
            custom_id = request.get("custom_id") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
                return _error(400, f"requests.{n}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
            if any(custom_id == i for i, _ in items):
                return _error(400, f"requests.{n}.custom_id: duplicate custom_id {custom_id!r}")
            if not isinstance(params, dict) or not {"model", "messages", "max_tokens"} <= params.keys():
                return _error(400, f"requests.{n}.params: model, messages and max_tokens are required")
            items.append((custom_id, params))
        if not items:
            return _error(400, "requests: at least one request is required")
        batch = FakeBatch(self.new_id("msgbatch_"), items, model=str(items[0][1]["model"]))
        self.created[batch.batch_id] = time.time()
        self.add(batch)
        return _json(200, self._batch_json(batch))

    def _list(self) -> Response:
        with self._lock:
            ordered = sorted(self.batches.values(), key=lambda b: b.batch_id, reverse=True)
        data = [self._batch_json(b) for b in ordered]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return _json(200, {"data": data, "has_more": False, "first_id": first, "last_id": last})

    def _results(self, batch: FakeBatch) -> Response:
        if not self._complete(batch):
            return _error(400, f"batch {batch.batch_id} is still in progress; its results are not ready")
        with self._lock:
            self.result_reads += 1
        lines = list(self.extra_lines)
        for item_id, result in batch.results:
            outcome = result if result is not None else {"type": _NOT_RUN.get(batch.outcome or "", "expired")}
            line = json.dumps({"custom_id": item_id, "result": outcome}).encode()
            lines.append(self.raw_lines.get(item_id, line))
        return 200, b"\n".join(lines) + b"\n", "application/binary"

    # ------------------------------------------------------------------ what Anthropic writes

    def item_result(self, batch: FakeBatch, item_id: str, request: dict[str, Any]) -> dict[str, Any]:
        if item_id in batch.errors:
            status, message = batch.errors[item_id]
            error = {"type": _ANTHROPIC_TYPE.get(status, "api_error"), "message": message}
            return {"type": "errored", "error": {"type": "error", "error": error, "request_id": f"req_{item_id[:8]}"}}
        return {"type": "succeeded", "message": self.answer_for("/v1/messages", request)}

    @staticmethod
    def _complete(batch: FakeBatch) -> bool:
        """Ended, with every item's result in (an outcome set from a test's thread comes first)."""
        return batch.outcome is not None and len(batch.results) == len(batch.items)

    def _batch_json(self, batch: FakeBatch) -> dict[str, Any]:
        created = self.created.get(batch.batch_id, 0.0)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        ended = self._complete(batch)
        if not ended:
            counts["processing"] = len(batch.items)
        for _, result in batch.results if ended else []:
            kind = result["type"] if result else _NOT_RUN.get(batch.outcome or "", "expired")
            counts[kind] += 1
        host = self.results_host or f"http://127.0.0.1:{self.server.port}"
        results_url = f"{host}{_ROOT}/{batch.batch_id}/results" if ended else None
        return {
            "id": batch.batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _iso(created),
            "expires_at": _iso(created + 86_400),
            "ended_at": _iso(created + 1) if ended else None,
            "cancel_initiated_at": _iso(created + 1) if batch.outcome == "cancelled" else None,
            "archived_at": None,
            "results_url": results_url,
        }
