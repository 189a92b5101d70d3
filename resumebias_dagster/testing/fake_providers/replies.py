"""What a fake provider server answers: scripted replies, fault profiles, the requests it saw."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# "scorer": a résumé-scoring service (kind http), fake_providers/scorer.py.
WIRES = ("openai", "anthropic", "gemini", "scorer")
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
_ANTHROPIC_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Reply:
    """What the server does with one request. Build with the functions below."""

    kind: str  # answer | status | error200 | reset | malformed | hostile | raw
    text: str | None = None
    finish: str | None = None  # None (normal) | refusal | content_filter | empty
    status: int = 200
    message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    echo_key: bool = False
    # kind "hostile": which of HOSTILE_KINDS; kind "raw": the body sent as is (status 200).
    hostile: str | None = None
    body: bytes | None = None


# 2xx answers that are valid HTTP but hostile to a client's parsing (issue 25): an answer
# holding a lone surrogate (the JSON escape \ud800), a message content given as a list of
# parts (as some OpenAI-compatible servers send it), a body nested deeper than a JSON parser
# recurses, and bytes that are not UTF-8 inside the answer. Each is billed like any answer.
# huge_number (issue 40): a score of 5,000 digits (a string, on the LLM wires) or 10**400 (the scorer's number).
HOSTILE_KINDS = ("lone_surrogate", "list_content", "deep_nesting", "invalid_utf8", "huge_number")
DEEP_NESTING = 100_000


def hostile(kind: str, text: str | None = None) -> Reply:
    """A 2xx answer of one of ``HOSTILE_KINDS`` (``text`` None: the server's answer)."""
    if kind not in HOSTILE_KINDS:
        raise ValueError(f"hostile kind must be one of {HOSTILE_KINDS}, got {kind!r}")
    return Reply("hostile", text=text, hostile=kind)


def raw_body(body: bytes) -> Reply:
    """HTTP 200 with ``body`` exactly as given (content-type application/json)."""
    return Reply("raw", body=body)


def answer(text: str | None = None, delay_s: float = 0.0) -> Reply:
    """A normal answer (``text`` None: the server's ``answer`` function decides)."""
    return Reply("answer", text=text, delay_s=delay_s)


def refusal(delay_s: float = 0.0) -> Reply:
    return Reply("answer", finish="refusal", delay_s=delay_s)


def content_filter() -> Reply:
    return Reply("answer", finish="content_filter")


def empty() -> Reply:
    return Reply("answer", text="", finish="empty")


def status(
    code: int,
    message: str = "scripted error",
    retry_after: float | None = None,
    retry_after_ms: float | None = None,
    delay_s: float = 0.0,
) -> Reply:
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
    return Reply(
        base.kind,
        base.text,
        base.finish,
        base.status,
        base.message,
        base.headers,
        delay_s,
        base.echo_key,
        base.hostile,
        base.body,
    )


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
        if kind in HOSTILE_KINDS:
            return hostile(kind)
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
    # Anthropic: the prompt's text up to its block marked with cache_control (None: none marked).
    cache_prefix: str | None = None
    # When the server read the request (time.monotonic()): the spacing of paced calls.
    received_at: float = field(default_factory=time.monotonic)


@dataclass
class Stats:
    requests: int = 0
    outcomes: Counter = field(default_factory=Counter)

    def as_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "outcomes": dict(self.outcomes), "cpu_s": round(time.process_time(), 3)}


def _default_answer(request: FakeRequest) -> str:
    return "mid"
