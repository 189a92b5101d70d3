"""``resumebias run``: materialise the study on the embedded defaults, print where it went."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from resumebias_dagster.core.common.processes import pid_alive
from resumebias_dagster.progress import StudyProgress
from resumebias_dagster.run_summary import print_results, user_resumes_report
from resumebias_dagster.settings import (
    AUDIT_FILE_ENV,
    DAGSTER_HOME_ENV,
    DATA_DIR_ENV,
    INSTANCE_TEMPLATE,
    UntrustedFolderError,
    audit_file_path,
    choose_audit_file,
    dagster_home_choice,
    data_dir,
    duckdb_path,
    instance_config_ours,
    remember_file,
    set_for_libraries,
    user_roots,
)


class UntrustedInstanceError(UntrustedFolderError):
    """An instance config in the data folder that this tool did not write."""


def dagster_home() -> Path:
    """Runs go to $DAGSTER_HOME so `dagster dev` with the same home shows them in the UI.

    ``$DAGSTER_HOME`` is the operator's choice, read as it is. Otherwise the instance config
    is ``<data dir>/dagster_home/dagster.yaml`` as this tool writes it: Dagster runs what a
    dagster.yaml names (a logging handler can be any callable), so one the tool did not write
    (the current template, or a copy it wrote and remembers) is refused, never read."""
    chosen = dagster_home_choice()
    if chosen:
        return Path(chosen).absolute()
    home = (data_dir() / "dagster_home").absolute()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if config.exists() and config.read_bytes() != INSTANCE_TEMPLATE.read_bytes():
        if not instance_config_ours(config):
            raise UntrustedInstanceError(
                f"{config} was not written by resumebias (it differs from the instance config resumebias writes): a "
                "dagster.yaml can run commands (a python_logs handler), so it is not read. To use it, set "
                f"DAGSTER_HOME={home}; to let resumebias write its own, delete it"
            )
        config.unlink()  # written by an earlier version: replaced by today's template
    if not config.exists():
        shutil.copyfile(INSTANCE_TEMPLATE, config)
        remember_file(config)
    return home


LAUNCHER_TAGS = {"resumebias/launcher": "cli"}
PID_TAG = "resumebias/pid"


def release_abandoned_runs(instance, out=None) -> int:
    """Mark failed the runs of a `resumebias run` that was killed, freeing their pool slots
    (an in-process run holds its `gpu` slot until it ends; a killed one never ends)."""
    import dagster as dg

    released = 0
    runs = instance.get_runs(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING], tags=LAUNCHER_TAGS)
    )
    for run in runs:
        pid = int(run.tags.get(PID_TAG, "0") or 0)
        if pid and not pid_alive(pid):
            instance.report_run_failed(run, f"the `resumebias run` process {pid} that ran it is gone")
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            print(f"released run {run.run_id} of a killed `resumebias run` (pid {pid})", file=out or sys.stdout)
            released += 1
    return released


STEP_ENDS = {"STEP_SUCCESS": True, "STEP_FAILURE": False}


def run_job(
    job_def,
    instance,
    progress: StudyProgress,
    *,
    partition: str | None = None,
    tags: dict[str, str] | None = None,
    run_config: dict | None = None,
):
    """Execute a job in this process, telling ``progress`` of each step as it ends.

    The run's events reach a listener on the instance as they are stored, in the thread that
    runs the steps, so a step's line is printed when the step ends, not when the run does
    (issue 26, item 8). Returns the result and the seconds of each step that succeeded."""
    from dagster._core.utils import make_new_run_id

    run_id = make_new_run_id()
    started: dict[str, float] = {}
    took: dict[str, float] = {}

    def on_event(entry) -> None:
        try:
            event = entry.dagster_event
            step = event.step_key if event is not None else None
            if step is None:
                return
            if event.event_type_value == "STEP_START":
                started[step] = entry.timestamp
                progress.step_started(step, partition)
            elif event.event_type_value in STEP_ENDS:
                seconds = entry.timestamp - started.get(step, entry.timestamp)
                if STEP_ENDS[event.event_type_value]:
                    took[step] = seconds
                progress.step(step, partition, seconds, STEP_ENDS[event.event_type_value])
        except Exception as exc:  # noqa: BLE001 (a progress line must never fail the run)
            print(f"(progress line failed: {exc!r})", file=sys.stderr)

    instance.add_event_listener(run_id, on_event)
    try:
        result = job_def.execute_in_process(
            instance=instance,
            partition_key=partition,
            tags=tags,
            run_config=run_config,
            run_id=run_id,
            raise_on_error=False,
        )
    finally:
        getattr(instance, "_subscribers", {}).pop(run_id, None)  # Dagster has no public remove
    return result, took


# What `_quiet_libraries` sets for a log; tqdm reads TQDM_* when it is imported.
QUIET_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def _quiet_libraries(live: bool) -> None:
    """Library output that is expected, not a problem: progress bars (transformers' loading
    and writing weights, its GGUF dequantisation, huggingface_hub's downloads) are kept on a
    terminal and switched off in a log, where each redraw is a carriage-return frame.

    Called before the libraries are imported: tqdm (the GGUF conversion's bar is a plain
    ``tqdm.auto.tqdm``) reads ``TQDM_DISABLE`` at import; where tqdm was already imported
    (another caller in this process) its default is switched off directly."""
    if live:
        return
    set_for_libraries(QUIET_ENV)
    if "tqdm" in sys.modules:
        import functools

        import tqdm.std

        init = tqdm.std.tqdm.__dict__["__init__"]
        if not getattr(init, "_resumebias_quiet", False):  # once: a bar asking for disable=False still gets it
            quiet_init = functools.partialmethod(init, disable=True)
            setattr(quiet_init, "_resumebias_quiet", True)  # marks our wrapper, so it is applied once
            tqdm.std.tqdm.__init__ = quiet_init
    from huggingface_hub.utils import disable_progress_bars
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    disable_progress_bars()


def run_study(out=None, audit_path: str | None = None) -> int:
    """The whole study on one instance; with ``audit_path`` (``--config``), on the models, job
    descriptions, résumés and asset settings of that audit file (``audit_file.py``). Printed to
    ``out``, else the ``sys.stdout`` of the call (not of the import)."""
    out = out or sys.stdout
    audit = None
    if audit_path:
        from resumebias_dagster.audit_file import AuditFileError, read_audit_file

        try:
            audit = read_audit_file(audit_path, user_roots(checked=False))
        except AuditFileError as exc:
            print(f"resumebias run: {exc}", file=out)
            return 2
        # Before the definitions load: their partitions are the audit file's models.
        choose_audit_file(audit.path)
    home = dagster_home()
    _quiet_libraries(live=out.isatty())  # before the libraries with progress bars are imported
    import dagster as dg

    from resumebias_dagster.core.models.model_config import models_file

    print(f"models config: {models_file()}", file=out, flush=True)
    if audit is not None:
        problem = _audit_problem(audit)
        if problem:
            print(f"resumebias run: {problem}", file=out)
            return 2
        print(f"audit file: {audit.path}", file=out, flush=True)
        from resumebias_dagster.core.models.model_config import load_models
        from resumebias_dagster.core.models.trust import reach

        # Before any call: the audit file is code-equivalent, so say what it will reach.
        print("its models reach (before any call):", *reach(load_models()), sep="\n", file=out, flush=True)
    # The instance of that folder, named as data: nothing writes DAGSTER_HOME into the environment.
    instance = dg.DagsterInstance.from_config(str(home))
    release_abandoned_runs(instance, out)
    totals = _run_plan(_study_plan(audit), instance, out, audit)
    if totals is None:
        return 1
    print("\nSECONDS PER ASSET (all partitions)", file=out)
    for step, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {step:<55} {seconds:8.1f}", file=out)
    print_results(out)
    report = data_dir() / "reports" / "audit_report.html"
    if report.is_file():
        print(f"Report: {report}   (one HTML file; open it in any browser, share it as it is)", file=out)
    summary = data_dir() / "reports" / "bias_audit_summary.json"
    if summary.is_file():
        print(
            f"Local Law 144 summary: {summary} (and .csv); EU AI Act test record: eu_ai_act_test_record.json", file=out
        )
    print(
        f"UI: {ui_command(home)}   (opens http://127.0.0.1:3000; tables refresh themselves there only while "
        "default_automation_condition_sensor runs, off in a new instance: docs/howto/re-audit.md)",
        file=out,
    )
    return 0


def ui_command(home: Path) -> str:
    """The command that opens the UI on what this run used, from any folder: its audit file
    (models, catalog), data folder and Dagster instance."""
    import shlex

    settings = {AUDIT_FILE_ENV: audit_file_path(), DATA_DIR_ENV: data_dir(), DAGSTER_HOME_ENV: home}
    named = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in settings.items() if v is not None)
    return f"{named} dagster dev -m resumebias_dagster.definitions"


def _audit_problem(audit) -> str | None:
    """Why the audit file's asset settings cannot run here (an unknown asset), or None."""
    from resumebias_dagster.audit_file import AuditFileError, check_asset_names
    from resumebias_dagster.definitions import defs

    try:
        check_asset_names(audit, {key.to_user_string() for key in defs.resolve_all_asset_keys()})
    except AuditFileError as exc:
        return str(exc)
    return None


def _study_plan(audit=None) -> list[tuple[str, Any, dict[str, str]]]:
    """(job, partition key or None, run tags) in order: partitioned and unpartitioned assets run
    as separate jobs, each partition its own run; the user's résumés first when the audit file
    configures them."""
    from resumebias_dagster.automation import model_jd_tags, model_tags
    from resumebias_dagster.partitions import model_jd_partitions, model_partitions

    plan: list[tuple[str, Any, dict[str, str]]] = []
    if audit is not None and "user_resumes" in audit.assets:
        plan.append(("user_resumes_job", None, {}))
    plan.append(("study_inputs", None, {}))
    plan += [("seniority_predictions_job", k, model_tags(k)) for k in model_partitions.get_partition_keys()]
    plan += [("fit_scores_job", k, model_jd_tags(k)) for k in model_jd_partitions.get_partition_keys()]
    plan += [("study_tables", None, {})]
    return plan


def _user_resumes_table(instance) -> str:
    """The per-file table of the résumés ``user_resumes_job`` just read."""
    import io

    import dagster as dg

    event = instance.get_latest_materialization_event(dg.AssetKey("user_resumes"))
    entry = event.asset_materialization.metadata.get("not_read") if event and event.asset_materialization else None
    not_read = str(entry.value) if entry is not None else ""
    text = io.StringIO()
    user_resumes_report(str(duckdb_path()), not_read, text)
    return text.getvalue()


def _run_plan(plan: list[tuple[str, Any, dict[str, str]]], instance, out, audit=None) -> dict[str, float] | None:
    """Run each job of ``plan`` in turn; seconds per step over all its runs, or None (the
    failed steps printed) when a run fails."""
    import dagster as dg

    from resumebias_dagster.definitions import defs

    launcher = {**LAUNCHER_TAGS, PID_TAG: str(os.getpid())}
    totals: dict[str, float] = {}
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    progress = StudyProgress([job for job, _, _ in plan], out)
    try:
        for job_name, partition, tags in plan:
            progress.start(job_name, job_name + (f" [{partition}]" if partition else ""))
            job_def = defs.resolve_job_def(job_name)
            own = audit.run_config(set(job_def.graph.node_dict)) if audit is not None else {}
            try:
                result, took = run_job(
                    job_def,
                    instance,
                    progress,
                    partition=partition,
                    tags={**launcher, **tags},
                    run_config={**quiet, **own},
                )
            except dg.DagsterInvalidConfigError as exc:
                progress.close()
                where = f"the audit file {audit.path}" if audit is not None else "the run config"
                print(f"resumebias run: {where} gives {job_name} settings it does not take: {exc}", file=out)
                return None
            progress.finish(result.success)
            for step, seconds in took.items():
                totals[step] = totals.get(step, 0.0) + seconds
            if not result.success:
                progress.close()
                for event in result.all_events:
                    if event.event_type_value == "STEP_FAILURE":
                        print(f"step {event.step_key} failed: {event.event_specific_data.error.message}", file=out)
                return None
            if job_name == "user_resumes_job":
                progress.note(_user_resumes_table(instance))
    finally:
        progress.close()
    return totals
