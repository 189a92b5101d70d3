"""What a study would cost before it runs: calls, tokens and dollars per provider model and task.

Every task the design calls a provider model for is counted, at the alias's current snapshot
epoch (after an alias moved, the old snapshot's answers are not "paid" any more):

- ``seniority``: the study's variants x the model's runs per cell (every enabled model);
- ``fit``: the probe variants of the design's arm x its job descriptions (``fit_design.yaml``)
  x runs per cell (every enabled model; the assets score every provider model on every JD
  partition);
- ``judge``: two evaluation pairs per audited cell (model x JD x résumé x variant) for each
  judge of the models config; its prompts hold the screener's answers, so their keys are
  not known before the fit scores exist: the count is an upper bound (a cell whose two
  samples coincide takes one call) and ``in_store`` is unknown;
- ``ranking``: the ranking items of the probe arm's first ``DEFAULT_RANKING_PER_LEVEL`` résumés
  a level under every group's names of the firstName axis (the ``rankings`` asset's default),
  x its job descriptions x runs per cell (models that rank: provider models);
- scoring endpoints of the user's (``kind: http``): the tasks their answer paths read, as the
  assets call them (one call per item and run, item ids and texts as the tasks make them), priced
  at the entry's ``price_per_call`` (no tokens: an endpoint bills by call, if at all); no price
  declared, no dollars;
- ``generation``: when a generator or rewriter model is named (the ``base_resumes`` /
  ``style_variants`` config), the neutral résumés, the fact extraction and the two rewrites
  per résumé (one draw each; an unusable draw is drawn again).

Where the requests can be built exactly as the assets build them, their keys tell how many
answers the store already holds (those cost nothing). Tokens are estimated, not counted:
input as prompt characters / 4 (a rough rule for English text with the providers'
tokenizers); output as the mean of the model's stored answers of the same task when there
are some, else the task's default (``DEFAULT_OUTPUT_TOKENS``). Reasoning models (GPT-5,
Gemini 3 Pro) also bill thinking tokens as output, often hundreds per call: run a few calls
first and the estimate uses what they really spent.

Dollars of the calls still to make, four ways (``prices.yaml``: the model's list prices, its
wire's ``providers`` rates): ``usd_list`` (every token at list price; the same figure as
``usd_to_call``), ``usd_batch`` (through the batch API: list x the wire's ``batch``),
``usd_cached`` (live calls, with ``cached_input_tokens`` read from the provider's prefix cache
at ``cached_input`` and ``cache_write_tokens`` written to it at ``cache_write``) and
``usd_batch_cached`` (both, the two multiples multiplied: an assumption that the providers
combine the discounts; Anthropic says its batch discount stacks with prompt caching, OpenAI's
batch prices list cached input at half its cached price, and for Gemini's batch mode it is
assumed). ``usd_all_calls`` prices every call, stored ones too, at list price.

Cached tokens are measured on the prompts themselves, per (model, task): each request may read
the longest prefix it shares with an earlier request of the row (system prompt, then the
messages, in characters / ``CHARS_PER_TOKEN``); the cache serves it when it is at least the
wire's ``min_cached_tokens`` for the model (OpenAI then only whole 128-token blocks). The
first request of a prefix writes it: its prefix shared with a later request, less what it read.
A fit prompt thus shares its instructions and job description with the other variants of the
JD when those come first, and all of it with its own repeated runs (OpenAI and Gemini cache
repeated prefixes by themselves). Anthropic caches only what a request marks
(``cache_prefix_chars``; the fit requests mark their instructions and job description): a
marked prefix is read where an earlier request shares all of it, written where none does, and
a request marking nothing caches nothing. This is the best case: it assumes a prefix is still
cached when the next request sharing it arrives (the caches keep one for minutes; the tasks
send their requests in this order). A judge prompt's evaluations are not known yet: it shares
its template's text before the first field.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from resumebias_dagster.core.providers.fanout import normalise
from resumebias_dagster.core.providers.pricing import Price, price_for, wire_rates
from resumebias_dagster.core.providers.store import ResponseStore
from resumebias_dagster.core.providers.types import HTTP_WIRE, ChatRequest, ProviderSettings, request_key

CHARS_PER_TOKEN = 4
# A one-word label; a fit JSON answer; a verdict with rationale and quotes (study 003: ~200);
# a résumé of ~435 words (notebook 004).
DEFAULT_OUTPUT_TOKENS = {"seniority": 5, "fit": 250, "ranking": 60, "judge": 250, "generation": 650}
# What one evaluation (score, recommendation, justification, strengths, concerns) adds to a
# judge prompt when no fit answer is stored yet.
DEFAULT_EVALUATION_CHARS = 1200
# OpenAI's prompt cache serves whole 128-token blocks past its minimum (1,024 tokens).
CACHE_BLOCK_TOKENS = {"openai": 128}
# Wires whose cache serves only the prefix a request marks (Anthropic's cache_control); the
# others cache repeated prefixes by themselves.
MARKED_CACHE_WIRES = ("anthropic",)
USD_COLUMNS = ("usd_list", "usd_batch", "usd_cached", "usd_batch_cached")
COLUMNS = (
    "model",
    "provider",
    "alias",
    "task",
    "snapshot_epoch",
    "calls",
    "in_store",
    "to_call",
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "output_tokens_basis",
    "usd_to_call",
    "usd_all_calls",
    *USD_COLUMNS,
    "price_as_of",
    "rates_as_of",
    "rates_source",
    "note",
)


@dataclass(frozen=True)
class Design:
    """The study as the assets would run it with their default settings."""

    variants: pd.DataFrame  # seniority variants (``design_variants``)
    probe_variants: pd.DataFrame  # the design's arm's probe variants (fit_design.yaml)
    job_descriptions: pd.DataFrame  # jd, title, text: the design's job descriptions
    base: pd.DataFrame  # the offline base résumés (for rewrite prompts)
    n_per_level: int


def design_variants(n_per_level: int = 40, seed: int = 0, catalog_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The study's variants as the assets make them by default (offline generator and
    rewriter, same seeds), without materialising anything."""
    return study_design(n_per_level, seed, catalog_dir).variants


