"""The registry of model kinds: one module per kind, each building one ``ModelKind``.

The built-in kinds are the modules of this package; a package of the user's adds a kind by
declaring it under the entry-point group ``resumebias_dagster.model_kinds``
(``toy = "my_package.toy_kind:KIND"``), or a program by ``register_kind``. The models config
(``model_config``), the partitions and the task dispatcher (``run_task``) read kinds from here
alone. An entry point is code of an installed package, trusted as the package is: installing
it is the user's choice, as a ``kind: python`` entry point is.
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points
from typing import Any

from resumebias_dagster.core.models.kinds import fine_tuned, hf_classifier, http, local_llm, provider, python_function
from resumebias_dagster.core.models.kinds.base import (
    COMMON_FIELDS,
    TASK_VERBS,
    ModelKind,
    ModelKindError,
    TaskWork,
)
from resumebias_dagster.core.models.spec import ModelSpec

ENTRY_POINT_GROUP = "resumebias_dagster.model_kinds"
BUILT_IN = tuple(m.KIND for m in (local_llm, fine_tuned, provider, python_function, http, hf_classifier))
_registered: dict[str, ModelKind] = {}

__all__ = [
    "BUILT_IN",
    "COMMON_FIELDS",
    "ENTRY_POINT_GROUP",
    "TASK_VERBS",
    "ModelKind",
    "ModelKindError",
    "TaskWork",
    "kind_names",
    "kind_of",
    "kinds",
    "register_kind",
    "run_task",
]


def register_kind(kind: ModelKind) -> ModelKind:
    """Add ``kind`` to the registry (a kind of the same name already there is refused)."""
    if not isinstance(kind, ModelKind):
        raise ModelKindError(f"register_kind takes a ModelKind, got {type(kind).__name__}")
    if kind.name in kinds() and kinds()[kind.name] is not kind:
        raise ModelKindError(f"model kind {kind.name!r} is registered twice")
    _registered[kind.name] = kind
    return kind


@functools.cache
def _installed() -> dict[str, ModelKind]:
    """The kinds installed packages declare (entry-point group ``ENTRY_POINT_GROUP``)."""
    found: dict[str, ModelKind] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {point.name} = {point.value} (group {ENTRY_POINT_GROUP})"
        try:
            kind = point.load()
        except Exception as exc:  # an installed package's import error, named as such
            raise ModelKindError(f"{where}: cannot be loaded: {type(exc).__name__}: {exc}") from None
        if not isinstance(kind, ModelKind):
            raise ModelKindError(f"{where}: is a {type(kind).__name__}, not a ModelKind")
        if kind.name in {k.name for k in BUILT_IN} or kind.name in found:
            raise ModelKindError(f"{where}: kind {kind.name!r} is already declared")
        found[kind.name] = kind
    return found


def kinds() -> dict[str, ModelKind]:
    """Every kind by name: the built-in ones, then the installed ones, then the registered."""
    return {**{k.name: k for k in BUILT_IN}, **_installed(), **_registered}


def kind_names() -> tuple[str, ...]:
    return tuple(kinds())


def kind_of(name: str) -> ModelKind:
    known = kinds()
    if name not in known:
        raise ModelKindError(f"kind {name!r} is not one of {', '.join(known)}")
    return known[name]


def run_task(spec: ModelSpec, work: TaskWork, runtime: Any, progress: Any = None) -> tuple[Any, Any]:
    """Rows of model ``spec`` for ``work`` (one task on its inputs), conformed to the task's
    table, and the transport run's stats (None for a model that runs here): the one path by
    which every task runs on every kind."""
    from resumebias_dagster.core.tables import conform

    kind = kind_of(spec.kind)
    tasks = kind.tasks_for(spec)
    if work.task not in tasks:
        raise ValueError(
            f"models.{spec.name}.kind: {spec.kind!r} cannot {TASK_VERBS[work.task]} "
            f"(a {spec.kind} model can {' and '.join(TASK_VERBS[t] for t in tasks)})"
        )
    frame, stats = kind.predict(spec, work, runtime, progress)
    return conform(frame, work.table), stats
