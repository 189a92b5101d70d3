"""OpenAI-compatible chat completions through the official ``openai`` SDK's async client.

Covers OpenAI itself and every service that speaks its wire format through ``base_url``:
OpenRouter, Groq, Mistral, vLLM, Ollama, the llama.cpp server.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletion

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import ProviderClient, status_kind
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult, ProviderSettings
from resumebias_dagster.core.providers.urls import is_provider_host, split_query

# An endpoint that needs no key still needs a non-empty string in the SDK.
_NO_KEY = "no-key"


class OpenAIClient(ProviderClient):
    def _make_sdk_client(self, http_client: Any) -> openai.AsyncOpenAI:
        s = self.settings
        base_url, query = split_query(s.sdk_base_url)
        return openai.AsyncOpenAI(
            api_key=self._api_key.reveal() if self._api_key else _NO_KEY,
            # Always explicit: OPENAI_BASE_URL in the environment must not redirect the key.
            base_url=base_url,
            default_query=query or None,
            max_retries=s.max_retries,
            timeout=s.timeout_s,
            http_client=http_client,
        )

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        return chat_body(self.settings, request)

    async def _call(self, request: ChatRequest) -> ChatResult:
        # The SDK's documented request method for a body built here: the same retries,
        # timeouts, errors and typed response as chat.completions.create, without the
        # per-call type transform of the parameters (a fifth of the client's CPU per call,
        # which a single event loop running hundreds of calls a second feels as latency).
        response = await self._sdk.post("/chat/completions", body=self._body(request), cast_to=ChatCompletion)
        return result_of_completion(response)

    def _classify(self, exc: BaseException) -> tuple[str, str]:
        return self._classify_stainless(openai, exc)


def chat_body(settings: ProviderSettings, request: ChatRequest) -> dict[str, Any]:
    """The body of a chat completion request: the live call's, and a batch line's ``body``."""
    messages = [{"role": "system", "content": request.system}] if request.system else []
    messages += [{"role": role, "content": text} for role, text in request.messages]
    kwargs: dict[str, Any] = {"model": settings.model, "messages": messages}
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_tokens is not None:
        # OpenAI's reasoning models refuse max_tokens; most compatible servers know only it.
        official = is_provider_host(settings.sdk_base_url, "openai")
        kwargs["max_completion_tokens" if official else "max_tokens"] = request.max_tokens
    if request.json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    if request.logprobs:
        kwargs["logprobs"] = True
        kwargs["top_logprobs"] = request.logprobs
    kwargs.update(settings.extra_body)
    return kwargs


def result_of_completion(response: Any) -> ChatResult:
    """What a ChatCompletion says, a live answer or a batch line's body: text, usage, resolved
    model, answer-level errors (key and attempts are the caller's). Raises where it cannot
    read the answer (the caller keeps the raw body as malformed)."""
    usage = getattr(response, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    # prompt_tokens is the whole input; of it, cached_tokens were read from the prefix cache
    # (OpenAI caches long prefixes by itself) and cache_write_tokens, where a gateway counts
    # them (OpenRouter in front of Anthropic), written to it.
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    result = ChatResult(
        key="",
        resolved_model=getattr(response, "model", None),
        input_tokens=getattr(usage, "prompt_tokens", None),
        output_tokens=getattr(usage, "completion_tokens", None),
        reasoning_tokens=getattr(details, "reasoning_tokens", None),
        cached_input_tokens=getattr(prompt_details, "cached_tokens", None),
        cache_write_tokens=getattr(prompt_details, "cache_write_tokens", None),
    )
    if not getattr(response, "choices", None):
        # OpenRouter answers some upstream failures with 200 and an error object.
        error = (getattr(response, "model_extra", None) or {}).get("error")
        if isinstance(error, dict):
            code = error.get("code")
            message = str(error.get("message", ""))
            result.error_kind = status_kind(code, message) if isinstance(code, int) else t.SERVER_ERROR
            result.error_message = f"HTTP 200 with error {code}: {message}"
        else:
            # Valid JSON without an answer: like an empty one, called again up to a limit.
            result.error_kind, result.error_message = t.EMPTY, "response has no choices"
        return result
    choice = response.choices[0]
    message = choice.message
    result.finish_reason = choice.finish_reason
    refusal = getattr(message, "refusal", None)
    if refusal:
        result.error_kind, result.error_message = t.REFUSAL, refusal
    elif choice.finish_reason == "content_filter":
        result.error_kind, result.error_message = t.CONTENT_FILTER, "finish_reason content_filter"
    elif not (text := content_text(message.content)).strip():
        result.error_kind = t.EMPTY
        result.error_message = f"no text (finish_reason {choice.finish_reason})"
    else:
        result.text = text
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if content:
        result.logprobs = [
            {
                "token": item.token,
                "logprob": item.logprob,
                "top": [{"token": top.token, "logprob": top.logprob} for top in (item.top_logprobs or [])],
            }
            for item in content
        ]
    return result


def content_text(content: Any) -> str:
    """The text of a message's ``content``: a string, or a list of parts as some
    OpenAI-compatible servers send it (``[{"type": "text", "text": ...}]``; Mistral's
    reasoning models add ``{"type": "thinking", ...}`` parts, which are not the answer): the
    text parts joined. Anything else raises, and the answer is stored raw as malformed."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            part = part if isinstance(part, dict) else getattr(part, "__dict__", {})
            if part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "".join(texts)
    raise TypeError(f"message content is {type(content).__name__}, neither text nor a list of parts")
