import json
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
