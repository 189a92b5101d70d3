"""Integrity of the automation: the alias probes, the sensor's re-runs and the pool tags.

Against real HTTP fake providers (resumebias_dagster.testing.fake_providers):

- a slow provider is a warning, never a failed or stalled tick (sensor or weekly schedule):
  every model is probed at once, each with a short timeout and no retries (shown by the
  servers' logs, not by the clock);
- the re-runs of a moved alias are requested from stored state (the store's snapshot epoch
  against the epoch the sensor cursor says was already requested), so a tick that fails after
  the store recorded the move leaves the re-run to the next tick, and every model on the
  moved alias is re-run, not only the one whose probe saw the move;
- the probe request is the model's own (its temperature, none for Anthropic, its max_tokens);
- run tags name the provider's host only: credentials in a base_url never reach the UI.

Each test failed on the code before this change.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import datetime, timezone

import dagster as dg
import pytest
import yaml

from resumebias_dagster import automation
from resumebias_dagster.automation import (
    POOL_TAG,
    SNAPSHOT_TAG,
    build_model_alias_sensor,
    model_tags,
    pool_of,
    weekly_fit_reaudit,
)
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.providers import alias_probe as probe
from resumebias_dagster.core.providers.store import ResponseStore
from resumebias_dagster.core.providers.types import ProviderSettings
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.testing import fake_providers as fp
from resumebias_dagster.testing.sensors import LogRecords as _Records
from resumebias_dagster.testing.sensors import all_partitions, requested
from resumebias_dagster.testing.sensors import tick as _tick

JDS = ["jd-a", "jd-b"]


def _resource(data_dir, entries) -> ProvidersResource:
    """A ProvidersResource over a models file and a store under the data directory."""
    file = data_dir / "models.yaml"
    file.write_text(yaml.safe_dump({"models": entries}))
    return ProvidersResource(models_file=str(file), store_path=str(data_dir / "responses.sqlite"))


def _stored_epoch(data_dir, providers: ProvidersResource, name: str) -> int:
    with dg.build_resources({"providers": providers}) as resources:
        settings = resources.providers.settings(name)
    with ResponseStore(data_dir / "responses.sqlite") as store:
        return store.snapshot(settings)[1]


# ------------------------------------------------------------------ B1: concurrent, short, no retries


def _fast_and_slow(data_dir, fake_server, model_entry, monkeypatch):
    """A fast model and a slow one (both with the default-like timeout 10 s and 3 retries), the
    probe timeout at 0.5 s, and ``arm()``: the slow server's next reply comes after 8 s, and the
    fast server's next answer waits until the slow server has been asked (3 s at most), noting
    in ``seen`` what the slow server had done by then. The fast model comes first in the models
    file: probed one after the other, it would be answered before the slow one is even asked."""
    monkeypatch.setattr(probe, "PROBE_TIMEOUT_S", 0.5)
    snapshots = {"openai/gpt-5": "gpt-5-2508"}
    fast = fake_server("openai", resolved_model=lambda alias: snapshots[alias])
    slow = fake_server("openai")
    providers = _resource(
        data_dir,
        [
            model_entry("openai", fast.base_url, name="fast", timeout_s=10.0, max_retries=3),
            model_entry("openai", slow.base_url, name="slow", timeout_s=10.0, max_retries=3),
        ],
    )
    seen: list[tuple[int, dict]] = []

    def fast_answer(request):
        deadline = time.monotonic() + 3.0
        while slow.count == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append((slow.count, dict(slow.stats.outcomes)))
        return "OK"

    def arm() -> None:
        fast.reset_counts()
        slow.reset_counts()
        slow.script(fp.slow(8.0))  # far past the probe's timeout, well within the model's own
        fast.answer = fast_answer

    return snapshots, fast, slow, providers, seen, arm


def test_a_slow_provider_is_a_warning_while_the_others_are_probed_at_the_same_time(
    data_dir, fake_key, fake_server, model_entry, monkeypatch
):
    snapshots, _fast, slow, providers, seen_by_fast, arm = _fast_and_slow(
        data_dir, fake_server, model_entry, monkeypatch
    )
    sensor = build_model_alias_sensor({"fast", "slow"}, {"fast", "slow"}, JDS)
    first = _tick(sensor, providers, None)
    assert first.run_requests == [], "the first sighting of an alias is a baseline"

    snapshots["openai/gpt-5"] = "gpt-5-2511"
    arm()
    log = _Records()
    second = _tick(sensor, providers, first.cursor, log)

    assert requested(second) == all_partitions("fast", JDS)
    assert {r.tags[SNAPSHOT_TAG] for r in second.run_requests} == {"gpt-5-2511"}
    # Concurrent: the slow server had been asked, and had not answered, when the fast one answered.
    assert seen_by_fast == [(1, {})]
    # Short and without retries: one attempt, given up before the slow server's 8 s were over.
    assert slow.count == 1 and dict(slow.stats.outcomes) == {}
    assert [w.split(":")[0] for w in log.warnings() if "could not probe" in w] == ["slow"], log.warnings()


def test_the_weekly_reaudit_probes_at_once_and_a_slow_provider_never_fails_it(
    data_dir, fake_key, fake_server, model_entry, monkeypatch
):
    _snapshots, _fast, slow, providers, seen_by_fast, arm = _fast_and_slow(
        data_dir, fake_server, model_entry, monkeypatch
    )
    arm()
    when = datetime(2026, 1, 5, 3, tzinfo=timezone.utc)
    with dg.build_schedule_context(resources={"providers": providers}, scheduled_execution_time=when) as context:
        result = weekly_fit_reaudit(context)
    assert isinstance(result, list)  # run requests (none here: these models are not the definitions' partitions)
    assert seen_by_fast == [(1, {})]
    assert slow.count == 1 and dict(slow.stats.outcomes) == {}


def test_a_probe_is_short_and_never_retried():
    settings = ProviderSettings(
        name="m", provider="openai", model="gpt-5", temperature=1.0, runs_per_cell=1, timeout_s=120.0, max_retries=3
    )
    short = probe.probe_settings(settings)
    assert (short.timeout_s, short.max_retries) == (probe.PROBE_TIMEOUT_S, 0) and probe.PROBE_TIMEOUT_S <= 30
    quick = probe.probe_settings(replace(settings, timeout_s=5.0))
    assert quick.timeout_s == 5.0, "never longer than the model's own timeout"


def test_the_probe_never_retries_and_a_failed_probe_never_fails_the_tick(data_dir, fake_key, fake_server, model_entry):
    server = fake_server("openai")
    providers = _resource(data_dir, [model_entry("openai", server.base_url, name="flaky", max_retries=3)])
    sensor = build_model_alias_sensor({"flaky"}, set(), [])
    server.script(fp.server_error(503), fp.server_error(503), fp.server_error(503), fp.server_error(503))
    log = _Records()
    result = _tick(sensor, providers, None, log)
    assert server.count == 1, "the probe made one attempt, not 1 + max_retries"
    assert result.run_requests == [] and "could not probe flaky" in result.skip_reason.skip_message
    assert any(w.startswith("flaky: could not probe the alias") and "503" in w for w in log.warnings())


# ------------------------------------------------------------------ B2: re-runs from stored state


def test_a_tick_that_fails_after_the_move_was_stored_leaves_the_rerun_to_the_next_tick(
    data_dir, fake_key, fake_server, model_entry, monkeypatch
):
    snapshots = {"openai/gpt-5": "gpt-5-2508"}
    server = fake_server("openai", resolved_model=lambda alias: snapshots[alias])
    providers = _resource(data_dir, [model_entry("openai", server.base_url, name="moving")])
    sensor = build_model_alias_sensor({"moving"}, {"moving"}, JDS)
    first = _tick(sensor, providers, None)
    assert first.run_requests == []

    snapshots["openai/gpt-5"] = "gpt-5-2511"
    real = automation.rerun_requests
    failures = []

    def fails_once(*args, **kwargs):
        if not failures:
            failures.append(1)
            raise RuntimeError("the daemon died while building the run requests")
        return real(*args, **kwargs)

    monkeypatch.setattr(automation, "rerun_requests", fails_once)
    with pytest.raises(Exception, match="the daemon died"):
        _tick(sensor, providers, first.cursor)
    assert _stored_epoch(data_dir, providers, "moving") == 1, "the failed tick stored the move"

    # The next tick is given the cursor of the last tick that succeeded, as Dagster does.
    second = _tick(sensor, providers, first.cursor)
    assert requested(second) == all_partitions("moving", JDS)
    assert {r.tags[SNAPSHOT_TAG] for r in second.run_requests} == {"gpt-5-2511"}
    assert all("snapshot-1" in r.run_key for r in second.run_requests), "run keys name the epoch"
    assert len({r.run_key for r in second.run_requests}) == len(second.run_requests)

    # Requested once: the tick after asks for nothing, and a repeat of it asks with the same keys.
    assert _tick(sensor, providers, second.cursor).run_requests == []
    again = _tick(sensor, providers, first.cursor)
    assert sorted(r.run_key for r in again.run_requests) == sorted(r.run_key for r in second.run_requests)


def test_every_model_on_a_moved_alias_is_rerun(data_dir, fake_key, fake_server, model_entry):
    """Two models on one alias and endpoint share its snapshot row: the first probe to see the
    move bumps the epoch, the second sees none; both models' partitions must be re-run."""
    snapshots = {"openai/gpt-5": "gpt-5-2508"}
    server = fake_server("openai", resolved_model=lambda alias: snapshots[alias])
    providers = _resource(
        data_dir,
        [
            model_entry("openai", server.base_url, name="gpt-cold", temperature=0.0),
            model_entry("openai", server.base_url, name="gpt-warm", temperature=1.0),
        ],
    )
    sensor = build_model_alias_sensor({"gpt-cold", "gpt-warm"}, {"gpt-cold", "gpt-warm"}, JDS)
    first = _tick(sensor, providers, None)
    snapshots["openai/gpt-5"] = "gpt-5-2511"
    second = _tick(sensor, providers, first.cursor)
    assert requested(second) == sorted(all_partitions("gpt-cold", JDS) + all_partitions("gpt-warm", JDS))


