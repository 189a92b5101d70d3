"""The models config: every model the audit runs, one partition each.

One YAML file (packaged ``catalog/models.yaml`` by default; ``RESUMEBIAS_MODELS_FILE`` names
another packaged file such as ``models_gpu.yaml`` or a path) lists each model with its kind:

- ``local-llm``: an embedded causal LM that classifies by scoring label words (``source``).
- ``fine-tuned``: a sequence classifier fine-tuned here from ``base_model`` (``training``).
- ``provider``: a model behind an API (``provider``, ``model``, ``api_key_env``, limits).
- ``python``: a function of the user's environment (``entry_point: package.module:function``,
  optional ``batch_size`` and ``order_seed``); its contract is in ``core/models/python_scorer.py``.
- ``http``: a scoring endpoint of the user's (``url``, ``body`` template, ``answer`` paths,
  optional ``method``, ``headers``, ``api_key_env``, limits, pacing ``min_interval_s`` and
  ``order_seed``); ``core/models/http_endpoint.py``.
- ``hf-classifier``: a Hugging Face sequence classifier from a folder (or the hub with
  ``allow_download: true``) that labels seniority; ``labels`` maps each of its labels to a
  seniority level; ``core/models/hf_classifier.py``.

An optional top-level ``judges`` list names the LLM-as-judge of the audit (study 003) by the
names of provider entries: the first is the judge, an optional second a second judge whose
verdicts are compared with the first's. A judge entry may be ``enabled: false``: it then
judges without being audited itself. An empty or absent list means no judge.

Output-token limits are per task (seniority label, fit JSON, judge JSON, generation): a provider
entry's ``max_tokens`` is a mapping of task to limit (``{seniority: 16, fit: 1024}``); a task
left out gets its package default. Every task's default and minimum are declared once, in
``core/models/task_tokens.py`` (``TaskTokens``). One rule for
every entry and task: a limit below the task's minimum cannot hold its answer and the file is
refused when read, naming the file, the model, the task, the limit and the minimum. A bare
number is one limit for every task, accepted only when it holds every task's answer (which
tasks a model serves is partly chosen at run time: ``generator_model``); else it is refused
with the per-task spelling.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from resumebias_dagster.catalog import CatalogError, catalog_path, yaml_problem
from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.models.task_tokens import TASK_TOKENS, TaskTokens
from resumebias_dagster.settings import MODELS_FILE_ENV
from resumebias_dagster.settings import models_file as models_file_setting

DEFAULT_MODELS_FILE = "models.yaml"
KINDS = ("local-llm", "fine-tuned", "provider", "python", "http", "hf-classifier")
PROVIDERS = ("openai", "google", "anthropic")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")

_COMMON = {"name", "kind", "temperature", "runs_per_cell", "enabled", "description"}
_KIND_FIELDS = {
    "local-llm": {"source", "batch_size", "max_prompt_chars"},
    "fine-tuned": {"base_model", "training"},
    "provider": {
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
    },
    "python": {"entry_point", "batch_size", "order_seed"},
    "http": {
        "url",
        "method",
        "body",
        "headers",
        "api_key_env",
        "answer",
        "max_concurrency",
        "requests_per_minute",
        "timeout_s",
        "max_retries",
        "retry_timeouts",
        "retry_initial_delay_s",
        "min_interval_s",
        "order_seed",
        "allow_any_key_env",
        "allow_host_header",
    },
    "hf-classifier": {"source", "labels", "max_length", "batch_size", "allow_download"},
}
_REQUIRED = {
    "local-llm": {"source"},
    "fine-tuned": {"base_model"},
    "provider": {"provider", "model"},
    "python": {"entry_point"},
    "http": {"url", "body", "answer"},
    "hf-classifier": {"source", "labels"},
}
# Kinds that answer once per item and repeat it for every run unless told otherwise: one run
# and no temperature by default (a classifier's distribution is still sampled at temperature 0).
_DETERMINISTIC_KINDS = ("fine-tuned", "hf-classifier", "http")
# ``package.module:function`` (a dotted attribute path after the colon).
_ENTRY_POINT = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
MAX_JUDGES = 2
TRAINING_FIELDS = {
    "max_length",
    "epochs",
    "batch_size",
    "learning_rate",
    "weight_decay",
    "warmup_ratio",
    "heldout_fraction",
    "seed",
}


class ModelConfigError(ValueError):
    """The models config is malformed; the message names the file and the entry."""


def task_tokens() -> dict[str, TaskTokens]:
    """Every task's ``TaskTokens``, in the order of ``TASKS`` (``core/models/task_tokens.py``)."""
    return dict(TASK_TOKENS)


