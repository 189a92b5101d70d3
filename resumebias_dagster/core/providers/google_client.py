"""Google Gemini through ``google-genai``'s async client: the Gemini API (API key) or Vertex AI
(``vertex_project``/``vertex_location``, Application Default Credentials, or an express-mode
API key).

Retries are the SDK's ``HttpRetryOptions`` (408, 429 and 5xx, connect errors and timeouts,
exponential backoff from ``retry_initial_delay_s``). Unlike the openai and anthropic SDKs it
does not read Retry-After and does not retry a connection dropped mid-request; such a call
ends as a transient row and is made again on the next run.
"""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gt

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import ProviderClient, common_error, status_kind
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings, Secret, scrub

_BLOCKED_FINISH = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "MODEL_ARMOR",
    "LANGUAGE",
}
_MAX_RETRY_DELAY_S = 60.0
_NO_KEY = "no-key"


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    return getattr(value, "value", None) or str(value)


def sdk_client(
    settings: ProviderSettings,
    api_key: Secret | None,
    http_client: Any,
    *,
    credentials: Any = None,
    extra_body: dict[str, Any] | None = None,
    api_version: str | None = None,
) -> genai.Client:
    """google-genai's client for ``settings`` (the live client's and the batch backend's):
    explicit base URL, timeout and retries, ``http_client`` for every call, ``extra_body``
    merged into every request body."""
    s = settings
    options = gt.HttpOptions(
        # Always explicit: GOOGLE_GEMINI_BASE_URL / GOOGLE_VERTEX_BASE_URL must not redirect the key.
        base_url=s.sdk_base_url,
        timeout=int(s.timeout_s * 1000),
        retry_options=gt.HttpRetryOptions(
            attempts=s.max_retries + 1,
            initial_delay=s.retry_initial_delay_s,
            max_delay=max(_MAX_RETRY_DELAY_S, s.retry_initial_delay_s),
            # The SDK's default jitter is up to a whole second on every wait.
            jitter=s.retry_initial_delay_s,
        ),
        httpx_async_client=http_client,
        extra_body=extra_body or None,
        api_version=api_version,
    )
    key = api_key.reveal() if api_key else None
    if s.vertex and key is None:
        # Application Default Credentials: the config rules allow them only for Google's hosts.
        return genai.Client(
            vertexai=True,
            project=s.vertex_project,
            location=s.vertex_location,
            credentials=credentials,
            http_options=options,
        )
    # Without a key the SDK would read GOOGLE_API_KEY / GEMINI_API_KEY: an endpoint without
    # keys gets a placeholder instead.
    return genai.Client(vertexai=s.vertex or None, api_key=key or _NO_KEY, http_options=options)


def generate_request(settings: ProviderSettings, request: ChatRequest) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(contents, config) of ``request`` as ``generate_content`` takes them (a batch's inlined
    requests take the same two)."""
    # Plain dicts (the SDK accepts them) cost a tenth less CPU per call than its models.
    contents = [
        {"role": "model" if role == "assistant" else "user", "parts": [{"text": text}]}
        for role, text in request.messages
    ]
    fields = {
        "system_instruction": request.system,
        "temperature": request.temperature,
        "max_output_tokens": request.max_tokens,
        "response_mime_type": "application/json" if request.json_mode else None,
        "response_logprobs": True if request.logprobs else None,
        "logprobs": request.logprobs or None,
    }
    return contents, {key: value for key, value in fields.items() if value is not None}


def result_of_response(response: gt.GenerateContentResponse) -> ChatResult:
    """What a ``GenerateContentResponse`` says (live or a batch's inlined answer): text, usage,
    resolved model, finish reason, logprobs, or the answer-level error (blocked, empty)."""
    usage = response.usage_metadata
    thoughts = getattr(usage, "thoughts_token_count", None) or 0
    candidates_tokens = getattr(usage, "candidates_token_count", None)
    result = ChatResult(
        key="",
        resolved_model=response.model_version,
        # The whole input; of it, cachedContentTokenCount were read from the (implicit) cache.
        input_tokens=getattr(usage, "prompt_token_count", None),
        cached_input_tokens=getattr(usage, "cached_content_token_count", None),
        # Thinking tokens are billed as output.
        output_tokens=None if candidates_tokens is None and not thoughts else (candidates_tokens or 0) + thoughts,
        reasoning_tokens=thoughts or None,
    )
    block = _enum_name(getattr(response.prompt_feedback, "block_reason", None))
    if block:
        result.error_kind, result.error_message = t.CONTENT_FILTER, f"prompt blocked ({block})"
        return result
    if not response.candidates:
        result.error_kind, result.error_message = t.EMPTY, "no candidates"
        return result
    candidate = response.candidates[0]
    finish = _enum_name(candidate.finish_reason)
    result.finish_reason = finish
    parts = (candidate.content.parts if candidate.content else None) or []
    text = "".join(p.text for p in parts if p.text and not p.thought)
    if finish in _BLOCKED_FINISH:
        result.error_kind, result.error_message = t.CONTENT_FILTER, f"finish_reason {finish}"
    elif not text.strip():
        result.error_kind, result.error_message = t.EMPTY, f"no text (finish_reason {finish})"
    else:
        result.text = text
    result.logprobs = _logprobs_of(candidate)
    return result


def _logprobs_of(candidate: gt.Candidate) -> list[dict[str, Any]] | None:
    lp = candidate.logprobs_result
    if not (lp and lp.chosen_candidates):
        return None
    tops = lp.top_candidates or []
    return [
        {
            "token": chosen.token,
            "logprob": chosen.log_probability,
            "top": [
                {"token": c.token, "logprob": c.log_probability}
                for c in ((tops[i].candidates or []) if i < len(tops) else [])
            ],
        }
        for i, chosen in enumerate(lp.chosen_candidates)
    ]


class GoogleClient(ProviderClient):
    def __init__(self, settings: ProviderSettings, api_key: Secret | None, credentials: Any = None):
        # Vertex without a key authenticates with these (None: Application Default Credentials).
        self._credentials = credentials
        super().__init__(settings, api_key)

    def _make_sdk_client(self, http_client: Any) -> genai.Client:
        return sdk_client(
            self.settings,
            self._api_key,
            http_client,
            credentials=self._credentials,
            extra_body=self.settings.extra_body,
        )

    async def _call(self, request: ChatRequest) -> ChatResult:
        contents, config = generate_request(self.settings, request)
        response = await self._sdk.aio.models.generate_content(
            model=self.settings.model, contents=contents, config=config
        )
        return result_of_response(response)

    def _classify(self, exc: BaseException) -> tuple[str, str]:
        return classify_error(exc, self.settings, self._secrets)


def classify_error(exc: BaseException, settings: ProviderSettings, secrets: tuple[str, ...]) -> tuple[str, str]:
    """(error kind, message scrubbed of ``secrets``) of an exception of a google-genai call."""
    if isinstance(exc, genai_errors.APIError):
        code = exc.code if isinstance(exc.code, int) else 0
        message = f"HTTP {code} {exc.status or ''}: {exc.message or ''}"
        return status_kind(code, message), scrub(message, secrets) or ""
    common = common_error(exc, settings, secrets)
    if common:
        return common
    return t.UNEXPECTED, scrub(f"{type(exc).__name__}: {exc}", secrets) or ""
