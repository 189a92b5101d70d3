"""Fan-out of many requests to one provider model, through the response store.

The store is asked first; only keys without a final row are called. A scoring endpoint (kind
http) gets them in a shuffled order (``order_seed``), so it sees no résumé's variants, nor one
item's runs, back to back, and a new opaque id for each call (``ChatRequest.wire_id``), stored
with the answer. Each key is claimed in
the store just before its call, so two runs (two processes, two machines sharing a store)
never pay for the same key: the second waits for the first one's answer. Each response is
written to the store before anything else happens to it (parsing included), so a run killed
at any point has lost only the calls still in flight, the next run makes exactly the
missing ones, and an answer no parser can read is a typed row, never a crash. The results
handed to the tasks carry valid UTF-8 text; the store keeps each answer as it came.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

from resumebias_dagster.core.common.blinding import opaque_id
from resumebias_dagster.core.common.parsing import parse_json_object, valid_utf8
from resumebias_dagster.core.providers import types as t
from resumebias_dagster.core.providers.base import PACING_JITTER
from resumebias_dagster.core.providers.batch import run_batches
from resumebias_dagster.core.providers.pricing import cost_usd, price_for
from resumebias_dagster.core.providers.registry import make_batch_backend, make_client
from resumebias_dagster.core.providers.store import CLAIMED, DONE, ClaimOwner, ResponseStore
from resumebias_dagster.core.providers.types import (
    HTTP_WIRE,
    ChatRequest,
    ChatResult,
    ProviderSettings,
    Secret,
    request_key,
    task_of,
)

Progress = Callable[[int, int], None]
# Workers start this far apart. Started at once, they send in one burst, their answers come
# back in bursts, and in a burst each answer waits while the single event loop handles the
# ones before it (about 1.5 ms of SDK work each); staggered, each is handled as it arrives.
# The provider is spared the burst too. 64 workers: all running after 0.32 s.
START_INTERVAL_S = 0.005
# How often a run looks again at keys another run is calling.
CLAIM_POLL_S = 0.1


@dataclass
class RunStats:
    """What one run cost and how its requests were served (asset metadata reads this)."""

    model: str
    requests: int = 0
    unique_requests: int = 0
    calls_made: int = 0
    served_from_store: int = 0
    # Of those served from the store: keys another run was calling when this one reached them.
    waited_for_other_runs: int = 0
    http_attempts: int = 0
    # Attempts the provider may bill: answers, and attempts abandoned at their read timeout.
    billed_attempts: int = 0
    answered_calls: int = 0
    # The whole input of the calls made; of it, the tokens read from the provider's prompt
    # cache and those written to it.
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    # Batch mode: batches this run submitted, and answers it read from batches (any run's).
    batches_submitted: int = 0
    batch_answers: int = 0
    cost_usd: float = 0.0
    cost_unknown_calls: int = 0
    stored_cost_usd: float = 0.0
    errors: Counter = field(default_factory=Counter)
    resolved_models: Counter = field(default_factory=Counter)
    wall_s: float = 0.0
    # The seed of the order the calls went out in (``shuffled``; None: the tasks' order): a
    # setting, not a count.
    order_seed: int | None = None

    @property
    def retries(self) -> int:
        return self.http_attempts - self.calls_made

    def __add__(self, other: RunStats) -> RunStats:
        """Two runs of the same model as one (e.g. the draws of a generation)."""
        total = RunStats(model=self.model)
        total.order_seed = self.order_seed
        for f in fields(RunStats):
            if f.name not in ("model", "order_seed"):
                setattr(total, f.name, getattr(self, f.name) + getattr(other, f.name))
        return total

    def as_dict(self) -> dict[str, Any]:
        """Plain values for metadata or JSON."""
        return {
            "model": self.model,
            "requests": self.requests,
            "unique_requests": self.unique_requests,
            "calls_made": self.calls_made,
            "served_from_store": self.served_from_store,
            "waited_for_other_runs": self.waited_for_other_runs,
            "http_attempts": self.http_attempts,
            "retries": self.retries,
            "billed_attempts": self.billed_attempts,
            "billed_attempts_per_answer": (
                round(self.billed_attempts / self.answered_calls, 4) if self.answered_calls else None
            ),
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "batches_submitted": self.batches_submitted,
            "batch_answers": self.batch_answers,
            "cost_usd": round(self.cost_usd, 6),
            "cost_unknown_calls": self.cost_unknown_calls,
            "cost_usd_incl_store": round(self.cost_usd + self.stored_cost_usd, 6),
            "errors": dict(sorted(self.errors.items())),
            "resolved_models": dict(sorted(self.resolved_models.items())),
            "wall_s": round(self.wall_s, 3),
            "order_seed": self.order_seed,
        }


class Transport(Protocol):
    """How every task reaches a provider model, obtained one way (``ProvidersResource.run_of``,
    or ``ModelRuntime.run_for`` in a task's dispatcher): requests in; one result per request, in
    their order, and the run's stats out. Behind it: stored answers first, then only the
    missing calls (``run_requests``). A task names the callable it takes ``run``."""

    def __call__(self, requests: Sequence[t.ChatRequest], /) -> tuple[list[t.ChatResult], RunStats]: ...


def normalise(settings: ProviderSettings, request: ChatRequest) -> ChatRequest:
    """``request`` with the model's temperature where it sets none (none where the provider takes
    none) and, where it sets no max_tokens, the model's limit for the request's task (a fit
    answer is never held to the seniority label's limit): the key records what is really sent."""
    temperature = settings.temperature if request.temperature is None else request.temperature
    return replace(
        request,
        temperature=temperature if settings.sends_temperature else None,
        max_tokens=settings.max_tokens_for(task_of(request)) if request.max_tokens is None else request.max_tokens,
    )


def _handed_on(result: ChatResult) -> ChatResult:
    """``result`` as the tasks read it: its text valid UTF-8 (a lone surrogate becomes U+FFFD;
    DuckDB and Parquet refuse one), and no text on an error (the body of a malformed answer
    stays in the store, exactly as it came, like every answer). Its names and message were
    made valid by the client before they were stored (``ProviderClient.complete``)."""
    if result.text is not None:
        result.text = None if result.error_kind else valid_utf8(result.text)
    return result


def _with_parsed_json(request: ChatRequest, result: ChatResult) -> ChatResult:
    """Parse a JSON-mode answer (already stored as text); failing to parse is a typed row."""
    if request.json_mode and result.ok:
        try:
            parsed = parse_json_object(result.text)
        except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the run either
            parsed = None
            reason = f"the parser failed ({type(exc).__name__})"
        if parsed is not None and parsed.ok:
            result.parsed_json = parsed.value
        else:
            result.error_kind, result.error_message = t.UNPARSABLE, parsed.reason if parsed is not None else reason
    return result


def claim_lease_s(settings: ProviderSettings) -> float:
    """How long a claim holds: every attempt of a call at its timeout, with backoff room, and
    with pacing each attempt's wait behind the other workers' (``base.Pacer``)."""
    attempts = settings.max_retries + 1
    paced = (settings.min_interval_s or 0.0) * (1 + PACING_JITTER) * settings.max_concurrency
    return (settings.timeout_s + 60.0 + paced) * attempts


def shuffled(requests: dict[str, ChatRequest], seed: int) -> list[str]:
    """The keys of ``requests`` in a random order that depends only on ``seed`` and what the
    requests ask (not on the endpoint, so not on a test server's port): the same calls go out
    in the same order again, and two job descriptions' calls in different orders."""
    asked = {
        key: hashlib.sha256(json.dumps(request.as_json(), sort_keys=True).encode("utf-8", "surrogatepass")).hexdigest()
        for key, request in requests.items()
    }
    ordered = sorted(asked, key=asked.__getitem__)
    random.Random(f"{seed}|{'|'.join(asked[k] for k in ordered)}").shuffle(ordered)
    return ordered


class _Prices:
    """The dollars of each answer: the model's list prices with its wire's cache rates."""

    def __init__(self, settings: ProviderSettings, catalog_dir):
        self._catalog_dir = catalog_dir
        self._provider = settings.provider
        self._cache: dict[str | None, Any] = {}
        self._alias = price_for(settings.model, catalog_dir, provider=settings.provider)

    def batch_cost(self, result: ChatResult) -> float | None:
        return self.cost(result, batch=True)

    def cost(self, result: ChatResult, batch: bool = False) -> float | None:
        price = self._alias
        if price is None:
            if result.resolved_model not in self._cache:
                self._cache[result.resolved_model] = price_for(
                    result.resolved_model, self._catalog_dir, provider=self._provider
                )
            price = self._cache[result.resolved_model]
        # input_tokens is the whole input, the cached and written tokens parts of it.
        cost = cost_usd(
            price,
            result.input_tokens,
            result.output_tokens,
            cached_input_tokens=result.cached_input_tokens,
            cache_write_tokens=result.cache_write_tokens,
            batch=batch,
        )
        # A call the provider billed more than once (an empty answer retried, an attempt given up
        # at its read timeout): each billed attempt at the last one's tokens, the same prompt.
        return None if cost is None else cost * max(1, result.billed_attempts or 0)


def _count_call(stats: RunStats, result: ChatResult) -> None:
    """Add one call's outcome (live or from a batch) to the run's stats."""
    stats.http_attempts += result.attempts
    stats.billed_attempts += result.billed_attempts
    stats.answered_calls += int(result.ok)
    stats.input_tokens += result.input_tokens or 0
    stats.cached_input_tokens += result.cached_input_tokens or 0
    stats.cache_write_tokens += result.cache_write_tokens or 0
    stats.output_tokens += result.output_tokens or 0
    if result.cost_usd is None:
        stats.cost_unknown_calls += 1
    else:
        stats.cost_usd += result.cost_usd


async def run_requests_async(
    settings: ProviderSettings,
    requests: Sequence[ChatRequest],
    store: ResponseStore,
    *,
    client: Any = None,
    api_key: Secret | None = None,
    environ: dict[str, str] | None = None,
    progress: Progress | None = None,
    catalog_dir=None,
    notify: Callable[[str], None] | None = None,
) -> tuple[list[ChatResult], RunStats]:
    """Results in the order of ``requests``, and the run's stats.

    ``client`` defaults to a new client of the model's provider (closed at the end) with
    ``api_key``, else the key from ``environ`` (default ``os.environ``); a missing key
    raises ``ProviderConfigError`` before any call. ``progress(calls_done, calls_to_make)``
    is called after each call; ``notify(line)`` is told what batch mode does (``batch.py``).
    """
    started = time.perf_counter()
    requests = [normalise(settings, r) for r in requests]
    keys = [request_key(settings, r) for r in requests]
    by_key = dict(zip(keys, requests))
    stored = store.get_many(by_key)
    missing = [k for k in by_key if k not in stored]
    if settings.order_seed is not None:
        missing = shuffled({k: by_key[k] for k in missing}, settings.order_seed)
    stats = RunStats(settings.name, requests=len(requests), unique_requests=len(by_key), order_seed=settings.order_seed)
    fresh: dict[str, ChatResult] = {}
    if missing:
        prices = _Prices(settings, catalog_dir)
        owner = ClaimOwner.this_process()
        own_client = client is None
        try:
            live = await _batched(
                settings,
                store,
                [(k, by_key[k]) for k in missing],
                key=lambda: api_key or settings.api_key(environ),
                owner=owner,
                prices=prices,
                notify=notify,
                fresh=fresh,
                stats=stats,
            )
            if live:
                if notify is not None and settings.order_seed is not None:
                    notify(_order_line(settings, len(live)))
                if own_client:
                    client = make_client(settings, api_key or settings.api_key(environ))
                await _call_missing(
                    settings,
                    client,
                    store,
                    prices=prices,
                    todo=live,
                    fresh=fresh,
                    stored=stored,
                    stats=stats,
                    progress=progress,
                    owner=owner,
                )
        finally:
            store.release(owner)
            if own_client and client is not None:
                await client.aclose()
    stats.served_from_store = sum(1 for k in keys if k not in fresh)
    results = []
    for key, request in zip(keys, requests):
        result = fresh.get(key) or replace(stored[key])
        results.append(_with_parsed_json(request, _handed_on(result)))
    for result in results:
        if result.error_kind:
            stats.errors[result.error_kind] += 1
        if result.resolved_model:
            stats.resolved_models[result.resolved_model] += 1
        if result.from_store and result.cost_usd:
            stats.stored_cost_usd += result.cost_usd
    stats.wall_s = time.perf_counter() - started
    return results, stats


def _order_line(settings: ProviderSettings, calls: int) -> str:
    """The run's log line saying how its calls go out (the seed, for the record)."""
    paced = f", at least {settings.min_interval_s:g} s apart" if settings.min_interval_s else ""
    return f"{settings.name}: {calls} call(s) in a shuffled order (order seed {settings.order_seed}){paced}"


async def _call_missing(settings, client, store, *, prices, todo, fresh, stored, stats, progress, owner) -> None:
    """Call every (key, request) of ``todo``; results go to ``fresh``, or to ``stored`` when
    another run answered the key first."""
    queue: asyncio.Queue = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    stop: list[ChatResult] = []
    total = len(todo)
    left = [total]
    lease_s = claim_lease_s(settings)
    loop = asyncio.get_running_loop()

    async def worker(i: int) -> None:
        await asyncio.sleep(i * START_INTERVAL_S)
        while left[0] > 0:
            try:
                key, request = queue.get_nowait()
            except asyncio.QueueEmpty:
                # Others are calling, or keys wait for another run's answer.
                await asyncio.sleep(CLAIM_POLL_S)
                continue
            if stop:
                first = stop[0]
                fresh[key] = ChatResult(
                    key=key,
                    error_kind=t.ABORTED,
                    error_message=f"not called: an earlier call failed with {first.error_kind} ({first.error_message})",
                )
                left[0] -= 1
                continue
            state = store.claim(key, owner, lease_s)
            if state != CLAIMED:
                answered = store.get_many([key]) if state == DONE else {}
                if key in answered:
                    stored[key] = answered[key]
                    stats.waited_for_other_runs += 1
                    left[0] -= 1
                else:
                    # BUSY: another live run is calling it; look again shortly.
                    loop.call_later(CLAIM_POLL_S, queue.put_nowait, (key, request))
                continue
            if settings.provider == HTTP_WIRE:
                # A new id for each call: the endpoint cannot link it to the item or to another run.
                request = replace(request, wire_id=opaque_id())
            result = await client.complete(request, key)
            result.cost_usd = prices.cost(result)
            # Stored first, as it came: nothing below may lose a paid answer.
            store.put(settings, request, result, owner=owner)
            fresh[key] = result
            stats.calls_made += 1
            _count_call(stats, result)
            if result.error_kind in t.RUN_STOPPING_KINDS and not stop:
                stop.append(result)
            left[0] -= 1
            if progress is not None:
                progress(stats.calls_made, total)

    await asyncio.gather(*(worker(i) for i in range(min(settings.max_concurrency, len(todo)))))


async def _batched(settings, store, todo, *, key, owner, prices, notify, fresh, stats) -> list:
    """``batch.run_batches`` for the missing items: the open batches that hold any of them are
    polled, and with ``batch: true`` the rest is submitted as batches; their results go to
    ``fresh`` (this run's keys) and ``stats``. Returns the items left to live calls."""
    live, run = await run_batches(
        settings,
        store,
        todo,
        backend_factory=lambda: make_batch_backend(settings, key()),
        owner=owner,
        price=prices.batch_cost,
        notify=notify or (lambda line: None),
        lease_s=claim_lease_s(settings),
    )
    if run is None:
        return live
    wanted = {k for k, _ in todo}
    for result in run.fresh.values():
        if result.key in wanted:
            fresh[result.key] = result
        if result.attempts:
            # A batch answer is one call, whichever run submitted its batch.
            stats.calls_made += 1
            _count_call(stats, result)
    stats.batches_submitted, stats.batch_answers = run.submissions, run.answers
    return live


def run_requests(
    settings: ProviderSettings,
    requests: Sequence[ChatRequest],
    store: ResponseStore,
    **kwargs: Any,
) -> tuple[list[ChatResult], RunStats]:
    """``run_requests_async`` for synchronous callers (Dagster assets, scripts)."""
    return run_sync(run_requests_async(settings, requests, store, **kwargs), "provider-run")


def run_sync(coro: Coroutine[Any, Any, Any], thread_name: str) -> Any:
    """``asyncio.run``, on a thread of its own when called inside a running loop (a notebook)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=thread_name)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
