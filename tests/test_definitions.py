import json
import os
import pathlib
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


def _asset_nodes():
    from resumebias_dagster.definitions import defs

    graph = defs.resolve_asset_graph()
    return {key.to_user_string(): graph.get(key) for key in graph.get_all_asset_keys()}


def _group_folders() -> set[str]:
    import resumebias_dagster.defs

    root = pathlib.Path(resumebias_dagster.defs.__file__).parent
    return {p.name for p in root.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_")}


def test_each_folder_of_defs_is_an_asset_group_and_nothing_else_is():
    groups = {node.group_name for node in _asset_nodes().values()}
    assert (
        groups
        == _group_folders()
        == {
            "seniority_study",
            "seniority_models",
            "jd_audit",
            "ranking",
            "user_resumes",
            "report",
        }
    )


def test_every_asset_has_its_folders_owner():
    import importlib

    lacking = {key: node.owners for key, node in _asset_nodes().items() if not node.owners}
    assert not lacking, f"assets without an owner: {lacking}"
    for key, node in _asset_nodes().items():
        owner = importlib.import_module(f"resumebias_dagster.defs.{node.group_name}").OWNER
        assert list(node.owners) == [owner] and owner.startswith("team:"), key


def test_every_table_shows_its_pandera_models_columns():
    # One declaration: the columns the UI shows are the pandera model's, name by name, with
    # its dtypes, descriptions and nullable/unique flags, in the declared order.
    from tests.defs.stored_columns import declared_models

    models = declared_models()
    nodes = _asset_nodes()
    assert set(models) == set(nodes)
    for key, model in models.items():
        expected = [
            (name, str(col.dtype), col.description, bool(col.nullable), bool(col.unique))
            for name, col in model.to_schema().columns.items()
        ]
        schema = nodes[key].metadata["dagster/column_schema"].schema
        shown = [(c.name, c.type, c.description, c.constraints.nullable, c.constraints.unique) for c in schema.columns]
        assert shown == expected, key
    # The check sees a difference: FitScores' nullable `score` column shows as nullable.
    score = next(c for c in nodes["fit_scores"].metadata["dagster/column_schema"].schema.columns if c.name == "score")
    assert score.constraints.nullable and score.type == "float64"


def test_an_asset_outside_a_group_folder_is_refused_naming_its_module():
    import dagster as dg
    import pytest

    from resumebias_dagster.definitions import DefsLayoutError, group_of

    @dg.asset
    def stray() -> None: ...

    import re

    with pytest.raises(
        DefsLayoutError, match="^" + re.escape(f"{__name__}: assets stray must live in a group folder of ")
    ):
        group_of(stray)


def test_a_group_folder_without_an_owner_is_refused_naming_its_file(monkeypatch):
    import types

    import pytest

    from resumebias_dagster.definitions import DefsLayoutError, owner_of

    monkeypatch.setitem(sys.modules, "resumebias_dagster.defs.ownerless", types.ModuleType("ownerless"))
    with pytest.raises(DefsLayoutError, match=r"^resumebias_dagster/defs/ownerless/__init__.py: set OWNER = 'team:"):
        owner_of("ownerless")


def test_an_installed_copy_of_the_package_loads_its_defs_folder(tmp_path):
    # `pip install .` copies the package away from pyproject.toml's [tool.dg]: the definitions
    # load defs/ from the package itself, not through the project file.
    import resumebias_dagster

    (tmp_path / "resumebias_dagster").symlink_to(pathlib.Path(resumebias_dagster.__file__).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESUMEBIAS_", "DAGSTER_"))}
    env.update({"PYTHONPATH": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")})
    code = (
        "from resumebias_dagster.definitions import defs\n"
        "print(sorted({a.group_names_by_key[k] for a in defs.assets for k in a.keys}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    groups = ["jd_audit", "ranking", "report", "seniority_models", "seniority_study", "user_resumes"]
    assert out.stdout.strip() == repr(groups)


def test_each_prediction_asset_shows_the_kinds_of_its_models(tmp_path):
    # fit_scores of an HTTP scorer and a Python function is no PyTorch asset.
    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n"
        "  - {name: vendor, kind: http, url: 'http://127.0.0.1:9/score', body: '{\"r\": {{ resume | tojson }}}',"
        " answer: {score: score}}\n"
        "  - {name: fn, kind: python, entry_point: 'my_scorer:score'}\n"
        "  - {name: gpt, kind: provider, provider: openai, model: gpt-4o-mini}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESUMEBIAS_", "DAGSTER_"))}
    env.update({"RESUMEBIAS_MODELS_FILE": str(models), "XDG_STATE_HOME": str(tmp_path / "state")})
    code = (
        "import dagster as dg\n"
        "from resumebias_dagster.definitions import defs\n"
        "for name in ('fit_scores', 'seniority_predictions', 'rankings'):\n"
        "    print(name, sorted(defs.resolve_assets_def(name).specs_by_key[dg.AssetKey(name)].kinds))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == [
        "fit_scores ['api', 'duckdb', 'openai', 'python']",
        "seniority_predictions ['duckdb', 'openai', 'python']",
        "rankings ['duckdb', 'openai']",
    ]
