"""An audit file cannot widen the folders run config may read (issue 40, item 3): its
``catalog_dir`` used to become an allowed root, so its ``user_resumes.folder`` could name any
folder under it (a CV outside the audit file's folder was sent to the file's own endpoint).
Every path an audit file names must lie in its folder or a folder the operator allowed."""

import pytest

from resumebias_dagster.audit_file import AuditFileError, read_audit_file
from resumebias_dagster.settings import user_roots


def _audit(folder, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "audit.yaml").write_text(text, encoding="utf-8")
    return folder / "audit.yaml"


@pytest.fixture
def outside(tmp_path, monkeypatch):
    for name in ("RESUMEBIAS_ALLOWED_ROOTS", "RESUMEBIAS_CATALOG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "catalog" / "cvs").mkdir(parents=True)
    (elsewhere / "models.yaml").write_text("models: []\n")
    return elsewhere


@pytest.mark.parametrize(
    ("text", "setting"),
    [
        ("catalog_dir: {out}/catalog\nassets: {{user_resumes: {{folder: {out}/catalog/cvs}}}}\n", "catalog_dir"),
        ("assets: {{user_resumes: {{folder: {out}/catalog/cvs}}}}\n", "assets.user_resumes.folder"),
        ("assets: {{user_resumes: {{folder: ../elsewhere/catalog/cvs}}}}\n", "assets.user_resumes.folder"),
        ("models_file: {out}/models.yaml\n", "models_file"),
    ],
)
def test_a_path_outside_the_audit_files_folder_is_refused_naming_the_setting(tmp_path, outside, text, setting):
    path = _audit(tmp_path / "audit", text.format(out=outside))
    with pytest.raises(AuditFileError) as exc:
        read_audit_file(path, user_roots(checked=False))
    message = str(exc.value)
    assert message.startswith(f"{path}: {setting}: ") and "lies outside the audit file's folder" in message
    assert "RESUMEBIAS_ALLOWED_ROOTS" in message


def test_a_link_out_of_the_audit_files_folder_is_refused(tmp_path, outside):
    folder = tmp_path / "audit"
    folder.mkdir()
    (folder / "resumes").symlink_to(outside / "catalog" / "cvs")
    path = _audit(folder, "assets: {user_resumes: {folder: resumes}}\n")
    with pytest.raises(AuditFileError, match="assets.user_resumes.folder: .* lies outside the audit file's folder"):
        read_audit_file(path, user_roots(checked=False))


def test_a_folder_the_operator_allowed_may_be_named(tmp_path, outside, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(outside))
    path = _audit(tmp_path / "audit", f"catalog_dir: {outside}/catalog\n")
    assert read_audit_file(path, user_roots(checked=False)).catalog_dir == outside / "catalog"
