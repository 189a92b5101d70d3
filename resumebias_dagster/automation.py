"""Automation: re-audits when a provider's alias moves to a new snapshot, a weekly re-audit,
and the run tags that put every partition's run in its pool.

Pools. Training and the embedded models' inference use the Dagster pool ``gpu`` (one device).
A partitioned asset has one static pool, but its partitions reach different providers, so the
runs this module and ``resumebias run`` launch carry the run tag ``resumebias/pool``: ``gpu``
for local models, ``provider:<provider>:<host[:port]>`` for a model behind an API (the host of
its ``base_url``, credentials and path left out, so no secret in a URL reaches the UI; a Vertex
model's location; ``default`` for the provider's own host). The instance's ``dagster.yaml``
allows one run per pool value (and one run per backfill) at a time, so each model's configured
concurrency and requests-per-minute hold across runs, not just within one.

Alias probes. The sensor and the weekly schedules probe every enabled provider model at once,
each with a short timeout and no retries (``core.providers.alias_probe``): a slow or failing provider
is a logged warning, never a failed or stalled tick.

Re-runs from stored state. The store records each alias's current snapshot and its epoch,
and every snapshot the alias was seen resolving to with the epoch it was first given
(``snapshot_epochs``): a new snapshot gets the next epoch, a return to one seen before gets
that snapshot's epoch back. The epoch is part of every request key, so a return to an audited
snapshot is answered from the store (nothing paid), and a new one is called afresh. The
sensor's cursor holds, per model, the snapshot and epoch whose re-runs were requested last
(or the baseline) and when; each tick requests the re-runs of every model whose stored
snapshot differs from it, with run keys naming the epoch and snapshot (and, for a snapshot
this sensor re-ran before, the how-manyth re-run: Dagster runs a key once), and the cursor
advances only with the requests that Dagster receives. A tick that fails after the store
recorded a move therefore leaves the re-run to the next tick, and every model on a moved alias
is re-run, not only the one whose probe saw the move. A model the cursor does not know yet (a
new sensor, a new model, a model whose alias or endpoint changed in the config) starts from
the snapshot stored before the tick's probe: moves seen by that probe are re-run, older ones
are the baseline.

Flapping aliases. A server may alternate the snapshot it reports (A, B, A, ...). The sensor
requests one model's re-runs at most once per ``RESUMEBIAS_REAUDIT_MIN_INTERVAL_S`` seconds
(default 86400, a day; 0: no limit; a whole number, else definitions refuse to load, naming
the variable). A move within that time after the model's last re-run is a logged warning and
part of the tick's skip reason, naming the snapshots seen since (with their epochs); the re-run
owed is requested on the first tick after the interval, at the snapshot the alias then reports
(none if it is back at the one last re-run). A genuine move to a new snapshot is thus re-run at
once when the model was quiet for the interval, else when the interval is over. The weekly
re-audit (``RESUMEBIAS_REAUDIT_CRON``) is not limited by it.

Every tool, not only provider models. A scoring endpoint (``kind: http``) with a ``version``
source is probed like an alias (its version endpoint, or one scoring call whose reply names the
version): a new version is a move, with its own epoch and re-runs. One without a version source
cannot say when it changed: the weekly re-audit gives it a new epoch per scheduled date
(``scheduled-<date>``), so its partitions are called afresh rather than answered from the store.
Re-runs cover the ranking task's partitions too (``rankings_job``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import dagster as dg

from resumebias_dagster.core.models.model_config import ModelSpec, load_models
from resumebias_dagster.core.providers.types import ProviderSettings
from resumebias_dagster.core.providers.urls import url_host
from resumebias_dagster.jobs import fit_scores_job, rankings_job, seniority_predictions_job
from resumebias_dagster.partitions import fit_model_partitions, jd_partitions, model_partitions
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.settings import (
    ALIAS_SENSOR_ENV,
    ALIAS_SENSOR_INTERVAL_ENV,
    REAUDIT_MIN_INTERVAL_ENV,
    REAUDIT_SCHEDULE_ENV,
    reaudit_cron,
    seconds,
    switched_on,
)

POOL_TAG = "resumebias/pool"
SNAPSHOT_TAG = "resumebias/snapshot"
DEFAULT_REAUDIT_MIN_INTERVAL_S = 86400
# Version 2 entries gained requested_at, requests and seen; entries without them still read.
CURSOR_VERSION = 2


def alias_sensor_interval_s() -> int:
    return seconds(ALIAS_SENSOR_INTERVAL_ENV, 3600, 1, "how often model_alias_sensor probes the aliases")


def reaudit_min_interval_s() -> int:
    return seconds(
        REAUDIT_MIN_INTERVAL_ENV,
        DEFAULT_REAUDIT_MIN_INTERVAL_S,
        0,
        "the least time between two re-runs of one model that model_alias_sensor requests; 0: no limit",
    )


def provider_pool(provider: str, base_url: str | None, vertex_location: str | None) -> str:
    """The pool of a provider model: its provider and the host[:port] of its base_url (never
    the URL's user info, path or query: tags are shown in the UI), else its Vertex location."""
    return f"provider:{provider}:{url_host(base_url) if base_url else vertex_location or 'default'}"


def pool_of(spec: ModelSpec) -> str:
    if spec.kind == "http":
        return provider_pool("http", spec.option("url"), None)
    if spec.kind != "provider":
        return "gpu"
    return provider_pool(spec.option("provider"), spec.option("base_url"), spec.option("vertex_location"))


def model_tags(model: str) -> dict[str, str]:
    """Run tags of a run of ``model``'s partitions (its pool)."""
    pools = {spec.name: pool_of(spec) for spec in load_models()}
    return {POOL_TAG: pools[model]}


def model_jd_tags(partition_key: str) -> dict[str, str]:
    # Multi-partition keys are "<jd>|<model>": dimensions in name order.
    return model_tags(partition_key.split("|")[1])


def rerun_requests(
    providers: ProvidersResource,
    models: list[str],
    reason: str,
    *,
    prediction_models,
    fit_models,
    jds,
    tags: dict[str, str] | None = None,
    ranked=frozenset(),
) -> list[dg.RunRequest]:
    """Runs of every prediction and fit-score partition of ``models`` (provider models and
    scoring endpoints; the downstream tables follow by declarative automation), and of their
    ranking partitions among ``ranked`` (the ones materialised before: the ranking task runs on
    request, so a re-audit repeats what was asked, never starts it)."""
    requests = []
    for model in models:
        settings = providers.settings(model)
        pool = provider_pool(settings.provider, settings.base_url, settings.vertex_location)
        base = {POOL_TAG: pool, **(tags or {})}
        if model in prediction_models:
            requests.append(
                dg.RunRequest(
                    run_key=f"{reason}:{model}:seniority",
                    job_name="seniority_predictions_job",
                    partition_key=model,
                    tags=base,
                )
            )
        if model in fit_models:
            for jd in jds:
                key = dg.MultiPartitionKey({"model": model, "jd": jd})
                requests.append(
                    dg.RunRequest(
                        run_key=f"{reason}:{model}:{jd}",
                        job_name="fit_scores_job",
                        partition_key=key,
                        tags=base,
                    )
                )
        requests += [
            dg.RunRequest(
                run_key=f"{reason}:{model}:{jd}:ranking",
                job_name="rankings_job",
                partition_key=key,
                tags=base,
            )
            for jd in jds
            if str(key := dg.MultiPartitionKey({"model": model, "jd": jd})) in ranked
        ]
    return requests


def probe_aliases(context, providers: ProvidersResource) -> dict[str, tuple[str, bool, int]]:
    """Probe every enabled provider model at once (short timeout, no retries) and record each
    answer's snapshot in the store: ``{model: (resolved, moved, epoch)}`` of the models that
    answered. A model that could not be probed is a logged warning and absent from the result.
    Every model with a version is probed: provider models and versioned scoring endpoints."""
    names = providers.versioned_names
    if not names:
        return {}
    observed = {}
    store = providers.store()
    for name, resolved in providers.probe(names).items():
        if isinstance(resolved, Exception):  # one unreachable provider must not stop the others
            context.log.warning(f"{name}: could not probe the alias: {resolved}")
            continue
        settings = providers.settings(name)
        moved, epoch = store.observe_snapshot(settings, resolved)
        if moved:
            seen = {h["resolved_model"]: h for h in store.snapshot_history(settings)}.get(resolved)
            if seen and seen["first_seen"] != seen["last_seen"]:
                context.log.info(
                    f"{name}: alias moved back to {resolved} (snapshot epoch {epoch}, seen before: "
                    "its stored answers are served again)"
                )
            else:
                context.log.info(f"{name}: alias moved to {resolved} (snapshot epoch {epoch})")
        observed[name] = (resolved, moved, epoch)
    return observed


def alias_id(settings: ProviderSettings) -> str:
    """Which alias a model's snapshot row is of: provider, alias and a digest of the endpoint
    (the cursor is shown in the UI; an endpoint's text stays out of it)."""
    digest = hashlib.sha256(settings.endpoint.encode()).hexdigest()[:12]
    return f"{settings.provider}:{settings.model}@{digest}"


def read_cursor(cursor: str | None) -> dict[str, Any]:
    """``{model: entry}`` of a sensor cursor: ``{"alias", "snapshot", "epoch", "requested_at",
    "requests", "seen"}`` (see ``requested_entry``), or the snapshot name of a cursor written
    before the epochs were kept in it (``{model: snapshot}``)."""
    if not cursor:
        return {}
    data = json.loads(cursor)
    if isinstance(data, dict) and data.get("version") == CURSOR_VERSION:
        return dict(data.get("models") or {})
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def requested_entry(entry: Any, alias: str, before: tuple[str, int] | None, now: tuple[str, int]) -> dict[str, Any]:
    """A model's cursor entry: the ``snapshot`` and ``epoch`` whose re-runs were requested last
    (or the baseline), ``requested_at`` (epoch seconds; None: never by this cursor), ``requests``
    (``{epoch: re-runs requested}``, for run keys of their own) and ``seen`` (the ``[snapshot,
    epoch]`` pairs seen since the last re-run, for the flapping report).

    ``entry`` is the model's cursor entry, ``before`` and ``now`` the stored (snapshot, epoch)
    before and after this tick's probe. A cursor entry of the same alias is the answer. An
    entry of the old cursor format holds the snapshot last seen: if the store has moved on
    from it, a re-run is owed. No entry, or one of another alias (the config changed): the
    snapshot stored before this tick's probe, so moves this probe saw are re-run and older ones
    are a baseline, as is an alias's first sighting.
    """
    if (
        isinstance(entry, dict)
        and entry.get("alias") == alias
        and isinstance(entry.get("epoch"), int)
        and isinstance(entry.get("snapshot"), str)
    ):
        # An entry written before requests were kept: its epoch's plain run keys may have run.
        return {"requested_at": None, "requests": {str(entry["epoch"]): 1}, **entry}
    if isinstance(entry, str) and before is not None:
        snapshot, epoch = (entry, before[1]) if before[0] == entry else (entry, None)
    else:
        snapshot, epoch = before if before is not None else now
    return {"alias": alias, "snapshot": snapshot, "epoch": epoch, "requested_at": None, "requests": {}}


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")


def _seen_text(seen: list) -> str:
    return ", ".join(s if e is None else f"{s} (epoch {e})" for s, e in seen)


def build_model_alias_sensor(
    prediction_models,
    fit_models,
    jds,
    clock: Callable[[], float] = time.time,
) -> dg.SensorDefinition:
    """The alias sensor over the given partitions (the definitions' by default); ``clock``
    (epoch seconds) times the re-audit interval."""
    min_interval = reaudit_min_interval_s()

    @dg.sensor(
        name="model_alias_sensor",
        minimum_interval_seconds=alias_sensor_interval_s(),
        default_status=dg.DefaultSensorStatus.RUNNING
        if switched_on(ALIAS_SENSOR_ENV)
        else dg.DefaultSensorStatus.STOPPED,
        jobs=[seniority_predictions_job, fit_scores_job, rankings_job],
        description="Probes each enabled provider model's alias (all at once, short timeout); when the store has "
        "recorded a new snapshot (or a scoring endpoint a new version) whose re-runs were not yet requested, re-runs "
        "that model's prediction, fit-score and ranking partitions with fresh calls (old answers stay in the store; a snapshot seen before is served "
        f"from them). At most one re-run per model per {REAUDIT_MIN_INTERVAL_ENV} (a flapping alias is reported).",
    )
    def model_alias_sensor(context: dg.SensorEvaluationContext, providers: ProvidersResource):
        previous = read_cursor(context.cursor)
        names = providers.versioned_names
        store = providers.store()
        before = {name: store.snapshot(providers.settings(name)) for name in names}
        observed = probe_aliases(context, providers)
        ranked = ranked_partitions(context)
        t = clock()
        tick = _Tick()
        for name in names:
            settings = providers.settings(name)
            now = store.snapshot(settings)
            if now is None:  # never probed successfully: nothing to compare yet
                if isinstance(previous.get(name), dict):
                    tick.entries[name] = previous[name]
                continue
            _check_model(
                tick,
                context,
                providers,
                name,
                previous=previous.get(name),
                before=before[name],
                now=now,
                t=t,
                min_interval=min_interval,
                partitions=(prediction_models, fit_models, jds, ranked),
            )
        cursor = json.dumps({"version": CURSOR_VERSION, "models": tick.entries}, sort_keys=True)
        if not tick.requests:
            return dg.SensorResult(skip_reason=dg.SkipReason(_skip_text(tick, names, observed)), cursor=cursor)
        context.log.info(f"re-running {', '.join(tick.rerun)}")
        return dg.SensorResult(run_requests=tick.requests, cursor=cursor)

    return model_alias_sensor


@dataclass
class _Tick:
    """What one evaluation of the alias sensor decides, model by model."""

    entries: dict[str, dict] = field(default_factory=dict)  # the cursor's entry per model
    requests: list[dg.RunRequest] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)
    flapping: list[str] = field(default_factory=list)


