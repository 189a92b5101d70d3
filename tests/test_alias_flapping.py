"""A flapping alias (issue 25, item 7): re-audits keyed by snapshot, at most one per interval.

Against a real HTTP fake provider whose reported snapshot the test changes, and a real
SQLite store (the store's rules also on PostgreSQL):

- a snapshot seen before keeps its epoch, so a return to it is answered from the store
  (the same request keys, nothing paid);
- the sensor requests a model's re-runs at most once per RESUMEBIAS_REAUDIT_MIN_INTERVAL_S,
  and reports a flapping alias with the snapshots it saw;
- a genuine move to a new snapshot is still re-run once that interval is over;
- a bad interval is refused with a message naming the variable.

Each test failed on the code before this change.
"""

from __future__ import annotations

import sqlite3

import dagster as dg
import pytest
import yaml

from resumebias_dagster.automation import SNAPSHOT_TAG, build_model_alias_sensor
from resumebias_dagster.core.providers import ChatRequest, ProviderSettings, ResponseStore
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.testing.sensors import LogRecords as _Records
from resumebias_dagster.testing.sensors import all_partitions
from resumebias_dagster.testing.sensors import requested as _partitions
from resumebias_dagster.testing.sensors import tick as _tick

JDS = ["jd-a", "jd-b"]
A, B, C = "gpt-5-2508", "gpt-5-2511", "gpt-5-2602"
REQUESTS = [ChatRequest.from_prompt(f"Classify résumé {i}.") for i in range(3)]
INTERVAL_ENV = "RESUMEBIAS_REAUDIT_MIN_INTERVAL_S"


