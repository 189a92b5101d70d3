"""The fake provider server: one wire format on 127.0.0.1, in a background thread or its own process."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from resumebias_dagster.testing.fake_providers.batch import StatusReadFailed
from resumebias_dagster.testing.fake_providers.cache import CHARS_PER_TOKEN, MIN_TOKENS, PrefixCache
from resumebias_dagster.testing.fake_providers.replies import (
    _ANTHROPIC_TYPE,
    _GEMINI_STATUS,
    _REASONS,
    DEEP_NESTING,
    WIRES,
    FakeRequest,
    FaultProfile,
    Reply,
    Stats,
    _default_answer,
    answer,
    slow,
)
from resumebias_dagster.testing.fake_providers.scorer import resume_of, score_answer

_DOC = "Real HTTP servers on 127.0.0.1 that speak the providers' wire formats, for tests and benchmarks."


class FakeProviderServer:
    """A provider API on 127.0.0.1, run in a background thread (``with`` or ``start``/``stop``)."""

    def __init__(
        self,
        wire: str,
        answer: Callable[[FakeRequest], str] = _default_answer,
        *,
        latency_s: float = 0.0,
        faults: FaultProfile | None = None,
        resolved_model: str | Callable[[str], str] | None = None,
        record: bool = True,
        port: int = 0,
        stall_share: float = 0.0,
        stall_delay_s: float = 1.0,
        cache_min_tokens: int | None = MIN_TOKENS,
        batch: bool = True,
        batch_polls_to_finish: int = 1,
    ):
        """``stall_share``: the share of prompts (chosen by a hash of the prompt, so the same
        prompts every time) that stall ``stall_delay_s`` on every attempt: a generation too
        long for the client's timeout, as opposed to the random faults of ``faults``.
        ``cache_min_tokens``: the shortest prefix the server's prompt cache keeps (``cache.py``;
        its answers report cached input tokens in the wire's usage); None: no cache.
        ``batch``: the wire's batch endpoints are served (``batches``, ``batch.py``); False: they
        answer 404, as an OpenAI-compatible server without a Batch API does."""
        if wire not in WIRES:
            raise ValueError(f"wire must be one of {WIRES}, got {wire!r}")
        self.wire = wire
        self.answer = score_answer if wire == "scorer" and answer is _default_answer else answer
        self.latency_s = latency_s
        self.faults = faults
        self._rng = random.Random(faults.seed if faults else 0)
        self.resolved_model = resolved_model
        self.stall_share = stall_share
        self.stall_delay_s = stall_delay_s
        self.record = record
        self.cache = None if cache_min_tokens is None else PrefixCache(cache_min_tokens)
        self.requests: list[FakeRequest] = []
        self.stats = Stats()
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.batches = _batches_of(self, batch_polls_to_finish)
        if self.batches is not None:
            self.batches.enabled = batch

    # ------------------------------------------------------------------ control

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """What the SDK's base_url setting takes (OpenAI's includes ``/v1``; the scorer's is its URL)."""
        root = f"http://127.0.0.1:{self._port}"
        return root + {"openai": "/v1", "scorer": "/score"}.get(self.wire, "")

    @property
    def count(self) -> int:
        return self.stats.requests

    def script(self, *replies: Reply) -> FakeProviderServer:
        with self._lock:
            self._script.extend(replies)
        return self

    def reset_counts(self) -> None:
        with self._lock:
            self.stats = Stats()
            self.requests = []

    def start(self) -> FakeProviderServer:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", self._port, backlog=1024)
            )
            self._port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, name=f"fake-{self.wire}", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake provider server did not start")
        return self

    def stop(self) -> None:
        loop, server, thread = self._loop, self._server, self._thread
        if loop is None:
            return
        assert server is not None and thread is not None  # start() set them with the loop

        async def shutdown() -> None:
            server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = None

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def serve_forever(self) -> None:
        """Serve in the current event loop (the command-line mode)."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self._port, backlog=2048)
        self._port = self._server.sockets[0].getsockname()[1]
        async with self._server:
            await self._server.serve_forever()

    # ------------------------------------------------------------------ protocol

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers: dict[str, str] = {}
                for raw in lines[1:]:
                    if raw:
                        name, _, value = raw.partition(":")
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                body = await reader.readexactly(length) if length else b""
                if not await self._respond(method, target, headers, body, reader=reader, writer=writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _respond(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes,
        *,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        path = target.split("?", 1)[0]
        if method == "GET" and path == "/_stats":
            self._write(writer, 200, self.stats.as_json())
            await writer.drain()
            return True
        if method == "POST" and path == "/_reset":
            self.reset_counts()
            self._write(writer, 200, {})
            await writer.drain()
            return True
        if self.wire == "scorer" and method == "GET" and path == "/version" and self.resolved_model is not None:
            self._write(writer, 200, {"version": self._resolved("scorer")})  # kind http's `version: {url: ...}`
            await writer.drain()
            return True
        handled = self._batch_reply(method, target, headers, body)
        if handled is not None:
            self._write_raw(writer, handled[0], handled[1], handled[2])
            await writer.drain()
            return True
        try:
            payload = json.loads(body or b"null")
        except json.JSONDecodeError:
            payload = None
        request = self._parse(method, target, headers, payload)
        with self._lock:
            self.stats.requests += 1
            if self.record:
                self.requests.append(request)
            reply = self._script.pop(0) if self._script else None
        if reply is None and self.stall_share and _share_of(request.prompt) < self.stall_share:
            reply = slow(self.stall_delay_s)
        if reply is None and self.faults is not None:
            reply = self.faults.reply(self._rng)
        reply = reply or answer()
        delay = self.latency_s + reply.delay_s
        if delay:
            await asyncio.sleep(delay)
        if writer.transport.is_closing() or reader.at_eof():
            # The client gave up (its timeout): a real provider may still bill this one.
            self._count("client_gone")
            return False
        if reply.kind == "reset":
            self._count("reset")
            writer.transport.abort()
            return False
        if reply.kind == "malformed":
            self._count("malformed")
            self._write_raw(writer, 200, b'{"id": "chatcmpl-broken", "choices": [', "application/json")
        elif reply.kind == "raw":
            self._count("raw")
            self._write_raw(writer, 200, reply.body or b"", "application/json")
        elif reply.kind == "hostile":
            self._count(f"hostile_{reply.hostile}")
            text = reply.text if reply.text is not None else self.answer(request)
            self._write_raw(writer, 200, self._hostile_body(request, text, reply.hostile), "application/json")
        elif reply.kind == "error200":
            self._count("error_in_200")
            self._write(writer, 200, self._error_body(reply.status, reply.message))
        elif reply.kind == "status":
            self._count(f"status_{reply.status}")
            message = reply.message + (request.api_key or "") if reply.echo_key else reply.message
            self._write(writer, reply.status, self._error_body(reply.status, message), reply.headers)
        else:
            self._count(reply.finish or "answered")
            text = reply.text if reply.text is not None else self.answer(request)
            self._write(writer, 200, self._answer_body(request, text, reply.finish), self._version_headers())
        await writer.drain()
        return True

    def _batch_reply(self, method: str, target: str, headers: dict[str, str], body: bytes):
        """The batch protocol's answer to a request of its endpoints, or None for every other request."""
        if not self.batches:
            return None
        path, _, query = target.partition("?")
        try:
            return self.batches.handle(method, path, query, headers, body)
        except StatusReadFailed as exc:  # a scripted outage of status reads
            error = json.dumps(self._error_body(exc.status, "service unavailable")).encode()
            return exc.status, error, "application/json"

    def _count(self, outcome: str) -> None:
        with self._lock:
            self.stats.outcomes[outcome] += 1

    def _write(self, writer, code: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self._write_raw(writer, code, json.dumps(payload).encode(), "application/json", headers)

    @staticmethod
    def _write_raw(
        writer, code: int, body: bytes, content_type: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        head = [
            f"HTTP/1.1 {code} {_REASONS.get(code, 'Status')}",
            f"content-type: {content_type}",
            f"content-length: {len(body)}",
            "connection: keep-alive",
        ]
        head += [f"{k}: {v}" for k, v in headers]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    # ------------------------------------------------------------------ wire formats

    def _parse(self, method: str, target: str, headers: dict[str, str], payload: Any) -> FakeRequest:
        req = FakeRequest(method, target, headers, payload)
        payload = payload if isinstance(payload, dict) else {}
        auth = headers.get("authorization", "")
        bearer = auth[7:] if auth.lower().startswith("bearer ") else None
        if self.wire == "openai":
            req.api_key = bearer
            req.model = str(payload.get("model", ""))
            req.prompt = _last_user_text(payload.get("messages") or [])
            req.logprobs = int(payload.get("top_logprobs") or (1 if payload.get("logprobs") else 0))
        elif self.wire == "scorer":
            req.api_key = bearer
            req.model = "scorer"
            req.prompt = resume_of(payload)
        elif self.wire == "anthropic":
            req.api_key = headers.get("x-api-key") or bearer
            req.model = str(payload.get("model", ""))
            req.prompt = _last_user_text(payload.get("messages") or [])
            req.cache_prefix = _marked_prefix(payload.get("messages") or [])
        else:
            req.api_key = headers.get("x-goog-api-key")
            req.model = target.rsplit("/models/", 1)[-1].split(":", 1)[0]
            contents = payload.get("contents") or []
            user = [c for c in contents if c.get("role", "user") == "user"]
            req.prompt = "".join(p.get("text", "") for p in (user[-1].get("parts") if user else []) or [])
            config = payload.get("generationConfig") or {}
            req.logprobs = int(config.get("logprobs") or (1 if config.get("responseLogprobs") else 0))
        return req

    def answer_item(self, target: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The answer body to ``payload`` sent live to ``target`` (a batch item's answer)."""
        request = self._parse("POST", target, {}, payload)
        return self._answer_body(request, self.answer(request), None)

    def _resolved(self, alias: str) -> str:
        if callable(self.resolved_model):
            return self.resolved_model(alias)
        return self.resolved_model or f"{alias}-2025-01-01"

    def _version_headers(self) -> tuple[tuple[str, str], ...]:
        """A scorer with a version (``resolved_model``) says it in each answer's header too."""
        versioned = self.wire == "scorer" and self.resolved_model is not None
        return (("x-model-version", self._resolved("scorer")),) if versioned else ()

    def _answer_body(self, req: FakeRequest, text: str, finish: str | None) -> dict[str, Any]:
        if self.wire == "scorer":
            body = json.loads(text)
            versioned = self._version_headers() and isinstance(body, dict)
            return {**body, "model_version": self._resolved("scorer")} if versioned else body
        tokens_out = 0 if finish in ("empty", "content_filter") else max(1, len(text) // 4)
        usage = self._usage(req, tokens_out)
        model = self._resolved(req.model)
        if self.wire == "openai":
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
            reason = "stop"
            if finish == "refusal":
                message.update(content=None, refusal="I'm sorry, I can't help with that.")
            elif finish == "content_filter":
                message["content"] = None
                reason = "content_filter"
            choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": reason, "logprobs": None}
            if req.logprobs and finish is None:
                choice["logprobs"] = {"content": [_openai_logprob(text, req.logprobs)], "refusal": None}
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [choice],
                "usage": usage,
            }
        if self.wire == "anthropic":
            stop = "refusal" if finish == "refusal" else "end_turn"
            content = [] if finish in ("refusal", "empty") else [{"type": "text", "text": text}]
            return {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
        if finish == "content_filter":
            return {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage, "modelVersion": model}
        if finish == "refusal":
            text = "I'm sorry, but I can't help with classifying this."
        candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [{"text": text}] if text else []},
            "finishReason": "STOP",
            "index": 0,
        }
        if req.logprobs and text:
            candidate["avgLogprobs"] = -0.1
            candidate["logprobsResult"] = {
                "chosenCandidates": [{"token": text, "logProbability": -0.1}],
                "topCandidates": [
                    {"candidates": [{"token": t, "logProbability": lp} for t, lp in _top(text, req.logprobs)]}
                ],
            }
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model, "responseId": "fake"}

    def _usage(self, req: FakeRequest, tokens_out: int) -> dict[str, Any]:
        """The usage of an answer in the wire's words, with what the prompt cache served: the
        whole input counted as each wire counts it (Anthropic's input_tokens leaves out the
        tokens read from the cache and written to it; OpenAI's and Gemini's include them)."""
        tokens_in = max(1, len(req.prompt) // CHARS_PER_TOKEN)
        if self.wire == "anthropic":
            read, written = (0, 0)
            if self.cache is not None and req.cache_prefix:
                read, written = self.cache.marked(req.model, req.cache_prefix)
            read, written = read // CHARS_PER_TOKEN, written // CHARS_PER_TOKEN
            return {
                "input_tokens": tokens_in - read - written,
                "output_tokens": tokens_out,
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
            }
        cached = self.cache.automatic(req.model, req.prompt) // CHARS_PER_TOKEN if self.cache is not None else 0
        if self.wire == "openai":
            return {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            }
        usage = {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out}
        if cached:
            # Gemini names the cached tokens only when there are some.
            usage["cachedContentTokenCount"] = cached
        return {**usage, "totalTokenCount": tokens_in + tokens_out}

    def _hostile_body(self, req: FakeRequest, text: str, kind: str | None) -> bytes:
        """The bytes of a 2xx answer of ``text`` made hostile in the way ``kind`` names."""
        if self.wire == "scorer" and kind in ("lone_surrogate", "list_content"):
            # The scorer's answer is JSON of its own: the surrogate goes in a field beside it.
            body = json.loads(text)
            body["note"] = "\ud800" if kind == "lone_surrogate" else ["a", "list"]
            return json.dumps(body).encode()
        if self.wire == "scorer" and kind == "invalid_utf8":
            marker = "\u2063MARK\u2063"
            body = {**json.loads(text), "note": marker}
            return json.dumps(body, ensure_ascii=False).encode().replace(marker.encode(), b" \xff\xfe")
        if kind == "huge_number":
            if self.wire == "scorer":
                body = json.loads(text)
                body["result"]["score"] = 10**400
                return json.dumps(body).encode()
            return json.dumps(self._answer_body(req, json.dumps({"score": "9" * 5000}), None)).encode()
        if kind == "lone_surrogate":
            # json.dumps writes the lone surrogate as the escape \ud800: valid JSON, invalid UTF-8 once decoded.
            return json.dumps(self._answer_body(req, text + "\ud800", None)).encode()
        if kind == "list_content":
            body = self._answer_body(req, text, None)
            half = max(1, len(text) // 2)
            parts = [text[:half], text[half:]] if len(text) > 1 else [text]
            if self.wire == "openai":
                body["choices"][0]["message"]["content"] = [{"type": "text", "text": p} for p in parts]
            elif self.wire == "anthropic":
                body["content"] = [{"type": "text", "text": p} for p in parts]
            else:
                body["candidates"][0]["content"]["parts"] = [{"text": p} for p in parts]
            return json.dumps(body).encode()
        if kind == "deep_nesting":
            head = json.dumps(self._answer_body(req, text, None)).encode()
            return head[:-1] + b', "nested": ' + b"[" * DEEP_NESTING + b"]" * DEEP_NESTING + b"}"
        if kind == "invalid_utf8":
            marker = "\u2063MARK\u2063"
            encoded = json.dumps(self._answer_body(req, text + marker, None), ensure_ascii=False).encode()
            return encoded.replace(marker.encode(), b" \xff\xfe\xed\xa0\x80")
        raise ValueError(f"unknown hostile kind {kind!r}")

    def _error_body(self, code: int, message: str) -> dict[str, Any]:
        if self.wire == "scorer":
            return {"error": {"code": code, "message": message}}
        if self.wire == "openai":
            return {"error": {"message": message, "type": "fake_error", "code": code}}
        if self.wire == "anthropic":
            return {"type": "error", "error": {"type": _ANTHROPIC_TYPE.get(code, "api_error"), "message": message}}
        return {"error": {"code": code, "message": message, "status": _GEMINI_STATUS.get(code, "UNKNOWN")}}


def _batches_of(server: FakeProviderServer, polls_to_finish: int) -> Any:
    """The batch protocol of the server's wire (none for the scorer)."""
    if server.wire == "openai":
        from resumebias_dagster.testing.fake_providers.batch_openai import OpenAIBatches

        return OpenAIBatches(server, polls_to_finish=polls_to_finish)
    if server.wire == "anthropic":
        from resumebias_dagster.testing.fake_providers.batch_anthropic import AnthropicBatches

        return AnthropicBatches(server, polls_to_finish=polls_to_finish)
    if server.wire == "gemini":
        from resumebias_dagster.testing.fake_providers.batch_gemini import GeminiBatches

        return GeminiBatches(server, polls_to_finish=polls_to_finish)
    return None


def _share_of(text: str) -> float:
    """A number in [0, 1) fixed by ``text``."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _marked_prefix(messages: list[Any]) -> str | None:
    """The text of the last user message up to and including its last block marked with
    ``cache_control`` (Anthropic), or None where nothing is marked."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if not isinstance(content, list):
                return None
            blocks = [b for b in content if isinstance(b, dict)]
            marked = [i for i, b in enumerate(blocks) if b.get("cache_control")]
            return "".join(str(b.get("text", "")) for b in blocks[: marked[-1] + 1]) if marked else None
    return None


def _top(text: str, k: int) -> list[tuple[str, float]]:
    others = [t for t in ("junior", "mid", "senior") if t != text.strip().lower()]
    return [(text, -0.1)] + [(t, -2.0 - i) for i, t in enumerate(others)][: max(0, k - 1)]


def _openai_logprob(text: str, k: int) -> dict[str, Any]:
    return {
        "token": text,
        "logprob": -0.1,
        "bytes": None,
        "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in _top(text, k)],
    }