def _check_model(
    tick: _Tick,
    context: dg.SensorEvaluationContext,
    providers: ProvidersResource,
    name: str,
    *,
    previous,
    before,
    now: tuple[str, int],
    t: float,
    min_interval: int,
    partitions: tuple,
) -> None:
    """Compare one model's snapshot with its cursor entry: request its re-runs when it moved and
    the interval is over, report flapping, and keep its entry."""
    prediction_models, fit_models, jds, ranked = partitions
    settings = providers.settings(name)
    resolved, epoch = now
    alias = alias_id(settings)
    entry = requested_entry(previous, alias, before, now)
    if entry["snapshot"] == resolved and entry["epoch"] != epoch:
        if entry["epoch"] is not None:
            context.log.warning(
                f"{name}: the store holds snapshot epoch {epoch}, the cursor {entry['epoch']}: "
                "the store was replaced; counting from the store's epoch"
            )
        entry["epoch"] = epoch
    seen = [list(s) for s in entry.get("seen") or [[entry["snapshot"], entry["epoch"]]]]
    if resolved not in [s for s, _ in seen]:
        seen.append([resolved, epoch])
    last = entry["requested_at"]
    due = last is None or t >= last + min_interval
    if resolved != entry["snapshot"] and due:
        made = dict(entry["requests"])
        n = made.get(str(epoch), 0)
        # A snapshot this sensor re-ran before (the alias came back): run keys of their own.
        reason = f"snapshot-{epoch}:{resolved}" + (f":rerun-{n + 1}" if n else "")
        tick.requests += rerun_requests(
            providers,
            [name],
            reason,
            prediction_models=prediction_models,
            fit_models=fit_models,
            jds=jds,
            tags={SNAPSHOT_TAG: resolved},
            ranked=ranked,
        )
        tick.rerun.append(f"{name} (snapshot {resolved}, epoch {epoch})")
        made[str(epoch)] = n + 1
        tick.entries[name] = {
            "alias": alias,
            "snapshot": resolved,
            "epoch": epoch,
            "requested_at": t,
            "requests": made,
            "seen": [[resolved, epoch]],
        }
        return
    if not due and len(seen) > 1:
        owed = (
            f"its re-run waits until {_when(last + min_interval)}"
            if resolved != entry["snapshot"]
            else "the snapshot of its last re-run: nothing owed"
        )
        tick.flapping.append(f"{name} (snapshots seen: {_seen_text(seen)}; now {resolved}, {owed})")
        context.log.warning(
            f"{name}: alias flapping: snapshots seen since its re-run at {_when(last)}: {_seen_text(seen)}; "
            f"now {resolved} (epoch {epoch}), {owed} (one re-run per {REAUDIT_MIN_INTERVAL_ENV}="
            f"{min_interval} s)"
        )
    if due:  # nothing owed and the interval is over: any flapping has settled
        seen = [[entry["snapshot"], entry["epoch"]]]
    tick.entries[name] = {**entry, "alias": alias, "seen": seen}