class _Clock:
    """The sensor's clock, moved by the test (seconds since the epoch)."""

    def __init__(self, t: float = 1_767_225_600.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _audit(providers: ProvidersResource, name: str):
    """The model's requests through the providers resource: (request keys, stats)."""
    with dg.build_resources({"providers": providers}) as resources:
        results, stats = resources.providers.run(name, REQUESTS)
    return [r.key for r in results], stats


def _stored(providers: ProvidersResource, name: str) -> tuple[str, int]:
    with dg.build_resources({"providers": providers}) as resources:
        return resources.providers.store().snapshot(resources.providers.settings(name))


@pytest.fixture
def flapping(data_dir, fake_key, fake_server, model_entry, monkeypatch):
    """A model on an alias whose reported snapshot is ``current["snapshot"]``."""
    monkeypatch.delenv(INTERVAL_ENV, raising=False)
    current = {"snapshot": A}
    server = fake_server("openai", resolved_model=lambda alias: current["snapshot"])
    file = data_dir / "models.yaml"
    file.write_text(yaml.safe_dump({"models": [model_entry("openai", server.base_url, name="flappy")]}))
    providers = ProvidersResource(models_file=str(file), store_path=str(data_dir / "responses.sqlite"))
    return current, server, providers


# ------------------------------------------------------------------ (a) keyed by snapshot, at most one re-run


def test_a_flapping_alias_is_rerun_once_and_a_return_is_served_from_the_store(flapping):
    current, _server, providers = flapping
    sensor = build_model_alias_sensor({"flappy"}, {"flappy"}, JDS)  # the default interval: a day
    cursor = _tick(sensor, providers, None).cursor  # A is the baseline (epoch 0)
    keys_a, stats = _audit(providers, "flappy")
    assert stats.calls_made == len(REQUESTS)

    requested, keys_b = [], None
    for snapshot in (B, A, B, A, B, A):
        current["snapshot"] = snapshot
        result = _tick(sensor, providers, cursor)
        requested += result.run_requests
        cursor = result.cursor
        keys, stats = _audit(providers, "flappy")
        if snapshot == A:
            # A's epoch again: A's request keys, so its stored answers are served, nothing paid.
            assert _stored(providers, "flappy") == (A, 0)
            assert keys == keys_a and stats.calls_made == 0 and stats.served_from_store == len(REQUESTS)
        elif keys_b is None:
            assert _stored(providers, "flappy") == (B, 1)
            keys_b = keys
            assert stats.calls_made == len(REQUESTS) and not set(keys_b) & set(keys_a)
        else:
            assert _stored(providers, "flappy") == (B, 1), "B keeps its epoch too"
            assert keys == keys_b and stats.calls_made == 0
    # One set of re-runs (the move to B), not one per tick.
    assert sorted((r.job_name, str(r.partition_key)) for r in requested) == all_partitions("flappy", JDS)
    assert {r.tags[SNAPSHOT_TAG] for r in requested} == {B}
    with dg.build_resources({"providers": providers}) as resources:
        history = resources.providers.store().snapshot_history(resources.providers.settings("flappy"))
    assert [(h["resolved_model"], h["epoch"]) for h in history] == [(A, 0), (B, 1)]


# ------------------------------------------------------------------ (b) reported, with the snapshots seen


def test_a_flapping_alias_is_reported_with_the_snapshots_seen(flapping):
    current, _server, providers = flapping
    sensor = build_model_alias_sensor({"flappy"}, {"flappy"}, JDS)
    cursor = _tick(sensor, providers, None).cursor
    current["snapshot"] = B
    cursor = _tick(sensor, providers, cursor).cursor  # re-run of B requested
    current["snapshot"] = A
    log = _Records()
    back = _tick(sensor, providers, cursor, log)

    assert back.run_requests == []
    flaps = [w for w in log.warnings() if w.startswith("flappy:") and "flapping" in w]
    assert len(flaps) == 1, log.warnings()
    assert f"{B} (epoch 1)" in flaps[0] and f"{A} (epoch 0)" in flaps[0], flaps[0]
    assert INTERVAL_ENV in flaps[0]
    reason = back.skip_reason.skip_message
    assert "flapping" in reason and "flappy" in reason and A in reason and B in reason, reason

    # Back at B, whose re-run was requested: nothing is owed, the flapping is still reported.
    current["snapshot"] = B
    log = _Records()
    again = _tick(sensor, providers, back.cursor, log)
    assert again.run_requests == [] and "flapping" in again.skip_reason.skip_message
    assert any("flapping" in w and A in w and B in w for w in log.warnings()), log.warnings()


# ------------------------------------------------------------------ (c) a genuine move, within the interval


def test_a_genuine_move_is_rerun_once_the_interval_is_over(flapping, monkeypatch):
    current, _server, providers = flapping
    monkeypatch.setenv(INTERVAL_ENV, "3600")
    clock = _Clock()
    sensor = build_model_alias_sensor({"flappy"}, {"flappy"}, JDS, clock=clock)
    cursor = _tick(sensor, providers, None).cursor
    current["snapshot"] = B
    clock.t += 60
    to_b = _tick(sensor, providers, cursor)
    assert _partitions(to_b) == all_partitions("flappy", JDS), "the first move is re-run at once"
    requested_at = clock.t

    current["snapshot"] = C
    clock.t += 60
    early = _tick(sensor, providers, to_b.cursor)
    assert early.run_requests == [] and "flapping" in early.skip_reason.skip_message
    assert _stored(providers, "flappy") == (C, 2), "a new snapshot gets a new epoch"

    clock.t = requested_at + 3599
    assert _tick(sensor, providers, early.cursor).run_requests == [], "not before the interval is over"
    clock.t = requested_at + 3600
    due = _tick(sensor, providers, early.cursor)
    assert _partitions(due) == all_partitions("flappy", JDS)
    assert {r.tags[SNAPSHOT_TAG] for r in due.run_requests} == {C}
    assert all(r.run_key.startswith(f"snapshot-2:{C}:flappy:") for r in due.run_requests)
    clock.t += 60
    assert _tick(sensor, providers, due.cursor).run_requests == [], "requested once"

    # A return to B after another interval: re-run again (from the store), under run keys of
    # its own, since Dagster runs a key once.
    current["snapshot"] = B
    clock.t += 3600
    back = _tick(sensor, providers, due.cursor)
    assert _partitions(back) == all_partitions("flappy", JDS)
    assert {r.tags[SNAPSHOT_TAG] for r in back.run_requests} == {B}
    assert not {r.run_key for r in back.run_requests} & {r.run_key for r in to_b.run_requests}
    assert all("snapshot-1" in r.run_key for r in back.run_requests), "run keys name the epoch"
    # A repeat of the tick (its cursor not saved) asks with the same run keys.
    repeat = _tick(sensor, providers, due.cursor)
    assert sorted(r.run_key for r in repeat.run_requests) == sorted(r.run_key for r in back.run_requests)


def test_an_interval_of_zero_reruns_every_move_and_returns_cost_nothing(flapping, monkeypatch):
    current, _server, providers = flapping
    monkeypatch.setenv(INTERVAL_ENV, "0")
    sensor = build_model_alias_sensor({"flappy"}, set(), [])
    cursor = _tick(sensor, providers, None).cursor
    _audit(providers, "flappy")
    keys, paid = [], []
    for snapshot in (B, A, B):
        current["snapshot"] = snapshot
        result = _tick(sensor, providers, cursor)
        assert _partitions(result) == [("seniority_predictions_job", "flappy")]
        keys += [r.run_key for r in result.run_requests]
        cursor = result.cursor
        paid.append(_audit(providers, "flappy")[1].calls_made)
    assert len(set(keys)) == 3, keys
    assert paid == [len(REQUESTS), 0, 0], "only B's first audit is paid; returns are served from the store"


# ------------------------------------------------------------------ (d) a bad interval


@pytest.mark.parametrize("value", ["a day", "-5", "1.5"])
def test_a_bad_interval_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(INTERVAL_ENV, value)
    with pytest.raises(ValueError, match=rf"{INTERVAL_ENV}={value!r}.*whole number of seconds"):
        build_model_alias_sensor(set(), set(), [])


# ------------------------------------------------------------------ the store: an epoch per snapshot


def _settings(**kwargs) -> ProviderSettings:
    return ProviderSettings(name="m", provider="openai", model="gpt-5", temperature=1.0, runs_per_cell=1, **kwargs)


def test_each_snapshot_keeps_its_epoch(any_store):
    settings = _settings()
    seen = [any_store.observe_snapshot(settings, s) for s in (A, A, B, A, C, B, C)]
    assert seen == [(False, 0), (False, 0), (True, 1), (True, 0), (True, 2), (True, 1), (True, 2)]
    assert any_store.snapshot(settings) == (C, 2)
    assert [(h["resolved_model"], h["epoch"]) for h in any_store.snapshot_history(settings)] == [(A, 0), (B, 1), (C, 2)]
    other = _settings(base_url="http://127.0.0.1:9/v1")
    assert any_store.observe_snapshot(other, B) == (False, 0), "another endpoint's alias counts on its own"


def test_a_store_made_before_the_history_was_kept_counts_on_from_its_epoch(tmp_path):
    """A store of schema 3 knows only each alias's current snapshot and epoch: that snapshot
    keeps its epoch, a new one gets the next; older snapshots' epochs are unknown, so a return
    to one of them is called afresh (a new epoch), never answered with another snapshot's rows."""
    path = tmp_path / "responses.sqlite"
    settings = _settings()
    with ResponseStore(path) as store:
        store.observe_snapshot(settings, A)
        store.observe_snapshot(settings, B)
    with sqlite3.connect(path) as con:
        con.execute("DROP TABLE IF EXISTS snapshot_epochs")
        con.execute("PRAGMA user_version = 3")
    with ResponseStore(path) as store:
        assert store.snapshot(settings) == (B, 1)
        assert store.observe_snapshot(settings, C) == (True, 2)
        assert store.observe_snapshot(settings, B) == (True, 1)
        assert store.observe_snapshot(settings, A) == (True, 3)
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 6


def test_a_postgres_store_of_version_2_is_migrated_and_keeps_its_epoch(postgres_server, postgres_url):
    from resumebias_dagster.core.providers.store import postgres as pg

    db = postgres_url.rsplit("/", 1)[1]
    postgres_server.admin(
        pg._CREATE_VERSION_TABLE
        + pg.MIGRATIONS[0][2]
        + pg.MIGRATIONS[1][2]
        + "INSERT INTO resumebias_store_version (version, description) VALUES (1, 'a'), (2, 'b');"
        "INSERT INTO snapshots VALUES ('openai', 'api.openai.com', 'gpt-5', 'gpt-5-2511', 4, 't');",
        db,
    )
    settings = _settings()
    with ResponseStore(postgres_url) as store:
        assert store.snapshot(settings) == (B, 4)
        assert store.observe_snapshot(settings, C) == (True, 5)
        assert store.observe_snapshot(settings, B) == (True, 4)
    assert [r[0] for r in postgres_server.admin("SELECT version FROM resumebias_store_version ORDER BY 1", db)] == [
        1,
        2,
        3,
        4,
        5,
    ]
