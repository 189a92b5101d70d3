"""The résumé folder's sidecar and a résumé CSV are read as the files they are and never quoted
(issue 40, item 13): ``labels.csv`` as a symbolic link was followed and its first line echoed
in the error, and a ``user_resumes.csv`` pointing at a ``.env`` echoed ``OPENAI_API_KEY=sk-...``
as a column name."""

import pytest

from resumebias_dagster.core.resumes.user_files import read_resume_csv, read_resume_folder

SECRET = "OPENAI_API_KEY=sk-live-0123456789abcdef"


def test_a_linked_labels_file_is_refused_without_quoting_it(tmp_path):
    env = tmp_path / ".env"
    env.write_text(SECRET + "\n")
    folder = tmp_path / "resumes"
    folder.mkdir()
    (folder / "a.txt").write_text("Jordan Lee\nSUMMARY\nPython developer.\n")
    (folder / "labels.csv").symlink_to(env)
    with pytest.raises(ValueError) as exc:
        read_resume_folder(folder)
    assert str(exc.value) == f"{folder / 'labels.csv'}: a symbolic link; give the file itself"


def test_a_csv_whose_header_is_a_secret_is_not_quoted(tmp_path):
    env = tmp_path / "resumes.csv"
    env.write_text(SECRET + "\nOTHER=1\n")
    with pytest.raises(ValueError) as exc:
        read_resume_csv(env)
    message = str(exc.value)
    assert "sk-live" not in message and "OPENAI" not in message
    assert message == f"{env}: no column 'text' (text_column); its header has 1 column(s), none named so"
    link = tmp_path / "linked.csv"
    link.symlink_to(env)
    with pytest.raises(ValueError, match="a symbolic link; give the file itself"):
        read_resume_csv(link)
