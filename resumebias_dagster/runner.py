"""``resumebias run``: materialise the study on the embedded defaults, print where it went."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from resumebias_dagster.settings import data_dir, duckdb_path


def _dagster_home() -> Path:
    """Runs go to $DAGSTER_HOME so `dagster dev` with the same home shows them in the UI."""
    home = Path(os.environ.get("DAGSTER_HOME") or data_dir() / "dagster_home").absolute()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def step_timings(instance, run_id: str) -> dict[str, float]:
    """Seconds from start to success of each step of a finished run."""
    started: dict[str, float] = {}
    took: dict[str, float] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is None:
            continue
        if event.event_type_value == "STEP_START":
            started[event.step_key] = entry.timestamp
        elif event.event_type_value == "STEP_SUCCESS" and event.step_key in started:
            took[event.step_key] = entry.timestamp - started[event.step_key]
    return took


def run_study(out=sys.stdout) -> int:
    home = _dagster_home()
    import dagster as dg
    import duckdb

    from resumebias_dagster.core.metrics import format_report
    from resumebias_dagster.definitions import defs

    instance = dg.DagsterInstance.get()
    job = defs.resolve_job_def("seniority_study")
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    print(f"run {result.run_id}: {'succeeded' if result.success else 'FAILED'}", file=out)
    for step, seconds in sorted(step_timings(instance, result.run_id).items(), key=lambda kv: -kv[1]):
        print(f"  {step:<40} {seconds:8.1f} s", file=out)
    if not result.success:
        for event in result.all_events:
            if event.event_type_value == "STEP_FAILURE":
                print(f"step {event.step_key} failed: {event.event_specific_data.error.message}", file=out)
        return 1
    db = duckdb_path()
    with duckdb.connect(str(db), read_only=True) as con:
        validation = con.execute("select * from audit.style_validation").df()
        predictions = con.execute("select * from audit.seniority_predictions").df()
    print("\nSTYLE VALIDATION (seed 004)", file=out)
    print(validation.round(3).to_string(index=False), file=out)
    print(file=out)
    out.write(format_report(predictions) if len(predictions) else "No predictions yet.\n")
    print(f"\nResults: DuckDB file {db} (schema 'audit', one table per asset)", file=out)
    print(f"UI: DAGSTER_HOME={home} dagster dev   (from the repository root; opens http://127.0.0.1:3000)", file=out)
    return 0
