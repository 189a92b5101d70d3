"""``kind: provider``: a chat model behind an API (``provider``: openai, google or anthropic;
OpenAI-compatible APIs use openai with ``base_url``), called through the transport (the
response store and the request fan-out, ``core/providers``)."""

from __future__ import annotations

from resumebias_dagster.core.models.kinds.base import ModelKind
from resumebias_dagster.core.models.spec import ModelConfigError
from resumebias_dagster.core.models.task_tokens import resolve_max_tokens
from resumebias_dagster.core.models.trust import ModelTrustError, check_reach

PROVIDERS = ("openai", "google", "anthropic")
# The kind tag of each provider in Dagster's UI (its icon).
_UI_KINDS = {"openai": "openai", "google": "gemini", "anthropic": "anthropic"}


def _check(entry, where: str) -> None:
    if entry["provider"] not in PROVIDERS:
        raise ModelConfigError(
            f"{where}: provider {entry['provider']!r} is not one of {', '.join(PROVIDERS)} "
            "(OpenAI-compatible APIs such as OpenRouter, Groq, Mistral, vLLM or Ollama use 'openai' with base_url)"
        )
    try:
        check_reach(entry, where)
    except ModelTrustError as exc:
        raise ModelConfigError(str(exc)) from None


def _options(entry, where: str) -> dict:
    return {"max_tokens": resolve_max_tokens(entry.get("max_tokens", ...), where)}


def _predict(spec, work, runtime, progress):
    return work.with_chat(spec, runtime.run_for(spec.name, progress))


KIND = ModelKind(
    name="provider",
    summary="a chat model behind an API (OpenAI, Google, Anthropic or OpenAI-compatible)",
    fields=frozenset(
        {
            "provider",
            "model",
            "base_url",
            "api_key_env",
            "max_concurrency",
            "requests_per_minute",
            "max_tokens",
            "timeout_s",
            "max_retries",
            "vertex_project",
            "vertex_location",
            "extra_body",
            "family",
            "retry_initial_delay_s",
            "retry_timeouts",
            "batch",
            "batch_poll_s",
            "batch_wait_s",
            "allow_any_key_env",
        }
    ),
    required=frozenset({"provider", "model"}),
    tasks=("seniority", "fit", "ranking", "pairwise"),
    predict=_predict,
    check=_check,
    options=_options,
    ui_kind=lambda spec: _UI_KINDS.get(str(spec.option("provider")), "api"),
)
