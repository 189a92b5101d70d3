"""The output-token limit of every task, declared in one place.

The models config's ``max_tokens`` is checked against these (``model_config``), and each task
sends its limit with every request. Kept apart from the tasks so the config can check limits
without importing them (the tasks import the config).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.models.spec import ModelConfigError


@dataclass(frozen=True)
class TaskTokens:
    """The output-token limit of one task. ``default``: what a request of the task carries when
    the model entry sets none, room for the answer's long cases. ``minimum``: the smallest limit
    that holds the task's answer; a config below it is refused (its answers would be cut off)."""

    task: str
    default: int
    minimum: int
    answer: str  # what the answer is, for messages


# The answer is one label word; the default leaves room for "Senior." or a short lead-in
# ("Seniority level: mid") that the parser still reads.
SENIORITY_TOKENS = TaskTokens("seniority", default=32, minimum=4, answer="one label word: junior, mid or senior")
# A fit answer (prompts/fit_scoring.txt) is about 150 tokens, a wordy one about 300: a limit
# below the minimum cuts typical answers off mid-JSON, and every cut answer is unparsable.
FIT_TOKENS = TaskTokens(
    "fit",
    default=1024,
    minimum=256,
    answer="a JSON object with score, recommend, justification, three strengths and three concerns",
)
# A verdict (JSON with a rationale and exact quotes) is about 150-350 tokens (study 003 budgets
# about 200 output tokens per prompt); a judge capped below the minimum returns cut-off JSON.
JUDGE_TOKENS = TaskTokens(
    "judge",
    default=1024,
    minimum=256,
    answer="a JSON verdict with confidence, a two- or three-sentence rationale and quoted bias signals",
)
# Notebook 004's résumés average 435 words (neutral) and 588 (overstated), about 600-900
# tokens; the longest, or one rendered as JSON fields, need up to about twice that.
GENERATION_TOKENS = TaskTokens(
    "generation",
    default=4096,
    minimum=2048,
    answer="a complete résumé, or its fields as JSON; notebook 004's average 435-588 words, the longest twice that",
)
# A ranking (prompts/ranking.txt: one full name per line) of 8 candidates is about 40 tokens;
# the default leaves room for a preamble or a reason per line, which the parser reads past.
# Below the minimum a numbered list of 8 names with short reasons is cut off, and a cut-off
# list is a partial ranking.
RANKING_TOKENS = TaskTokens(
    "ranking",
    default=512,
    minimum=128,
    answer="the candidates' full names, best first, one per line",
)
# A pairwise answer (prompts/pairwise.txt) is one word, A, B or Equal; the default leaves room
# for a sentence of reasons, which the parser reads past (core/jd_audit/pairwise_parse.py).
PAIRWISE_TOKENS = TaskTokens(
    "pairwise",
    default=256,
    minimum=16,
    answer="one word: A, B or Equal (which of two candidates is more qualified, or neither)",
)
# In the order of ``core.providers.types.TASKS``.
TASK_TOKENS = {
    t.task: t for t in (SENIORITY_TOKENS, FIT_TOKENS, JUDGE_TOKENS, GENERATION_TOKENS, RANKING_TOKENS, PAIRWISE_TOKENS)
}


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
