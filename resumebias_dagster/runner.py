"""``resumebias run``: materialise the study on the embedded defaults, print where it went."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from resumebias_dagster.core.common.processes import pid_alive
from resumebias_dagster.progress import StudyProgress
from resumebias_dagster.settings import (
    UntrustedFolderError,
    dagster_home_choice,
    data_dir,
    duckdb_path,
    remember_file,
    set_dagster_home,
    set_for_libraries,
    use_audit_file,
    wrote_file,
)

INSTANCE_TEMPLATE = Path(__file__).parent / "instance" / "dagster.yaml"


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
        if not wrote_file(config):
            raise UntrustedInstanceError(
                f"{config} was not written by resumebias (it differs from the instance config resumebias writes): a "
                "dagster.yaml can run commands (a python_logs handler), so it is not read. To use it, set "
                f"DAGSTER_HOME={home}; to let resumebias write its own, delete it"
            )
        config.unlink()  # written by an earlier version: replaced by today's template
    if not config.exists():
        shutil.copyfile(INSTANCE_TEMPLATE, config)
        remember_file(config)
    set_dagster_home(home)
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
            audit = read_audit_file(audit_path)
        except AuditFileError as exc:
            print(f"resumebias run: {exc}", file=out)
            return 2
        # Before the definitions load: their partitions are the models file's.
        use_audit_file(audit.models_file, audit.catalog_dir, audit.folder)
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
    instance = dg.DagsterInstance.get()
    release_abandoned_runs(instance, out)
    totals = _run_plan(_study_plan(audit), instance, out, audit)
    if totals is None:
        return 1
    print("\nSECONDS PER ASSET (all partitions)", file=out)
    for step, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {step:<55} {seconds:8.1f}", file=out)
    _print_results(out)
    report = data_dir() / "reports" / "audit_report.html"
    if report.is_file():
        print(f"Report: {report}   (one HTML file; open it in any browser, share it as it is)", file=out)
    summary = data_dir() / "reports" / "bias_audit_summary.json"
    if summary.is_file():
        print(
            f"Local Law 144 summary: {summary} (and .csv); EU AI Act test record: eu_ai_act_test_record.json", file=out
        )
    print(f"UI: DAGSTER_HOME={home} dagster dev   (from the repository root; opens http://127.0.0.1:3000)", file=out)
    return 0


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
    finally:
        progress.close()
    return totals


def _print_results(out) -> None:
    """The study's tables as text, from the DuckDB file, and where the files are."""
    import duckdb

    from resumebias_dagster.core.seniority.tables_text import format_tables

    db = duckdb_path()
    with duckdb.connect(str(db), read_only=True) as con:
        validation = con.execute("select * from audit.style_validation").df()
        predictions = con.execute("select * from audit.seniority_predictions").df()
        seniority_verdicts = con.execute("select * from audit.seniority_verdicts").df()
        fit_verdicts = con.execute("select * from audit.fit_verdicts").df()
        fit_summary = con.execute("select * from audit.fit_model_summary").df()
        impact = {
            name: con.execute(f"select * from audit.{name}").df()
            for name in ("seniority_impact_ratios", "fit_impact_ratios")
        }
        plots = con.execute(
            "select plot, path from audit.fit_plots union all select plot, path from audit.seniority_plots"
        ).df()
    print("\nSTYLE VALIDATION (notebook 004)", file=out)
    print(validation.round(3).to_string(index=False), file=out)
    print(file=out)
    out.write(format_tables(predictions, seniority_verdicts) if len(predictions) else "No predictions yet.\n")
    print("\nJOB-DESCRIPTION AUDIT (study 003): per model", file=out)
    columns = [
        "model",
        "n_cells",
        "n_significant",
        "noise_floor",
        "bias_index",
        "placebo_index",
        "largest_penalty",
        "largest_penalty_jd",
        "largest_penalty_variant",
        "prompt_injection_mean_delta",
        "anonymize_mean_delta",
    ]
    print(fit_summary[columns].round(3).to_string(index=False) if len(fit_summary) else "(no fit scores)", file=out)
    print("\nJOB-DESCRIPTION AUDIT: VERDICTS (the résumé the unit; inference.yaml's margins)", file=out)
    shown = ["model", "finding", "estimate", "ci_low", "ci_high", "q", "mde", "verdict"]
    print(fit_verdicts[shown].round(3).to_string(index=False) if len(fit_verdicts) else "(no fit scores)", file=out)
    for name, title in (
        ("seniority_impact_ratios", "SENIORITY STUDY (name experiment)"),
        ("fit_impact_ratios", "JOB-DESCRIPTION AUDIT (names)"),
    ):
        print(
            f"\nSELECTION RATES AND IMPACT RATIOS, {title}: groups by name, a proxy for perceived group; "
            "flag = ratio under 0.8 (four-fifths rule); ci_below_four_fifths = its whole 95% interval under 0.8 "
            "(beyond sampling noise)",
            file=out,
        )
        columns = [
            "model",
            "selection",
            "dimension",
            "group",
            "n",
            "selected",
            "rate",
            "impact_ratio",
            "ci_low",
            "ci_high",
            "below_four_fifths",
            "ci_below_four_fifths",
        ]
        table = impact[name]
        print(table[columns].round(3).to_string(index=False) if len(table) else "(no predictions)", file=out)
    print(f"\nResults: DuckDB file {db} (schema 'audit', one table per asset)", file=out)
    for plot in plots.itertuples(index=False):
        print(f"Plot {plot.plot}: {plot.path}", file=out)
