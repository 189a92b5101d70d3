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
