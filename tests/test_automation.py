"""model_alias_sensor against a provider whose alias moves between ticks; pools and schedules."""

import json

import dagster as dg
import pytest
import yaml

from resumebias_dagster.automation import (
    POOL_TAG,
    build_model_alias_sensor,
    model_jd_tags,
    model_tags,
    weekly_fit_reaudit,
)
from resumebias_dagster.core.providers.types import ChatRequest
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.testing.fake_providers import FakeProviderServer

KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
JDS = ["jd-a", "jd-b", "jd-c"]


@pytest.fixture(autouse=True)
def _allowed_roots(tmp_path, monkeypatch):
    # The test's catalog folder and store lie under the data directory (and an allowed root).
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))


def _providers(tmp_path, server, monkeypatch) -> ProvidersResource:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    catalog = tmp_path / "catalog"
    catalog.mkdir(exist_ok=True)
    entries = [
        {
            "name": name,
            "kind": "provider",
            "provider": "openai",
            "model": alias,
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "timeout_s": 5.0,
            "max_retries": 0,
        }
        for name, alias in (("moving", "vendor/large-latest"), ("pinned", "vendor/small-2603"))
    ]
    (catalog / "models.yaml").write_text(yaml.safe_dump({"models": entries}))
    return ProvidersResource(catalog_dir=str(catalog), store_path=str(tmp_path / "responses.sqlite"))


def _tick(sensor, providers, cursor):
    with dg.build_sensor_context(cursor=cursor, resources={"providers": providers}) as context:
        return sensor(context)


def test_only_the_moved_alias_is_rerun_and_nothing_when_nothing_moved(tmp_path, monkeypatch):
    snapshots = {"vendor/large-latest": "vendor/large-2511", "vendor/small-2603": "vendor/small-2603"}
    with FakeProviderServer("openai", resolved_model=lambda alias: snapshots[alias]) as server:
        providers = _providers(tmp_path, server, monkeypatch)
        sensor = build_model_alias_sensor({"moving", "pinned"}, {"moving", "pinned"}, JDS)

        first = _tick(sensor, providers, None)
        assert first.run_requests == [] and "no alias moved (2 probed)" in first.skip_reason.skip_message
        second = _tick(sensor, providers, first.cursor)
        assert second.run_requests == [], "no request when nothing changed"

        snapshots["vendor/large-latest"] = "vendor/large-2512"
        third = _tick(sensor, providers, second.cursor)
        requested = sorted((r.job_name, str(r.partition_key)) for r in third.run_requests)
        assert requested == sorted(
            [("seniority_predictions_job", "moving")] + [("fit_scores_job", f"{jd}|moving") for jd in JDS]
        )
        assert all(r.tags["resumebias/snapshot"] == "vendor/large-2512" for r in third.run_requests)
        # The pool names the host only (issue: tags showed the whole base_url).
        assert all(r.tags[POOL_TAG] == f"provider:openai:127.0.0.1:{server.port}" for r in third.run_requests)
        # The cursor holds, per model, the snapshot and the epoch whose re-runs were requested.
        entry = json.loads(third.cursor)["models"]["moving"]
        assert (entry["snapshot"], entry["epoch"]) == ("vendor/large-2512", 1)
        assert all(r.run_key.startswith("snapshot-1:vendor/large-2512:moving:") for r in third.run_requests)

        fourth = _tick(sensor, providers, third.cursor)
        assert fourth.run_requests == []


