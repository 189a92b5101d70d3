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

Re-runs from stored state. The store records each alias's snapshot and its epoch (bumped on
each move). The sensor's cursor holds, per model, the epoch whose re-runs were requested; each
tick requests the re-runs of every model whose stored epoch is above it, with run keys naming
the epoch and snapshot (Dagster runs a key once), and the cursor advances only with the
requests that Dagster receives. A tick that fails after the store recorded a move therefore
leaves the re-run to the next tick, and every model on a moved alias is re-run, not only the
one whose probe saw the move. A model the cursor does not know yet (a new sensor, a new model,
a model whose alias or endpoint changed in the config) starts from the epoch stored before the
tick's probe: moves seen by that probe are re-run, older ones are the baseline.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import dagster as dg

from resumebias_dagster.core.models.model_config import ModelSpec, load_models
from resumebias_dagster.core.providers.types import ProviderSettings, url_host
from resumebias_dagster.jobs import fit_scores_job, seniority_predictions_job
from resumebias_dagster.partitions import fit_model_partitions, jd_partitions, model_partitions
from resumebias_dagster.resources.providers import ProvidersResource

POOL_TAG = "resumebias/pool"
SNAPSHOT_TAG = "resumebias/snapshot"
ALIAS_SENSOR_ENV = "RESUMEBIAS_ALIAS_SENSOR"
ALIAS_SENSOR_INTERVAL_ENV = "RESUMEBIAS_ALIAS_SENSOR_INTERVAL_S"
REAUDIT_SCHEDULE_ENV = "RESUMEBIAS_REAUDIT_SCHEDULE"
REAUDIT_CRON_ENV = "RESUMEBIAS_REAUDIT_CRON"
CURSOR_VERSION = 2


def provider_pool(provider: str, base_url: str | None, vertex_location: str | None) -> str:
    """The pool of a provider model: its provider and the host[:port] of its base_url (never
    the URL's user info, path or query: tags are shown in the UI), else its Vertex location."""
    return f"provider:{provider}:{url_host(base_url) if base_url else vertex_location or 'default'}"


def pool_of(spec: ModelSpec) -> str:
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


def _status(env: str) -> bool:
    return os.environ.get(env, "").lower() in ("1", "on", "true", "yes")


def rerun_requests(
    providers: ProvidersResource, models: list[str], reason: str, prediction_models, fit_models, jds,
    tags: dict[str, str] | None = None,
) -> list[dg.RunRequest]:
    """Runs of every prediction and fit-score partition of the provider ``models`` (the
    downstream tables follow by declarative automation)."""
    requests = []
    for model in models:
        settings = providers.settings(model)
        pool = provider_pool(settings.provider, settings.base_url, settings.vertex_location)
        base = {POOL_TAG: pool, **(tags or {})}
        if model in prediction_models:
            requests.append(dg.RunRequest(
                run_key=f"{reason}:{model}:seniority", job_name="seniority_predictions_job", partition_key=model, tags=base,
            ))
        if model in fit_models:
            for jd in jds:
                key = dg.MultiPartitionKey({"model": model, "jd": jd})
                requests.append(dg.RunRequest(
                    run_key=f"{reason}:{model}:{jd}", job_name="fit_scores_job", partition_key=key, tags=base,
                ))
    return requests


def probe_aliases(context, providers: ProvidersResource) -> dict[str, tuple[str, bool, int]]:
    """Probe every enabled provider model at once (short timeout, no retries) and record each
    answer's snapshot in the store: ``{model: (resolved, moved, epoch)}`` of the models that
    answered. A model that could not be probed is a logged warning and absent from the result."""
    names = providers.model_names
    if not names:
        return {}
    observed = {}
    for name, resolved in providers.probe(names).items():
        if isinstance(resolved, Exception):  # one unreachable provider must not stop the others
            context.log.warning(f"{name}: could not probe the alias: {resolved}")
            continue
        moved, epoch = providers.store().observe_snapshot(providers.settings(name), resolved)
        if moved:
            context.log.info(f"{name}: alias moved to {resolved} (snapshot epoch {epoch})")
        observed[name] = (resolved, moved, epoch)
    return observed


def alias_id(settings: ProviderSettings) -> str:
    """Which alias a model's snapshot row is of: provider, alias and a digest of the endpoint
    (the cursor is shown in the UI; an endpoint's text stays out of it)."""
    digest = hashlib.sha256(settings.endpoint.encode()).hexdigest()[:12]
    return f"{settings.provider}:{settings.model}@{digest}"


