"""The pairwise task (issue 42): one job description, two résumés of a validity set (its baseline
and one twin, ``validity_pairs``), and the model's answer to "which candidate is more qualified,
or are they equally qualified?" (``catalog/prompts/pairwise.txt``).

Every pair is shown both ways in every run: the twin as candidate A, then as candidate B, so
each position holds the twin exactly half the time and position bias cancels out of the
criterion share (and is measured: ``pairwise_stats``). The order is fixed by design, not drawn,
so no seed is needed for it. The prompt names the candidates "A" and "B" only: nothing of the
audit (the set, its group, the edit, which résumé is the baseline) is in a request.

``predict_pairwise`` runs the task on a model of any kind that has it through the kind's runner
(``core/models/kinds``), reading each form of answer in ``PairwiseWork``: a chat model's text
(``pairwise_parse.parse_choice``) or an embedded LLM's next-token probabilities of " A", " B"
and " Equal" after the prompt (which ends "Answer:"), renormalised over the three, tempered at
the entry's temperature and sampled ``runs_per_cell`` times.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.parsing import valid_utf8
from resumebias_dagster.core.common.prompts import RESUME_CHAR_CAP, load_prompt
from resumebias_dagster.core.jd_audit.pairwise_parse import EQUAL, parse_choice
from resumebias_dagster.core.models.kinds import TaskWork, run_task
from resumebias_dagster.core.models.runtime import ModelRuntime, Progress
from resumebias_dagster.core.models.spec import ModelSpec
from resumebias_dagster.core.tables import PairwiseChoices, columns, conform

PAIRWISE_TASK = "pairwise"
PAIRWISE_PROMPT = "pairwise"
PAIRWISE_FIELDS = frozenset({"job_description", "resume_a", "resume_b"})
POSITIONS = ("A", "B")
# The words an embedded LLM's next token is read over, in the order of ``p_choice``.
LOCAL_LABELS = ("A", "B", "Equal")
CHOICE_COLUMNS = tuple(columns(PairwiseChoices))
_PAIR_COLUMNS = ("jd", "resume_id", "group", "name", "variant", "role", "edit", "text")


@dataclass(frozen=True)
class PairItem:
    """One pair in one order: a set's baseline and one twin, the twin at ``twin_position``."""

    jd: str
    resume_id: str
    group: str
    name: str
    twin: str  # "<role>:<edit>"
    role: str
    edit: str
    twin_position: str  # "A" or "B"
    baseline_text: str
    twin_text: str

    @property
    def shown(self) -> tuple[str, str]:
        """The texts as candidates A and B."""
        if self.twin_position == "A":
            return self.twin_text, self.baseline_text
        return self.baseline_text, self.twin_text

    def picked(self, choice: str | None) -> str | None:
        """What ``choice`` ("A", "B", "equal") chose: the twin, the baseline, or equal."""
        if choice is None:
            return None
        if choice == EQUAL:
            return EQUAL
        return "twin" if choice == self.twin_position else "baseline"


def load_pairwise_template(catalog_dir=None) -> str:
    """The pairwise prompt (``catalog/prompts/pairwise.txt``, or the user catalog's override)."""
    return load_prompt(PAIRWISE_PROMPT, catalog_dir, fields=PAIRWISE_FIELDS)


def pairwise_items(pairs: pd.DataFrame, jd: str) -> list[PairItem]:
    """Every (twin, order) of job description ``jd``'s sets in ``pairs`` (``ValidityPairs``
    rows): each better, worse and equal twin against its set's baseline, twin at A then at B."""
    missing = [c for c in _PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"pairwise: validity pairs lack columns {missing}")
    mine = pairs[pairs["jd"].astype(str) == jd]
    items: list[PairItem] = []
    for (resume_id, group), rows in mine.groupby(["resume_id", "group"], sort=False):
        base = rows[rows["role"] == "baseline"]
        if len(base) != 1:
            raise ValueError(
                f"pairwise: the set jd={jd!r}, resume_id={resume_id!r}, group={group!r} has {len(base)} baselines"
            )
        b = base.iloc[0]
        for row in rows[rows["role"] != "baseline"].itertuples(index=False):
            twin = str(row.variant).removeprefix(f"{group}:")
            for position in POSITIONS:
                items.append(
                    PairItem(
                        jd,
                        str(resume_id),
                        str(group),
                        str(row.name),
                        twin,
                        str(row.role),
                        str(row.edit),
                        position,
                        str(b["text"]),
                        str(row.text),
                    )
                )
    return items


