"""A scoring endpoint of the user's (``kind: http``) behind the provider client's interface.

No SDK: the request is ``httpx2`` on the client ``base.ProviderClient`` builds (its concurrency
bound, rate limiter, attempt counting and timeout policy, as for every wire). Retries are ours:
429, 408, 409 and 5xx, and connections that fail, are sent again up to ``max_retries`` times
with exponential backoff from ``retry_initial_delay_s`` (or the reply's ``Retry-After``, up to
``MAX_RETRY_AFTER_S``). Redirects are not followed, so the key goes to the configured host only.
A 2xx reply is the answer, stored as it came; a 2xx body that is not UTF-8 JSON is a
``malformed_response`` (billed, final), kept for the record.

Version. Where the entry names a ``version`` source (``http_endpoint.HttpVersion``), each answer's
``resolved_model`` is the version the tool reported: its header, the path in its JSON, or the
version endpoint's answer (asked once per client, before its first call). A version that is
missing, or no model name (over 200 characters, spaces, control characters), leaves the
answer's ``resolved_model`` as ``http:<url>``: the tool did not say.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from resumebias_dagster.core.models.http_endpoint import HttpEndpoint, HttpVersion, parse_path, read_path
from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import ProviderClient, status_kind
from resumebias_dagster.core.providers.http_scorer import item_of
from resumebias_dagster.core.providers.types import (
    MODEL_VERSION,
    MODEL_VERSION_CHARS,
    ChatRequest,
    ChatResult,
    ProviderSettings,
    Secret,
)
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
        version=HttpVersion(*settings.version_source) if settings.version_source else None,
    )


def version_in(value: Any) -> str | None:
    """``value`` as a version: a number or a text that is a model name, else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip()
    return text if MODEL_VERSION.fullmatch(text) else None


def reported_version(version: HttpVersion, headers: Any, content: bytes) -> str | None:
    """The version one reply reports (its header, or the path in its JSON; a version endpoint's
    reply: the path in it, or its whole body), or None."""
    if version.source == "header":
        return version_in(headers.get(version.name))
    if version.source == "url" and not version.name:
        return version_in(content[: 4 * MODEL_VERSION_CHARS].decode("utf-8", "replace"))
    try:
        return version_in(read_path(json.loads(content.decode("utf-8")), parse_path(version.name, "version.path")))
    except (UnicodeDecodeError, ValueError, KeyError, RecursionError):
        return None


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
        self._version_lock = asyncio.Lock()
        self._endpoint_version: str | None = None
        self._asked_version = False

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

    async def version_now(self) -> str | None:
        """The version endpoint's answer (GET with the entry's headers, no retries), or None."""
        version = self._endpoint.version
        if version is None or version.source != "url":
            return None
        async with self._http.stream("GET", version.url, headers=self._headers, follow_redirects=False) as response:
            content, _ = await _read_capped(response, 1 << 16)
        return reported_version(version, response.headers, content) if 200 <= response.status_code < 300 else None

    async def _stamp(self) -> str:
        """What answers of this client resolve to before their own reply is read."""
        if self._endpoint.version is None or self._endpoint.version.source != "url":
            return self._resolved
        async with self._version_lock:
            if not self._asked_version:
                import httpx2

                try:
                    self._endpoint_version = await self.version_now()
                except httpx2.HTTPError:
                    self._endpoint_version = None
                self._asked_version = True
        return self._endpoint_version or self._resolved

    async def _call(self, request: ChatRequest) -> ChatResult:
        body = self._endpoint.render_body(item_of(request))
        resolved = await self._stamp()
        response, content, cut = await self._send(body.encode("utf-8"))
        text = content.decode("utf-8", "surrogateescape")
        version = self._endpoint.version
        if version is not None and version.source != "url":
            resolved = reported_version(version, response.headers, content) or resolved
        result = ChatResult(key="", resolved_model=resolved)
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
