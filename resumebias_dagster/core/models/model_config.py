"""The models config: every model the audit runs, one partition each.

One YAML file (packaged ``catalog/models.yaml`` by default; ``RESUMEBIAS_MODELS_FILE`` names
another packaged file such as ``models_gpu.yaml`` or a path) lists each model with its kind. A
kind is one module of ``core/models/kinds/`` (``local-llm``, ``fine-tuned``, ``provider``,
``python``, ``http``, ``hf-classifier``; an installed package may add one through the entry-point
group ``resumebias_dagster.model_kinds``): the settings its entries accept, the tasks it runs,
its defaults and its checks. This module reads the file and applies them.

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
from pathlib import Path
from typing import Any

import yaml

from resumebias_dagster.catalog import CatalogError, catalog_path, yaml_problem
from resumebias_dagster.core.models.kinds import COMMON_FIELDS, ModelKindError, kind_names, kind_of
from resumebias_dagster.core.models.kinds.fine_tuned import TRAINING_FIELDS
from resumebias_dagster.core.models.kinds.provider import PROVIDERS
from resumebias_dagster.core.models.spec import ModelConfigError, ModelSpec
from resumebias_dagster.core.models.task_tokens import default_max_tokens, resolve_max_tokens, task_tokens
from resumebias_dagster.settings import MODELS_FILE_ENV
from resumebias_dagster.settings import models_file as models_file_setting

__all__ = [
    "PROVIDERS",
    "TRAINING_FIELDS",
    "ModelConfigError",
    "ModelSpec",
    "default_max_tokens",
    "load_judges",
    "load_models",
    "model_by_name",
    "models_file",
    "models_of_kind",
    "parse_judges",
    "parse_models",
    "resolve_max_tokens",
    "task_tokens",
    "tasks_of",
]

DEFAULT_MODELS_FILE = "models.yaml"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
MAX_JUDGES = 2


def tasks_of(spec: ModelSpec) -> tuple[str, ...]:
    """The tasks (seniority, fit, ranking) model ``spec`` can run: what its partitions are made of."""
    return kind_of(spec.kind).tasks_for(spec)


def models_of_kind(specs: Sequence[ModelSpec], kind: str) -> list[ModelSpec]:
    """The entries of ``specs`` of one kind (``kinds.kind_names()``), in the config's order."""
    kind_of(kind)
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


def parse_models(data: Any, source: str) -> list[ModelSpec]:
    """Validate the parsed YAML of a models file; every error names ``source`` and the entry.
    What each kind accepts is its ``ModelKind`` (``core/models/kinds/``)."""
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
        specs.append(_parse_entry(entry, name, where))
    return specs


def _parse_entry(entry: dict[str, Any], name: str, where: str) -> ModelSpec:
    try:
        kind = kind_of(entry.get("kind"))  # type: ignore[arg-type]
    except (ModelKindError, TypeError):
        raise ModelConfigError(f"{where}: kind {entry.get('kind')!r} is not one of {', '.join(kind_names())}") from None
    unknown = set(entry) - COMMON_FIELDS - kind.fields
    if unknown:
        raise ModelConfigError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))} for kind {kind.name}")
    missing = kind.required - set(entry)
    if missing:
        raise ModelConfigError(f"{where}: missing setting(s) {', '.join(sorted(missing))} for kind {kind.name}")
    # A kind that answers once per item repeats it for every run unless told otherwise: one run
    # and no temperature by default (a classifier's distribution is still sampled at temperature 0).
    temperature = entry.get("temperature", 0.0 if kind.deterministic else 0.7)
    runs = entry.get("runs_per_cell", 1 if kind.deterministic else 5)
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not 0 <= temperature <= 2:
        raise ModelConfigError(f"{where}: temperature {temperature!r} must be a number in [0, 2]")
    if not isinstance(runs, int) or isinstance(runs, bool) or not 1 <= runs <= 1000:
        raise ModelConfigError(f"{where}: runs_per_cell {runs!r} must be an integer in [1, 1000]")
    succeeds = entry.get("succeeds", "")
    if not isinstance(succeeds, str) or (succeeds and not _NAME.match(succeeds)) or succeeds == name:
        raise ModelConfigError(
            f"{where}: succeeds {succeeds!r} must name the model this one replaces (another model's name; "
            "it may have left the file)"
        )
    if kind.check is not None:
        kind.check(entry, where)
    options = {k: v for k, v in entry.items() if k not in COMMON_FIELDS}
    if kind.options is not None:
        options.update(kind.options(entry, where))
    return ModelSpec(
        name=name,
        kind=kind.name,
        temperature=float(temperature),
        runs_per_cell=int(runs),
        options=options,
        enabled=bool(entry.get("enabled", True)),
        succeeds=succeeds,
    )


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