# ------------------------------------------------------------------ B3: the model's own request


def test_the_probe_sends_the_models_own_temperature_and_max_tokens(data_dir, fake_key, fake_server, model_entry):
    servers = {wire: fake_server(wire) for wire in ("openai", "anthropic", "gemini")}
    providers = _resource(
        data_dir,
        [
            # A long timeout: this test is about the bodies, and three SDKs' first calls at once
            # can take seconds on a loaded machine.
            model_entry(
                wire, server.base_url, name=f"m-{wire}", temperature=0.7, max_tokens={"seniority": 321}, timeout_s=60.0
            )
            for wire, server in servers.items()
        ],
    )
    sensor = build_model_alias_sensor(set(), set(), [])
    _tick(sensor, providers, None)
    bodies = {wire: server.requests[-1].body for wire, server in servers.items()}
    assert all(server.count == 1 for server in servers.values())

    assert bodies["openai"]["temperature"] == 0.7
    assert bodies["openai"].get("max_tokens", bodies["openai"].get("max_completion_tokens")) == 321
    assert "temperature" not in bodies["anthropic"], "the Anthropic wire takes no temperature here"
    assert bodies["anthropic"]["max_tokens"] == 321
    config = bodies["gemini"]["generationConfig"]
    assert config["temperature"] == 0.7 and config["maxOutputTokens"] == 321


