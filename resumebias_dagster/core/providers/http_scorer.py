"""Items of a scoring endpoint (``kind: http``) as requests of the fan-out, and its replies as answers.

An item (``{"id", "task", "resume", "job_description"}``, the ``kind: python`` contract) and its
run become a ``ChatRequest`` whose messages hold the résumé and the job description and whose
tag holds the task and the id, so the request key (with the model's templates, ``wire``) says
everything that makes the reply what it is; the client renders the body from it. The tag is
ours: the body's ``id`` is the call's opaque ``wire_id`` (random, new for each call, stored with
the reply), never the item's id, which names the job description, the résumé and the variant
(a probe, a group) and would tell the endpoint it is being audited. The reply is
stored as it came; ``read_replies`` reads each stored reply with the model's answer paths, so a
path fixed in the models file reads the same replies again without calling anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from resumebias_dagster.core.common.blinding import opaque_id
from resumebias_dagster.core.models.http_endpoint import ANSWER_PARTS, HttpEndpoint, endpoint_of
from resumebias_dagster.core.models.kinds import TaskWork
from resumebias_dagster.core.models.scorer_answers import Answer
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult

_TAG = "http"
UNPARSABLE = "unparsable: "


def http_requests(items: Sequence[dict[str, Any]], runs: int) -> list[ChatRequest]:
    """``runs`` requests per item, item-major (the fan-out sends them in a shuffled order)."""
    return [
        ChatRequest(
            messages=(("resume", str(item["resume"])), ("job_description", item.get("job_description") or "")),
            sample_index=run,
            tag=f"{_TAG}|{item['task']}|{item['id']}",
            task=str(item["task"]),
        )
        for item in items
        for run in range(runs)
    ]


def item_of(request: ChatRequest) -> dict[str, Any]:
    """The template variables of a request made by ``http_requests``: its ``id`` the call's
    opaque ``wire_id`` (a new one where the fan-out gave none), never the item id of the tag."""
    prefix, task, _item_id = request.tag.split("|", 2)
    if prefix != _TAG:
        raise ValueError(f"request tag {request.tag!r} is not an http scorer's")
    texts = dict(request.messages)
    return {
        "id": request.wire_id or opaque_id(),
        "task": task,
        "resume": texts["resume"],
        "job_description": texts["job_description"] if task != "seniority" else None,
        "run": request.sample_index,
    }


def read_replies(endpoint: HttpEndpoint, results: Sequence[ChatResult], task: str) -> list[Answer | str]:
    """Per result, its ``Answer``, or the row's error: ``"<kind>: <message>"`` for a failed call,
    ``"unparsable: <why>"`` for a reply the answer paths or the contract cannot read."""
    out: list[Answer | str] = []
    for result in results:
        if not result.ok:
            out.append(f"{result.error_kind}: {result.error_message or ''}".rstrip(": "))
            continue
        answer = endpoint.read_answer(result.text, task)
        out.append(f"{UNPARSABLE}{answer}" if isinstance(answer, str) else answer)
    return out


def unreadable_everywhere(model: str, replies: Sequence[Answer | str], endpoint: HttpEndpoint, task: str) -> str | None:
    """A message when every reply that came back was unreadable: the answer paths are likely
    wrong, and the stored replies can be read again once they are fixed (None otherwise)."""
    unparsable = [r for r in replies if isinstance(r, str) and r.startswith(UNPARSABLE)]
    answered = sum(1 for r in replies if not isinstance(r, str)) + len(unparsable)
    if not unparsable or len(unparsable) < answered:
        return None
    paths = ", ".join(f"answer.{part} {path!r}" for part, path in endpoint.answer if ANSWER_PARTS[part] == task)
    return (
        f"models.{model} (kind http): none of the {answered} replies could be read for the {task} task with "
        f"{paths}: {unparsable[0][len(UNPARSABLE) :]}. The replies are kept in the response store: fix the "
        "answer paths in the models file and run again; nothing is called twice"
    )


def score_over_http(
    run: Any, spec: Any, items: Sequence[dict[str, Any]], task: str
) -> tuple[list[ChatResult], list[Answer | str], Any]:
    """The calls of ``items`` (``runs_per_cell`` each) through ``run`` (the store and the
    fan-out), their replies read with the model's answer paths, and the run's stats (its
    unparsable replies counted). Every reply unreadable stops the task (``ValueError``): the
    paths are wrong, and fixing them costs no call."""
    endpoint = endpoint_of(spec)
    results, stats = run(http_requests(items, spec.runs_per_cell))
    replies = read_replies(endpoint, results, task)
    problem = unreadable_everywhere(spec.name, replies, endpoint, task)
    if problem:
        raise ValueError(problem)
    stats.errors["unparsable"] += sum(isinstance(r, str) and r.startswith(UNPARSABLE) for r in replies)
    return results, replies, stats


class ScorerWork(TaskWork):
    """A task that gives a scorer of the user's one item per text: an endpoint's replies
    (``kind: http``) are called and read here, one row per call (``from_replies``)."""

    def with_http(self, spec: Any, run: Any) -> tuple[Any, Any]:
        results, replies, stats = score_over_http(run, spec, self.scorer_items(), self.task)
        return self.from_replies(spec, results, replies), stats

    def from_replies(self, spec: Any, results: Sequence[ChatResult], replies: Sequence[Answer | str]) -> Any:
        self.cannot(spec, "an endpoint's replies are not read by this task")