def _skip_text(tick: _Tick, names: list[str], observed) -> str:
    failed = sorted(set(names) - set(observed))
    note = f"; could not probe {', '.join(failed)}" if failed else ""
    what = (
        f"moved: {', '.join(tick.rerun)}, with no partition here"
        if tick.rerun
        else "no re-run due"
        if tick.flapping
        else "no alias moved"
    )
    flaps = f"; flapping: {'; '.join(tick.flapping)}" if tick.flapping else ""
    return f"{what} ({len(observed)} probed{note}){flaps}"


def ranked_partitions(context) -> set[str]:
    """The ranking partitions materialised on the context's instance (none without one)."""
    try:
        instance = context.instance
    except dg.DagsterInvariantViolationError:  # a context built without an instance (tests)
        return set()
    return set(instance.get_materialized_partitions(dg.AssetKey("rankings")))


def unversioned_epochs(providers: ProvidersResource, date: str) -> None:
    """A new epoch, once per scheduled date, for each scoring endpoint that reports no version:
    nothing says whether it changed, so its re-audit calls it afresh (the other schedules of the
    same date find the epoch already given)."""
    store = providers.store()
    for name in sorted(set(providers.tool_names) - set(providers.versioned_names)):  # http entries only
        settings = providers.settings(name)
        if store.snapshot(settings) is None:  # the answers so far: epoch 0, before any re-audit
            store.observe_snapshot(settings, "unversioned")
        store.observe_snapshot(settings, f"scheduled-{date}")