def pairwise_prompt(template: str, jd_text: str, item: PairItem) -> str:
    a, b = item.shown
    return template.format(
        job_description=jd_text.strip(), resume_a=a[:RESUME_CHAR_CAP].strip(), resume_b=b[:RESUME_CHAR_CAP].strip()
    )


def pairwise_requests(items: Sequence[PairItem], *, jd: str, jd_text: str, template: str, runs: int) -> list:
    """The provider requests of one (model, JD): ``runs`` per item (``sample_index``), item-major.
    The tag (part of the store key, never sent) says which pair and order it is."""
    from resumebias_dagster.core.providers.types import ChatRequest

    return [
        ChatRequest.from_prompt(
            pairwise_prompt(template, jd_text, item),
            sample_index=run,
            tag=f"{PAIRWISE_TASK}/{jd}/{item.resume_id}/{item.group}/{item.twin}/{item.twin_position}",
            task=PAIRWISE_TASK,
        )
        for item in items
        for run in range(runs)
    ]


def pairwise_rows(
    items: Sequence[PairItem], *, model: str, runs: int, fields: Mapping[str, Sequence[Any]]
) -> pd.DataFrame:
    """Rows (``PairwiseChoices``; item-major, ``runs`` per item) from per-row field lists
    (``choice``; ``error``, ``answer``, ``resolved_model``, ``latency_s``, ``p_choice``)."""
    rep = [item for item in items for _ in range(runs)]
    out = pd.DataFrame(
        {
            "model": model,
            "jd": [i.jd for i in rep],
            "resume_id": [i.resume_id for i in rep],
            "group": [i.group for i in rep],
            "name": [i.name for i in rep],
            "twin": [i.twin for i in rep],
            "role": [i.role for i in rep],
            "edit": [i.edit for i in rep],
            "twin_position": [i.twin_position for i in rep],
            "run": np.tile(np.arange(runs, dtype=np.int64), len(items)),
        }
    )
    n = len(out)
    choice = list(fields.get("choice", [None] * n))
    out["choice"] = pd.Series(choice, dtype=object)
    out["picked"] = pd.Series([i.picked(c) for i, c in zip(rep, choice)], dtype=object)
    for column in CHOICE_COLUMNS[CHOICE_COLUMNS.index("error") :]:
        out[column] = list(fields.get(column, [None] * n))
    out = out.astype({"latency_s": float}).astype(
        {c: object for c in ("error", "answer", "resolved_model", "p_choice")}
    )
    return conform(out, PairwiseChoices)


def rows_from_chat(items: Sequence[PairItem], results, stats, *, model: str, runs: int) -> pd.DataFrame:
    """Choice rows of a chat model's answers. ``error`` is the call's "<kind>: <message>" when it
    failed, or "unparsable: <reason>" when the answer made no choice (counted in the stats'
    errors as unparsable too)."""
    fields: dict[str, list] = {c: [] for c in ("choice", "error", "answer", "resolved_model", "latency_s")}
    for result in results:
        choice, error = None, None
        if result.ok:
            parsed = parse_choice(result.text)
            if parsed.ok:
                choice = parsed.choice
            else:
                error = f"unparsable: {parsed.error}"
                stats.errors["unparsable"] += 1
        else:
            error = f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
        fields["choice"].append(choice)
        fields["error"].append(error)
        fields["answer"].append(None if result.text is None else valid_utf8(result.text))
        fields["resolved_model"].append(result.resolved_model)
        fields["latency_s"].append(result.latency_s)
    return pairwise_rows(items, model=model, runs=runs, fields=fields)


