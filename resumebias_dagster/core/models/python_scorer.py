"""A Python function as a model (``kind: python``): an entry point of the user's environment.

An entry ``entry_point: package.module:function`` names a function importable where the audit
runs (``importlib``; nothing is installed). The contract:

- it is called as ``function(items)``, ``items`` a list of at most ``batch_size`` (default 32)
  dicts ``{"id": str, "task": "seniority" | "fit", "resume": str, "job_description": str | None}``
  (``job_description`` is None for the seniority task). ``id`` is opaque (16 hex digits, new for
  each item and call): it names no job description, résumé or variant, so the function cannot
  tell audit items apart by it. The items come in a shuffled order (seeded by ``order_seed``,
  default 0), not grouped by résumé;
- it returns a list of the same length, in the same order, one result per item:

  - task ``seniority``: a label (``"junior"``, ``"mid"`` or ``"senior"``), or a mapping of each
    of the three labels to its probability (a distribution summing to 1 within 1e-6);
  - task ``fit``: a number from 1 to 10, or a mapping ``{"score": number, "recommend":
    "yes" | "no" | "maybe"}`` (``recommend`` optional).

Anything else (a list of another length, a bad label or distribution, a score outside 1-10, an
exception raised by the function) stops the whole run with a ``ValueError`` naming the model,
the entry point and the item: a user's function that fails is a configuration problem, not
noise to be counted. The function is called once per item; its answer stands for every run of
a cell (a distribution is sampled ``runs_per_cell`` times, as a classifier's is). Each batch is
timed: a row's ``latency_s`` is the batch's seconds over its size.
"""

from __future__ import annotations

import hashlib
import importlib
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from resumebias_dagster.core.common.blinding import opaque_id
from resumebias_dagster.core.models.scorer_answers import Answer, validate

DEFAULT_BATCH_SIZE = 32
TASKS = ("seniority", "fit")
ENTRY_POINT = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")
ENTRY_POINT_FORM = "package.module:function"


class PythonModelError(ValueError):
    """A Python-function model cannot be loaded or gave an answer outside the contract."""


def _where(model: str, entry_point: str) -> str:
    return f"models.{model} (kind python, entry_point {entry_point!r})"


def load_entry_point(entry_point: Any, model: str) -> Callable[[list[dict[str, Any]]], Any]:
    """The callable named by ``package.module:function`` (a dotted attribute path after the colon)."""
    where = _where(model, str(entry_point))
    if not isinstance(entry_point, str) or not ENTRY_POINT.match(entry_point):
        raise PythonModelError(f"{where}: entry_point must have the form {ENTRY_POINT_FORM}, got {entry_point!r}")
    module_name, attr_path = entry_point.split(":")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any failure of a user's import is reported as one
        raise PythonModelError(f"{where}: module {module_name!r} does not import: {type(exc).__name__}: {exc}") from exc
    for part in attr_path.split("."):
        if not hasattr(target, part):
            raise PythonModelError(f"{where}: module {module_name!r} has no attribute {attr_path!r}")
        target = getattr(target, part)
    if not callable(target):
        raise PythonModelError(f"{where}: {attr_path!r} is a {type(target).__name__}, not a callable")
    return target


def batch_size_of(value: Any, model: str) -> int:
    if value is None:
        return DEFAULT_BATCH_SIZE
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PythonModelError(f"models.{model}: batch_size {value!r} must be a positive integer")
    return value


def blind_order(items: Sequence[dict[str, Any]], seed: int) -> list[int]:
    """The positions of ``items`` in a shuffled order that depends only on ``seed`` and the
    items' ids: no résumé's variants go to the function together."""
    digest = hashlib.sha256(f"{seed}|{'|'.join(sorted(str(i['id']) for i in items))}".encode()).hexdigest()
    order = list(range(len(items)))
    random.Random(digest).shuffle(order)
    return order


def score_items(spec, items: Sequence[dict[str, Any]]) -> list[Answer]:
    """The validated answers of model ``spec`` (kind python) to ``items``, in order, called in
    batches of its ``batch_size`` in a shuffled order with opaque ids; ``PythonModelError``
    naming the model, entry point and item (by our id: the message is ours, not the function's)."""
    entry_point = spec.option("entry_point")
    function = load_entry_point(entry_point, spec.name)
    size = batch_size_of(spec.option("batch_size"), spec.name)
    where = _where(spec.name, entry_point)
    order = blind_order(items, spec.option("order_seed") or 0)
    answers: dict[int, Answer] = {}
    for start in range(0, len(order), size):
        positions = order[start : start + size]
        # The function sees an opaque id; our id (job description, résumé, variant) stays here.
        batch = [{**items[p], "id": opaque_id()} for p in positions]
        ids = ", ".join(repr(items[p]["id"]) for p in positions[:3]) + (", ..." if len(batch) > 3 else "")
        began = time.perf_counter()
        try:
            results = function(batch)
        except Exception as exc:  # noqa: BLE001 - the user's function failing stops the run, named
            raise PythonModelError(
                f"{where}: raised {type(exc).__name__}: {exc} on the batch of item(s) {ids}"
            ) from exc
        per_item = (time.perf_counter() - began) / len(batch)
        if not isinstance(results, (list, tuple)) or len(results) != len(batch):
            got = f"{len(results)} results" if isinstance(results, (list, tuple)) else type(results).__name__
            raise PythonModelError(
                f"{where}: returned {got} for a batch of {len(batch)} item(s) {ids}; it must return a list "
                "with one result per item, in order"
            )
        for position, item, result in zip(positions, batch, results):
            answer = validate(result, item["task"])
            if isinstance(answer, str):
                raise PythonModelError(f"{where}: item {items[position]['id']!r} (task {item['task']}): {answer}")
            answers[position] = Answer(answer.probs, answer.label, answer.score, answer.recommend, latency_s=per_item)
    return [answers[position] for position in range(len(items))]


def resolved_model(spec) -> str:
    """What the rows name as the model that answered: the entry point."""
    return f"python:{spec.option('entry_point')}"