# ------------------------------------------------------------------ A: pool tags without credentials


USER_SECRET = "pw-URLSECRET-5c1e"
QUERY_SECRET = "sk-QUERYSECRET-9d2a"


def test_pool_tags_name_the_host_only(data_dir, fake_key, fake_server, model_entry, monkeypatch):
    snapshots = {"openai/gpt-5": "gpt-5-2508"}
    server = fake_server("openai", resolved_model=lambda alias: snapshots[alias])
    base_url = f"http://auditor:{USER_SECRET}@127.0.0.1:{server.port}/v1?key={QUERY_SECRET}"
    providers = _resource(data_dir, [model_entry("openai", base_url, name="gateway")])
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", str(data_dir / "models.yaml"))
    pool = f"provider:openai:127.0.0.1:{server.port}"

    assert model_tags("gateway") == {POOL_TAG: pool}
    spec = parse_models({"models": [model_entry("openai", base_url, name="gateway")]}, "t")[0]
    assert pool_of(spec) == pool
    vertex = parse_models(
        {
            "models": [
                {
                    "name": "v",
                    "kind": "provider",
                    "provider": "google",
                    "model": "gemini-2.5-pro",
                    "vertex_project": "p",
                    "vertex_location": "europe-west4",
                }
            ]
        },
        "t",
    )[0]
    assert pool_of(vertex) == "provider:google:europe-west4"
    with dg.build_resources({"providers": providers}) as resources:
        direct = automation.rerun_requests(
            resources.providers, ["gateway"], "manual", prediction_models={"gateway"}, fit_models={"gateway"}, jds=JDS
        )
    assert direct and {r.tags[POOL_TAG] for r in direct} == {pool}

    sensor = build_model_alias_sensor({"gateway"}, {"gateway"}, JDS)
    first = _tick(sensor, providers, None)
    snapshots["openai/gpt-5"] = "gpt-5-2511"
    second = _tick(sensor, providers, first.cursor)
    assert requested(second) == all_partitions("gateway", JDS)
    assert {r.tags[POOL_TAG] for r in second.run_requests} == {pool}
    shown = json.dumps(
        [[r.tags, r.run_key] for r in [*direct, *second.run_requests]]
        + [first.cursor, second.cursor, model_tags("gateway")]
    )
    assert USER_SECRET not in shown and QUERY_SECRET not in shown and "auditor" not in shown