def test_a_moved_alias_gets_fresh_calls_while_old_answers_stay_stored(tmp_path, monkeypatch):
    snapshots = {"vendor/large-latest": "vendor/large-2511", "vendor/small-2603": "vendor/small-2603"}
    with FakeProviderServer("openai", resolved_model=lambda alias: snapshots[alias]) as server:
        providers = _providers(tmp_path, server, monkeypatch)
        sensor = build_model_alias_sensor({"moving"}, set(), [])
        cursor = _tick(sensor, providers, None).cursor
        with dg.build_resources({"providers": providers}) as resources:
            requests = [ChatRequest.from_prompt(f"classify {i}") for i in range(3)]
            before, _ = resources.providers.run("moving", requests)
            calls = server.count
            again, stats = resources.providers.run("moving", requests)
            assert server.count == calls and stats.served_from_store == 3
        snapshots["vendor/large-latest"] = "vendor/large-2512"
        _tick(sensor, providers, cursor)
        with dg.build_resources({"providers": providers}) as resources:
            after, stats = resources.providers.run("moving", requests)
            assert stats.calls_made == 3, "a new snapshot is never answered from the old one's store"
            assert {r.resolved_model for r in before} == {"vendor/large-2511"}
            assert {r.resolved_model for r in after} == {"vendor/large-2512"}
            store_rows = list(resources.providers.store().rows(model="moving"))
        assert len(store_rows) == 6, "the old snapshot's answers stay in the store"


def test_a_cursor_of_the_old_format_owes_only_the_moves_it_missed(tmp_path, monkeypatch):
    """Cursors written before the epochs were kept in them held {model: snapshot last seen}."""
    snapshots = {"vendor/large-latest": "vendor/large-2511", "vendor/small-2603": "vendor/small-2603"}
    with FakeProviderServer("openai", resolved_model=lambda alias: snapshots[alias]) as server:
        providers = _providers(tmp_path, server, monkeypatch)
        sensor = build_model_alias_sensor({"moving", "pinned"}, set(), [])
        _tick(sensor, providers, None)  # the store's baseline (epoch 0)
        old = json.dumps({"moving": "vendor/large-2511", "pinned": "vendor/small-2603"})
        assert _tick(sensor, providers, old).run_requests == [], "nothing was missed"

        # The old sensor recorded a move in the store, then its tick failed: its cursor still
        # names the snapshot before the move, and the store has moved on.
        with dg.build_resources({"providers": providers}) as resources:
            moved, epoch = resources.providers.store().observe_snapshot(
                resources.providers.settings("moving"), "vendor/large-2512"
            )
        assert (moved, epoch) == (True, 1)
        snapshots["vendor/large-latest"] = "vendor/large-2512"
        result = _tick(sensor, providers, old)
        assert [str(r.partition_key) for r in result.run_requests] == ["moving"]
        assert _tick(sensor, providers, result.cursor).run_requests == []


def test_pools_of_local_and_provider_partitions():
    assert model_tags("gemma3-270m") == {POOL_TAG: "gpu"}
    assert model_jd_tags("staff-software-engineer|gemma3-270m") == {POOL_TAG: "gpu"}


def test_weekly_reaudit_skips_without_provider_models(tmp_path):
    providers = ProvidersResource(store_path=str(tmp_path / "r.sqlite"))
    with dg.build_schedule_context(resources={"providers": providers}) as context:
        result = weekly_fit_reaudit(context)
    assert (
        isinstance(result, dg.SkipReason) and "no provider model or scoring endpoint is enabled" in result.skip_message
    )


def test_tables_refresh_after_a_partition_is_rerun_even_without_an_import(tmp_path):
    """Declarative automation: a new prediction partition makes the metric tables stale; the
    never-materialised imported_predictions does not hold them back."""
    from resumebias_dagster.defs.seniority_study import metrics

    partitions = dg.StaticPartitionsDefinition(["m1", "m2"])

    @dg.asset(name="seniority_predictions", partitions_def=partitions)
    def predictions() -> None:
        return None

    defs = dg.Definitions(
        assets=[predictions, dg.AssetSpec("imported_predictions"), *dg.load_assets_from_modules([metrics])]
    )
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        assert first.total_requested == 0
        instance.report_runless_asset_event(dg.AssetMaterialization("seniority_predictions", partition="m1"))
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        requested = {r.key.to_user_string() for r in second.results if r.true_subset.size}
        assert requested == {"seniority_group_metrics", "seniority_bias_summary"}
