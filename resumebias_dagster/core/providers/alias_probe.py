"""What a model alias resolves to right now: one small live call, bypassing the store.

Floating aliases (``mistral-large-latest``, ``claude-sonnet``, ``gpt-5``) move to new
snapshots silently (study 003); the answer's reported model is the snapshot.

Probes are checks, not audit calls: every model is probed at once (one event loop), each with
a short timeout (``PROBE_TIMEOUT_S``, never more than the model's own ``timeout_s``) and no
retries, so one slow or failing provider costs the others nothing and holds a sensor tick for
at most that timeout. The request is the model's own (its temperature, none where the
provider takes none, its extra body, and the limit of its seniority task: the probe's one-word
answer is the size of the label, and a reasoning model's entry sizes that limit for its
thinking): a probe a model would refuse (a fixed ``temperature=0`` to a reasoning model)
would report nothing about the alias.

A scoring endpoint of the user's (``kind: http``) with a ``version`` source is probed too: its
version endpoint is asked (nothing is scored), or, where the version comes with each answer
(a header, a path), one ordinary scoring call is made with a plain résumé and job description
(``PROBE_RESUME``, ``PROBE_JOB``) and the version read off its reply. It is not stored; like
any call it may be billed. An endpoint that reports no version is a failed probe, named.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace

from resumebias_dagster.core.providers.base import registered_secrets
from resumebias_dagster.core.providers.fanout import normalise, run_sync
from resumebias_dagster.core.providers.registry import make_client
from resumebias_dagster.core.providers.types import (
    HTTP_WIRE,
    MODEL_VERSION,
    MODEL_VERSION_CHARS,
    ChatRequest,
    ProviderSettings,
    Secret,
    scrub,
)

PROBE_PROMPT = "Reply with the single word OK."
# The scoring call of an http tool's probe: an ordinary application, with nothing in it that
# says it is a check.
PROBE_RESUME = (
    "Jordan Lee\nSoftware Engineer\n\nEXPERIENCE\nSoftware Engineer, Northwind Logistics (2019-2024)\n"
    "- Built and maintained order-tracking services in Python and PostgreSQL.\n\n"
    "EDUCATION\nB.S. Computer Science, State University (2019)\n\nSKILLS\nPython, SQL, Docker"
)
PROBE_JOB = "Software Engineer. Build and run backend services in Python; SQL databases; code review."
# How long one probe may take, in seconds (the model's own timeout_s if that is shorter).
PROBE_TIMEOUT_S = 20.0
# A probe is cancelled this long after its timeout if the SDK's own timeout has not ended it
# (a server trickling bytes can keep a read alive past the SDK's per-read timeout).
_CANCEL_GRACE_S = 1.0


class ProbeError(RuntimeError):
    """The probe call failed; the message names the model and the error kind (never the key)."""


def probe_settings(settings: ProviderSettings, timeout_s: float | None = None) -> ProviderSettings:
    """``settings`` for a probe: the short timeout (never longer than the model's) and no retries."""
    limit = PROBE_TIMEOUT_S if timeout_s is None else timeout_s
    return replace(settings, timeout_s=min(float(limit), settings.timeout_s), max_retries=0)


def probe_request(settings: ProviderSettings) -> ChatRequest:
    """The probe as the model's own request: its temperature (none for Anthropic), its
    seniority task's max_tokens (a one-word answer, like the label)."""
    return normalise(settings, ChatRequest.from_prompt(PROBE_PROMPT, task="seniority"))


def http_probe_request(settings: ProviderSettings) -> ChatRequest:
    """The scoring call of an http tool's probe, as ``http_scorer.http_requests`` makes one."""
    from resumebias_dagster.core.common.blinding import opaque_id

    task = settings.tasks[0] if settings.tasks else "fit"
    job = PROBE_JOB if task != "seniority" else ""
    return ChatRequest(
        messages=(("resume", PROBE_RESUME), ("job_description", job)),
        tag=f"http|{task}|probe-{opaque_id()}",
        task=task,
    )


async def _http_version(settings: ProviderSettings, api_key: Secret | None) -> str:
    if not settings.version_source:
        raise ProbeError(f"model {settings.name!r}: kind http without a version source has no version to probe")
    client = make_client(settings, api_key)
    try:
        if settings.version_source[0] == "url":
            version = await client.version_now()
            if version is None:
                raise ProbeError(
                    f"model {settings.name!r}: the version endpoint gave no version (a 2xx answer of at most "
                    f"{MODEL_VERSION_CHARS} characters, or its JSON at version.path)"
                )
            return str(version)
        result = await client.complete(http_probe_request(settings), "probe")
    finally:
        await client.aclose()
    if not result.ok:
        raise ProbeError(f"model {settings.name!r}: probe failed ({result.error_kind}: {result.error_message})")
    if not result.resolved_model or result.resolved_model.startswith("http:"):
        source, name = settings.version_source[:2]
        raise ProbeError(f"model {settings.name!r}: the answer reported no version (version.{source} {name!r})")
    return result.resolved_model


async def probe_resolved_model_async(settings: ProviderSettings, api_key: Secret | None) -> str:
    """One probe with ``settings`` as given (see ``probe_settings``); ``ProbeError`` if it fails."""
    if settings.provider == HTTP_WIRE:
        return await _http_version(settings, api_key)
    client = make_client(settings, api_key)
    try:
        result = await client.complete(probe_request(settings), "probe")
    finally:
        await client.aclose()
    if not result.ok and result.resolved_model is None:
        raise ProbeError(f"model {settings.name!r}: probe failed ({result.error_kind}: {result.error_message})")
    if not result.resolved_model:
        raise ProbeError(f"model {settings.name!r}: the provider reported no model version")
    if not MODEL_VERSION.fullmatch(result.resolved_model):
        # A hostile endpoint reporting a new 200 KB "version" every tick grew the sensor's cursor
        # and the run tags without bound and started an epoch each time (issue 40).
        raise ProbeError(
            f"model {settings.name!r}: the provider reported a model version that is no model name "
            f"({len(result.resolved_model):,} characters; at most {MODEL_VERSION_CHARS}, no spaces or control characters)"
        )
    return result.resolved_model


async def _probe_one(settings: ProviderSettings, api_key: Secret | None, timeout_s: float | None) -> str | ProbeError:
    short = probe_settings(settings, timeout_s)
    try:
        return await asyncio.wait_for(probe_resolved_model_async(short, api_key), short.timeout_s + _CANCEL_GRACE_S)
    except ProbeError as exc:
        return exc
    except asyncio.TimeoutError:
        return ProbeError(f"model {settings.name!r}: probe failed (timeout: no answer within {short.timeout_s:g} s)")
    except Exception as exc:  # noqa: BLE001 - one model's failure is its own result, never the others'
        secrets = tuple(
            s for s in (api_key.reveal() if api_key else None, *settings.secrets_in_url, *registered_secrets()) if s
        )
        return ProbeError(scrub(f"model {settings.name!r}: probe failed ({type(exc).__name__}: {exc})", secrets))


async def probe_resolved_models_async(
    models: Mapping[str, tuple[ProviderSettings, Secret | None]], timeout_s: float | None = None
) -> dict[str, str | ProbeError]:
    names = list(models)
    results = await asyncio.gather(*(_probe_one(*models[name], timeout_s) for name in names))
    return dict(zip(names, results))


def probe_resolved_models(
    models: Mapping[str, tuple[ProviderSettings, Secret | None]], timeout_s: float | None = None
) -> dict[str, str | ProbeError]:
    """Probe every ``{name: (settings, api_key)}`` at once: ``{name: resolved model}``, or the
    ``ProbeError`` of a model whose probe failed or took longer than ``timeout_s`` (default
    ``PROBE_TIMEOUT_S``, capped by each model's own timeout). Never raises for one model."""
    if not models:
        return {}
    return run_sync(probe_resolved_models_async(models, timeout_s), "provider-probe")


def probe_resolved_model(settings: ProviderSettings, api_key: Secret | None, timeout_s: float | None = None) -> str:
    """One model's probe (short timeout, no retries); raises ``ProbeError``."""
    result = probe_resolved_models({settings.name: (settings, api_key)}, timeout_s)[settings.name]
    if isinstance(result, ProbeError):
        raise result
    return result
