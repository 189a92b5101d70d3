"""The one small interface every provider client speaks: a request in, a result out.

Nothing here imports a provider SDK; the clients (``openai_client``, ``google_client``,
``anthropic_client``) are imported only when a model of their provider is run.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from resumebias_dagster.core.models.model_config import ModelConfigError, default_max_tokens, resolve_max_tokens
from resumebias_dagster.core.providers.urls import (
    ProviderConfigError,
    check_base_url,
    is_custom_endpoint,
    is_local_endpoint,
    query_fingerprint,
    url_host,
    url_secrets,
    url_without_secrets,
)
from resumebias_dagster.settings import secret as environment_secret

# Error kinds of a call (ChatResult.error_kind), and whether the store keeps them as the
# final outcome of a request ("terminal": never called again) or only for the record
# ("transient": called again on the next run).
#
# Terminal: the provider answered and that answer is the observation (and was billed).
REFUSAL = "refusal"  # the model declined (OpenAI message.refusal, Anthropic stop_reason "refusal")
CONTENT_FILTER = "content_filter"  # a provider safety filter blocked the prompt or the output
# A 2xx whose body the client could not read (not JSON, not the wire format, nested deeper than
# the SDK's parser recurses, not UTF-8): billed, and the same server answers the same way, so the
# body is stored as it came (ChatResult.text holds it, surrogate-escaped) and not paid for again.
MALFORMED_RESPONSE = "malformed_response"
# Transient up to a limit: a flaky server may answer "" once; a model that spends max_tokens on
# reasoning answers "" every time, so after EMPTY_CALL_LIMIT calls of one key the row is final.
EMPTY = "empty"  # an answer with no text
# Transient: no usable answer came back; the SDK's own retries were exhausted or do not apply.
RATE_LIMITED = "rate_limited"  # 429 after every retry
SERVER_ERROR = "server_error"  # 5xx / 408 / 409 / 529 after every retry
TIMEOUT = "timeout"  # no answer within timeout_s, every attempt
CONNECTION = "connection"  # refused, reset, DNS: no HTTP response at all
AUTH = "auth"  # 401 / 402 / 403: key missing, wrong, out of credit; stops the run's other calls
NOT_FOUND = "not_found"  # 404: unknown model alias or endpoint; stops the run's other calls
BAD_REQUEST = "bad_request"  # other 4xx: a parameter the endpoint refuses
UNEXPECTED = "unexpected"  # any other exception from a client; the message says which
# Never stored: a call the fan-out did not make because an earlier one proved it pointless.
ABORTED = "aborted"
# Set by the task parsers (core/common/parsing.py) on a stored answer, never by a client.
UNPARSABLE = "unparsable"

TERMINAL_KINDS = frozenset({REFUSAL, CONTENT_FILTER, MALFORMED_RESPONSE})
TRANSIENT_KINDS = frozenset({RATE_LIMITED, SERVER_ERROR, TIMEOUT, CONNECTION, AUTH, NOT_FOUND, BAD_REQUEST, UNEXPECTED})
EMPTY_CALL_LIMIT = 3
# Every transient kind is bounded by what it cost: once a key's calls were billed this many
# times (an attempt abandoned at its read timeout, an error object inside a 200, ...) its row is
# final whatever the last call brought. A failure the provider does not bill (429, 5xx, a
# refused connection, a 4xx) stays transient without limit: it costs nothing, and made final it
# would turn a day of rate limits or an outage into holes in the data for good.
BILLED_CALL_LIMIT = 3
# One of these means every other call of the same model would fail the same way.
RUN_STOPPING_KINDS = frozenset({AUTH, NOT_FOUND})

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}
# The Messages API requires max_tokens: the Anthropic client's fallback for a request that was
# not normalised (every request the fan-out sends carries its task's limit).
DEFAULT_MAX_TOKENS = {"anthropic": 1024}
# Where each SDK sends requests when the config names no base_url. The clients pass these
# explicitly, so an OPENAI_BASE_URL / ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL in the
# environment can never carry a key to another host.
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "google": "https://generativelanguage.googleapis.com/",
}
MESSAGE_CHARS = 500


class Secret:
    """An API key that never prints: repr/str show ``***``; ``reveal()`` hands it to an SDK."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def redact_values(text: str, secrets) -> str:
    """``text`` with every one of ``secrets`` replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def redact(text: str, secrets) -> str:
    """``text`` with every secret, and any bearer token, replaced by ``***``."""
    return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1***", redact_values(text, secrets))


def scrub(text: str | None, secrets: tuple[str, ...]) -> str | None:
    """An error message fit to store: redacted and capped in length."""
    if text is None:
        return None
    text = redact(text, secrets)
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


@dataclass(frozen=True)
class ChatRequest:
    """One call: the messages and the sampling parameters, all of which go into the store key.

    ``sample_index`` tells apart repeated draws of the same prompt (runs per cell) and ``tag``
    tells apart otherwise identical requests of different purposes; neither is sent. ``task``
    (seniority, fit, judge, generation; ``task_of`` when unset) picks the model's output-token
    limit for that task where ``max_tokens`` is None (``fanout.normalise``) and is stored with the
    answer; it is neither sent nor part of the key (the limit it picked is both).
    ``logprobs`` asks for that many top alternatives per output token where the API offers
    them (OpenAI-compatible, Gemini); Anthropic has none and ignores it.
    ``cache_prefix_chars``: how many leading characters of the last user message are shared
    with other requests (a fit prompt's instructions and job description): the Anthropic
    client marks them for its prompt cache (``cache_control``); OpenAI and Gemini cache
    prefixes by themselves. Not part of the key: the model reads the same text either way (a
    cache marker changes what a call is billed, not its answer), so a request keeps its key,
    and its stored answer, with or without a marked prefix.
    ``wire_id``: the opaque id a wire that sends an item id (kind http) sends in its place, new
    for each call (``fanout``, ``core/common/blinding.opaque_id``); stored with the answer (``request_json``), so an
    id seen at the endpoint maps back to the tag's item, and never part of the key.
    """

    messages: tuple[tuple[str, str], ...]
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    json_mode: bool = False
    logprobs: int = 0
    sample_index: int = 0
    tag: str = ""
    task: str = field(default="", compare=False)
    cache_prefix_chars: int = field(default=0, compare=False)
    wire_id: str = field(default="", compare=False)

    @classmethod
    def from_prompt(cls, prompt: str, **kwargs: Any) -> ChatRequest:
        return cls(messages=(("user", prompt),), **kwargs)

    @property
    def prompt(self) -> str:
        """The text of the last user message (what a one-turn task sent)."""
        return next((text for role, text in reversed(self.messages) if role == "user"), "")

    def as_json(self) -> dict[str, Any]:
        data = {
            "messages": [list(m) for m in self.messages],
            "system": self.system,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
            "logprobs": self.logprobs,
            "sample_index": self.sample_index,
            "tag": self.tag,
        }
        if self.wire_id:
            data["wire_id"] = self.wire_id
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], task: str = "") -> ChatRequest:
        """The request ``as_json`` wrote (a batch's stored request; ``task`` stored beside it)."""
        return cls(
            messages=tuple((str(role), str(text)) for role, text in data["messages"]),
            system=data.get("system"),
            temperature=data.get("temperature"),
            max_tokens=data.get("max_tokens"),
            json_mode=bool(data.get("json_mode", False)),
            logprobs=int(data.get("logprobs") or 0),
            sample_index=int(data.get("sample_index") or 0),
            tag=str(data.get("tag") or ""),
            task=task,
            wire_id=str(data.get("wire_id") or ""),
        )


TASKS = ("seniority", "fit", "judge", "generation", "ranking", "pairwise")
_GENERATION_TAGS = ("fields", "neutral/", "overstated/", "understated/")


def _seconds(name: str, options: dict[str, Any], setting: str, default: float) -> float:
    """A positive number of seconds from a model entry, or a message naming the setting."""
    value = options.get(setting, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ProviderConfigError(f"model {name!r}: {setting} must be a number of seconds > 0, got {value!r}")
    return float(value)


def task_of(request: ChatRequest) -> str:
    """The task a request serves: its own ``task``, else told by its tag and JSON mode (the
    judge's tag is ``audit-judge``; generation tags name the résumé being written)."""
    if request.task:
        return request.task
    if request.tag == "audit-judge":
        return "judge"
    if request.tag.startswith(_GENERATION_TAGS):
        return "generation"
    return "fit" if request.json_mode else "seniority"


@dataclass
class ChatResult:
    """What one request produced, from the provider or from the store."""

    key: str
    text: str | None = None
    parsed_json: Any = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    # Of input_tokens (always the whole input, whatever the wire counts): those read from the
    # provider's prompt cache, and those written to it (Anthropic's cache_control).
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    resolved_model: str | None = None
    latency_s: float | None = None
    attempts: int = 0
    # Attempts the provider may bill: each answer, and each attempt abandoned at its read
    # timeout (the provider may go on generating it).
    billed_attempts: int = 0
    logprobs: list[dict[str, Any]] | None = None
    finish_reason: str | None = None
    error_kind: str | None = None
    error_message: str | None = None
    cost_usd: float | None = None
    from_store: bool = False

    @property
    def ok(self) -> bool:
        return self.error_kind is None

    @property
    def terminal(self) -> bool:
        """Whether this is the request's final outcome (an answer, or a terminal error); an
        empty answer becomes final only after EMPTY_CALL_LIMIT calls, any other outcome after
        BILLED_CALL_LIMIT billed attempts (the store counts them)."""
        return self.error_kind is None or self.error_kind in TERMINAL_KINDS


@dataclass(frozen=True)
class ProviderSettings:
    """A provider model of the models config, with every default filled in."""

    name: str
    provider: str
    model: str
    temperature: float
    runs_per_cell: int
    base_url: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = 8
    requests_per_minute: float | None = None
    # The output-token limit of each task (TASKS), defaults filled in (model_config.resolve_max_tokens).
    max_tokens: dict[str, int] = field(default_factory=default_max_tokens)
    timeout_s: float = 120.0
    max_retries: int = 3
    # A generation that timed out may still be running (and billed) at the provider: by
    # default it is not sent again within the run; the next run calls it again.
    retry_timeouts: bool = False
    retry_initial_delay_s: float = 1.0
    vertex_project: str | None = None
    vertex_location: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    family: str | None = None
    # Bumped each time the alias is seen resolving to a new snapshot (model_alias_sensor):
    # part of every request key, so answers of an old snapshot are never served for a new one.
    snapshot_epoch: int = 0
    # What shapes a request beyond the item for a wire without a chat format (kind http: the
    # method, body and header templates); part of the key when set.
    wire: dict[str, Any] = field(default_factory=dict)
    # Batch mode (core/providers/batch.py): missing requests go as provider batches, polled
    # every batch_poll_s for at most batch_wait_s per run. Not part of the key: a batch answer
    # and a live one of the same request are the same answer.
    batch: bool = False
    batch_poll_s: float = 30.0
    batch_wait_s: float = 86_400.0
    # The seed of the shuffled order the missing calls go out in (fanout; None: the tasks' own
    # order, as the provider LLMs keep for now), and the least time between two requests sent
    # (None: no pacing). Neither changes an answer, so neither is in the key.
    order_seed: int | None = None
    min_interval_s: float | None = None
    # kind http: where the tool reports its version, (source, header or path, version url)
    # (http_endpoint.HttpVersion); empty: it reports none. Not part of the key: the version is
    # what the sensor's epochs are made of.
    version_source: tuple[str, ...] = ()
    # kind http: the tasks its answer paths read, and what one call costs (``price_per_call``,
    # USD; None: not declared), for estimate-cost. Neither is part of the key.
    tasks: tuple[str, ...] = ()
    price_per_call: float | None = None

    @classmethod
    def from_spec(cls, spec: Any) -> ProviderSettings:
        """From a ``ModelSpec`` of kind ``provider``; bad values raise ``ProviderConfigError``.

        One rule for every wire: the provider's own host gets the provider's default key
        variable; any other host gets a key only from a variable named in ``api_key_env``
        (``''``: none). A local server without ``api_key_env`` gets no key; another host
        without it is refused, so a config naming a host of someone else's choosing can never
        receive OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by default.
        """
        if spec.kind == "http":
            return _http_settings(spec)
        if spec.kind != "provider":
            raise ProviderConfigError(f"model {spec.name!r} is of kind {spec.kind!r}, not provider or http")
        o = spec.options
        provider = o["provider"]
        base_url = o.get("base_url")
        vertex = provider == "google" and bool(o.get("vertex_project") or o.get("vertex_location"))
        key_env = o.get("api_key_env")
        check_base_url(spec.name, base_url)
        custom = is_custom_endpoint(base_url, provider)
        if vertex and custom and not key_env:
            raise ProviderConfigError(
                f"model {spec.name!r}: Vertex AI at {url_host(base_url)}, not one of Google's hosts, needs a key "
                "named in api_key_env; Application Default Credentials are only ever sent to Google's hosts"
            )
        if key_env is None and not custom and not vertex:
            key_env = DEFAULT_KEY_ENV[provider]
        elif key_env is None and custom and not is_local_endpoint(base_url):
            raise ProviderConfigError(
                f"model {spec.name!r}: name the environment variable holding the key of {url_host(base_url)} "
                f"in api_key_env (or api_key_env: '' for an endpoint without keys); the default "
                f"{DEFAULT_KEY_ENV[provider]} is only sent to {provider}'s own host"
            )
        try:
            max_tokens = resolve_max_tokens(o.get("max_tokens", ...), f"model {spec.name!r}")
        except ModelConfigError as exc:
            raise ProviderConfigError(str(exc)) from None
        for flag in ("retry_timeouts", "batch"):
            if not isinstance(o.get(flag, False), bool):
                raise ProviderConfigError(f"model {spec.name!r}: {flag} must be true or false, got {o[flag]!r}")
        settings = cls(
            name=spec.name,
            provider=provider,
            model=str(o["model"]),
            temperature=spec.temperature,
            runs_per_cell=spec.runs_per_cell,
            base_url=o.get("base_url"),
            api_key_env=key_env or None,
            max_concurrency=int(o.get("max_concurrency", 8)),
            requests_per_minute=o.get("requests_per_minute"),
            max_tokens=max_tokens,
            timeout_s=float(o.get("timeout_s", 120.0)),
            max_retries=int(o.get("max_retries", 3)),
            retry_timeouts=o.get("retry_timeouts", False),
            retry_initial_delay_s=float(o.get("retry_initial_delay_s", 1.0)),
            batch=o.get("batch", False),
            batch_poll_s=_seconds(spec.name, o, "batch_poll_s", 30.0),
            batch_wait_s=_seconds(spec.name, o, "batch_wait_s", 86_400.0),
            vertex_project=o.get("vertex_project"),
            vertex_location=o.get("vertex_location"),
            extra_body=dict(o.get("extra_body") or {}),
            family=o.get("family"),
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        where = f"model {self.name!r}"
        check_base_url(self.name, self.base_url)
        if self.max_concurrency < 1:
            raise ProviderConfigError(f"{where}: max_concurrency must be >= 1, got {self.max_concurrency}")
        if self.requests_per_minute is not None and not float(self.requests_per_minute) > 0:
            raise ProviderConfigError(f"{where}: requests_per_minute must be > 0, got {self.requests_per_minute}")
        if self.timeout_s <= 0 or self.max_retries < 0:
            raise ProviderConfigError(f"{where}: timeout_s must be > 0 and max_retries >= 0")
        if self.min_interval_s is not None:
            _seconds(self.name, {"min_interval_s": self.min_interval_s}, "min_interval_s", 0.0)
        seed = self.order_seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ProviderConfigError(f"{where}: order_seed must be a whole number >= 0, got {self.order_seed!r}")
        missing = [task for task in TASKS if task not in self.max_tokens]
        if missing or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in self.max_tokens.values()
        ):
            raise ProviderConfigError(
                f"{where}: max_tokens must give every task ({', '.join(TASKS)}) a limit >= 1, got {self.max_tokens}"
            )
        if self.vertex and not self.vertex_location:
            raise ProviderConfigError(
                f"{where}: Vertex AI needs vertex_location (e.g. us-central1) with vertex_project"
            )

    def max_tokens_for(self, task: str) -> int:
        """The output-token limit of ``task`` (one of TASKS) for this model."""
        if task not in self.max_tokens:
            raise ProviderConfigError(
                f"model {self.name!r}: no max_tokens for task {task!r}; tasks: {', '.join(TASKS)}"
            )
        return self.max_tokens[task]

    @property
    def vertex(self) -> bool:
        return self.provider == "google" and bool(self.vertex_project or self.vertex_location)

    @property
    def sends_temperature(self) -> bool:
        """The Anthropic SDK installed here has no temperature parameter (see anthropic_client);
        a scoring endpoint (http) is sent what its body template makes, no sampling parameter."""
        return self.provider not in ("anthropic", HTTP_WIRE)

    @property
    def endpoint(self) -> str:
        """Which server answers, for the store key: the whole endpoint of a configured
        ``base_url`` (scheme, host, port, path and query, credentials removed), so two ports of
        one host or two upstreams behind one gateway (by path or by ``?upstream=``) never share
        answers. The query enters as a hash (``query_fingerprint``). The providers' own
        endpoints keep the names they had before (their host; a Vertex location), so stores
        written earlier keep serving them.
        """
        if self.provider == "google":
            if self.base_url:
                return (
                    f"{'vertex' if self.vertex else 'gemini-api'}:{url_without_secrets(self.base_url)}"
                    f"{query_fingerprint(self.base_url)}"
                )
            return f"vertex:{self.vertex_location}" if self.vertex else "gemini-api:default"
        if self.base_url:
            return url_without_secrets(self.base_url) + query_fingerprint(self.base_url)
        return {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}[self.provider]

    @property
    def sdk_base_url(self) -> str:
        """The URL handed to the SDK: the configured one, or the provider's default, always
        explicit so that no environment variable can redirect the client."""
        if self.base_url:
            return self.base_url
        if self.vertex:
            location = self.vertex_location or "global"
            host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform.googleapis.com"
            return f"https://{host}/"
        return DEFAULT_BASE_URLS[self.provider]

    @property
    def host(self) -> str:
        """host[:port] of the endpoint, without credentials (for pools, tags, messages)."""
        return url_host(self.sdk_base_url)

    @property
    def secrets_in_url(self) -> tuple[str, ...]:
        """Credentials embedded in ``base_url``: redacted wherever text is logged or stored."""
        return url_secrets(self.base_url)

    def api_key(self, environ: dict[str, str] | None = None) -> Secret | None:
        """The key from the environment; a named variable that is unset or empty is an error."""
        if not self.api_key_env:
            return None
        value = environment_secret(self.api_key_env, environ)
        if not value.strip():
            raise ProviderConfigError(
                f"model {self.name!r} ({self.provider}, {self.model}) needs an API key: "
                f"set the environment variable {self.api_key_env}"
            )
        return Secret(value.strip())


HTTP_WIRE = "http"
# What a model version looks like (gpt-4o-2024-08-06, claude-3-5-sonnet@20241022, models/gemini-2.0-flash-001,
# an HTTP tool's "2.3.1"): a hostile endpoint's 200 KB "version" is refused (issue 40).
MODEL_VERSION_CHARS = 200
MODEL_VERSION = re.compile(rf"[^\s\x00-\x1f\x7f]{{1,{MODEL_VERSION_CHARS}}}")


def _http_settings(spec: Any) -> ProviderSettings:
    """The settings of a ``kind: http`` scoring endpoint: its key only from ``api_key_env``
    (never a provider's default variable), its templates part of every key."""
    from resumebias_dagster.core.models.http_endpoint import HttpEndpointError, endpoint_of

    o = spec.options
    try:
        endpoint = endpoint_of(spec)
    except HttpEndpointError as exc:
        raise ProviderConfigError(str(exc)) from None
    check_base_url(spec.name, endpoint.url, "url")
    price = o.get("price_per_call")
    if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float)) or not 0 <= price < 1e6):
        raise ProviderConfigError(
            f"model {spec.name!r}: price_per_call must be a number of US dollars per call (0 or more), got {price!r}"
        )
    retry_timeouts = o.get("retry_timeouts", False)
    if not isinstance(retry_timeouts, bool):
        raise ProviderConfigError(f"model {spec.name!r}: retry_timeouts must be true or false, got {retry_timeouts!r}")
    settings = ProviderSettings(
        name=spec.name,
        provider=HTTP_WIRE,
        model=url_without_secrets(endpoint.url),
        temperature=spec.temperature,
        runs_per_cell=spec.runs_per_cell,
        base_url=endpoint.url,
        api_key_env=o.get("api_key_env") or None,
        max_concurrency=int(o.get("max_concurrency", 8)),
        requests_per_minute=o.get("requests_per_minute"),
        timeout_s=float(o.get("timeout_s", 60.0)),
        max_retries=int(o.get("max_retries", 3)),
        retry_timeouts=retry_timeouts,
        retry_initial_delay_s=float(o.get("retry_initial_delay_s", 1.0)),
        wire=endpoint.wire(),
        version_source=endpoint.version.as_tuple() if endpoint.version else (),
        tasks=endpoint.tasks,
        price_per_call=None if price is None else float(price),
        order_seed=o.get("order_seed", 0),
        min_interval_s=o.get("min_interval_s"),
    )
    settings.validate()
    return settings


