"""The audit file of ``resumebias run --config``: every malformed setting refused, naming the file
and the setting, before anything runs."""

from pathlib import Path

import pytest

from resumebias_dagster.audit_file import AuditFileError, check_asset_names, read_audit_file
from resumebias_dagster.cli import main


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "models.yaml").write_text("models: []\n")
    (folder / "resumes").mkdir(exist_ok=True)
    path = folder / "audit.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_paths_are_read_from_the_audit_files_folder(tmp_path):
    path = write(
        tmp_path / "a",
        "models_file: models.yaml\nassets:\n  user_resumes: {folder: resumes}\n  probe_variants: {resumes: user}\n",
    )
    audit = read_audit_file(path)
    assert audit.models_file == tmp_path / "a" / "models.yaml"
    assert audit.assets["user_resumes"] == {"folder": str(tmp_path / "a" / "resumes")}
    assert audit.run_config({"probe_variants", "base_resumes"}) == {
        "ops": {"probe_variants": {"config": {"resumes": "user"}}}
    }
    assert audit.run_config({"fit_scores"}) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: x.yaml\n", "unknown setting(s) models; the settings are models_file, catalog_dir, assets"),
        ("models_file: nowhere.yaml\n", "models_file: {folder}/nowhere.yaml is not a file"),
        ("catalog_dir: models.yaml\n", "catalog_dir: {folder}/models.yaml is not a folder"),
        ("assets: [user_resumes]\n", "assets must map asset names to their config, got list"),
        ("assets: {user_resumes: resumes}\n", "assets.user_resumes must be a mapping of its settings, got str"),
        ("assets: {user_resumes: {folder: missing}}\n", "assets.user_resumes.folder: {folder}/missing is not a folder"),
        ("assets: {user_resumes: {csv: resumes}}\n", "assets.user_resumes.csv: {folder}/resumes is not a file"),
        ("- a list\n", "expected a mapping with models_file, catalog_dir, assets"),
        ("key: [unclosed\n", "not a YAML file"),
    ],
)
def test_a_malformed_audit_file_is_refused_naming_the_setting(tmp_path, text, message):
    path = write(tmp_path / "a", text)
    with pytest.raises(AuditFileError) as exc:
        read_audit_file(path)
    assert str(exc.value).startswith(str(path))
    assert message.format(folder=tmp_path / "a") in str(exc.value)


def test_an_asset_the_definitions_lack_is_named(tmp_path):
    audit = read_audit_file(write(tmp_path / "a", "assets: {user_resume: {folder: resumes}}\n"))
    with pytest.raises(AuditFileError, match="assets: the definitions have no asset named user_resume"):
        check_asset_names(audit, {"user_resumes", "probe_variants"})


def test_resumebias_run_refuses_a_bad_audit_file_before_running_anything(tmp_path, capsys):
    assert main(["run", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert f"resumebias run: audit file {tmp_path / 'missing.yaml'} does not exist" in capsys.readouterr().out


MODELS = (
    "models:\n  - {name: acme, kind: http, url: 'https://scorer.example/score', body: '{}', answer: {score: $.score}}\n"
)


def test_the_audit_file_setting_carries_its_models_catalog_and_folder(tmp_path, monkeypatch):
    # Issue 39: one setting (RESUMEBIAS_AUDIT_FILE, or the CLI's --config in its own process)
    # carries the audit file to every setting it decides; nothing writes os.environ for it.
    from resumebias_dagster import settings

    path = write(tmp_path / "a", "models_file: models.yaml\ncatalog_dir: resumes\n")
    (tmp_path / "a" / "models.yaml").write_text(MODELS)
    for name in ("RESUMEBIAS_MODELS_FILE", "RESUMEBIAS_CATALOG_DIR", "RESUMEBIAS_ALLOWED_ROOTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RESUMEBIAS_AUDIT_FILE", str(path))
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert settings.models_file() == str(tmp_path / "a" / "models.yaml")
    assert settings.catalog_dir() == str(tmp_path / "a" / "resumes")
    assert tmp_path / "a" in settings.allowed_roots()
    assert settings.checked_path(tmp_path / "a" / "resumes", "user_resumes.folder") == tmp_path / "a" / "resumes"


def test_the_definitions_the_ui_loads_hold_the_audit_files_models(tmp_path):
    import os
    import subprocess
    import sys

    path = write(tmp_path / "a", "models_file: models.yaml\n")
    (tmp_path / "a" / "models.yaml").write_text(MODELS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESUMEBIAS_")}
    env["RESUMEBIAS_AUDIT_FILE"] = str(path)
    script = "from resumebias_dagster.partitions import fit_model_partitions as p; print(p.get_partition_keys())"
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "['acme']"
    # A bad audit file named there is refused at load, naming the variable and the file.
    env["RESUMEBIAS_AUDIT_FILE"] = str(tmp_path / "gone.yaml")
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert f"RESUMEBIAS_AUDIT_FILE: audit file {tmp_path / 'gone.yaml'} does not exist" in out.stderr