def study_design(n_per_level: int = 40, seed: int = 0, catalog_dir: str | os.PathLike | None = None) -> Design:
    """Every input of the provider tasks, made as the assets make them by default."""
    from resumebias_dagster.core.common.labels import STYLES
    from resumebias_dagster.core.jd_audit.design import load_fit_design
    from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions
    from resumebias_dagster.core.jd_audit.probes import probe_variants, select_probe_resumes
    from resumebias_dagster.core.seniority.generation import generate_resumes
    from resumebias_dagster.core.seniority.names import name_variants
    from resumebias_dagster.core.seniority.style import rewrite_style
    from resumebias_dagster.core.seniority.task import variant_table

    if n_per_level < 1:
        raise ValueError(f"résumés per level must be at least 1, got {n_per_level}")
    base = generate_resumes(n_per_level=n_per_level, seed=seed, catalog_dir=catalog_dir)
    style = pd.DataFrame(
        [
            (r.resume_id, i, r.seniority, s, rewrite_style(str(r.text), s, seed=seed, catalog_dir=catalog_dir))
            for i, r in enumerate(base.itertuples(index=False))
            for s in STYLES
        ],
        columns=["resume_id", "original_idx", "seniority", "style", "text"],
    )
    variants = variant_table(style, name_variants(base, seed=seed, catalog_dir=catalog_dir))
    design = load_fit_design(catalog_dir)
    arm = select_probe_resumes(base, **design.arm())
    probes = probe_variants(arm, catalog_dir=catalog_dir) if len(arm) else pd.DataFrame(columns=["variant", "text"])
    jds = load_job_descriptions(catalog_dir=catalog_dir)
    jds = jds[jds["jd"].isin(design.job_descriptions)].reset_index(drop=True)
    return Design(variants, probes, jds, base, n_per_level)


@dataclass
class _TaskCalls:
    """The requests of one task: those whose keys can be computed now, and those whose
    prompts hold earlier answers (counted as still to call)."""

    task: str
    requests: list[ChatRequest]
    unknown: list[ChatRequest] = field(default_factory=list)
    note: str = ""
    # Where ``unknown`` holds stand-in prompts (judge): what a prefix cache could share of each.
    cache_texts: list[str] | None = None


def _seniority(settings: ProviderSettings, design: Design, catalog_dir) -> _TaskCalls:
    from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
    from resumebias_dagster.core.seniority.task import seniority_requests

    template = load_prompt(SENIORITY_PROMPT, catalog_dir)
    return _TaskCalls("seniority", seniority_requests(design.variants, settings.runs_per_cell, template))


