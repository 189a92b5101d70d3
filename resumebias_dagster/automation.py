"""Automation: re-audits when a provider's alias moves to a new snapshot, a weekly re-audit,
and the run tags that put every partition's run in its pool.

Pools. Training and the embedded models' inference use the Dagster pool ``gpu`` (one device).
A partitioned asset has one static pool, but its partitions reach different providers, so the
runs this module and ``resumebias run`` launch carry the run tag ``resumebias/pool``: ``gpu``
for local models, ``provider:<provider>:<endpoint>`` for a model behind an API. The instance's
``dagster.yaml`` allows one run per pool value (and one run per backfill) at a time, so each
model's configured concurrency and requests-per-minute hold across runs, not just within one.
"""

from __future__ import annotations

import json
import os

import dagster as dg

from resumebias_dagster.core.model_config import ModelSpec, load_models
from resumebias_dagster.jobs import fit_scores_job, seniority_predictions_job
from resumebias_dagster.partitions import fit_model_partitions, jd_partitions, model_partitions
from resumebias_dagster.resources.providers import ProvidersResource

POOL_TAG = "resumebias/pool"
SNAPSHOT_TAG = "resumebias/snapshot"
ALIAS_SENSOR_ENV = "RESUMEBIAS_ALIAS_SENSOR"
ALIAS_SENSOR_INTERVAL_ENV = "RESUMEBIAS_ALIAS_SENSOR_INTERVAL_S"
REAUDIT_SCHEDULE_ENV = "RESUMEBIAS_REAUDIT_SCHEDULE"
REAUDIT_CRON_ENV = "RESUMEBIAS_REAUDIT_CRON"


def provider_pool(provider: str, base_url: str | None, vertex_location: str | None) -> str:
    return f"provider:{provider}:{base_url or vertex_location or 'default'}"


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


def probe_aliases(context, providers: ProvidersResource, seen: dict[str, str]) -> dict[str, tuple[str | None, str, int]]:
    """Probe every enabled provider model; record snapshots; return the models whose alias
    moved as {model: (previous, now, epoch)}. ``seen`` is updated in place."""
    moved = {}
    for name in providers.model_names:
        try:
            resolved = providers.probe(name)
        except Exception as exc:  # noqa: BLE001 - one unreachable provider must not stop the others
            context.log.warning(f"{name}: could not probe the alias: {exc}")
            continue
        changed, epoch = providers.store().observe_snapshot(providers.settings(name), resolved)
        if changed:
            context.log.info(f"{name}: alias moved from {seen.get(name)} to {resolved} (snapshot epoch {epoch})")
            moved[name] = (seen.get(name), resolved, epoch)
        seen[name] = resolved
    return moved


def build_model_alias_sensor(prediction_models, fit_models, jds) -> dg.SensorDefinition:
    """The alias sensor over the given partitions (the definitions' by default)."""

    @dg.sensor(
        name="model_alias_sensor",
        minimum_interval_seconds=int(os.environ.get(ALIAS_SENSOR_INTERVAL_ENV, "3600")),
        default_status=dg.DefaultSensorStatus.RUNNING if _status(ALIAS_SENSOR_ENV) else dg.DefaultSensorStatus.STOPPED,
        jobs=[seniority_predictions_job, fit_scores_job],
        description="Probes each enabled provider model's alias; when it resolves to a new snapshot, re-runs that "
        "model's prediction and fit-score partitions with fresh calls (old answers stay in the store).",
    )
    def model_alias_sensor(context: dg.SensorEvaluationContext, providers: ProvidersResource):
        seen = json.loads(context.cursor) if context.cursor else {}
        moved = probe_aliases(context, providers, seen)
        cursor = json.dumps(seen, sort_keys=True)
        if not moved:
            return dg.SensorResult(skip_reason=dg.SkipReason(f"no alias moved ({len(seen)} probed)"), cursor=cursor)
        requests = []
        for name, (_old, new, epoch) in moved.items():
            requests += rerun_requests(
                providers, [name], f"snapshot-{epoch}", prediction_models, fit_models, jds, {SNAPSHOT_TAG: new}
            )
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
        probe_aliases(context, providers, {})
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