def default_max_tokens() -> dict[str, int]:
    """Each task's default limit: what a provider entry without ``max_tokens`` sends."""
    return {task: t.default for task, t in task_tokens().items()}


def _flow(limits: dict[str, int]) -> str:
    return "{" + ", ".join(f"{task}: {limit}" for task, limit in limits.items()) + "}"


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def resolve_max_tokens(value: Any, where: str) -> dict[str, int]:
    """The limit of every task from an entry's ``max_tokens`` (absent: ``...``), each checked
    against its task's minimum; ``ModelConfigError`` starting with ``where`` otherwise."""
    tokens = task_tokens()
    defaults = {task: t.default for task, t in tokens.items()}
    if value is ...:
        return defaults
    if value is None:
        raise ModelConfigError(
            f"{where}: max_tokens: null; leave max_tokens out for every task's default {_flow(defaults)}, "
            "or give a limit per task, e.g. max_tokens: {seniority: 16, fit: 1024}"
        )
    if not isinstance(value, dict):
        number = _whole(value)
        if number is None:
            raise ModelConfigError(
                f"{where}: max_tokens must be a mapping of task to limit (e.g. max_tokens: {{seniority: 16, fit: 1024}}) "
                f"or one whole number for every task, got {value!r}"
            )
        short = {task: t.minimum for task, t in tokens.items() if number < t.minimum}
        if short:
            held = {task: number for task in tokens if task not in short}
            example = _flow(held) if held else _flow({"seniority": tokens["seniority"].default})
            raise ModelConfigError(
                f"{where}: max_tokens: {value} is one limit for every task, and too few for "
                + ", ".join(f"{task} (at least {minimum})" for task, minimum in short.items())
                + f"; write it per task, e.g. max_tokens: {example} (tasks left out keep their defaults: "
                + ", ".join(f"{task} {limit}" for task, limit in defaults.items())
                + ")"
            )
        return {task: number for task in tokens}
    unknown = [str(k) for k in value if k not in tokens]
    if unknown:
        raise ModelConfigError(
            f"{where}: max_tokens has unknown task(s) {', '.join(unknown)}; the tasks are {', '.join(tokens)}"
        )
    limits = dict(defaults)
    for task, raw in value.items():
        number = _whole(raw)
        if number is None:
            raise ModelConfigError(f"{where}: max_tokens.{task} must be a whole number of tokens, got {raw!r}")
        t = tokens[task]
        if number < t.minimum:
            raise ModelConfigError(
                f"{where}: max_tokens.{task} is {number}, too few for the {task} task's answer ({t.answer}): "
                f"at least {t.minimum} (the default is {t.default})"
            )
        limits[task] = number
    return limits


@dataclass(frozen=True)
class ModelSpec:
    name: str
    kind: str
    temperature: float
    runs_per_cell: int
    options: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)


# The tasks each kind can run; an http model runs those its answer paths give (``tasks_of``).
KIND_TASKS = {
    "local-llm": ("seniority", "fit"),
    "provider": ("seniority", "fit"),
    "python": ("seniority", "fit"),
    "fine-tuned": ("seniority",),
    "hf-classifier": ("seniority",),
}


def tasks_of(spec: ModelSpec) -> tuple[str, ...]:
    """The tasks (seniority, fit) model ``spec`` can run: what its partitions are made of."""
    if spec.kind == "http":
        from resumebias_dagster.core.models.http_endpoint import http_tasks

        return http_tasks(spec)
    return KIND_TASKS[spec.kind]


