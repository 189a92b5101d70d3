"""Real HTTP servers on 127.0.0.1 that speak the providers' wire formats, for tests and benchmarks.

One server speaks one wire format:

- ``openai``: ``POST {base}/v1/chat/completions`` (OpenAI, OpenRouter, Groq, Mistral, vLLM ...)
- ``anthropic``: ``POST {base}/v1/messages``
- ``gemini``: ``POST {base}/{version}/...models/{model}:generateContent`` (Gemini API and Vertex)

Each request is answered from a script (``server.script(reply, ...)``, first in first out),
else by the fault profile (a seeded share of transient faults), else with an answer from
``answer(request)``. Every request is counted at the server the moment it is read, so tests
can assert exact call counts. The real SDK clients are pointed at ``server.base_url``.

Run one in its own process for benchmarks (a process of its own keeps the client's event
loop the only thing on its core)::

    python -m resumebias_dagster.testing.fake_providers --wire openai --latency-s 0.2 --port-file p
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WIRES = ("openai", "anthropic", "gemini")
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable", 529: "Overloaded"}
_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
_ANTHROPIC_TYPE = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                   404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


@dataclass(frozen=True)
class Reply:
    """What the server does with one request. Build with the functions below."""

    kind: str  # answer | status | error200 | reset | malformed
    text: str | None = None
    finish: str | None = None  # None (normal) | refusal | content_filter | empty
    status: int = 200
    message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    echo_key: bool = False


def answer(text: str | None = None, delay_s: float = 0.0) -> Reply:
    """A normal answer (``text`` None: the server's ``answer`` function decides)."""
    return Reply("answer", text=text, delay_s=delay_s)


def refusal(delay_s: float = 0.0) -> Reply:
    return Reply("answer", finish="refusal", delay_s=delay_s)


def content_filter() -> Reply:
    return Reply("answer", finish="content_filter")


def empty() -> Reply:
    return Reply("answer", text="", finish="empty")


def status(code: int, message: str = "scripted error", retry_after: float | None = None,
           retry_after_ms: float | None = None, delay_s: float = 0.0) -> Reply:
    headers = []
    if retry_after is not None:
        headers.append(("retry-after", f"{retry_after:g}"))
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", f"{retry_after_ms:g}"))
    return Reply("status", status=code, message=message, headers=tuple(headers), delay_s=delay_s)


def rate_limited(retry_after: float = 0.01) -> Reply:
    """429 with a Retry-After in seconds (fractions allowed, as the SDKs accept them)."""
    return status(429, "rate limit reached, slow down", retry_after=retry_after)


def server_error(code: int = 500, retry_after_ms: float | None = 5) -> Reply:
    """5xx; a short retry-after-ms keeps the SDKs' backoff (0.5 s and up) out of fast tests."""
    return status(code, "the server had an error", retry_after_ms=retry_after_ms)


def auth_error(echo_key: bool = True) -> Reply:
    """401 whose message repeats the presented key, as OpenAI's does (clients must scrub it)."""
    return Reply("status", status=401, message="Incorrect API key provided: ", echo_key=echo_key)


def error_in_200(code: int = 502, message: str = "upstream provider overloaded") -> Reply:
    """HTTP 200 whose body is an error object, as OpenRouter reports some upstream failures."""
    return Reply("error200", status=code, message=message)


def slow(delay_s: float, then: Reply | None = None) -> Reply:
    """Answer only after ``delay_s`` (past the client's timeout, the client gives up first)."""
    base = then or answer()
    return Reply(base.kind, base.text, base.finish, base.status, base.message, base.headers, delay_s, base.echo_key)


def reset() -> Reply:
    """Read the request, then drop the connection without a response."""
    return Reply("reset")


def malformed() -> Reply:
    """200 with a body that is not JSON."""
    return Reply("malformed")


@dataclass(frozen=True)
class FaultProfile:
    """Each request fails with probability ``rate``, the fault drawn from ``kinds``."""

    rate: float = 0.2
    kinds: tuple[str, ...] = ("rate_limited", "server_error", "unavailable", "reset")
    retry_after_s: float = 0.01
    timeout_delay_s: float = 1.0
    seed: int = 0

    def reply(self, rng: random.Random) -> Reply | None:
        if rng.random() >= self.rate:
            return None
        kind = rng.choice(self.kinds)
        if kind == "rate_limited":
            return rate_limited(self.retry_after_s)
        if kind == "server_error":
            return server_error(500, retry_after_ms=self.retry_after_s * 1000)
        if kind == "unavailable":
            return server_error(503, retry_after_ms=self.retry_after_s * 1000)
        if kind == "reset":
            return reset()
        if kind == "timeout":
            return slow(self.timeout_delay_s)
        raise ValueError(f"unknown fault kind {kind!r}")


@dataclass
class FakeRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    prompt: str = ""
    model: str = ""
    api_key: str | None = None
    logprobs: int = 0


@dataclass
class Stats:
    requests: int = 0
    outcomes: Counter = field(default_factory=Counter)

    def as_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "outcomes": dict(self.outcomes), "cpu_s": round(time.process_time(), 3)}