def check_credentials(
    models: list[ProviderSettings], environ: dict[str, str] | None = None
) -> dict[str, Secret | None]:
    """Each model's key by name, read now; every missing variable is named in one error.

    A Vertex AI model without a key needs Application Default Credentials, looked up here.
    """
    keys: dict[str, Secret | None] = {}
    problems: list[str] = []
    for settings in models:
        try:
            keys[settings.name] = settings.api_key(environ)
        except ProviderConfigError as exc:
            problems.append(str(exc))
            continue
        if settings.vertex and keys[settings.name] is None:
            problem = _vertex_credentials_problem(settings)
            if problem:
                problems.append(problem)
    if problems:
        raise ProviderConfigError("; ".join(problems))
    return keys


def _vertex_credentials_problem(settings: ProviderSettings) -> str | None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    except DefaultCredentialsError:
        return (
            f"model {settings.name!r} (Vertex AI, {settings.model}) needs Application Default Credentials: "
            "set the environment variable GOOGLE_APPLICATION_CREDENTIALS to a service-account key file "
            "or run `gcloud auth application-default login` (or give it an express-mode key with api_key_env)"
        )
    return None


def request_key(settings: ProviderSettings, request: ChatRequest) -> str:
    """sha256 of the canonical JSON of everything that makes an answer what it is.

    Provider, endpoint host, model alias, extra_body (it changes answers), the alias's snapshot
    epoch and the full request including sampling parameters and sample index; not the model's
    name in the config, its limits, timeouts or key.
    """
    asked = request.as_json()
    # The opaque id is new for each call: the key is what was asked, whichever id carried it.
    asked.pop("wire_id", None)
    payload = {
        "v": 1,
        "provider": settings.provider,
        "endpoint": settings.endpoint,
        "model": settings.model,
        "extra_body": settings.extra_body,
        "request": asked,
    }
    if settings.snapshot_epoch:
        # Absent at epoch 0, so the keys of a store made before any alias moved stay valid.
        payload["snapshot_epoch"] = settings.snapshot_epoch
    if settings.wire:
        # Absent for the chat wires, whose keys stay as they were.
        payload["wire"] = settings.wire
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: a prompt may hold a lone surrogate (a résumé a model wrote); valid text
    # encodes as before, so existing keys stay valid.
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
