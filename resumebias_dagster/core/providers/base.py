"""What the three provider clients share: limits, attempt counting, timing, error mapping.

Retries, timeouts and Retry-After are the SDKs' own (``max_retries``/``timeout`` for openai
and anthropic, ``HttpRetryOptions``/``timeout`` for google-genai). Added here, because the
SDKs lack them: a concurrency bound per model (asyncio.Semaphore around a whole call with its
retries), a request-rate limit per model (aiolimiter, applied to every HTTP attempt, retries
included, since providers count those too), optional pacing (``Pacer``: at least
``min_interval_s`` between two attempts, also retries included), and the timeout policy. All three live on the
one httpx2 client handed to the SDK: its request hook applies the rate limit, and its
transport counts each call's attempts and the attempts the provider may bill (an answer, or
an attempt abandoned at its read timeout, which the provider may go on generating). The SDKs
retry a timed-out generation like any other failure; unless the model sets
``retry_timeouts: true``, the transport ends the call at the first read timeout instead, so
an abandoned generation is paid for once per run, not once per retry.

A 2xx answer the client then fails to read (the SDK's JSON parser recursing too deep, bytes
that are not UTF-8, a shape the client does not expect) is paid for: the transport keeps the
last response, and ``complete`` returns its body, as it came, as a ``malformed_response``
result, which the store keeps as final, so no later run pays for it again.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import random
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from resumebias_dagster.core.common.parsing import valid_utf8
from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.types import (
    ChatRequest,
    ChatResult,
    ProviderSettings,
    Secret,
    redact,
    redact_values,
    scrub,
)

# The attempt counters of the call running in the current task (None outside a call).
_ATTEMPTS: contextvars.ContextVar[Any] = contextvars.ContextVar("provider_attempts", default=None)
# The SDKs and their HTTP stack log server replies (google-genai logs each retried error
# body at INFO) and exceptions with tracebacks; a provider that echoes the key in an error
# would put it in the run's logs. Every key a client was made with is redacted from every
# log record of the process (``guard_logs``).
_SECRETS: set[str] = set()


def _scrub_record(record: logging.LogRecord) -> None:
    """Redact every secret from a record: its message, its exception with traceback and its
    stack (formatted here, once, so that no handler formats the raw exception later)."""
    secrets = tuple(_SECRETS)
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a malformed record is the logging module's to report
        message = None
    if message is not None and any(secret in message for secret in secrets):
        record.msg, record.args = redact(message, secrets), None
    if record.exc_info and record.exc_info[0] is not None:
        text = record.exc_text or logging.Formatter().formatException(record.exc_info)
        if any(secret in text for secret in secrets):
            record.exc_info, record.exc_text = None, redact(text, secrets)
    elif record.exc_text and any(secret in record.exc_text for secret in secrets):
        record.exc_text = redact(record.exc_text, secrets)
    if record.stack_info and any(secret in record.stack_info for secret in secrets):
        record.stack_info = redact(record.stack_info, secrets)


_previous_factory: Callable[..., logging.LogRecord] | None = None


def _redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
    assert _previous_factory is not None  # installed by guard_logs before this factory
    record = _previous_factory(*args, **kwargs)
    if _SECRETS:
        _scrub_record(record)
    return record


def guard_logs(*secrets: str | None) -> None:
    """Redact ``secrets`` from every log record of this process from now on.

    A record factory sees each record as it is made, whichever logger makes it (the SDKs',
    httpx's, Dagster's, loggers created later) and before any handler formats it; a filter on
    chosen loggers would miss records of child loggers and of loggers made afterwards.
    """
    global _previous_factory
    _SECRETS.update(s for s in secrets if s)
    if _previous_factory is None:
        _previous_factory = logging.getLogRecordFactory()
        logging.setLogRecordFactory(_redacting_factory)


def registered_secrets() -> tuple[str, ...]:
    """The secrets ``guard_logs`` redacts (for scrubbing exceptions that leave the fan-out)."""
    return tuple(_SECRETS)


class ProviderRunError(RuntimeError):
    """An exception from a provider run whose text held a secret, re-raised redacted."""


def scrubbed_exception(exc: BaseException) -> BaseException | None:
    """A redacted stand-in for ``exc`` when its text, traceback or chained exceptions hold a
    registered secret (raise it ``from None`` so the original chain is dropped); else None."""
    secrets = registered_secrets()
    if not secrets:
        return None
    text = "".join(traceback.format_exception(exc))
    if not any(secret in text for secret in secrets):
        return None
    return ProviderRunError(redact(f"{type(exc).__name__}: {exc}", secrets))


class _AttemptAbandoned(BaseException):
    """Raised by the transport at a read timeout when timeouts are not retried.

    A BaseException on purpose: the SDKs retry every ``Exception`` a transport raises (the
    openai SDK even wraps unknown ones as connection errors), and this must reach
    ``ProviderClient.complete`` unretried.
    """


class _Attempts:
    __slots__ = ("sent", "billed", "abandoned", "response")

    def __init__(self) -> None:
        self.sent = self.billed = 0
        self.abandoned = False
        # The call's last HTTP response (the SDK's own object: the body it read stays on it).
        self.response: Any = None


class _CountingTransport:
    """Wraps the httpx2 transport: counts attempts and billed attempts, applies the timeout policy."""

    def __init__(self, inner: Any, retry_timeouts: bool):
        self._inner = inner
        self._retry_timeouts = retry_timeouts

    async def handle_async_request(self, request: Any) -> Any:
        import httpx2

        counter = _ATTEMPTS.get()
        if counter is not None:
            counter.sent += 1
        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.ReadTimeout:
            # The request reached the provider, which may go on generating (and billing) it.
            if counter is not None:
                counter.billed += 1
                if not self._retry_timeouts:
                    counter.abandoned = True
                    raise _AttemptAbandoned() from None
            raise
        if counter is not None:
            counter.response = response
            if 200 <= response.status_code < 300:
                counter.billed += 1
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self._inner.__aexit__(*args)


async def _body_of(response: Any) -> bytes | None:
    """The body of ``response`` (read now if the SDK had not), or None if it cannot be had."""
    if response is None:
        return None
    try:
        return response.content
    except Exception:  # noqa: BLE001 - httpx2.ResponseNotRead: read it below
        pass
    try:
        return await response.aread()
    except Exception:  # noqa: BLE001 - a closed or consumed stream: no body to keep
        return None


def rate_limiter(requests_per_minute: float | None):
    """A leaky bucket of one second's worth of requests (at least one), or None for no limit.

    A one-second bucket keeps bursts small: a full minute's bucket would let a fresh run
    send a whole minute's requests at once and meet the provider's own limiter.
    """
    if not requests_per_minute:
        return None
    from aiolimiter import AsyncLimiter

    per_second = float(requests_per_minute) / 60.0
    burst = max(1.0, per_second)
    return AsyncLimiter(burst, burst / per_second)


# A paced gap is min_interval_s stretched by up to this share at random: requests that tick
# like a clock would be one more sign of a script.
PACING_JITTER = 0.5


class Pacer:
    """At least ``interval_s`` between the starts of two HTTP attempts of one client, whatever
    its concurrency: the calls of a run spread over time instead of going out in bursts."""

    def __init__(self, interval_s: float, seed: int = 0):
        self._interval_s = interval_s
        self._rng = random.Random(seed)
        self._lock = asyncio.Lock()
        self._next = 0.0

    async def wait(self) -> None:
        async with self._lock:
            delay = self._next - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self._next = time.monotonic() + self._interval_s * (1 + PACING_JITTER * self._rng.random())


def status_kind(status: int, message: str = "") -> str:
    """The error kind of an HTTP status the SDK gave up on (after its retries)."""
    lowered = message.lower()
    if status == 429 and "insufficient_quota" in lowered:
        return t.AUTH
    if status in (401, 402, 403):
        return t.AUTH
    if status == 404:
        return t.NOT_FOUND
    if status == 429:
        return t.RATE_LIMITED
    if status in (408, 409) or status >= 500:
        return t.SERVER_ERROR
    if "content filter" in lowered or "content_filter" in lowered or "content management policy" in lowered:
        return t.CONTENT_FILTER
    return t.BAD_REQUEST


def client_secrets(settings: ProviderSettings, api_key: Secret | None) -> tuple[str, ...]:
    """What a client of ``settings`` must keep out of messages and logs: its key and the
    credentials in its base URL."""
    return tuple(s for s in (api_key.reveal() if api_key else None, *settings.secrets_in_url) if s)


def finish_result(result: ChatResult, secrets: tuple[str, ...]) -> ChatResult:
    """``result`` fit to store: its message scrubbed of ``secrets``, its names (not the
    answer) valid UTF-8 for every table and store they reach, and the answer without any of
    ``secrets`` (a provider that echoes the Authorization header would put the key into the
    store and the tables, issue 40; the answer is otherwise kept as it came)."""
    result.error_message = scrub(result.error_message, secrets)
    if result.text and any(secret and secret in result.text for secret in secrets):
        result.text = redact_values(result.text, secrets)
        result.parsed_json = None  # read again from the redacted text
    for name in ("error_message", "resolved_model", "finish_reason"):
        value = getattr(result, name)
        if isinstance(value, str):
            setattr(result, name, valid_utf8(value))
    return result


def jsonl_lines(content: bytes) -> list[bytes]:
    """The non-blank lines of a JSONL file, each without its line end, as they came."""
    return [line.removesuffix(b"\r") for line in content.split(b"\n") if line.strip()]


def malformed_line(key: str, line: bytes, exc: BaseException) -> ChatResult:
    """A batch result line (or its answer) no reader can read, kept raw as it came (billed:
    the provider answered it), with the key read from it, or "" where none could be."""
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
    return ChatResult(
        key=key,
        attempts=1,
        billed_attempts=1,
        error_kind=t.MALFORMED_RESPONSE,
        # surrogateescape: the bytes come back exactly with text.encode("utf-8", "surrogateescape").
        text=line.decode("utf-8", "surrogateescape"),
        error_message=f"batch result line the client could not read ({detail}); stored as it came",
    )


def plain_http_client(settings: ProviderSettings) -> Any:
    """An httpx2 client for an SDK's calls outside ``complete`` (batch submission and polls):
    the live client's timeouts, no attempt counting or rate limit (a batch makes a handful of
    calls), and, like the live client's, no redirects followed: a redirect to another host
    would carry a key sent as a plain header (``x-api-key``) there."""
    import httpx2

    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(settings.timeout_s, connect=min(10.0, settings.timeout_s)),
        follow_redirects=False,
    )


def stainless_error(
    sdk: Any, exc: BaseException, settings: ProviderSettings, secrets: tuple[str, ...]
) -> tuple[str, str]:
    """(error kind, scrubbed message) of an exception of the openai or anthropic SDK: both are
    generated by Stainless and share one exception hierarchy under the same names."""
    if isinstance(exc, sdk.APITimeoutError):
        return t.TIMEOUT, f"no answer within {settings.timeout_s:g} s, {settings.max_retries} retries"
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
        return t.CONNECTION, scrub(detail, secrets) or ""
    if isinstance(exc, sdk.APIStatusError):
        return status_kind(exc.status_code, str(exc)), scrub(f"HTTP {exc.status_code}: {exc.message}", secrets) or ""
    if isinstance(exc, sdk.APIResponseValidationError):
        return t.MALFORMED_RESPONSE, scrub(str(exc), secrets) or ""
    return common_error(exc, settings, secrets) or (t.UNEXPECTED, scrub(f"{type(exc).__name__}: {exc}", secrets) or "")


def common_error(exc: BaseException, settings: ProviderSettings, secrets: tuple[str, ...]) -> tuple[str, str] | None:
    """(error kind, message) of exceptions that look the same whichever SDK raised them."""
    import httpx2

    name = type(exc).__name__
    if isinstance(exc, json.JSONDecodeError):
        return t.MALFORMED_RESPONSE, f"response body is not JSON ({exc.msg} at char {exc.pos})"
    if isinstance(exc, httpx2.TimeoutException):
        return t.TIMEOUT, f"no answer within {settings.timeout_s:g} s ({name})"
    if isinstance(exc, httpx2.TransportError):
        return t.CONNECTION, f"{name}: {scrub(str(exc), secrets) or ''}"
    return None


class ProviderClient(ABC):
    """One model behind one API. ``complete`` never raises for a failed call: it returns a
    ``ChatResult`` whose ``error_kind`` says what went wrong (message scrubbed of the key)."""

    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        self.settings = settings
        self._api_key = api_key
        self._secrets = client_secrets(settings, api_key)
        guard_logs(*self._secrets)
        self._semaphore = asyncio.Semaphore(settings.max_concurrency)
        self._limiter = rate_limiter(settings.requests_per_minute)
        self._pacer = Pacer(settings.min_interval_s, settings.order_seed or 0) if settings.min_interval_s else None
        self._http = self._http_client()
        self._sdk = self._make_sdk_client(self._http)

    # ------------------------------------------------------------------ for subclasses

    @abstractmethod
    def _make_sdk_client(self, http_client: Any) -> Any:
        """The SDK's async client, configured with retries, timeout and ``http_client``."""

    @abstractmethod
    async def _call(self, request: ChatRequest) -> ChatResult:
        """One call through the SDK; raises the SDK's exceptions, returns answers and
        answer-level errors (refusal, content filter, empty)."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> tuple[str, str]:
        """(error kind, message) of an SDK exception."""

    # ------------------------------------------------------------------ shared

    def _http_client(self):
        import httpx2

        n = self.settings.max_concurrency
        limits = httpx2.Limits(max_connections=n, max_keepalive_connections=n)
        return httpx2.AsyncClient(
            limits=limits,
            timeout=httpx2.Timeout(self.settings.timeout_s, connect=min(10.0, self.settings.timeout_s)),
            event_hooks={"request": [self._on_request]},
            transport=_CountingTransport(httpx2.AsyncHTTPTransport(limits=limits), self.settings.retry_timeouts),
        )

    async def _on_request(self, request: Any) -> None:
        if self._limiter is not None:
            await self._limiter.acquire()
        if self._pacer is not None:
            await self._pacer.wait()

    async def complete(self, request: ChatRequest, key: str) -> ChatResult:
        async with self._semaphore:
            counter = _Attempts()
            token = _ATTEMPTS.set(counter)
            start = time.perf_counter()
            try:
                result = await self._call(request)
            except _AttemptAbandoned:
                result = ChatResult(
                    key="",
                    error_kind=t.TIMEOUT,
                    error_message=f"no answer within {self.settings.timeout_s:g} s; not sent again in this run "
                    "(the provider may still be generating it; retry_timeouts: true retries at once)",
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every failure becomes a typed result
                # RecursionError included: the SDKs parse a body nested too deep that way.
                kind, message = self._classify(exc)
                result = await self._unread_answer(counter, exc) or self._no_answer(counter, kind, message)
            finally:
                _ATTEMPTS.reset(token)
            result.key = key
            result.latency_s = time.perf_counter() - start
            result.attempts = counter.sent
            result.billed_attempts = counter.billed
            return finish_result(result, self._secrets)

    async def _unread_answer(self, counter: _Attempts, exc: BaseException) -> ChatResult | None:
        """A ``malformed_response`` result holding the body of a 2xx answer the client failed
        to read (``exc``), or None when the call's last response was no 2xx or has no body."""
        response = counter.response
        if response is None or not 200 <= response.status_code < 300:
            return None
        body = await _body_of(response)
        if body is None:
            return None
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        return ChatResult(
            key="",
            error_kind=t.MALFORMED_RESPONSE,
            # surrogateescape: the bytes come back exactly with text.encode("utf-8", "surrogateescape").
            text=body.decode("utf-8", "surrogateescape"),
            error_message=f"HTTP {response.status_code} answer the client could not read ({self._scrubbed(detail)}); "
            f"its body ({len(body):,} bytes) is stored as it came",
        )

    @staticmethod
    def _no_answer(counter: _Attempts, kind: str, message: str) -> ChatResult:
        if kind == t.MALFORMED_RESPONSE:
            # Final only with a 2xx body in hand: an unreadable error body says what its status
            # says, a 2xx body that could not be read at all is a failed connection.
            response = counter.response
            if response is None:
                kind = t.UNEXPECTED
            elif 200 <= response.status_code < 300:
                kind = t.CONNECTION
            else:
                kind = status_kind(response.status_code, message)
        return ChatResult(key="", error_kind=kind, error_message=message)

    def _classify_stainless(self, sdk: Any, exc: BaseException) -> tuple[str, str]:
        return stainless_error(sdk, exc, self.settings, self._secrets)

    def _scrubbed(self, text: str) -> str:
        return scrub(text, self._secrets) or ""

    def _common_classify(self, exc: BaseException) -> tuple[str, str] | None:
        return common_error(exc, self.settings, self._secrets)

    async def aclose(self) -> None:
        close = getattr(self._sdk, "close", None)
        if close is not None:
            result = close()
            if asyncio.iscoroutine(result):
                await result
        await self._http.aclose()