def _fit(settings: ProviderSettings, design: Design, catalog_dir) -> _TaskCalls:
    from resumebias_dagster.core.jd_audit.fit_task import fit_prompts, fit_requests
    from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template

    template = load_fit_template(catalog_dir)
    requests: list[ChatRequest] = []
    for text in design.job_descriptions["text"]:
        requests += fit_requests(fit_prompts(design.probe_variants, text, template), settings.runs_per_cell)
    if not len(design.probe_variants):
        return _TaskCalls(
            "fit", [], note="the default arm has no base résumé at this size (probe_variants would refuse)"
        )
    return _TaskCalls(
        "fit", requests, note=f"{len(design.job_descriptions)} JDs x {len(design.probe_variants)} variants"
    )


def _ranking(settings: ProviderSettings, design: Design, catalog_dir) -> _TaskCalls:
    from resumebias_dagster.core.jd_audit.design import load_fit_design
    from resumebias_dagster.core.jd_audit.probes import select_probe_resumes
    from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
    from resumebias_dagster.core.ranking.design import DEFAULT_RANKING_PER_LEVEL, pools_from_levels, ranking_items
    from resumebias_dagster.core.ranking.task import load_ranking_template, ranking_requests

    axis = next((a for a in load_probe_axes(catalog_dir).axes if a.id == "firstName"), None)
    arm = {**load_fit_design(catalog_dir).arm(), "per_level": DEFAULT_RANKING_PER_LEVEL}
    chosen = select_probe_resumes(design.base, **arm)
    if axis is None or not len(chosen):
        return _TaskCalls("ranking", [], note="no firstName axis or no base résumé: the rankings asset would refuse")
    items = ranking_items(chosen, pools_from_levels(axis.levels))
    template = load_ranking_template(catalog_dir)
    requests: list[ChatRequest] = []
    for jd, text in zip(design.job_descriptions["jd"], design.job_descriptions["text"]):
        requests += ranking_requests(items, jd=jd, jd_text=text, template=template, runs=settings.runs_per_cell)
    return _TaskCalls("ranking", requests, note=f"{len(design.job_descriptions)} JDs x {len(items)} ranking items")


def _http(settings: ProviderSettings, design: Design, task: str) -> _TaskCalls:
    """A scoring endpoint's calls of ``task``, as ``FitWork`` / ``SeniorityWork`` make them."""
    from resumebias_dagster.core.jd_audit.fit_task import fit_item_id
    from resumebias_dagster.core.providers.http_scorer import http_requests
    from resumebias_dagster.core.seniority.task import seniority_item_id

    if task == "seniority":
        items = [
            {"id": seniority_item_id(r), "task": task, "resume": r.text, "job_description": None}
            for r in design.variants.itertuples(index=False)
        ]
    else:
        items = [
            {"id": fit_item_id(jd, r), "task": task, "resume": r.text, "job_description": text}
            for jd, text in zip(design.job_descriptions["jd"], design.job_descriptions["text"])
            for r in design.probe_variants.itertuples(index=False)
        ]
    price = "no price_per_call declared" if settings.price_per_call is None else f"${settings.price_per_call:g} a call"
    return _TaskCalls(task, http_requests(items, settings.runs_per_cell), note=f"scoring endpoint, {price}")


def _judge(
    judge: ProviderSettings,
    audited: Sequence[ProviderSettings],
    design: Design,
    catalog_dir,
    evaluation_chars: dict[str, float],
) -> _TaskCalls:
    from resumebias_dagster.core.jd_audit.judge import load_judge_prompts

    prompts = load_judge_prompts(catalog_dir)
    template = max(prompts.values(), key=len)
    # What every judge prompt shares: the template's text before its first field.
    head = template.split("{", 1)[0]
    variants = int((design.probe_variants["variant"] != "baseline").sum()) if len(design.probe_variants) else 0
    requests: list[ChatRequest] = []
    cache_texts: list[str] = []
    for model in audited:
        cells = len(design.job_descriptions) * variants
        # Each prompt: the template and two evaluations (baseline and variant) of this model.
        filler = "x" * int(len(template) + 2 * evaluation_chars.get(model.name, DEFAULT_EVALUATION_CHARS))
        requests += [ChatRequest.from_prompt(filler, json_mode=True, tag="audit-judge", task="judge")] * (2 * cells)
        cache_texts += [f"{head}\0{model.name}/{i}" for i in range(2 * cells)]
    return _TaskCalls(
        "judge",
        [],
        unknown=requests,
        note="upper bound: 2 pairs per audited cell (one when both samples coincide); keys depend on the fit answers",
        cache_texts=cache_texts,
    )