def _default_answer(request: FakeRequest) -> str:
    return "mid"


# --------------------------------------------------------------------------- structured résumés

_LEVEL_ASKED = re.compile(r"for an? (junior|mid|senior)-level professional")
_TODAY_GIVEN = re.compile(r"Today is (\d{4})-(\d{2})")
_PEOPLE = [("Rowan", "Castellano"), ("Quinn", "Okafor"), ("Harper", "Lindqvist"), ("Emerson", "Varga"),
           ("Sawyer", "Mbeki"), ("Marlow", "Tanaka"), ("Reese", "Albescu"), ("Tatum", "Ferreira"),
           ("Lennox", "Haddad"), ("Arden", "Kowalczyk"), ("Blair", "Nakamura"), ("Oakley", "Ruiz")]
_CITIES = [("Denver, CO", 303), ("Raleigh, NC", 919), ("Columbus, OH", 614), ("Boise, ID", 208),
           ("Omaha, NE", 402), ("Tampa, FL", 813)]
# Per occupation: titles (oldest to newest), employers, schools, degrees, skills, bullets.
_TRADES = {
    "software_engineer": {
        "noun": "Software engineer", "work": "backend services and developer tooling",
        "titles": ["Software Engineer", "Software Engineer II", "Staff Software Engineer", "Principal Engineer"],
        "intern": "Software Engineering Intern",
        "employers": ["Northwind Analytics", "Bluebird Payments", "Cobalt Health Systems", "Harborline Logistics",
                      "Quarry Labs", "Tidewater Insurance"],
        "schools": ["University of Colorado Boulder", "Ohio State University", "Georgia Institute of Technology"],
        "degrees": ["B.S. Computer Science", "M.S. Computer Science"],
        "skills": ["Python", "Go", "PostgreSQL", "Kubernetes", "AWS", "Terraform", "gRPC", "Kafka"],
        "bullets": ["Built a payments reconciliation service in Go that processes 2M events per day.",
                    "Cut p95 API latency by 38% by adding read replicas and query caching.",
                    "Migrated 14 services from VMs to Kubernetes with zero customer-facing downtime.",
                    "Designed the internal feature-flag service used by 9 product teams.",
                    "Wrote integration tests that raised coverage of the billing code from 41% to 83%.",
                    "Led the on-call rotation redesign, reducing pages per week from 30 to 8.",
                    "Reviewed pull requests and coached two new hires through their first quarter.",
                    "Automated database schema migrations in the CI pipeline."],
    },
    "data_analyst": {
        "noun": "Data analyst", "work": "reporting and experimentation",
        "titles": ["Data Analyst", "Data Analyst II", "Analytics Lead", "Director of Analytics"],
        "intern": "Business Intelligence Intern",
        "employers": ["Meridian Retail Group", "Summit Credit Union", "Greenfield Foods", "Atlas Freight",
                      "Lumen Media", "Cedar Health Partners"],
        "schools": ["University of Minnesota", "Purdue University", "University of Arizona"],
        "degrees": ["B.S. Statistics", "M.S. Business Analytics"],
        "skills": ["SQL", "Python", "Tableau", "dbt", "Looker", "A/B testing", "Excel", "Snowflake"],
        "bullets": ["Built the weekly revenue dashboard read by 40 managers across 6 regions.",
                    "Designed and analysed 25 pricing experiments, adding 3% to gross margin.",
                    "Rebuilt 60 legacy reports as dbt models with documented definitions.",
                    "Forecast store staffing needs, cutting overtime hours by 12%.",
                    "Trained 15 colleagues in SQL through a six-week internal course.",
                    "Automated the monthly board pack, saving 3 analyst days per month."],
    },
}


