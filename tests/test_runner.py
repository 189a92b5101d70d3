"""`resumebias run` housekeeping: the local instance settings and runs left by a killed process."""

import subprocess
import sys

import dagster as dg
import yaml

from resumebias_dagster.runner import INSTANCE_TEMPLATE, LAUNCHER_TAGS, PID_TAG, release_abandoned_runs


def test_instance_template_sets_the_pools(tmp_path, monkeypatch):
    settings = yaml.safe_load(INSTANCE_TEMPLATE.read_text())
    assert settings["concurrency"]["pools"]["default_limit"] == 1
    (tmp_path / "dagster.yaml").write_text(INSTANCE_TEMPLATE.read_text())
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    with dg.DagsterInstance.get() as instance:
        limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
    assert {"key": "resumebias/pool", "value": {"applyLimitPerUniqueValue": True}, "limit": 1} in limits


def test_a_killed_runs_gpu_slot_is_released(tmp_path, capsys):
    @dg.asset(pool="gpu")
    def on_the_gpu() -> int:
        return 1

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        instance.event_log_storage.set_concurrency_slots("gpu", 1)
        run = instance.create_run_for_job(
            dg.define_asset_job("j").resolve(asset_graph=dg.Definitions(assets=[on_the_gpu]).resolve_asset_graph()),
            tags={**LAUNCHER_TAGS, PID_TAG: str(dead.pid)},
        )
        instance.handle_run_event(run.run_id, dg.DagsterEvent(
            event_type_value="PIPELINE_START", job_name=run.job_name, message="started"))
        instance.event_log_storage.claim_concurrency_slot("gpu", run.run_id, "on_the_gpu")
        assert instance.event_log_storage.get_concurrency_info("gpu").active_slot_count == 1
        assert release_abandoned_runs(instance) == 1
        assert instance.event_log_storage.get_concurrency_info("gpu").active_slot_count == 0
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    assert "released run" in capsys.readouterr().out
