"""A scoring endpoint of the user's as a model (``kind: http``): what to send and where the answer is.

An entry of the models config::

    - name: acme-screener
      kind: http
      url: https://screening.example.com/v1/score      # https, or http to this machine only
      method: POST                                     # POST (default) or PUT
      body: |                                          # Jinja2; rendered once per item and run
        {"candidate_id": {{ id | tojson }}, "resume": {{ resume | tojson }},
         "job": {{ job_description | tojson }}}
      headers: {Authorization: "Bearer {{ api_key }}"}  # optional; {{ api_key }} only here
      api_key_env: ACME_API_KEY                        # the key's environment variable
      answer: {score: $.result.score, recommend: $.result.decision, label: $.seniority}
      max_concurrency: 4                               # and requests_per_minute, timeout_s,
                                                       # max_retries, retry_timeouts
      min_interval_s: 2                                # optional pacing: >= 2 s between calls
      order_seed: 0                                    # the seed of the calls' shuffled order
      version: {header: X-Model-Version}               # optional: where the tool says its version

The body template sees ``id`` (an opaque id, 16 hex digits, new for each call: it names no job
description, résumé, variant or run; the response store maps it back), ``task`` (``seniority``
or ``fit``: it tells the endpoint which question is asked), ``resume``, ``job_description``
(None for the seniority task) and ``run`` (0 .. runs_per_cell - 1). It is rendered in Jinja2's sandbox with undefined names refused, and must
render to JSON unless ``headers`` sets another ``Content-Type``; ``| tojson`` quotes a text.
The key is read from ``api_key_env`` only, rendered only into ``headers`` and sent only to
``url``'s host (redirects are not followed). With ``api_key_env`` and no header using
``{{ api_key }}``, the key goes as ``Authorization: Bearer <key>``.

``answer`` says where in the JSON reply each part is: ``score`` (the fit task: a number 1-10),
``recommend`` (optional: yes, no or maybe, any case), ``label`` (the seniority task: a label,
or a mapping of the three labels to probabilities). The tasks a model serves are the ones its
paths give: ``score`` the fit task, ``label`` the seniority task. A path is a dotted path with
an optional ``$.`` and ``[n]`` indices (``$.result.scores[0].value``, ``result.score``), the
subset of JSONPath that names one value.

``version`` (optional) says where the tool reports which version answered, one of:
``{header: X-Model-Version}`` (a response header of each answer), ``{path: $.model.version}``
(a path in each answer's JSON) or ``{url: https://host/version, path: $.version}`` (a version
endpoint, asked with GET and the entry's headers; without ``path`` its body is the version). The
endpoint must be on ``url``'s scheme, host and port: the key goes to that host only. Each answer
is stored with the version it came from; ``model_alias_sensor`` reads the version (the
endpoint, or one ordinary scoring call) and re-audits the tool when it changes, as when a
provider's alias moves. A tool without a version source is re-audited on the weekly schedule.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.common.parsing import shown
from resumebias_dagster.core.models.scorer_answers import Answer, validate

METHODS = ("POST", "PUT")
ANSWER_PARTS = {"score": "fit", "recommend": "fit", "label": "seniority"}
VERSION_SOURCES = ("header", "path", "url")
BODY_VARIABLES = ("id", "task", "resume", "job_description", "run")
KEY_VARIABLE = "api_key"
# A body or header template: a few lines that place the variables (issue 40 capped it).
MAX_TEMPLATE_CHARS = 20_000
_SEGMENT = re.compile(r"\.([A-Za-z_0-9][\w-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")
_SAMPLE = {
    "id": "5f0c3a9e17b2d846",
    "task": "fit",
    "resume": 'Jane "Doe"\nEXPERIENCE',
    "job_description": "JD",
    "run": 0,
}


class HttpEndpointError(ValueError):
    """An http model's config is malformed, or an answer cannot be read; the message names the model."""


