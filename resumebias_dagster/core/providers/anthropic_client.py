"""Anthropic Messages API through the official ``anthropic`` SDK's async client.

The Messages API of the installed SDK (API version 2026-10-21) takes no sampling
parameters: Claude runs at the provider's default sampling whatever the config's
temperature, the asymmetry study 003 notes for its Claude runs (``ProviderSettings.
sends_temperature`` keeps temperature out of the request and its key). It has no JSON mode
without a schema and no log-probabilities: ``json_mode`` relies on the prompt (the answer
is still parsed strictly) and ``logprobs`` is ignored.

Prompt caching: a request's shared prefix (``ChatRequest.cache_prefix_chars``) is sent as a
text block of its own marked ``cache_control: ephemeral`` (the 5-minute cache), the rest of
the message as a second block; the model reads the same text. The usage of an answer counts
input tokens read from the cache and written to it apart from ``input_tokens``; the result's
``input_tokens`` is their sum, the whole input, as the other wires count it.
"""

from __future__ import annotations

from typing import Any

import anthropic

from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import ProviderClient
from resumebias_dagster.core.providers.types import DEFAULT_MAX_TOKENS, ChatRequest, ChatResult, ProviderSettings
from resumebias_dagster.core.providers.urls import split_query

# What an endpoint without keys gets instead of a key the SDK would find in the environment.
_NO_KEY = "no-key"


class AnthropicClient(ProviderClient):
    def _make_sdk_client(self, http_client: Any) -> anthropic.AsyncAnthropic:
        s = self.settings
        base_url, query = split_query(s.sdk_base_url)
        return anthropic.AsyncAnthropic(
            # Both explicit: without them the SDK reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
            # profiles on disk and ANTHROPIC_BASE_URL, and would send a key to a host the
            # config did not name. An endpoint without keys gets a placeholder.
            api_key=self._api_key.reveal() if self._api_key else _NO_KEY,
            base_url=base_url,
            default_query=query or None,
            max_retries=s.max_retries,
            timeout=s.timeout_s,
            http_client=http_client,
        )

    async def _call(self, request: ChatRequest) -> ChatResult:
        kwargs = message_params(self.settings, request)
        if self.settings.extra_body:
            kwargs["extra_body"] = self.settings.extra_body
        return result_of_message(await self._sdk.messages.create(**kwargs))

    def _classify(self, exc: BaseException) -> tuple[str, str]:
        return self._classify_stainless(anthropic, exc)


def message_params(settings: ProviderSettings, request: ChatRequest) -> dict[str, Any]:
    """The parameters of a Messages API request (``messages.create``'s keyword arguments, a
    batch item's ``params``) without ``extra_body``: the live call passes it to the SDK, a
    batch item carries its keys among the params."""
    params: dict[str, Any] = {
        "model": settings.model,
        "messages": messages_with_cache_marker(request),
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS["anthropic"],
    }
    if request.system:
        params["system"] = request.system
    return params


def result_of_message(response: Any) -> ChatResult:
    """What a Message says, a live answer or a batch item's: text, usage, resolved model,
    refusal or empty (key and attempts are the caller's). Raises where it cannot read it."""
    usage = response.usage
    # Anthropic's input_tokens leaves out the tokens read from the cache and written to
    # it; the result's input_tokens is the whole input (as OpenAI's prompt_tokens and
    # Gemini's promptTokenCount count it), of which the cached and written ones are parts.
    read = getattr(usage, "cache_read_input_tokens", None)
    written = getattr(usage, "cache_creation_input_tokens", None)
    uncached = usage.input_tokens if usage else None
    result = ChatResult(
        key="",
        resolved_model=response.model,
        input_tokens=None if uncached is None else uncached + (read or 0) + (written or 0),
        output_tokens=usage.output_tokens if usage else None,
        cached_input_tokens=read,
        cache_write_tokens=written,
        finish_reason=response.stop_reason,
    )
    text = "".join(block.text for block in response.content or [] if getattr(block, "type", None) == "text")
    if response.stop_reason == "refusal":
        result.error_kind, result.error_message = t.REFUSAL, text.strip() or "stop_reason refusal"
    elif not text.strip():
        result.error_kind, result.error_message = t.EMPTY, f"no text (stop_reason {response.stop_reason})"
    else:
        result.text = text
    return result


def messages_with_cache_marker(request: ChatRequest) -> list[dict[str, Any]]:
    """The Messages API's ``messages`` of ``request``: plain text, save the last user message
    when the request has a shared prefix: then two text blocks, the prefix marked for the
    prompt cache and the rest (one marked block where the prefix is the whole message)."""
    messages: list[dict[str, Any]] = [{"role": role, "content": text} for role, text in request.messages]
    last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] == "user"), None)
    if request.cache_prefix_chars <= 0 or last_user is None or not messages[last_user]["content"]:
        return messages
    text = messages[last_user]["content"]
    prefix, rest = text[: request.cache_prefix_chars], text[request.cache_prefix_chars :]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}}]
    if rest:
        blocks.append({"type": "text", "text": rest})
    messages[last_user] = {"role": "user", "content": blocks}
    return messages