def _month_text(index: int) -> str:
    return f"{index // 12}-{index % 12 + 1:02d}"


def structured_resume(level: str, person: int, occupation: str, today: int, variant: int = 0) -> dict[str, Any]:
    """A realistic résumé as the structured generation prompt of ``core/seniority/llm_generation.py``
    asks for it: contiguous positions ending now, a degree just before the first one, the
    summary's years matching the positions. ``today`` counts months from year 0."""
    trade = _TRADES[occupation]
    rng = random.Random(f"{level}|{person}|{occupation}|{variant}")
    first, last = _PEOPLE[person % len(_PEOPLE)]
    city, area = _CITIES[(person + variant) % len(_CITIES)]
    lengths = {"junior": [rng.randint(9, 20)],
               "mid": [rng.randint(20, 30), rng.randint(24, 40)],
               "senior": [rng.randint(24, 36), rng.randint(30, 44), rng.randint(30, 48), rng.randint(20, 30)]}[level]
    title_of = {"junior": [0], "mid": [0, 1], "senior": [0, 1, 2, 3]}[level]
    employers = rng.sample(trade["employers"], len(lengths) + 1)
    bullets = itertools.cycle(rng.sample(trade["bullets"], len(trade["bullets"])))
    positions, end = [], today
    for k, length in enumerate(reversed(lengths)):
        start = end - length + 1
        positions.append({
            "title": trade["titles"][title_of[len(lengths) - 1 - k]], "employer": employers[k],
            "city": city if k == 0 else rng.choice(_CITIES)[0], "start": _month_text(start),
            "end": "Present" if k == 0 else _month_text(end),
            "bullets": [next(bullets) for _ in range(3 if k else 4)],
        })
        end = start - 1
    career_start = end + 1
    degree_year = career_start // 12 - (1 if career_start % 12 < 5 else 0)
    education = [{"degree": trade["degrees"][0], "school": rng.choice(trade["schools"]), "year": degree_year}]
    if level == "senior":
        schools = [s for s in trade["schools"] if s != education[0]["school"]]
        education = [{"degree": trade["degrees"][1], "school": schools[0], "year": degree_year},
                     {"degree": trade["degrees"][0], "school": schools[1], "year": degree_year - 2}]
    if level == "junior":
        positions.append({"title": trade["intern"], "employer": employers[-1], "city": rng.choice(_CITIES)[0],
                          "start": f"{degree_year - 1}-06", "end": f"{degree_year - 1}-08",
                          "bullets": [next(bullets) for _ in range(2)]})
    years = (today - career_start + 1) // 12
    phrase = "less than one year" if years == 0 else "1 year" if years == 1 else f"{years} years"
    return {
        "name": f"{first} {last}",
        "contact": {"email": f"{first.lower()}.{last.lower()}@example.com",
                    "phone": f"({area}) 555-01{person % 100:02d}", "city": city,
                    "linkedin": f"linkedin.com/in/{first.lower()}-{last.lower()}" if person % 2 else ""},
        "summary": f"{trade['noun']} with {phrase} of professional experience in {trade['work']}. "
                   "Known for careful documentation and dependable delivery.",
        "positions": positions,
        "education": education,
        "skills": rng.sample(trade["skills"], 6),
        "certifications": ["AWS Certified Developer"] if occupation == "software_engineer" and person % 3 == 0 else [],
        "occupation": occupation,
        "seniority": level,
    }


