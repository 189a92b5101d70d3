"""`resumebias run` housekeeping: the local instance settings, runs left by a killed process, and
what a log shows while the study runs (a line per step, no library progress bars)."""

import io
import os
import re
import subprocess
import sys
import time

import dagster as dg
import pytest
import yaml

from resumebias_dagster.progress import StudyProgress
from resumebias_dagster.runner import INSTANCE_TEMPLATE, LAUNCHER_TAGS, PID_TAG, release_abandoned_runs, run_job


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
        instance.handle_run_event(
            run.run_id, dg.DagsterEvent(event_type_value="PIPELINE_START", job_name=run.job_name, message="started")
        )
        instance.event_log_storage.claim_concurrency_slot("gpu", run.run_id, "on_the_gpu")
        assert instance.event_log_storage.get_concurrency_info("gpu").active_slot_count == 1
        assert release_abandoned_runs(instance) == 1
        assert instance.event_log_storage.get_concurrency_info("gpu").active_slot_count == 0
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    assert "released run" in capsys.readouterr().out


# ------------------------------------------------------------------ what a log shows while it runs


def _two_step_job(out: io.StringIO, seen: list[str], fail: bool = False):
    parts = dg.StaticPartitionsDefinition(["m1|jd"])

    @dg.asset(partitions_def=parts)
    def first() -> int:
        time.sleep(0.3)
        return 1

    @dg.asset(partitions_def=parts)
    def second(first: int) -> int:
        seen.append(out.getvalue())  # what the log held when the second step began
        if fail:
            raise RuntimeError("boom")
        return first + 1

    defs = dg.Definitions(assets=[first, second], jobs=[dg.define_asset_job("j", partitions_def=parts)])
    return defs.resolve_job_def("j")


STEP_LINE = re.compile(r"^  (\w+) \[m1\|jd\]: (succeeded|FAILED) in (\d+\.\d) s$", re.MULTILINE)


def test_a_log_gets_a_line_for_each_step_as_it_finishes(tmp_path):
    # Issue 26, item 8: a log showed nothing until a whole run ended (11 minutes for the first).
    out, seen = io.StringIO(), []
    job = _two_step_job(out, seen)
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        progress = StudyProgress(["j"], out)
        progress.start("j", "j [m1|jd]")
        result, took = run_job(job, instance, progress, partition="m1|jd", tags=LAUNCHER_TAGS)
        progress.finish(result.success)
        progress.close()
    assert result.success
    # The first step's line was in the log before the second step started.
    assert [m[0] for m in STEP_LINE.findall(seen[0])] == ["first"]
    steps = STEP_LINE.findall(out.getvalue())
    assert [(step, outcome) for step, outcome, _ in steps] == [("first", "succeeded"), ("second", "succeeded")]
    assert float(steps[0][2]) >= 0.3
    assert set(took) == {"first", "second"} and took["first"] >= 0.3
    lines = out.getvalue().splitlines()
    assert lines[-2].startswith("j [m1|jd]: succeeded in ")  # the run's line after its steps
    assert "\r" not in out.getvalue() and "\x1b[" not in out.getvalue()


def test_a_failed_step_gets_its_line(tmp_path):
    out, seen = io.StringIO(), []
    job = _two_step_job(out, seen, fail=True)
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        progress = StudyProgress(["j"], out)
        result, took = run_job(job, instance, progress, partition="m1|jd")
        progress.close()
    assert not result.success
    assert [(s, o) for s, o, _ in STEP_LINE.findall(out.getvalue())] == [("first", "succeeded"), ("second", "FAILED")]
    assert set(took) == {"first"}


QUIET_CHECK = """
import io
{before}
from resumebias_dagster.runner import _quiet_libraries
_quiet_libraries(live={live})
from transformers.modeling_gguf_pytorch_utils import tqdm  # the GGUF dequantisation's bar
from transformers.utils import logging
from huggingface_hub.utils import are_progress_bars_disabled
from tqdm.auto import tqdm as auto_tqdm
print(tqdm(range(2), file=io.StringIO()).disable, auto_tqdm(range(2), file=io.StringIO()).disable,
      logging.is_progress_bar_enabled(), are_progress_bars_disabled())
"""


@pytest.mark.parametrize(
    ("live", "before", "shown"),
    [
        (False, "", "True True False True"),
        (False, "import tqdm.auto, transformers.utils.logging", "True True False True"),  # tqdm imported first
        (True, "", "False False True False"),  # a terminal keeps its bars
    ],
)
def test_no_library_progress_bar_writes_into_a_log(live, before, shown):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TQDM_", "HF_HUB_DISABLE"))}
    proc = subprocess.run(
        [sys.executable, "-c", QUIET_CHECK.format(before=before, live=live)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[-2] == shown
