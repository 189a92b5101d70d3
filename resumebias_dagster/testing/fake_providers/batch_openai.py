"""OpenAI's Batch API on the fake server, as the ``openai`` SDK speaks it: a JSONL file uploaded
(``POST /v1/files``, multipart), a batch made of it (``POST /v1/batches``), polled
(``GET /v1/batches/{id}``), listed (``GET /v1/batches``), cancelled, and its results read as
files (``GET /v1/files/{id}/content``): answers in the output file, failed items and items not
run (``batch_expired``, ``batch_cancelled``) in the error file, each line as OpenAI writes it.

Tests can see the key of every batch request (``keys``), refuse keys other than
``expected_key`` (401, the key echoed as a careless server would), replace an item's line by
raw bytes (``garble``) and add lines of no item (``extra_lines``).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from resumebias_dagster.testing.fake_providers.batch import FakeBatch, FakeBatches, Response

_CHAT = "/v1/chat/completions"
_NOT_RUN = {
    "expired": ("batch_expired", "This request could not be executed before the completion window expired."),
    "cancelled": ("batch_cancelled", "This request was cancelled before it was executed."),
}
_STATUS = {
    None: "in_progress",
    "ended": "completed",
    "expired": "expired",
    "cancelled": "cancelled",
    "failed": "failed",
}


def _json(code: int, payload: Any) -> Response:
    return code, json.dumps(payload).encode(), "application/json"


def _error(code: int, message: str, kind: str = "invalid_request_error") -> Response:
    return _json(code, {"error": {"message": message, "type": kind, "param": None, "code": None}})


class OpenAIBatches(FakeBatches):
    def __init__(self, server: Any, *, polls_to_finish: int = 1):
        super().__init__(server, polls_to_finish=polls_to_finish)
        # file id -> (filename, purpose, content)
        self.files: dict[str, tuple[str, str, bytes]] = {}
        self.metadata: dict[str, dict[str, str]] = {}
        self.created: dict[str, int] = {}
        # Why a batch failed validation (OpenAI's errors.data), by batch id.
        self.invalid: dict[str, list[dict[str, Any]]] = {}
        self.keys: list[str | None] = []
        self.expected_key: str | None = None
        self.raw_lines: dict[str, bytes] = {}
        self.extra_lines: list[bytes] = []
        # Set: every batch submitted is refused whole with these errors (e.g. the enqueued-token limit).
        self.refuse_with: list[dict[str, Any]] | None = None

    def garble(self, item_id: str, line: bytes = b'{"id": "batch_req_x", "custom_id": "') -> None:
        """Write ``line`` in place of the result line of ``item_id``."""
        self.raw_lines[item_id] = line

    def handle(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> Response | None:
        if not (path.startswith(("/v1/files", "/v1/batches"))):
            return None
        if not self.enabled:
            return self.not_found()
        auth = headers.get("authorization", "")
        key = auth[7:] if auth.lower().startswith("bearer ") else None
        self.keys.append(key)
        if self.expected_key is not None and key != self.expected_key:
            return _error(401, f"Incorrect API key provided: {key}.", "invalid_api_key")
        parts = path.strip("/").split("/")[1:]
        if method == "POST" and parts == ["files"]:
            return self._upload(headers.get("content-type", ""), body)
        if method == "GET" and len(parts) in (2, 3) and parts[0] == "files" and parts[2:] in ([], ["content"]):
            return self._file(parts[1], content=len(parts) == 3)
        if method == "POST" and parts == ["batches"]:
            return self._create(body)
        if method == "GET" and parts == ["batches"]:
            return self._list(query)
        if method == "GET" and len(parts) == 2 and parts[0] == "batches":
            batch = self.poll(parts[1])
            return (
                _json(200, self._batch_json(batch)) if batch else _error(404, f"No batch found with id '{parts[1]}'.")
            )
        if method == "POST" and len(parts) == 3 and parts[0] == "batches" and parts[2] == "cancel":
            if parts[1] not in self.batches:
                return _error(404, f"No batch found with id '{parts[1]}'.")
            self.cancel(parts[1])
            return _json(200, self._batch_json(self.batches[parts[1]]))
        return self.not_found()

    # ------------------------------------------------------------------ endpoints

    def _upload(self, content_type: str, body: bytes) -> Response:
        """A multipart/form-data upload (fields ``purpose`` and ``file``), split at its boundary."""
        match = re.search(r'boundary="?([^";]+)"?', content_type)
        if not content_type.startswith("multipart/form-data") or not match:
            return _error(400, "expected a multipart/form-data upload")
        fields: dict[str, tuple[str | None, bytes]] = {}
        for chunk in body.split(b"--" + match.group(1).encode())[1:-1]:
            head, _, data = chunk.removeprefix(b"\r\n").partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]*)"', head)
            filename = re.search(rb'filename="([^"]*)"', head)
            if name:
                fields[name.group(1).decode()] = (filename.group(1).decode() if filename else None, data[:-2])
        if "file" not in fields or fields.get("purpose", (None, b""))[1] != b"batch":
            return _error(400, "a file with purpose 'batch' is required")
        file_id = self.new_id("file-")
        self.files[file_id] = (fields["file"][0] or "upload.jsonl", "batch", fields["file"][1])
        return _json(200, self._file_json(file_id))

    def _file(self, file_id: str, *, content: bool) -> Response:
        if file_id not in self.files:
            return _error(404, f"No such File object: {file_id}")
        if content:
            with self._lock:
                self.result_reads += 1
            return 200, self.files[file_id][2], "application/octet-stream"
        return _json(200, self._file_json(file_id))

    def _create(self, body: bytes) -> Response:
        try:
            payload = json.loads(body)
        except json.JSONDecodeError:
            return _error(400, "request body is not JSON")
        file = self.files.get(str(payload.get("input_file_id")))
        if file is None:
            return _error(404, f"No such File object: {payload.get('input_file_id')}")
        if payload.get("endpoint") != _CHAT or payload.get("completion_window") != "24h":
            return _error(400, "endpoint must be /v1/chat/completions and completion_window 24h")
        items, errors = _read_input(file[2], payload["endpoint"])
        errors = errors or list(self.refuse_with or [])
        metadata = payload.get("metadata") or {}
        batch_id = self.new_id("batch_")
        model = str(items[0][1].get("model", "")) if items else ""
        batch = FakeBatch(
            batch_id, items, label=metadata.get("submission") or metadata.get("resumebias_submission"), model=model
        )
        if errors:
            # OpenAI refuses the whole batch at validation: no item is run.
            batch.outcome, batch.items = "failed", []
            self.invalid[batch_id] = errors
        self.metadata[batch_id] = metadata
        self.created[batch_id] = int(time.time())
        self.add(batch)
        return _json(200, self._batch_json(batch))

    def _list(self, query: str) -> Response:
        params = dict(p.partition("=")[::2] for p in query.split("&") if p)
        limit = int(params.get("limit") or 20)
        with self._lock:
            ordered = sorted(self.batches.values(), key=lambda b: b.batch_id, reverse=True)
        if params.get("after"):
            ids = [b.batch_id for b in ordered]
            after = params["after"]
            ordered = ordered[ids.index(after) + 1 :] if after in ids else []
        page = ordered[:limit]
        data = [self._batch_json(b) for b in page]
        return _json(
            200,
            {
                "object": "list",
                "data": data,
                "first_id": page[0].batch_id if page else None,
                "last_id": page[-1].batch_id if page else None,
                "has_more": len(ordered) > limit,
            },
        )

    # ------------------------------------------------------------------ what OpenAI writes

    def item_result(self, batch: FakeBatch, item_id: str, request: dict[str, Any]) -> dict[str, Any]:
        if item_id in batch.errors:
            status, message = batch.errors[item_id]
            return {"status_code": status, "body": {"error": {"message": message, "type": "server_error"}}}
        return {"status_code": 200, "body": self.answer_for(_CHAT, request)}

    def _file_json(self, file_id: str) -> dict[str, Any]:
        filename, purpose, content = self.files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }

    def _batch_json(self, batch: FakeBatch) -> dict[str, Any]:
        created = self.created.get(batch.batch_id, 0)
        done = [r for _, r in batch.results if r is not None]
        completed = sum(1 for r in done if r["status_code"] == 200)
        output_id = error_id = None
        # Written once every item's result is in (an outcome set from a test's thread comes first).
        if batch.outcome not in (None, "failed") and len(batch.results) == len(batch.items):
            output_id, error_id = self._result_files(batch)
        errors = self.invalid.get(batch.batch_id)
        return {
            "id": batch.batch_id,
            "object": "batch",
            "endpoint": _CHAT,
            "errors": {"object": "list", "data": errors} if errors else None,
            "input_file_id": "file-input",
            "completion_window": "24h",
            "status": _STATUS[batch.outcome],
            "output_file_id": output_id,
            "error_file_id": error_id,
            "created_at": created,
            "in_progress_at": created,
            "expires_at": created + 86_400,
            "completed_at": created + 1 if batch.outcome == "ended" else None,
            "failed_at": created if batch.outcome == "failed" else None,
            "expired_at": created + 86_400 if batch.outcome == "expired" else None,
            "cancelled_at": created + 1 if batch.outcome == "cancelled" else None,
            "request_counts": {
                "total": len(batch.items),
                "completed": completed,
                "failed": len(batch.items) - completed if batch.outcome else 0,
            },
            "metadata": self.metadata.get(batch.batch_id) or None,
            "model": batch.model,
        }

    def _result_files(self, batch: FakeBatch) -> tuple[str | None, str | None]:
        """The ids of the batch's output and error files (written at the first read after it ended)."""
        output_id, error_id = f"file-{batch.batch_id}-output", f"file-{batch.batch_id}-errors"
        if output_id not in self.files and error_id not in self.files:
            output, failed = list(self.extra_lines), list[bytes]()
            for n, (item_id, result) in enumerate(batch.results):
                line: dict[str, Any] = {
                    "id": f"batch_req_{batch.batch_id}_{n}",
                    "custom_id": item_id,
                    "response": None,
                    "error": None,
                }
                if result is None:
                    code, message = _NOT_RUN["cancelled" if batch.outcome == "cancelled" else "expired"]
                    line["error"] = {"code": code, "message": message}
                else:
                    line["response"] = {**result, "request_id": f"req_{n}"}
                raw = self.raw_lines.get(item_id) or json.dumps(line).encode()
                (output if result is not None and result["status_code"] == 200 else failed).append(raw)
            for file_id, lines in ((output_id, output), (error_id, failed)):
                if lines:
                    self.files[file_id] = (f"{file_id}.jsonl", "batch_output", b"\n".join(lines) + b"\n")
        return (output_id if output_id in self.files else None), (error_id if error_id in self.files else None)


def _read_input(content: bytes, endpoint: str) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """The items of an input file, and what OpenAI's validation would refuse in it."""
    items: list[tuple[str, dict[str, Any]]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, raw in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            custom_id, body = line["custom_id"], line["body"]
            problem = None
            if not isinstance(custom_id, str) or custom_id in seen:
                problem = "custom_id must be a unique string"
            elif line.get("method") != "POST" or line.get("url") != endpoint:
                problem = f"method must be POST and url {endpoint}"
            elif not isinstance(body, dict) or "model" not in body:
                problem = "body must be an object naming a model"
        except (ValueError, KeyError, TypeError) as exc:
            problem = f"line is not a batch request ({type(exc).__name__})"
        if problem:
            errors.append({"code": "invalid_request", "line": n, "message": problem, "param": None})
            continue
        seen.add(custom_id)
        items.append((custom_id, body))
    if not items and not errors:
        errors.append({"code": "empty_file", "line": None, "message": "The input file is empty.", "param": None})
    return items, errors