def structured_resume_answers(
    occupations: tuple[str, ...] = ("software_engineer", "data_analyst"),
    fallback: Callable[[FakeRequest], str] = _default_answer,
) -> Callable[[FakeRequest], str]:
    """An ``answer`` for ``FakeProviderServer`` that writes a realistic JSON résumé
    (``structured_resume``) for each structured generation prompt, every other one in a
    ```json fence as chat models often add; other prompts go to ``fallback``. The k-th
    résumé of a level has ``occupations[k % len]``, whatever order concurrent calls arrive in."""
    lock = threading.Lock()
    people = itertools.count()
    per_level: Counter = Counter()

    def answer(request: FakeRequest) -> str:
        level = _LEVEL_ASKED.search(request.prompt)
        today = _TODAY_GIVEN.search(request.prompt)
        if not (level and today and '"positions"' in request.prompt):
            return fallback(request)
        with lock:
            person, k = next(people), per_level[level.group(1)]
            per_level[level.group(1)] += 1
        now = int(today.group(1)) * 12 + int(today.group(2)) - 1
        text = json.dumps(structured_resume(level.group(1), person, occupations[k % len(occupations)], now, k),
                          indent=2)
        return f"```json\n{text}\n```" if person % 2 else text

    return answer


class FakeProviderServer:
    """A provider API on 127.0.0.1, run in a background thread (``with`` or ``start``/``stop``)."""

    def __init__(
        self,
        wire: str,
        answer: Callable[[FakeRequest], str] = _default_answer,
        latency_s: float = 0.0,
        faults: FaultProfile | None = None,
        resolved_model: str | Callable[[str], str] | None = None,
        record: bool = True,
        port: int = 0,
        stall_share: float = 0.0,
        stall_delay_s: float = 1.0,
    ):
        """``stall_share``: the share of prompts (chosen by a hash of the prompt, so the same
        prompts every time) that stall ``stall_delay_s`` on every attempt: a generation too
        long for the client's timeout, as opposed to the random faults of ``faults``."""
        if wire not in WIRES:
            raise ValueError(f"wire must be one of {WIRES}, got {wire!r}")
        self.wire = wire
        self.answer = answer
        self.latency_s = latency_s
        self.faults = faults
        self._rng = random.Random(faults.seed if faults else 0)
        self.resolved_model = resolved_model
        self.stall_share = stall_share
        self.stall_delay_s = stall_delay_s
        self.record = record
        self.requests: list[FakeRequest] = []
        self.stats = Stats()
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    # ------------------------------------------------------------------ control

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """What the SDK's base_url setting takes (OpenAI's includes ``/v1``)."""
        root = f"http://127.0.0.1:{self._port}"
        return root + "/v1" if self.wire == "openai" else root

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
        if self._loop is None:
            return

        async def shutdown() -> None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
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
                if not await self._respond(method, target, headers, body, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _respond(self, method: str, target: str, headers: dict[str, str], body: bytes,
                       reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
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
            self._write(writer, 200, self._answer_body(request, text, reply.finish))
        await writer.drain()
        return True

    def _count(self, outcome: str) -> None:
        with self._lock:
            self.stats.outcomes[outcome] += 1

    def _write(self, writer, code: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self._write_raw(writer, code, json.dumps(payload).encode(), "application/json", headers)

    @staticmethod
    def _write_raw(writer, code: int, body: bytes, content_type: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        head = [f"HTTP/1.1 {code} {_REASONS.get(code, 'Status')}", f"content-type: {content_type}",
                f"content-length: {len(body)}", "connection: keep-alive"]
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
        elif self.wire == "anthropic":
            req.api_key = headers.get("x-api-key") or bearer
            req.model = str(payload.get("model", ""))
            req.prompt = _last_user_text(payload.get("messages") or [])
        else:
            req.api_key = headers.get("x-goog-api-key")
            req.model = target.rsplit("/models/", 1)[-1].split(":", 1)[0]
            contents = payload.get("contents") or []
            user = [c for c in contents if c.get("role", "user") == "user"]
            req.prompt = "".join(p.get("text", "") for p in (user[-1].get("parts") if user else []) or [])
            config = payload.get("generationConfig") or {}
            req.logprobs = int(config.get("logprobs") or (1 if config.get("responseLogprobs") else 0))
        return req

    def _resolved(self, alias: str) -> str:
        if callable(self.resolved_model):
            return self.resolved_model(alias)
        return self.resolved_model or f"{alias}-2025-01-01"

    def _answer_body(self, req: FakeRequest, text: str, finish: str | None) -> dict[str, Any]:
        tokens_in = max(1, len(req.prompt) // 4)
        tokens_out = 0 if finish in ("empty", "content_filter") else max(1, len(text) // 4)
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
            return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
                    "choices": [choice],
                    "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                              "total_tokens": tokens_in + tokens_out}}
        if self.wire == "anthropic":
            stop = "refusal" if finish == "refusal" else "end_turn"
            content = [] if finish in ("refusal", "empty") else [{"type": "text", "text": text}]
            return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": content,
                    "stop_reason": stop, "stop_sequence": None,
                    "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
        usage = {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
                 "totalTokenCount": tokens_in + tokens_out}
        if finish == "content_filter":
            return {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage, "modelVersion": model}
        if finish == "refusal":
            text = "I'm sorry, but I can't help with classifying this."
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}] if text else []},
                                     "finishReason": "STOP", "index": 0}
        if req.logprobs and text:
            candidate["avgLogprobs"] = -0.1
            candidate["logprobsResult"] = {
                "chosenCandidates": [{"token": text, "logProbability": -0.1}],
                "topCandidates": [{"candidates": [{"token": t, "logProbability": lp}
                                                  for t, lp in _top(text, req.logprobs)]}],
            }
        return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model, "responseId": "fake"}

    def _error_body(self, code: int, message: str) -> dict[str, Any]:
        if self.wire == "openai":
            return {"error": {"message": message, "type": "fake_error", "code": code}}
        if self.wire == "anthropic":
            return {"type": "error", "error": {"type": _ANTHROPIC_TYPE.get(code, "api_error"), "message": message}}
        return {"error": {"code": code, "message": message, "status": _GEMINI_STATUS.get(code, "UNKNOWN")}}


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


def _top(text: str, k: int) -> list[tuple[str, float]]:
    others = [t for t in ("junior", "mid", "senior") if t != text.strip().lower()]
    return [(text, -0.1)] + [(t, -2.0 - i) for i, t in enumerate(others)][: max(0, k - 1)]


def _openai_logprob(text: str, k: int) -> dict[str, Any]:
    return {"token": text, "logprob": -0.1, "bytes": None,
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in _top(text, k)]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wire", choices=WIRES, default="openai")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--faults", default="rate_limited,server_error,unavailable,reset")
    parser.add_argument("--retry-after-s", type=float, default=0.01)
    parser.add_argument("--timeout-delay-s", type=float, default=1.0, help="how long a 'timeout' fault stalls")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stall-share", type=float, default=0.0,
                        help="share of prompts that stall --timeout-delay-s on every attempt")
    args = parser.parse_args(argv)
    faults = None
    if args.fault_rate > 0:
        faults = FaultProfile(args.fault_rate, tuple(args.faults.split(",")), args.retry_after_s,
                              args.timeout_delay_s, seed=args.seed)
    server = FakeProviderServer(args.wire, latency_s=args.latency_s, faults=faults, record=False, port=args.port,
                                stall_share=args.stall_share, stall_delay_s=args.timeout_delay_s)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(server.serve_forever())
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        while server.port == 0:
            await asyncio.sleep(0.01)
        if args.port_file:
            tmp = args.port_file.with_suffix(".tmp")
            tmp.write_text(str(server.port))
            tmp.replace(args.port_file)
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(run())


if __name__ == "__main__":
    main()