def _generation(design: Design, catalog_dir, generate: bool, rewrite: bool, rewrites_generated: bool) -> _TaskCalls:
    """The generation calls of one model: writing the neutral résumés as structured JSON
    (``generate``), rewriting résumés (``rewrite``; of the generated ones if ``rewrites_generated``)."""
    from resumebias_dagster.core.common.prompts import load_prompt
    from resumebias_dagster.core.seniority.llm_generation import (
        REWRITE_PROMPTS,
        base_resume_prompts,
        base_resume_request,
    )

    calls = _TaskCalls("generation", [])
    notes = []
    if generate:
        prompts = base_resume_prompts(design.n_per_level, catalog_dir)
        calls.requests += [base_resume_request(prompt, i) for i, (_, prompt) in enumerate(prompts)]
        notes.append(f"{len(prompts)} résumés written as structured JSON (their facts come with them)")
    if rewrite:
        templates = {style: load_prompt(name, catalog_dir, {"resume_text"}) for style, name in REWRITE_PROMPTS.items()}
        rewrites = [
            ChatRequest.from_prompt(
                template.format(resume_text=str(resume.text).strip()),
                sample_index=0,
                tag=f"{style}/{resume.resume_id}",
                task="generation",
            )
            for resume in design.base.itertuples(index=False)
            for style, template in templates.items()
        ]
        if rewrites_generated:
            calls.unknown += rewrites
        else:
            calls.requests += rewrites
        notes.append(f"{len(design.base)} résumés rewritten twice")
    calls.note = "; ".join(notes)
    return calls


def _at_current_epoch(settings: ProviderSettings, store: ResponseStore | None) -> ProviderSettings:
    seen = store.snapshot(settings) if store is not None else None
    return replace(settings, snapshot_epoch=seen[1]) if seen else settings