def parse_path(path: Any, where: str) -> tuple[str | int, ...]:
    """The keys and indices of a dotted path (``$.a.b[0]``, ``a.b.0``, ``$['a b']``)."""
    if not isinstance(path, str) or not path.strip():
        raise HttpEndpointError(f"{where}: a path such as $.result.score, got {path!r}")
    text = path.strip()
    text = text[1:] if text.startswith("$") else text
    text = text if text.startswith((".", "[")) else "." + text
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _SEGMENT.match(text, pos)
        if match is None:
            raise HttpEndpointError(
                f"{where}: path {path!r} is not a dotted path at {text[pos:]!r} (supported: $.a.b[0].c, a.b.0.c, "
                "$['a key']; no wildcards or filters)"
            )
        name, index, quoted = match.groups()
        if name is not None:
            parts.append(int(name) if name.isdigit() else name)
        else:
            parts.append(int(index) if index is not None else quoted)
        pos = match.end()
    return tuple(parts)


def read_path(document: Any, path: tuple[str | int, ...]) -> Any:
    """The value at ``path`` in ``document``; ``KeyError`` saying where the path stops."""
    value = document
    walked = "$"
    for part in path:
        if isinstance(part, int) and isinstance(value, list):
            if part >= len(value):
                raise KeyError(f"{walked} has {len(value)} item(s), no [{part}]")
            value = value[part]
            walked += f"[{part}]"
        elif isinstance(value, dict) and str(part) in value:
            value = value[str(part)]
            walked += f".{part}"
        else:
            keys = f"keys {shown(sorted(map(str, value))[:10])}" if isinstance(value, dict) else type(value).__name__
            raise KeyError(f"{walked} has no {part!r} (it holds {keys})")
    return value


def _environment():
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    # Sandboxed: a models file is data, and a template must not reach Python's objects.
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def _template(source: Any, where: str, allowed: tuple[str, ...]):
    from jinja2 import TemplateSyntaxError, meta, nodes

    if not isinstance(source, str):
        raise HttpEndpointError(f"{where} must be a Jinja2 template (text), got {type(source).__name__}")
    if len(source) > MAX_TEMPLATE_CHARS:
        raise HttpEndpointError(f"{where}: {len(source):,} characters; a template may have {MAX_TEMPLATE_CHARS:,}")
    env = _environment()
    try:
        tree = env.parse(source)
        names = meta.find_undeclared_variables(tree)
        template = env.from_string(source)
    except TemplateSyntaxError as exc:
        raise HttpEndpointError(f"{where}: not a valid Jinja2 template: {exc.message} (line {exc.lineno})") from None
    if any(True for _ in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends))):
        raise HttpEndpointError(f"{where}: a template may not include, import or extend another template")
    if any(True for _ in tree.find_all((nodes.For, nodes.Macro, nodes.CallBlock))):
        # A request needs no loop, and nested loops over a long text rendered for minutes (issue 40).
        raise HttpEndpointError(f"{where}: a template may not loop or define macros; it fills in the variables")
    unknown = sorted(names - set(allowed))
    if unknown:
        raise HttpEndpointError(f"{where} uses {', '.join(unknown)}; it may use {', '.join(allowed)}")
    return template, names


@functools.lru_cache(maxsize=64)
def _compiled(source: str):
    """A template already checked by ``endpoint_from_entry``, compiled once per process."""
    return _environment().from_string(source)


@dataclass(frozen=True)
class HttpVersion:
    """Where a tool reports its version: ``source`` ``header`` (``name`` the header), ``path``
    (``name`` the JSON path in each answer) or ``url`` (a version endpoint; ``name`` the path in
    its JSON reply, empty: its body is the version)."""

    source: str
    name: str
    url: str = ""

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.source, self.name, self.url)


