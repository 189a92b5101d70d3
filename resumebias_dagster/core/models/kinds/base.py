"""What a model kind declares (``ModelKind``) and what a task offers every kind (``TaskWork``).

A kind is one module of this package (or of an installed package, through the entry-point
group ``resumebias_dagster.model_kinds``) that builds one ``ModelKind``: the settings its
entries accept, the tasks it can run, whether it answers the same each time, how its entries
are checked, and its ``predict``: one function for every task, that calls the answer
forms of the ``TaskWork`` it is given (a chat prompt, a distribution from an embedded LLM, a
scorer's answers, a classifier's label probabilities), and each task (``core/seniority``,
``core/jd_audit``, ``core/ranking``) implements the forms it can read. So a kind that answers
in a form the tasks already read needs no change anywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from resumebias_dagster.core.models.spec import ModelSpec

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from resumebias_dagster.core.models.runtime import ModelRuntime, Progress
    from resumebias_dagster.core.models.scorer_answers import Answer

# Every task a model can run, each with what it does in a sentence's words.
TASK_VERBS = {
    "seniority": "label seniority",
    "fit": "score fit",
    "ranking": "rank candidates",
    "pairwise": "choose the more qualified of two candidates",
}
# ``succeeds``: the model this one replaces (its first audit is compared with that model's last).
COMMON_FIELDS = frozenset({"name", "kind", "temperature", "runs_per_cell", "enabled", "description", "succeeds"})
_KIND_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")

# (spec, the task's work, the runtime, progress) -> (rows, the transport run's stats or None)
Predict = Callable[[ModelSpec, "TaskWork", "ModelRuntime", "Progress | None"], "tuple[pd.DataFrame, Any]"]


class ModelKindError(ValueError):
    """A kind's declaration is malformed, or two kinds share a name."""


@dataclass(frozen=True)
class ModelKind:
    """One kind of model: what its entries in the models file may say, and how it runs a task.

    ``check(entry, where)`` raises ``ModelConfigError`` (its message starting with ``where``)
    for an entry it refuses; ``options(entry, where)`` returns settings normalised for the
    kind's predict (e.g. a provider's ``max_tokens`` per task); ``tasks_of(spec)`` narrows ``tasks``
    per entry (an http endpoint runs the tasks its answer paths read); ``ui_kind(spec)`` is
    the kind tag its assets show in Dagster's UI (``dagster/kind/...``)."""

    name: str
    summary: str
    fields: frozenset[str]
    required: frozenset[str]
    tasks: tuple[str, ...]
    predict: Predict
    deterministic: bool = False
    check: Callable[[dict[str, Any], str], None] | None = None
    options: Callable[[dict[str, Any], str], dict[str, Any]] | None = None
    tasks_of: Callable[[ModelSpec], tuple[str, ...]] | None = None
    ui_kind: Callable[[ModelSpec], str] | None = None

    def __post_init__(self) -> None:
        where = f"model kind {self.name!r}"
        if not isinstance(self.name, str) or not _KIND_NAME.match(self.name):
            raise ModelKindError(
                f"{where}: a kind's name is 1-32 characters of a-z, 0-9 and '-', starting with a letter"
            )
        if shared := self.fields & COMMON_FIELDS:
            raise ModelKindError(f"{where}: fields {sorted(shared)} are common to every kind; leave them out")
        if extra := self.required - self.fields:
            raise ModelKindError(f"{where}: required {sorted(extra)} are not among its fields")
        if not self.tasks or set(self.tasks) - set(TASK_VERBS):
            raise ModelKindError(f"{where}: tasks {list(self.tasks)} must be some of {', '.join(TASK_VERBS)}")
        if not callable(self.predict):
            raise ModelKindError(f"{where}: predict must be a function (spec, work, runtime, progress)")

    def tasks_for(self, spec: ModelSpec) -> tuple[str, ...]:
        """The tasks entry ``spec`` of this kind can run: what its partitions are made of."""
        return self.tasks_of(spec) if self.tasks_of is not None else self.tasks

    def tag(self, spec: ModelSpec) -> str:
        """The kind tag an asset holding this entry's answers shows in the UI."""
        return self.ui_kind(spec) if self.ui_kind is not None else "python"


class TaskWork:
    """One task's work for one model: what it is given and how each form of answer becomes rows.

    A task implements the forms it can read; a form it cannot read refuses with the task's
    words (a classifier's label probabilities make no fit score). ``table`` is the pandera
    model of the rows."""

    task: ClassVar[str]
    table: ClassVar[Any]

    def cannot(self, spec: ModelSpec, form: str) -> NoReturn:
        raise ValueError(f"models.{spec.name}.kind: {spec.kind!r} cannot {TASK_VERBS[self.task]} ({form})")

    # A chat model through the transport: prompts in, text answers out.
    def chat_requests(self, spec: ModelSpec) -> list:
        self.cannot(spec, "no chat prompt for this task")

    def from_chat(self, spec: ModelSpec, results: Sequence[Any], stats: Any) -> pd.DataFrame:
        self.cannot(spec, "no reader of chat answers for this task")

    def with_chat(self, spec: ModelSpec, run: Callable) -> tuple[pd.DataFrame, Any]:
        results, stats = run(self.chat_requests(spec))
        return self.from_chat(spec, results, stats), stats

    # An embedded causal LM: the task's choices scored from next-token probabilities.
    def with_causal_lm(self, spec: ModelSpec, runtime: ModelRuntime, progress: Progress | None) -> pd.DataFrame:
        self.cannot(spec, "an embedded LLM's distribution is not read by this task")

    # A scorer of the user's: one item per text (``python_scorer``'s contract), one answer each.
    def scorer_items(self) -> list[dict[str, Any]]:
        raise ValueError(f"the {self.task} task gives a scorer no items: it reads several résumés at once")

    def from_answers(self, spec: ModelSpec, answers: Sequence[Answer], resolved_model: str) -> pd.DataFrame:
        self.cannot(spec, "a scorer's answers are not read by this task")

    # A scoring endpoint (``kind: http``) through the transport: one call per item and run.
    def with_http(self, spec: ModelSpec, run: Callable) -> tuple[pd.DataFrame, Any]:
        self.cannot(spec, "an endpoint's replies are not read by this task")

    # A classifier: the texts it reads, and its probabilities over the seniority levels.
    def texts(self) -> list[str]:
        raise ValueError(f"the {self.task} task gives a classifier no texts")

    def from_label_probs(
        self, spec: ModelSpec, probs: np.ndarray, *, resolved_model: str, per_item_s: float
    ) -> pd.DataFrame:
        self.cannot(spec, "a classifier only labels seniority")