def estimate_cost(
    models: Sequence[ProviderSettings],
    design: Design | pd.DataFrame,
    store: ResponseStore | None,
    *,
    judges: Sequence[ProviderSettings] = (),
    generator: ProviderSettings | None = None,
    rewriter: ProviderSettings | None = None,
    tasks: Sequence[str] = ("seniority", "fit", "ranking", "judge", "generation"),
    catalog_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """One row per (model, task) with ``COLUMNS``; dollars are None where the price table
    lacks the model. ``design``: a ``Design`` (``study_design``), or a variants table for the
    seniority task alone. ``store``: None when there is none yet (nothing is stored)."""
    if isinstance(design, pd.DataFrame):
        design = Design(
            design,
            pd.DataFrame(columns=["variant", "text"]),
            pd.DataFrame(columns=["jd", "text"]),
            pd.DataFrame(columns=["resume_id", "text"]),
            0,
        )
        tasks = [t for t in tasks if t == "seniority"]
    models = [_at_current_epoch(m, store) for m in models]
    rows = []
    evaluation_chars: dict[str, float] = {}
    for settings in models:
        calls: list[_TaskCalls] = []
        if settings.provider == HTTP_WIRE:
            served = [t for t in settings.tasks if t in tasks and (t != "fit" or len(design.job_descriptions))]
            rows += [_row(settings, _http(settings, design, t), store, catalog_dir) for t in served]
            continue
        if "ranking" in tasks and len(design.job_descriptions):
            calls.append(_ranking(settings, design, catalog_dir))
        if "seniority" in tasks:
            calls.append(_seniority(settings, design, catalog_dir))
        if "fit" in tasks and len(design.job_descriptions):
            calls.append(_fit(settings, design, catalog_dir))
            n, mean = (
                store.mean_output_tokens(settings.provider, settings.endpoint, settings.model, "fit")
                if store
                else (0, None)
            )
            evaluation_chars[settings.name] = mean * CHARS_PER_TOKEN if mean else DEFAULT_EVALUATION_CHARS
        rows += [_row(settings, c, store, catalog_dir) for c in calls]
    if "judge" in tasks and len(design.job_descriptions):
        for judge in judges:
            judge = _at_current_epoch(judge, store)
            rows.append(_row(judge, _judge(judge, models, design, catalog_dir, evaluation_chars), store, catalog_dir))
    if "generation" in tasks:
        writers = {m.name: m for m in (generator, rewriter) if m is not None}
        for name, settings in writers.items():
            generate = generator is not None and generator.name == name
            rewrite = rewriter is not None and rewriter.name == name
            writes = _generation(design, catalog_dir, generate, rewrite, rewrites_generated=generator is not None)
            rows.append(_row(_at_current_epoch(settings, store), writes, store, catalog_dir))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(settings: ProviderSettings, calls: _TaskCalls, store: ResponseStore | None, catalog_dir) -> dict:
    known = [normalise(settings, r) for r in calls.requests]
    unknown = [normalise(settings, r) for r in calls.unknown]
    in_store: int | None = 0
    todo = known
    if store is not None and known:
        keys = [request_key(settings, r) for r in known]
        stored = store.get_many(keys)
        todo = [r for k, r in zip(keys, known) if k not in stored]
        in_store = len(known) - len(todo)
    if unknown and not known:
        in_store = None
    requests = known + unknown
    if settings.provider == HTTP_WIRE:  # billed by call: no tokens, no prefix cache
        return _http_row(settings, calls, len(requests), len(todo) + len(unknown), in_store)
    cache_texts = [_request_text(r) for r in todo] + (
        calls.cache_texts if calls.cache_texts is not None else [_request_text(r) for r in unknown]
    )
    todo = todo + unknown
    chars = sum(len(_request_text(r)) for r in todo)
    all_chars = sum(len(_request_text(r)) for r in requests)
    n_stored, mean_out = (
        store.mean_output_tokens(settings.provider, settings.endpoint, settings.model, calls.task)
        if store is not None
        else (0, None)
    )
    per_call_out = mean_out if mean_out is not None else DEFAULT_OUTPUT_TOKENS[calls.task]
    basis = f"store mean of {n_stored}" if mean_out is not None else f"default {DEFAULT_OUTPUT_TOKENS[calls.task]}"
    input_tokens = round(chars / CHARS_PER_TOKEN)
    output_tokens = round(per_call_out * len(todo))
    price = price_for(settings.model, catalog_dir, settings.provider)
    rates = wire_rates(settings.provider, catalog_dir)
    cached, written = cache_tokens(
        cache_texts,
        rates.min_cached_for(settings.model),
        CACHE_BLOCK_TOKENS.get(settings.provider, 1),
        [_marked_chars(r) for r in todo] if settings.provider in MARKED_CACHE_WIRES else None,
    )
    return {
        **_row_head(settings, calls, len(requests), len(todo), in_store),
        "input_tokens": input_tokens,
        "cached_input_tokens": cached,
        "cache_write_tokens": written,
        "output_tokens": output_tokens,
        "output_tokens_basis": basis,
        "usd_to_call": None if price is None else round(price.cost(input_tokens, output_tokens), 4),
        "usd_all_calls": None
        if price is None
        else round(price.cost(round(all_chars / CHARS_PER_TOKEN), round(per_call_out * len(requests))), 4),
        **_dollars(price, input_tokens, output_tokens, cached, written),
        "price_as_of": None if price is None else price.as_of,
        "rates_as_of": rates.as_of if rates.source or rates.as_of != "unknown" else None,
        "rates_source": rates.source or None,
        "note": calls.note,
    }


def _row_head(settings: ProviderSettings, calls: _TaskCalls, n: int, to_call: int, in_store: int | None) -> dict:
    """The columns every row starts with: which model and task, its epoch, and its calls."""
    return {
        "model": settings.name,
        "provider": settings.provider,
        "alias": settings.model,
        "task": calls.task,
        "snapshot_epoch": settings.snapshot_epoch,
        "calls": n,
        "in_store": in_store,
        "to_call": to_call,
    }


def _http_row(settings: ProviderSettings, calls: _TaskCalls, n: int, to_call: int, in_store: int | None) -> dict:
    """A scoring endpoint's row: calls, and dollars at its ``price_per_call`` (no tokens)."""
    per = settings.price_per_call
    usd = None if per is None else round(per * to_call, 4)
    return {
        **dict.fromkeys(COLUMNS),
        **_row_head(settings, calls, n, to_call, in_store),
        "usd_to_call": usd,
        "usd_all_calls": None if per is None else round(per * n, 4),
        "usd_list": usd,
        "usd_cached": usd,
        "price_as_of": None if per is None else "price_per_call",
        "note": calls.note,
    }


def _dollars(price: Price | None, input_tokens: int, output_tokens: int, cached: int, written: int) -> dict:
    """``USD_COLUMNS`` of the calls to make: list, batch, cached, batch and cached."""
    if price is None:
        return dict.fromkeys(USD_COLUMNS)

    def usd(cache: bool, batch: bool) -> float:
        return round(
            price.cost(
                input_tokens,
                output_tokens,
                cached_input_tokens=cached if cache else None,
                cache_write_tokens=written if cache else None,
                batch=batch,
            ),
            4,
        )

    return {
        "usd_list": usd(cache=False, batch=False),
        "usd_batch": usd(cache=False, batch=True),
        "usd_cached": usd(cache=True, batch=False),
        "usd_batch_cached": usd(cache=True, batch=True),
    }


def _request_text(request: ChatRequest) -> str:
    """What a provider's prefix cache reads of a request, in order: the system prompt, the messages."""
    return (request.system or "") + "".join(text for _, text in request.messages)


def _marked_chars(request: ChatRequest) -> int:
    """Characters of ``_request_text`` up to the end of the prefix the request marks for the
    prompt cache (``cache_prefix_chars`` of its last user message), 0 where it marks none."""
    if request.cache_prefix_chars <= 0:
        return 0
    last_user = max((i for i, (role, _) in enumerate(request.messages) if role == "user"), default=None)
    if last_user is None:
        return 0
    before = sum(len(text) for _, text in request.messages[:last_user])
    return len(request.system or "") + before + min(request.cache_prefix_chars, len(request.messages[last_user][1]))


def _common_prefix(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` share from their start: slices compared at doubling lengths,
    then a binary search between the last equal one and the first unequal one."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, 64
    while high < n and a[:high] == b[:high]:
        low, high = high, 2 * high
    high = min(high, n) - 1
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _shared_with_earlier(texts: Sequence[str]) -> list[int]:
    """Per text, the longest prefix (characters) it shares with any earlier text: among the
    earlier texts in sorted order, the one sharing most is a neighbour of where it sorts."""
    seen: list[str] = []
    shared = []
    for text in texts:
        at = bisect.bisect_left(seen, text)
        shared.append(max((_common_prefix(text, other) for other in seen[max(0, at - 1) : at + 1]), default=0))
        seen.insert(at, text)
    return shared


def cache_tokens(
    texts: Sequence[str], min_tokens: int | None, block: int = 1, marks: Sequence[int] | None = None
) -> tuple[int, int]:
    """Input tokens of the requests ``texts`` (sent in this order) read from a prefix cache and
    written to it. A request reads the prefix it shares with an earlier one, in tokens
    (characters / ``CHARS_PER_TOKEN``, rounded down), when that is at least ``min_tokens``, past
    which only whole ``block``-token blocks count; it writes what it shares with a later one
    beyond what it read. ``marks`` (a cache that serves only marked prefixes, Anthropic's): the
    characters each request marks (0: none); a marked prefix is read when an earlier request
    shares all of it, else written. ``min_tokens`` None: the wire has no prefix cache (0, 0)."""
    if min_tokens is None or not texts:
        return 0, 0

    def cacheable(chars: int) -> int:
        tokens = chars // CHARS_PER_TOKEN
        return 0 if tokens < min_tokens else min_tokens + (tokens - min_tokens) // block * block

    earlier = _shared_with_earlier(texts)
    if marks is not None:
        hits = [shared >= mark for shared, mark in zip(earlier, marks)]
        return (
            sum(cacheable(m) for m, hit in zip(marks, hits) if m > 0 and hit),
            sum(cacheable(m) for m, hit in zip(marks, hits) if m > 0 and not hit),
        )
    read = [cacheable(c) for c in earlier]
    later = _shared_with_earlier(texts[::-1])[::-1]
    return sum(read), sum(max(0, cacheable(c) - r) for c, r in zip(later, read))
