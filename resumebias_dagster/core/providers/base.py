"""What the three provider clients share: limits, attempt counting, timing, error mapping.

Retries, timeouts and Retry-After are the SDKs' own (``max_retries``/``timeout`` for openai
and anthropic, ``HttpRetryOptions``/``timeout`` for google-genai). Added here, because the
SDKs lack them: a concurrency bound per model (asyncio.Semaphore around a whole call with its
retries) and a request-rate limit per model (aiolimiter, applied to every HTTP attempt,
retries included, since providers count those too). Both live on the one httpx2 client
handed to the SDK, whose request hook also counts the attempts of each call.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
from abc import ABC, abstractmethod
from typing import Any

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret, redact, scrub

# The attempt counter of the call running in the current task (None outside a call).
_ATTEMPTS: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("provider_attempts", default=None)
# The SDKs and their HTTP stack log server replies (google-genai logs each retried error
# body at INFO); a provider that echoes the key in an error would put it in the run's logs.
_SDK_PACKAGES = frozenset({"openai", "anthropic", "google_genai", "google", "httpx2", "httpcore2", "httpx", "httpcore"})
_SECRETS: set[str] = set()


class _RedactSecrets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRETS:
            message = record.getMessage()
            if any(secret in message for secret in _SECRETS):
                record.msg, record.args = redact(message, _SECRETS), None
        return True


_REDACT = _RedactSecrets()


def _guard_sdk_logs(secret: str | None) -> None:
    """Redact ``secret`` from every record of the SDK loggers (a logger's filter applies to
    its own records only, so each existing logger of those packages gets it)."""
    if secret:
        _SECRETS.add(secret)
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and name.split(".")[0] in _SDK_PACKAGES and _REDACT not in logger.filters:
            logger.addFilter(_REDACT)


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


class ProviderClient(ABC):
    """One model behind one API. ``complete`` never raises for a failed call: it returns a
    ``ChatResult`` whose ``error_kind`` says what went wrong (message scrubbed of the key)."""

    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        self.settings = settings
        self._api_key = api_key
        self._secrets = tuple(s for s in (api_key.reveal() if api_key else None,) if s)
        self._semaphore = asyncio.Semaphore(settings.max_concurrency)
        self._limiter = rate_limiter(settings.requests_per_minute)
        self._http = self._http_client()
        self._sdk = self._make_sdk_client(self._http)
        _guard_sdk_logs(self._secrets[0] if self._secrets else None)

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
        return httpx2.AsyncClient(
            limits=httpx2.Limits(max_connections=n, max_keepalive_connections=n),
            timeout=httpx2.Timeout(self.settings.timeout_s, connect=min(10.0, self.settings.timeout_s)),
            event_hooks={"request": [self._on_request]},
        )

    async def _on_request(self, request: Any) -> None:
        counter = _ATTEMPTS.get()
        if counter is not None:
            counter[0] += 1
        if self._limiter is not None:
            await self._limiter.acquire()

    async def complete(self, request: ChatRequest, key: str) -> ChatResult:
        async with self._semaphore:
            counter = [0]
            token = _ATTEMPTS.set(counter)
            start = time.perf_counter()
            try:
                result = await self._call(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every failure becomes a typed result
                kind, message = self._classify(exc)
                result = ChatResult(key="", error_kind=kind, error_message=message)
            finally:
                _ATTEMPTS.reset(token)
            result.key = key
            result.latency_s = time.perf_counter() - start
            result.attempts = counter[0]
            result.error_message = scrub(result.error_message, self._secrets)
            return result

    def _classify_stainless(self, sdk: Any, exc: BaseException) -> tuple[str, str]:
        """Error kind of an exception of the openai or anthropic SDK: both are generated by
        Stainless and share one exception hierarchy under the same names."""
        if isinstance(exc, sdk.APITimeoutError):
            return t.TIMEOUT, f"no answer within {self.settings.timeout_s:g} s, {self.settings.max_retries} retries"
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause else str(exc)
            return t.CONNECTION, self._scrubbed(detail)
        if isinstance(exc, sdk.APIStatusError):
            return status_kind(exc.status_code, str(exc)), self._scrubbed(f"HTTP {exc.status_code}: {exc.message}")
        if isinstance(exc, sdk.APIResponseValidationError):
            return t.MALFORMED_RESPONSE, self._scrubbed(str(exc))
        return self._common_classify(exc) or (t.UNEXPECTED, self._scrubbed(f"{type(exc).__name__}: {exc}"))

    def _scrubbed(self, text: str) -> str:
        return scrub(text, self._secrets) or ""

    def _common_classify(self, exc: BaseException) -> tuple[str, str] | None:
        """Exceptions that look the same whichever SDK raised them."""
        import httpx2

        name = type(exc).__name__
        if isinstance(exc, json.JSONDecodeError):
            return t.MALFORMED_RESPONSE, f"response body is not JSON ({exc.msg} at char {exc.pos})"
        if isinstance(exc, httpx2.TimeoutException):
            return t.TIMEOUT, f"no answer within {self.settings.timeout_s:g} s ({name})"
        if isinstance(exc, httpx2.TransportError):
            return t.CONNECTION, f"{name}: {self._scrubbed(str(exc))}"
        return None

    async def aclose(self) -> None:
        close = getattr(self._sdk, "close", None)
        if close is not None:
            result = close()
            if asyncio.iscoroutine(result):
                await result
        await self._http.aclose()


def make_client(settings: ProviderSettings, api_key: Secret | None, **kwargs: Any) -> ProviderClient:
    """The client of ``settings.provider``; imports only that provider's SDK."""
    if settings.provider == "openai":
        from resumebias_dagster.core.providers.openai_client import OpenAIClient

        return OpenAIClient(settings, api_key, **kwargs)
    if settings.provider == "anthropic":
        from resumebias_dagster.core.providers.anthropic_client import AnthropicClient

        return AnthropicClient(settings, api_key, **kwargs)
    if settings.provider == "google":
        from resumebias_dagster.core.providers.google_client import GoogleClient

        return GoogleClient(settings, api_key, **kwargs)
    raise t.ProviderConfigError(f"model {settings.name!r}: unknown provider {settings.provider!r}")