def _reaudit(job) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=f"weekly_{job.name.removesuffix('_job')}_reaudit",
        cron_schedule=reaudit_cron(),
        job=job,
        default_status=dg.DefaultScheduleStatus.RUNNING
        if switched_on(REAUDIT_SCHEDULE_ENV)
        else dg.DefaultScheduleStatus.STOPPED,
        description="Weekly re-audit of every provider model and scoring endpoint: aliases and versions are probed "
        "first, so a moved snapshot gets fresh calls and unchanged ones are answered by the response store (no "
        "spend); a scoring endpoint that reports no version is called afresh.",
    )
    def reaudit(context: dg.ScheduleEvaluationContext, providers: ProvidersResource):
        if not providers.tool_names:
            return dg.SkipReason("no provider model or scoring endpoint is enabled in the models config")
        probe_aliases(context, providers)  # records moves, so the runs below call the new snapshot afresh
        date = context.scheduled_execution_time.strftime("%Y-%m-%d")
        unversioned_epochs(providers, date)
        requests = rerun_requests(
            providers,
            providers.tool_names,
            f"weekly-{date}",
            prediction_models=set(model_partitions.get_partition_keys()),
            fit_models=set(fit_model_partitions.get_partition_keys()),
            jds=jd_partitions.get_partition_keys(),
            ranked=ranked_partitions(context),
        )
        return [r for r in requests if r.job_name == job.name]

    return reaudit


model_alias_sensor = build_model_alias_sensor(
    set(model_partitions.get_partition_keys()),
    set(fit_model_partitions.get_partition_keys()),
    jd_partitions.get_partition_keys(),
)
weekly_seniority_reaudit = _reaudit(seniority_predictions_job)
weekly_fit_reaudit = _reaudit(fit_scores_job)
weekly_rankings_reaudit = _reaudit(rankings_job)