def _check_version(version: Any, url: str, where: str) -> HttpVersion | None:
    if version is None:
        return None
    example = "version: {header: X-Model-Version}, {path: $.model.version} or {url: https://host/version}"
    if not isinstance(version, dict) or not version:
        raise HttpEndpointError(f"{where}: {example}, got {version!r}")
    unknown = sorted(set(map(str, version)) - {*VERSION_SOURCES})
    sources = [k for k in ("header", "url") if k in version] or (["path"] if "path" in version else [])
    if unknown or len(sources) != 1:
        raise HttpEndpointError(
            f"{where}: version takes one of header, path or url (url with an optional path); {example}"
        )
    source = sources[0]
    if "path" in version:
        parse_path(version["path"], f"{where}: version.path")
    if source == "header":
        name = version["header"]
        if (
            "path" in version
            or not isinstance(name, str)
            or not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}", name)
        ):
            raise HttpEndpointError(
                f"{where}: version.header must name one response header, e.g. X-Model-Version, got {name!r}"
            )
        return HttpVersion("header", name)
    if source == "path":
        return HttpVersion("path", str(version["path"]))
    from urllib.parse import urlsplit

    target = version["url"]
    if not isinstance(target, str) or "://" not in target:
        raise HttpEndpointError(f"{where}: version.url must be an http(s) URL, got {target!r}")
    a, b = urlsplit(target.strip()), urlsplit(url)
    if (a.scheme, a.hostname, a.port) != (b.scheme, b.hostname, b.port):
        raise HttpEndpointError(
            f"{where}: version.url must be on the scoring url's scheme, host and port ({b.scheme}://{b.netloc}): "
            "the entry's headers, and its key, go to that host only"
        )
    return HttpVersion("url", str(version.get("path") or ""), target.strip())


@dataclass(frozen=True)
class HttpEndpoint:
    """A checked ``kind: http`` entry: its request templates and answer paths."""

    model: str
    url: str
    method: str
    body: str
    headers: tuple[tuple[str, str], ...]
    answer: tuple[tuple[str, str], ...]
    has_key: bool
    version: HttpVersion | None = None

    @property
    def tasks(self) -> tuple[str, ...]:
        parts = dict(self.answer)
        return tuple(task for task, part in (("seniority", "label"), ("fit", "score")) if part in parts)

    @property
    def json_body(self) -> bool:
        ctype = next((v for k, v in self.headers if k.lower() == "content-type"), "application/json")
        return "json" in ctype.lower()

    def wire(self) -> dict[str, Any]:
        """What shapes the request beyond its item, for the store key: the method, the body
        template and the header templates (never the key's value)."""
        return {"method": self.method, "body": self.body, "headers": [list(h) for h in self.headers]}

    def render_body(self, item: dict[str, Any]) -> str:
        return _compiled(self.body).render(**item)

    def render_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {name: _compiled(source).render(api_key=api_key or "") for name, source in self.headers}
        if self.has_key and not any(KEY_VARIABLE in source for _, source in self.headers):
            headers["Authorization"] = f"Bearer {api_key}"
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"
        return headers

    def read_answer(self, text: str | None, task: str) -> Answer | str:
        """The answer of ``task`` in a reply body, or why it cannot be read (a row's reason)."""
        try:
            document = json.loads(text or "")
        except json.JSONDecodeError as exc:
            return f"the reply is not JSON ({exc.msg} at char {exc.pos})"
        except (ValueError, RecursionError) as exc:  # an integer of over 4,300 digits, a deep nesting
            return f"the reply cannot be read ({type(exc).__name__})"
        paths = dict(self.answer)
        try:
            if task == "seniority":
                value = read_path(document, parse_path(paths["label"], "answer.label"))
                raw = value.lower() if isinstance(value, str) else value
            else:
                score = read_path(document, parse_path(paths["score"], "answer.score"))
                raw = {"score": score}
                if "recommend" in paths:
                    recommend = read_path(document, parse_path(paths["recommend"], "answer.recommend"))
                    raw["recommend"] = recommend.lower() if isinstance(recommend, str) else recommend
        except KeyError as exc:
            return str(exc.args[0])
        return validate(raw, task)