def read_cursor(cursor: str | None) -> dict[str, Any]:
    """``{model: entry}`` of a sensor cursor: ``{"alias", "snapshot", "epoch"}`` (the epoch whose
    re-runs were requested), or the snapshot name of a cursor written before the epochs were
    kept in it (``{model: snapshot}``)."""
    if not cursor:
        return {}
    data = json.loads(cursor)
    if isinstance(data, dict) and data.get("version") == CURSOR_VERSION:
        return dict(data.get("models") or {})
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def requested_epoch(entry: Any, alias: str, before: tuple[str, int] | None, now: tuple[str, int]) -> int:
    """The epoch up to which a model's re-runs count as requested.

    ``entry`` is the model's cursor entry, ``before`` and ``now`` the stored (snapshot, epoch)
    before and after this tick's probe. A cursor entry of the same alias is the answer. An
    entry of the old cursor format holds the snapshot last seen: if the store has moved on
    from it, the re-run of the stored epoch is owed. No entry, or one of another alias (the
    config changed): the epoch stored before this tick's probe, so moves this probe saw are
    re-run and older ones are a baseline, as is an alias's first sighting.
    """
    if isinstance(entry, dict) and entry.get("alias") == alias and isinstance(entry.get("epoch"), int):
        return entry["epoch"]
    if isinstance(entry, str) and before is not None:
        return before[1] if before[0] == entry else max(before[1] - 1, 0)
    return before[1] if before is not None else now[1]


def build_model_alias_sensor(prediction_models, fit_models, jds) -> dg.SensorDefinition:
    """The alias sensor over the given partitions (the definitions' by default)."""

    @dg.sensor(
        name="model_alias_sensor",
        minimum_interval_seconds=int(os.environ.get(ALIAS_SENSOR_INTERVAL_ENV, "3600")),
        default_status=dg.DefaultSensorStatus.RUNNING if _status(ALIAS_SENSOR_ENV) else dg.DefaultSensorStatus.STOPPED,
        jobs=[seniority_predictions_job, fit_scores_job],
        description="Probes each enabled provider model's alias (all at once, short timeout); when the store has "
        "recorded a new snapshot whose re-runs were not yet requested, re-runs that model's prediction and "
        "fit-score partitions with fresh calls (old answers stay in the store).",
    )
    def model_alias_sensor(context: dg.SensorEvaluationContext, providers: ProvidersResource):
        previous = read_cursor(context.cursor)
        names = providers.model_names
        store = providers.store()
        before = {name: store.snapshot(providers.settings(name)) for name in names}
        observed = probe_aliases(context, providers)
        entries, requests, rerun = {}, [], []
        for name in names:
            settings = providers.settings(name)
            now = store.snapshot(settings)
            if now is None:  # never probed successfully: nothing to compare yet
                if isinstance(previous.get(name), dict):
                    entries[name] = previous[name]
                continue
            resolved, epoch = now
            alias = alias_id(settings)
            done = requested_epoch(previous.get(name), alias, before[name], now)
            if epoch > done:
                requests += rerun_requests(
                    providers, [name], f"snapshot-{epoch}:{resolved}", prediction_models, fit_models, jds,
                    {SNAPSHOT_TAG: resolved},
                )
                rerun.append(f"{name} (snapshot {resolved}, epoch {epoch})")
            elif epoch < done:
                context.log.warning(f"{name}: the store holds snapshot epoch {epoch}, the cursor {done}: "
                                    "the store was replaced; counting from the store's epoch")
            entries[name] = {"alias": alias, "snapshot": resolved, "epoch": epoch}
        cursor = json.dumps({"version": CURSOR_VERSION, "models": entries}, sort_keys=True)
        if not requests:
            failed = sorted(set(names) - set(observed))
            note = f"; could not probe {', '.join(failed)}" if failed else ""
            what = f"moved: {', '.join(rerun)}, with no partition here" if rerun else "no alias moved"
            return dg.SensorResult(skip_reason=dg.SkipReason(f"{what} ({len(observed)} probed{note})"), cursor=cursor)
        context.log.info(f"re-running {', '.join(rerun)}")
        return dg.SensorResult(run_requests=requests, cursor=cursor)

    return model_alias_sensor


def _reaudit(job) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=f"weekly_{job.name.removesuffix('_job')}_reaudit",
        cron_schedule=os.environ.get(REAUDIT_CRON_ENV, "0 3 * * 1"),
        job=job,
        default_status=dg.DefaultScheduleStatus.RUNNING if _status(REAUDIT_SCHEDULE_ENV) else dg.DefaultScheduleStatus.STOPPED,
        description="Weekly re-audit of every provider model: aliases are probed first, so a moved snapshot gets "
        "fresh calls; unchanged ones are answered by the response store (no spend).",
    )
    def reaudit(context: dg.ScheduleEvaluationContext, providers: ProvidersResource):
        if not providers.model_names:
            return dg.SkipReason("no provider model is enabled in the models config")
        probe_aliases(context, providers)  # records moves, so the runs below call the new snapshot afresh
        date = context.scheduled_execution_time.strftime("%Y-%m-%d")
        requests = rerun_requests(
            providers, providers.model_names, f"weekly-{date}", set(model_partitions.get_partition_keys()),
            set(fit_model_partitions.get_partition_keys()), jd_partitions.get_partition_keys(),
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
