"""A scoring endpoint of the user's (``kind: http``) behind the provider client's interface.

No SDK: the request is ``httpx2`` on the client ``base.ProviderClient`` builds (its concurrency
bound, rate limiter, attempt counting and timeout policy, as for every wire). Retries are ours:
429, 408, 409 and 5xx, and connections that fail, are sent again up to ``max_retries`` times
with exponential backoff from ``retry_initial_delay_s`` (or the reply's ``Retry-After``, up to
``MAX_RETRY_AFTER_S``). Redirects are not followed, so the key goes to the configured host only.
A 2xx reply is the answer, stored as it came; a 2xx body that is not UTF-8 JSON is a
``malformed_response`` (billed, final), kept for the record.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from resumebias_dagster.core.models.http_endpoint import HttpEndpoint
from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import ProviderClient, status_kind
from resumebias_dagster.core.providers.http_scorer import item_of
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret
from resumebias_dagster.core.providers.urls import url_without_secrets

RETRY_STATUSES = frozenset({408, 409, 429})
MAX_RETRY_AFTER_S = 60.0
BODY_CHARS = 300


def endpoint_of_settings(settings: ProviderSettings) -> HttpEndpoint:
    """The endpoint the settings were made from: its templates are the settings' ``wire``,
    checked when the models file was read. The answer paths are the task's to read."""
    wire = settings.wire
    return HttpEndpoint(
        model=settings.name,
        url=settings.base_url or "",
        method=wire["method"],
        body=wire["body"],
        headers=tuple((str(name), str(source)) for name, source in wire["headers"]),
        answer=(),
        has_key=bool(settings.api_key_env),
    )


def _retry_after(response: Any, fallback: float) -> float:
    value = response.headers.get("retry-after")
    try:
        return min(MAX_RETRY_AFTER_S, max(0.0, float(value))) if value is not None else fallback
    except ValueError:
        return fallback


# A scorer's reply is a small JSON object; a larger one is cut here, not read whole into memory
# and the store (a 100 MB reply peaked at 516 MB, issue 40).
MAX_REPLY_BYTES = 1 << 20


async def _read_capped(response: Any, limit: int) -> tuple[bytes, bool]:
    """The body of a streamed ``response`` up to ``limit`` bytes, and whether more followed."""
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(parts)[:limit], True
    return b"".join(parts), False


class HttpScorerClient(ProviderClient):
    def __init__(self, settings: ProviderSettings, api_key: Secret | None):
        self._endpoint = endpoint_of_settings(settings)
        super().__init__(settings, api_key)
        self._headers = self._endpoint.render_headers(api_key.reveal() if api_key else None)
        self._url = settings.base_url
        self._resolved = f"http:{url_without_secrets(settings.base_url or '')}"

    def _make_sdk_client(self, http_client: Any) -> None:
        return None

    async def _send(self, content: bytes) -> tuple[Any, bytes, bool]:
        """The last response, its body read up to ``MAX_REPLY_BYTES``, and whether it was cut."""
        import httpx2

        delay = self.settings.retry_initial_delay_s
        for attempt in range(self.settings.max_retries + 1):
            last = attempt == self.settings.max_retries
            try:
                async with self._http.stream(
                    self._endpoint.method, self._url, content=content, headers=self._headers, follow_redirects=False
                ) as response:
                    body, cut = await _read_capped(response, MAX_REPLY_BYTES)
            except httpx2.TransportError as exc:
                # A read that timed out reached the endpoint, which may have answered (and billed):
                # sent again only with retry_timeouts, like every wire's timed-out generation.
                unsent = not isinstance(exc, httpx2.ReadTimeout)
                if last or not (unsent or self.settings.retry_timeouts):
                    raise
                await asyncio.sleep(delay)
                delay *= 2
                continue
            if not last and (response.status_code in RETRY_STATUSES or response.status_code >= 500):
                await asyncio.sleep(_retry_after(response, delay))
                delay *= 2
                continue
            return response, body, cut
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _call(self, request: ChatRequest) -> ChatResult:
        body = self._endpoint.render_body(item_of(request))
        response, content, cut = await self._send(body.encode("utf-8"))
        text = content.decode("utf-8", "surrogateescape")
        result = ChatResult(key="", resolved_model=self._resolved)
        if not 200 <= response.status_code < 300:
            snippet = " ".join(text.split())[:BODY_CHARS]
            result.error_kind = status_kind(response.status_code, snippet)
            result.error_message = f"HTTP {response.status_code}: {snippet}"
            return result
        if cut:
            result.error_kind = t.MALFORMED_RESPONSE
            result.error_message = (
                f"HTTP {response.status_code} reply longer than {MAX_REPLY_BYTES:,} bytes: its first "
                f"{MAX_REPLY_BYTES:,} bytes are stored, the rest was not read"
            )
            result.text = text
            return result
        try:
            json.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            detail = (
                exc.reason
                if isinstance(exc, UnicodeDecodeError)
                else f"{exc.msg} at char {exc.pos}"
                if isinstance(exc, json.JSONDecodeError)
                else "nested deeper than the JSON parser recurses"
                if isinstance(exc, RecursionError)
                else f"{type(exc).__name__}: {str(exc)[:120]}"
            )
            result.error_kind = t.MALFORMED_RESPONSE
            result.error_message = f"HTTP {response.status_code} reply is not UTF-8 JSON ({detail}); stored as it came"
            result.text = text
            return result
        result.text = text
        return result

    def _classify(self, exc: BaseException) -> tuple[str, str]:
        return self._common_classify(exc) or (t.UNEXPECTED, self._scrubbed(f"{type(exc).__name__}: {exc}"))

    async def aclose(self) -> None:
        await self._http.aclose()