def rows_from_probs(
    items: Sequence[PairItem],
    probs: np.ndarray,
    *,
    model: str,
    runs: int,
    temperature: float,
    seed: int,
    resolved_model: str,
    latency_s: float,
) -> pd.DataFrame:
    """Rows of an embedded LLM: ``runs`` choices per item sampled from its P(A), P(B), P(Equal)
    (``probs``, one row per item) at ``temperature``; that tempered distribution in ``p_choice``."""
    from resumebias_dagster.core.models.local_llm import sample_labels, tempered

    dist = tempered(np.asarray(probs, dtype=float), temperature)
    picks = sample_labels(np.asarray(probs, dtype=float), temperature, runs, seed)
    labels = ("A", "B", EQUAL)
    fields: dict[str, list] = {"choice": [], "p_choice": []}
    for row, p in zip(picks, dist, strict=True):
        shown = json.dumps([round(float(x), 6) for x in p])
        for pick in row:
            fields["choice"].append(labels[int(pick)])
            fields["p_choice"].append(shown)
    n = len(items) * runs
    fields |= {"resolved_model": [resolved_model] * n, "latency_s": [latency_s] * n, "answer": [None] * n}
    return pairwise_rows(items, model=model, runs=runs, fields=fields)


def choose_with_local_llm(
    spec, items: Sequence[PairItem], *, jd: str, jd_text: str, template: str, settings, cache_dir, progress=None
) -> pd.DataFrame:
    """Choice rows of an embedded LLM for one (model, JD)."""
    from resumebias_dagster.core.models.local_llm import load_causal_lm, sampling_seed, score_labels
    from resumebias_dagster.core.models.model_sources import resolved_source

    source = spec.option("source")
    model, tokenizer = load_causal_lm(source, cache_dir, settings, setting=f"models.{spec.name}.source")
    prompts = [pairwise_prompt(template, jd_text, item) for item in items]
    started = time.perf_counter()
    probs = score_labels(model, tokenizer, prompts, LOCAL_LABELS, settings, progress=progress)
    return rows_from_probs(
        items,
        probs,
        model=spec.name,
        runs=spec.runs_per_cell,
        temperature=spec.temperature,
        seed=sampling_seed(spec.name, salt=f"{PAIRWISE_TASK}|{jd}"),
        resolved_model=resolved_source(source),
        latency_s=(time.perf_counter() - started) / max(1, len(items)),
    )


class PairwiseWork(TaskWork):
    """The pairwise task for one job description: a chat answer's choice, or an embedded LLM's
    P(A), P(B), P(Equal). Scorers of one résumé (http, python, classifiers) do not have it:
    their validity comes from the fit scores they give the same pairs (``validity_scores``)."""

    task = PAIRWISE_TASK
    table = PairwiseChoices

    def __init__(self, items: Sequence[PairItem], *, jd: str, jd_text: str, template: str):
        self.items = items
        self.jd = jd
        self.jd_text = jd_text
        self.template = template

    def chat_requests(self, spec) -> list:
        return pairwise_requests(
            self.items, jd=self.jd, jd_text=self.jd_text, template=self.template, runs=spec.runs_per_cell
        )

    def from_chat(self, spec, results, stats) -> pd.DataFrame:
        return rows_from_chat(self.items, results, stats, model=spec.name, runs=spec.runs_per_cell)

    def with_causal_lm(self, spec, runtime: ModelRuntime, progress: Progress | None) -> pd.DataFrame:
        return choose_with_local_llm(
            spec,
            self.items,
            jd=self.jd,
            jd_text=self.jd_text,
            template=self.template,
            settings=runtime.compute,
            cache_dir=runtime.cache_dir,
            progress=progress,
        )


def predict_pairwise(
    spec: ModelSpec,
    items: Sequence[PairItem],
    *,
    jd: str,
    jd_text: str,
    template: str,
    runtime: ModelRuntime,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, Any]:
    """Choice rows of model ``spec`` for one job description, and the transport run's stats
    (None for a model that runs here), by the kind's runner (``core/models/kinds``)."""
    return run_task(spec, PairwiseWork(items, jd=jd, jd_text=jd_text, template=template), runtime, progress)
