"""The one small interface every provider client speaks: a request in, a result out.

Nothing here imports a provider SDK; the clients (``openai_client``, ``google_client``,
``anthropic_client``) are imported only when a model of their provider is run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Error kinds of a call (ChatResult.error_kind), and whether the store keeps them as the
# final outcome of a request ("terminal": never called again) or only for the record
# ("transient": called again on the next run).
#
# Terminal: the provider answered and that answer is the observation (and was billed).
REFUSAL = "refusal"  # the model declined (OpenAI message.refusal, Anthropic stop_reason "refusal")
CONTENT_FILTER = "content_filter"  # a provider safety filter blocked the prompt or the output
EMPTY = "empty"  # an answer with no text (e.g. max_tokens spent on reasoning)
# Transient: no usable answer came back; the SDK's own retries were exhausted or do not apply.
RATE_LIMITED = "rate_limited"  # 429 after every retry
SERVER_ERROR = "server_error"  # 5xx / 408 / 409 / 529 after every retry
TIMEOUT = "timeout"  # no answer within timeout_s, every attempt
CONNECTION = "connection"  # refused, reset, DNS: no HTTP response at all
MALFORMED_RESPONSE = "malformed_response"  # a 2xx whose body is not the provider's wire format
AUTH = "auth"  # 401 / 402 / 403: key missing, wrong, out of credit; stops the run's other calls
NOT_FOUND = "not_found"  # 404: unknown model alias or endpoint; stops the run's other calls
BAD_REQUEST = "bad_request"  # other 4xx: a parameter the endpoint refuses
UNEXPECTED = "unexpected"  # any other exception from a client; the message says which
# Never stored: a call the runner did not make because an earlier one proved it pointless.
ABORTED = "aborted"
# Set by the task parsers (core/parsing.py) on a stored answer, never by a client.
UNPARSABLE = "unparsable"

TERMINAL_KINDS = frozenset({REFUSAL, CONTENT_FILTER, EMPTY})
TRANSIENT_KINDS = frozenset(
    {RATE_LIMITED, SERVER_ERROR, TIMEOUT, CONNECTION, MALFORMED_RESPONSE, AUTH, NOT_FOUND, BAD_REQUEST, UNEXPECTED}
)
# One of these means every other call of the same model would fail the same way.
RUN_STOPPING_KINDS = frozenset({AUTH, NOT_FOUND})

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}
DEFAULT_MAX_TOKENS = {"anthropic": 1024}  # the Messages API requires max_tokens
OPENAI_HOSTS = ("api.openai.com",)
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
MESSAGE_CHARS = 500


class ProviderConfigError(ValueError):
    """A provider model is configured wrongly or lacks its key; raised before any call."""


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


def redact(text: str, secrets) -> str:
    """``text`` with every secret, and any bearer token, replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1***", text)


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
    tells apart otherwise identical requests of different purposes; neither is sent.
    ``logprobs`` asks for that many top alternatives per output token where the API offers
    them (OpenAI-compatible, Gemini); Anthropic has none and ignores it.
    """

    messages: tuple[tuple[str, str], ...]
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    json_mode: bool = False
    logprobs: int = 0
    sample_index: int = 0
    tag: str = ""

    @classmethod
    def from_prompt(cls, prompt: str, **kwargs: Any) -> ChatRequest:
        return cls(messages=(("user", prompt),), **kwargs)

    @property
    def prompt(self) -> str:
        """The text of the last user message (what a one-turn task sent)."""
        return next((text for role, text in reversed(self.messages) if role == "user"), "")

    def as_json(self) -> dict[str, Any]:
        return {
            "messages": [list(m) for m in self.messages],
            "system": self.system,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
            "logprobs": self.logprobs,
            "sample_index": self.sample_index,
            "tag": self.tag,
        }


@dataclass
class ChatResult:
    """What one request produced, from the provider or from the store."""

    key: str
    text: str | None = None
    parsed_json: Any = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    resolved_model: str | None = None
    latency_s: float | None = None
    attempts: int = 0
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
        """Whether this is the request's final outcome (an answer, or a terminal error)."""
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
    max_tokens: int | None = None
    timeout_s: float = 120.0
    max_retries: int = 3
    retry_initial_delay_s: float = 1.0
    vertex_project: str | None = None
    vertex_location: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    family: str | None = None
    # Bumped each time the alias is seen resolving to a new snapshot (model_alias_sensor):
    # part of every request key, so answers of an old snapshot are never served for a new one.
    snapshot_epoch: int = 0

    @classmethod
    def from_spec(cls, spec: Any) -> ProviderSettings:
        """From a ``ModelSpec`` of kind ``provider``; bad values raise ``ProviderConfigError``."""
        if spec.kind != "provider":
            raise ProviderConfigError(f"model {spec.name!r} is of kind {spec.kind!r}, not provider")
        o = spec.options
        provider = o["provider"]
        vertex = provider == "google" and bool(o.get("vertex_project") or o.get("vertex_location"))
        key_env = o.get("api_key_env")
        if key_env is None and not vertex and not (provider == "openai" and is_local_endpoint(o.get("base_url"))):
            if provider == "openai" and _is_custom_endpoint(o.get("base_url")):
                raise ProviderConfigError(
                    f"model {spec.name!r}: name the environment variable holding the key of "
                    f"{o.get('base_url')} in api_key_env (or api_key_env: '' for an endpoint without keys)"
                )
            key_env = DEFAULT_KEY_ENV[provider]
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
            max_tokens=o.get("max_tokens", DEFAULT_MAX_TOKENS.get(provider)),
            timeout_s=float(o.get("timeout_s", 120.0)),
            max_retries=int(o.get("max_retries", 3)),
            retry_initial_delay_s=float(o.get("retry_initial_delay_s", 1.0)),
            vertex_project=o.get("vertex_project"),
            vertex_location=o.get("vertex_location"),
            extra_body=dict(o.get("extra_body") or {}),
            family=o.get("family"),
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        where = f"model {self.name!r}"
        if self.max_concurrency < 1:
            raise ProviderConfigError(f"{where}: max_concurrency must be >= 1, got {self.max_concurrency}")
        if self.requests_per_minute is not None and not float(self.requests_per_minute) > 0:
            raise ProviderConfigError(f"{where}: requests_per_minute must be > 0, got {self.requests_per_minute}")
        if self.timeout_s <= 0 or self.max_retries < 0:
            raise ProviderConfigError(f"{where}: timeout_s must be > 0 and max_retries >= 0")
        if self.max_tokens is not None and int(self.max_tokens) < 1:
            raise ProviderConfigError(f"{where}: max_tokens must be >= 1, got {self.max_tokens}")
        if self.vertex and not self.vertex_location:
            raise ProviderConfigError(f"{where}: Vertex AI needs vertex_location (e.g. us-central1) with vertex_project")

    @property
    def vertex(self) -> bool:
        return self.provider == "google" and bool(self.vertex_project or self.vertex_location)

    @property
    def sends_temperature(self) -> bool:
        """The Anthropic SDK installed here has no temperature parameter (see anthropic_client)."""
        return self.provider != "anthropic"

    @property
    def endpoint(self) -> str:
        """Which service answers, for the store key: the API's host without port or path.

        The port is left out so a local test server or a moved vLLM keeps its stored answers;
        the host is kept so one alias on two services (say OpenRouter and a local server)
        never shares answers.
        """
        if self.base_url:
            host = urlsplit(self.base_url).hostname or self.base_url
        else:
            host = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}.get(self.provider, "")
        if self.provider == "google":
            return f"{'vertex' if self.vertex else 'gemini-api'}:{host or 'default'}"
        return host

    def api_key(self, environ: dict[str, str] | None = None) -> Secret | None:
        """The key from the environment; a named variable that is unset or empty is an error."""
        if not self.api_key_env:
            return None
        value = (environ if environ is not None else os.environ).get(self.api_key_env, "")
        if not value.strip():
            raise ProviderConfigError(
                f"model {self.name!r} ({self.provider}, {self.model}) needs an API key: "
                f"set the environment variable {self.api_key_env}"
            )
        return Secret(value.strip())


def check_credentials(models: list[ProviderSettings], environ: dict[str, str] | None = None) -> dict[str, Secret | None]:
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


def _is_custom_endpoint(base_url: str | None) -> bool:
    """A base_url that is not OpenAI's own: OpenRouter, Groq, vLLM, Ollama ... name their key."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    return host not in OPENAI_HOSTS


def is_local_endpoint(base_url: str | None) -> bool:
    return bool(base_url) and (urlsplit(base_url).hostname or "") in _LOCAL_HOSTS


def request_key(settings: ProviderSettings, request: ChatRequest) -> str:
    """sha256 of the canonical JSON of everything that makes an answer what it is.

    Provider, endpoint host, model alias, extra_body (it changes answers), the alias's snapshot
    epoch and the full request including sampling parameters and sample index; not the model's
    name in the config, its limits, timeouts or key.
    """
    payload = {
        "v": 1,
        "provider": settings.provider,
        "endpoint": settings.endpoint,
        "model": settings.model,
        "extra_body": settings.extra_body,
        "request": request.as_json(),
    }
    if settings.snapshot_epoch:
        # Absent at epoch 0, so the keys of a store made before any alias moved stay valid.
        payload["snapshot_epoch"] = settings.snapshot_epoch
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
