import json
import os
import subprocess
import sys


def test_definitions_load_and_validate():
    from resumebias_dagster.definitions import defs

    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert {
        "base_resumes",
        "style_variants",
        "style_validation",
        "name_variants",
        "seniority_predictions",
        "imported_predictions",
        "classifier_training_set",
        "fine_tuned_classifiers",
        "seniority_group_metrics",
        "seniority_bias_summary",
    } <= keys
    for job in ("study_inputs", "seniority_predictions_job", "study_tables"):
        assert defs.resolve_job_def(job) is not None


def test_importing_definitions_loads_no_torch_or_models():
    code = (
        "import sys, json, time; t=time.time();"
        "import resumebias_dagster.definitions;"
        "print(json.dumps({'seconds': time.time()-t, 'heavy': [m for m in ('torch','transformers','openai','anthropic','google.genai','matplotlib') if m in sys.modules]}))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["heavy"] == []


def test_importing_definitions_creates_no_folder(tmp_path):
    # Issue 39: importing the definitions created ./data in the working directory (the I/O
    # manager's database path was resolved at import) and recorded it as the tool's own.
    env = {k: v for k, v in os.environ.items() if k != "RESUMEBIAS_DATA_DIR"}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run([sys.executable, "-c", "import resumebias_dagster.definitions"], check=True, cwd=work, env=env)
    assert list(work.iterdir()) == [] and not (tmp_path / "state").exists()


def test_the_default_io_manager_writes_the_data_folders_duckdb_file(tmp_path):
    # Resolved when a run opens it: ./data is created then, and the table lands in its file.
    env = {k: v for k, v in os.environ.items() if k != "RESUMEBIAS_DATA_DIR"}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    script = (
        "import dagster as dg, pandas as pd, duckdb\n"
        "from resumebias_dagster.resources.storage import default_io_manager\n"
        "@dg.asset\n"
        "def thing() -> pd.DataFrame:\n"
        "    return pd.DataFrame({'a': [7]})\n"
        "assert dg.materialize([thing], resources={'io_manager': default_io_manager()}).success\n"
        "print(duckdb.connect('data/resumebias.duckdb').execute('select a from audit.thing').fetchall())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[(7,)]"


def test_dagster_cli_validates_definitions():
    out = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-m", "resumebias_dagster.definitions"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_definitions_match_the_snapshot_taken_before_the_layout_moved():
    """Asset keys, groups, partitions, dependencies, checks, jobs, sensors, schedules,
    resources and CLI commands are what users rely on; a restructuring must not move them."""
    import pathlib

    from tests.definitions_snapshot import snapshot

    expected = json.loads((pathlib.Path(__file__).parent / "definitions_snapshot.json").read_text())
    actual = json.loads(json.dumps(snapshot()))
    for part in expected:
        assert actual[part] == expected[part], part
