"""The ranking task: one job description, the candidates of a ranking item (the same résumé
under different names, in a rotated order), and the model's ranking of them.

``predict_rankings`` runs the task on a model of any kind through the kind's runner
(``core/models/kinds``), reading each form of answer in ``RankingWork``: a chat model's answer
through the transport (``rank_with``: the answer's text parsed by
``parse.parse_ranking``) or an embedded LLM (``rank_with_local_llm``: P(ranked first) from the
probability of each name as the continuation, ``local.first_choice_probs``, and
``runs_per_cell`` first choices sampled from it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.parsing import valid_utf8
from resumebias_dagster.core.common.prompts import RESUME_CHAR_CAP, load_prompt
from resumebias_dagster.core.models.kinds import TaskWork, run_task
from resumebias_dagster.core.models.runtime import ModelRuntime, Progress
from resumebias_dagster.core.models.spec import ModelSpec
from resumebias_dagster.core.providers.fanout import Transport
from resumebias_dagster.core.ranking.design import RankingItem
from resumebias_dagster.core.ranking.parse import parse_ranking
from resumebias_dagster.core.ranking.tables import RANKING_COLUMNS, as_json
from resumebias_dagster.core.tables import Rankings, conform

RANKING_TASK = "ranking"
RANKING_PROMPT = "ranking"
RANKING_FIELDS = frozenset({"job_description", "candidates", "count"})


def load_ranking_template(catalog_dir=None) -> str:
    """The ranking prompt (``catalog/prompts/ranking.txt``, or the user catalog's override)."""
    return load_prompt(RANKING_PROMPT, catalog_dir, fields=RANKING_FIELDS)


def candidates_block(item: RankingItem) -> str:
    """The candidates in the order shown, each labelled by name, résumés capped as elsewhere."""
    return "\n\n".join(
        f"=== Candidate: {name} ===\n{text[:RESUME_CHAR_CAP].strip()}" for name, text in zip(item.shown, item.texts)
    )


def ranking_prompt(template: str, jd_text: str, item: RankingItem) -> str:
    return template.format(job_description=jd_text.strip(), candidates=candidates_block(item), count=len(item.shown))


def request_tag(jd: str, item: RankingItem) -> str:
    """The request's tag: which ranking it is (not sent; part of the store key)."""
    return f"{RANKING_TASK}/{jd}/{item.item_id}"


def ranking_requests(
    items: Sequence[RankingItem],
    *,
    jd: str,
    jd_text: str,
    template: str,
    runs: int,
) -> list:
    """The provider requests of one (model, JD): ``runs`` per item (``sample_index``), item-major.
    No limit is set here: each carries the model's ``max_tokens.ranking`` (``task_tokens``)."""
    from resumebias_dagster.core.providers.types import ChatRequest

    return [
        ChatRequest.from_prompt(
            ranking_prompt(template, jd_text, item),
            sample_index=run,
            tag=request_tag(jd, item),
            task=RANKING_TASK,
        )
        for item in items
        for run in range(runs)
    ]


def ranking_rows(
    items: Sequence[RankingItem], *, model: str, jd: str, runs: int, fields: Mapping[str, Sequence[Any]]
) -> pd.DataFrame:
    """Rows (``RANKING_COLUMNS``; item-major, ``runs`` per item) from per-row field lists."""
    rep = [item for item in items for _ in range(runs)]
    out = pd.DataFrame(
        {
            "model": model,
            "jd": jd,
            "item_id": [i.item_id for i in rep],
            "resume_id": [i.resume_id for i in rep],
            "rotation": np.asarray([i.rotation for i in rep], dtype=np.int64),
            "run": np.tile(np.arange(runs, dtype=np.int64), len(items)),
            "shown": [as_json(i.shown) for i in rep],
            "groups": [as_json(i.groups) for i in rep],
        }
    )
    n = len(out)
    for column in RANKING_COLUMNS[len(out.columns) :]:
        out[column] = list(fields.get(column, [None] * n))
    out = out.astype({"latency_s": float}).astype(
        {c: object for c in ("ranked", "first", "error", "answer", "resolved_model", "p_first")}
    )
    return conform(out, Rankings)


def rank_with(
    run: Transport, items: Sequence[RankingItem], *, model: str, jd: str, jd_text: str, template: str, runs: int
) -> tuple[pd.DataFrame, Any]:
    """Ranking rows of one (model, JD) through ``run(requests) -> (results, stats)``."""
    requests = ranking_requests(items, jd=jd, jd_text=jd_text, template=template, runs=runs)
    results, stats = run(requests)
    return rows_from_chat(items, results, stats, model=model, jd=jd, runs=runs), stats


def rows_from_chat(items: Sequence[RankingItem], results, stats, *, model: str, jd: str, runs: int) -> pd.DataFrame:
    """Ranking rows of a chat model's answers. ``error`` is the call's "<kind>: <message>" when
    it failed, or "unparsable: <reason>" when the answer gave no ranking (counted in the
    stats' errors as unparsable too)."""
    fields: dict[str, list] = {c: [] for c in ("ranked", "first", "error", "answer", "resolved_model", "latency_s")}
    for k, result in enumerate(results):
        item = items[k // runs]
        ranked, error = None, None
        if result.ok:
            parsed = parse_ranking(result.text, item.shown)
            if parsed.ok:
                ranked = list(parsed.ranked)
            else:
                error = f"unparsable: {parsed.error}"
                stats.errors["unparsable"] += 1
        else:
            error = f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
        fields["ranked"].append(as_json(ranked))
        fields["first"].append(ranked[0] if ranked else None)
        fields["error"].append(error)
        fields["answer"].append(None if result.text is None else valid_utf8(result.text))
        fields["resolved_model"].append(result.resolved_model)
        fields["latency_s"].append(result.latency_s)
    return ranking_rows(items, model=model, jd=jd, runs=runs, fields=fields)


def rows_from_first_choice(
    items: Sequence[RankingItem],
    probs: Sequence[np.ndarray],
    *,
    model: str,
    jd: str,
    runs: int,
    temperature: float,
    seed: int,
    resolved_model: str,
    latency_s: float,
) -> pd.DataFrame:
    """Rows of an embedded LLM: ``runs`` first choices per item sampled from its P(ranked first)
    at ``temperature`` (each row's ranking is that one name: top-1 known), and that tempered
    distribution in ``p_first`` (parallel to ``shown``)."""
    from resumebias_dagster.core.models.local_llm import tempered

    rng = np.random.default_rng(seed)
    fields: dict[str, list] = {c: [] for c in ("ranked", "first", "p_first")}
    for item, p in zip(items, probs, strict=True):
        dist = tempered(np.asarray(p)[None, :], temperature)[0]
        picks = np.full(runs, int(np.argmax(dist))) if temperature == 0 else rng.choice(len(dist), size=runs, p=dist)
        for pick in picks:
            name = item.shown[int(pick)]
            fields["ranked"].append(as_json([name]))
            fields["first"].append(name)
            fields["p_first"].append(json.dumps([round(float(x), 6) for x in dist]))
    n = len(items) * runs
    fields["resolved_model"] = [resolved_model] * n
    fields["latency_s"] = [latency_s] * n
    fields["answer"] = [None] * n  # an embedded base model writes no ranking
    return ranking_rows(items, model=model, jd=jd, runs=runs, fields=fields)


def rank_with_local_llm(
    spec, items: Sequence[RankingItem], *, jd: str, jd_text: str, template: str, settings, cache_dir, progress=None
) -> pd.DataFrame:
    """Ranking rows of an embedded LLM for one (model, JD)."""
    from resumebias_dagster.core.models.local_llm import load_causal_lm, sampling_seed
    from resumebias_dagster.core.models.model_sources import resolved_source
    from resumebias_dagster.core.ranking.local import first_choice_probs

    source = spec.option("source")
    model, tokenizer = load_causal_lm(source, cache_dir, settings, setting=f"models.{spec.name}.source")
    prompts = [ranking_prompt(template, jd_text, item) for item in items]
    started = time.perf_counter()
    probs = first_choice_probs(model, tokenizer, prompts, [i.shown for i in items], settings, progress=progress)
    return rows_from_first_choice(
        items,
        probs,
        model=spec.name,
        jd=jd,
        runs=spec.runs_per_cell,
        temperature=spec.temperature,
        seed=sampling_seed(spec.name, salt=f"ranking|{jd}"),
        resolved_model=resolved_source(source),
        latency_s=(time.perf_counter() - started) / max(1, len(items)),
    )


class RankingWork(TaskWork):
    """The ranking task for one job description: the chat answer's ranking, or an embedded
    LLM's P(ranked first)."""

    task = RANKING_TASK
    table = Rankings

    def __init__(self, items: Sequence[RankingItem], *, jd: str, jd_text: str, template: str):
        self.items = items
        self.jd = jd
        self.jd_text = jd_text
        self.template = template

    def chat_requests(self, spec) -> list:
        return ranking_requests(
            self.items, jd=self.jd, jd_text=self.jd_text, template=self.template, runs=spec.runs_per_cell
        )

    def from_chat(self, spec, results, stats) -> pd.DataFrame:
        return rows_from_chat(self.items, results, stats, model=spec.name, jd=self.jd, runs=spec.runs_per_cell)

    def with_causal_lm(self, spec, runtime: ModelRuntime, progress: Progress | None) -> pd.DataFrame:
        return rank_with_local_llm(
            spec,
            self.items,
            jd=self.jd,
            jd_text=self.jd_text,
            template=self.template,
            settings=runtime.compute,
            cache_dir=runtime.cache_dir,
            progress=progress,
        )


def predict_rankings(
    spec: ModelSpec,
    items: Sequence[RankingItem],
    *,
    jd: str,
    jd_text: str,
    template: str,
    runtime: ModelRuntime,
    progress: Progress | None = None,
) -> tuple[pd.DataFrame, Any]:
    """Ranking rows of model ``spec`` for one job description, and the transport run's stats
    (None for a model that runs here), by the kind's runner (``core/models/kinds``)."""
    return run_task(spec, RankingWork(items, jd=jd, jd_text=jd_text, template=template), runtime, progress)