def test_a_snapshot_name_with_a_lone_surrogate_is_recorded(data_dir, fake_key, fake_server, model_entry):
    # The store's SQLite insert failed on it and so did every tick (issue 25, item 4).
    snapshots = {"openai/gpt-5": "gpt-5-2508"}
    server = fake_server("openai", resolved_model=lambda alias: snapshots[alias])
    providers = _resource(data_dir, [model_entry("openai", server.base_url, name="moving")])
    sensor = build_model_alias_sensor({"moving"}, {"moving"}, JDS)
    first = _tick(sensor, providers, None)
    snapshots["openai/gpt-5"] = "gpt-5-\ud800"
    second = _tick(sensor, providers, first.cursor)
    assert requested(second) == all_partitions("moving", JDS)
    assert {r.tags[SNAPSHOT_TAG] for r in second.run_requests} == {"gpt-5-\ufffd"}


def test_a_huge_snapshot_name_is_a_failed_probe_not_a_new_epoch(data_dir, fake_key, fake_server, model_entry):
    # Issue 40, item 12: a probe reporting a new 200 KB "model" every tick grew the cursor and the
    # run tags without bound and started a new epoch each tick.
    snapshots = {"openai/gpt-5": "gpt-5-2508"}
    server = fake_server("openai", resolved_model=lambda alias: snapshots[alias])
    providers = _resource(data_dir, [model_entry("openai", server.base_url, name="moving", timeout_s=60.0)])
    sensor = build_model_alias_sensor({"moving"}, {"moving"}, JDS)
    first = _tick(sensor, providers, None)
    for n in range(3):
        snapshots["openai/gpt-5"] = f"gpt-5-{n}-" + "x" * 200_000
        log = _Records()
        tick = _tick(sensor, providers, first.cursor, log)
        assert not requested(tick)
        assert len(tick.cursor or "") < 10_000
        assert any("a model version that is no model name (200,008 characters" in w for w in log.warnings())