def models_of_kind(specs: Sequence[ModelSpec], kind: str) -> list[ModelSpec]:
    """The entries of ``specs`` of one kind (``KINDS``), in the config's order."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    return [s for s in specs if s.kind == kind]


def models_file(path: str | os.PathLike | None = None, catalog_dir=None) -> Path:
    """The models file in use, chosen only by explicit settings.

    ``path`` (a caller's setting), else ``$RESUMEBIAS_MODELS_FILE``, else ``models.yaml`` of
    the catalog folder (``catalog_dir`` or ``$RESUMEBIAS_CATALOG_DIR``), else the packaged
    one. A bare file name (``models_gpu.yaml``) is a catalog file (user folder first, then
    packaged); a file of one's own is named by a path (``./models.yaml``, ``/etc/audit/m.yaml``).
    A ``models.yaml`` that merely sits in the working directory is never read: a cloned
    repository could otherwise point the user's keys at a host of its choosing.
    """
    explicit = str(path) if path else models_file_setting()
    setting = "the models_file setting" if path else MODELS_FILE_ENV
    if not explicit:
        try:
            return catalog_path(DEFAULT_MODELS_FILE, catalog_dir)
        except CatalogError as exc:
            raise ModelConfigError(str(exc)) from exc
    if "/" not in explicit and os.sep not in explicit and not explicit.startswith("~"):
        try:
            return catalog_path(explicit, catalog_dir)
        except CatalogError:
            raise ModelConfigError(
                f"models file {explicit!r} (set by {setting}) is not a catalog file; name a file of your own by "
                f"its path, e.g. ./{explicit}"
            ) from None
    file = Path(explicit).expanduser().absolute()
    if not file.is_file():
        raise ModelConfigError(f"models file {file} does not exist (set by {setting})")
    return file


def _read_yaml(file: Path) -> Any:
    try:
        return yaml.safe_load(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ModelConfigError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise ModelConfigError(f"{file}: not valid YAML: {yaml_problem(exc)}") from None


def _check_blind(entry: dict[str, Any], where: str) -> None:
    """A screener's pacing (the least seconds between two calls) and the seed of its calls'
    shuffled order, each optional."""
    interval = entry.get("min_interval_s")
    if "min_interval_s" in entry and (
        isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0
    ):
        raise ModelConfigError(f"{where}: min_interval_s must be a number of seconds > 0, got {interval!r}")
    seed = entry.get("order_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ModelConfigError(f"{where}: order_seed must be a whole number >= 0, got {seed!r}")


def _check_callers(kind: str, entry: dict[str, Any], where: str) -> None:
    """The kinds that call out (provider, http) or import (python): what they may reach, their
    pacing and order, their entry point and their endpoint."""
    from resumebias_dagster.core.models.http_endpoint import HttpEndpointError, endpoint_from_entry
    from resumebias_dagster.core.models.trust import ModelTrustError, check_reach

    try:
        if kind in ("provider", "http"):
            check_reach(entry, where)
        if kind in ("python", "http"):
            _check_blind(entry, where)
        if kind == "python":
            _check_python(entry, where)
        if kind == "http":
            endpoint_from_entry(entry, where)
    except (ModelTrustError, HttpEndpointError) as exc:
        raise ModelConfigError(str(exc)) from None


def _check_python(entry: dict[str, Any], where: str) -> None:
    entry_point = entry["entry_point"]
    if not isinstance(entry_point, str) or not _ENTRY_POINT.match(entry_point):
        raise ModelConfigError(f"{where}: entry_point must have the form package.module:function, got {entry_point!r}")
    size = entry.get("batch_size", 1)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ModelConfigError(f"{where}: batch_size {size!r} must be a positive integer")


def _check_hf_classifier(entry: dict[str, Any], where: str) -> None:
    source = entry["source"]
    if not isinstance(source, str) or not source.strip():
        raise ModelConfigError(f"{where}: source must be a folder, pypi:<package>/<folder> or a hub id, got {source!r}")
    labels = entry["labels"]
    levels = list(SENIORITY_LEVELS)
    if not isinstance(labels, dict) or not labels:
        raise ModelConfigError(
            f"{where}: labels must map each label of the classifier to a seniority level "
            f"({', '.join(levels)}), e.g. labels: {{LABEL_0: junior, LABEL_1: mid, LABEL_2: senior}}"
        )
    bad = {str(k): v for k, v in labels.items() if v not in levels}
    if bad:
        raise ModelConfigError(f"{where}: labels {bad} map to no seniority level; the levels are {', '.join(levels)}")
    unmapped = [level for level in levels if level not in labels.values()]
    if unmapped:
        raise ModelConfigError(
            f"{where}: labels map no classifier label to {', '.join(unmapped)}; every level needs one"
        )
    for key in ("max_length", "batch_size"):
        value = entry.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelConfigError(f"{where}: {key} {value!r} must be a positive integer")
    if not isinstance(entry.get("allow_download", False), bool):
        raise ModelConfigError(f"{where}: allow_download must be true or false, got {entry['allow_download']!r}")


def parse_models(data: Any, source: str) -> list[ModelSpec]:
    """Validate the parsed YAML of a models file; every error names ``source`` and the entry."""
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ModelConfigError(f"{source}: expected a mapping with a list under 'models'")
    specs: list[ModelSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(data["models"]):
        where = f"{source}: models[{i}]"
        if not isinstance(entry, dict):
            raise ModelConfigError(f"{where}: expected a mapping, got {type(entry).__name__}")
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ModelConfigError(
                f"{where}: name {name!r} must be 1-63 characters of a-z, 0-9, '.', '_' or '-' (it is a partition key)"
            )
        where = f"{source}: model {name!r}"
        if name in seen:
            raise ModelConfigError(f"{where}: defined twice")
        seen.add(name)
        kind = entry.get("kind")
        if kind not in KINDS:
            raise ModelConfigError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
        unknown = set(entry) - _COMMON - _KIND_FIELDS[kind]
        if unknown:
            raise ModelConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))} for kind {kind}")
        missing = _REQUIRED[kind] - set(entry)
        if missing:
            raise ModelConfigError(f"{where}: missing setting(s) {', '.join(sorted(missing))} for kind {kind}")
        deterministic = kind in _DETERMINISTIC_KINDS
        temperature = entry.get("temperature", 0.0 if deterministic else 0.7)
        runs = entry.get("runs_per_cell", 1 if deterministic else 5)
        if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not 0 <= temperature <= 2:
            raise ModelConfigError(f"{where}: temperature {temperature!r} must be a number in [0, 2]")
        if not isinstance(runs, int) or isinstance(runs, bool) or not 1 <= runs <= 1000:
            raise ModelConfigError(f"{where}: runs_per_cell {runs!r} must be an integer in [1, 1000]")
        if kind == "provider" and entry["provider"] not in PROVIDERS:
            raise ModelConfigError(
                f"{where}: provider {entry['provider']!r} is not one of {', '.join(PROVIDERS)} "
                "(OpenAI-compatible APIs such as OpenRouter, Groq, Mistral, vLLM or Ollama use 'openai' with base_url)"
            )
        _check_callers(kind, entry, where)
        if kind == "hf-classifier":
            _check_hf_classifier(entry, where)
        if kind == "fine-tuned":
            training = entry.get("training") or {}
            if not isinstance(training, dict) or set(training) - TRAINING_FIELDS:
                bad = sorted(set(training) - TRAINING_FIELDS) if isinstance(training, dict) else training
                raise ModelConfigError(
                    f"{where}: training has unknown setting(s) {bad}; allowed: {sorted(TRAINING_FIELDS)}"
                )
        options = {k: v for k, v in entry.items() if k not in _COMMON}
        if kind == "provider":
            options["max_tokens"] = resolve_max_tokens(entry.get("max_tokens", ...), where)
        specs.append(
            ModelSpec(
                name=name,
                kind=kind,
                temperature=float(temperature),
                runs_per_cell=int(runs),
                options=options,
                enabled=bool(entry.get("enabled", True)),
            )
        )
    return specs


def load_models(
    path: str | os.PathLike | None = None, catalog_dir=None, include_disabled: bool = False
) -> list[ModelSpec]:
    file = models_file(path, catalog_dir)
    data = _read_yaml(file)
    specs = parse_models(data, str(file))
    return specs if include_disabled else [s for s in specs if s.enabled]


def model_by_name(name: str, path=None, catalog_dir=None) -> ModelSpec:
    for spec in load_models(path, catalog_dir):
        if spec.name == name:
            return spec
    raise ModelConfigError(f"{models_file(path, catalog_dir)}: no enabled model named {name!r}")


def parse_judges(data: Any, source: str, specs: list[ModelSpec] | None = None) -> list[ModelSpec]:
    """The judges named under ``judges`` in the parsed YAML of a models file, in order.

    ``specs``: the file's models (``parse_models(data, source)`` when not given), disabled
    ones included. Every error names ``source``.
    """
    specs = parse_models(data, source) if specs is None else specs
    names = data.get("judges") if isinstance(data, dict) else None
    if names is None:
        return []
    where = f"{source}: judges"
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ModelConfigError(
            f"{where}: expected a list of model names (the first is the judge, an optional second a second judge)"
        )
    if len(names) > MAX_JUDGES:
        raise ModelConfigError(f"{where}: at most {MAX_JUDGES} judges (a judge and a second judge), got {len(names)}")
    if len(set(names)) < len(names):
        raise ModelConfigError(f"{where}: {names} names a model twice")
    by_name = {s.name: s for s in specs}
    judges = []
    for name in names:
        spec = by_name.get(name)
        if spec is None:
            raise ModelConfigError(
                f"{where}: {name!r} is not a model of this file; a judge is a provider entry under 'models' "
                f"(it may be enabled: false). Provider entries: {', '.join(s.name for s in specs if s.kind == 'provider') or 'none'}"
            )
        if spec.kind != "provider":
            raise ModelConfigError(f"{where}: {name!r} is a {spec.kind} model; a judge must be a provider entry")
        # Its judge limit was checked with every entry's (parse_models): one rule for all tasks.
        judges.append(spec)
    return judges


def load_judges(path: str | os.PathLike | None = None, catalog_dir=None) -> list[ModelSpec]:
    """The judges of the models file in use (see the module docstring); ``[]`` when none."""
    file = models_file(path, catalog_dir)
    data = _read_yaml(file)
    return parse_judges(data, str(file))