def _check_answer(answer: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(answer, dict) or not answer:
        raise HttpEndpointError(
            f"{where}: answer must map the parts of the reply to their paths, e.g. answer: {{score: $.score}} "
            "(score for the fit task, label for the seniority task, recommend optional)"
        )
    unknown = sorted(set(map(str, answer)) - set(ANSWER_PARTS))
    if unknown:
        raise HttpEndpointError(
            f"{where}: answer has unknown part(s) {', '.join(unknown)}; parts: score, recommend, label"
        )
    if "recommend" in answer and "score" not in answer:
        raise HttpEndpointError(f"{where}: answer.recommend needs answer.score (the fit task's score)")
    for part, path in answer.items():
        parse_path(path, f"{where}: answer.{part}")
    return tuple((str(k), str(v)) for k, v in answer.items())


def _check_headers(headers: Any, where: str, has_key: bool) -> tuple[tuple[str, str], ...]:
    if headers is None:
        return ()
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise HttpEndpointError(f"{where}: headers must map header names to text, e.g. {{X-Team: audit}}")
    for name, source in headers.items():
        _, names = _template(source, f"{where}: headers.{name}", (KEY_VARIABLE,))
        if KEY_VARIABLE in names and not has_key:
            raise HttpEndpointError(
                f"{where}: headers.{name} uses {{{{ api_key }}}} but api_key_env names no environment variable"
            )
    return tuple(headers.items())


def endpoint_from_entry(entry: dict[str, Any], where: str) -> HttpEndpoint:
    """The checked endpoint of a ``kind: http`` entry; ``HttpEndpointError`` starting with ``where``."""
    url = entry.get("url")
    if not isinstance(url, str) or "://" not in url:
        raise HttpEndpointError(f"{where}: url must be an http(s) URL such as https://host/score, got {url!r}")
    method = str(entry.get("method", "POST")).upper()
    if method not in METHODS:
        raise HttpEndpointError(f"{where}: method {entry.get('method')!r} is not one of {', '.join(METHODS)}")
    key_env = entry.get("api_key_env")
    if key_env is not None and not isinstance(key_env, str):
        raise HttpEndpointError(f"{where}: api_key_env must name an environment variable, got {key_env!r}")
    has_key = bool(key_env)
    headers = _check_headers(entry.get("headers"), where, has_key)
    body_source = entry.get("body")
    _template(body_source, f"{where}: body", BODY_VARIABLES)
    endpoint = HttpEndpoint(
        model=str(entry.get("name")),
        url=url.strip(),
        method=method,
        body=str(body_source),
        headers=headers,
        answer=_check_answer(entry.get("answer"), where),
        has_key=has_key,
        version=_check_version(entry.get("version"), url.strip(), where),
    )
    from jinja2 import TemplateError

    try:
        rendered = endpoint.render_body(_SAMPLE)
    except TemplateError as exc:
        raise HttpEndpointError(f"{where}: body cannot be rendered: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - {{ 1/0 }} and the like: one line naming the model, never a traceback
        raise HttpEndpointError(f"{where}: body cannot be rendered ({type(exc).__name__}: {exc})") from None
    if endpoint.json_body:
        try:
            json.loads(rendered)
        except json.JSONDecodeError as exc:
            raise HttpEndpointError(
                f"{where}: body does not render to JSON ({exc.msg} at char {exc.pos} of {rendered[:120]!r}); "
                'quote texts with | tojson, e.g. {"resume": {{ resume | tojson }}}'
            ) from None
    return endpoint


def endpoint_of(spec: Any) -> HttpEndpoint:
    """The endpoint of a ``ModelSpec`` of kind http (checked when the models file was read)."""
    return endpoint_from_entry({"name": spec.name, **spec.options}, f"model {spec.name!r}")


def http_tasks(spec: Any) -> tuple[str, ...]:
    """The tasks an http model serves: those its answer paths give."""
    return endpoint_of(spec).tasks
