"""What a user is told about their résumé folder (issue 39): an empty folder says it is empty
(it read "user_resumes has no résumé: materialise user_resumes with a folder" although the
folder was given), a folder whose every file is unreadable says so with the reasons, and
``resumebias run`` prints a table per file after reading them (runner.user_resumes_report)."""

import io

import dagster as dg
import pytest

from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.run_summary import user_resumes_report
from resumebias_dagster.testing.resume_files import encrypted_pdf_bytes, pdf_bytes, write

FREE_FORM = "Jane Doe\njane.doe@example.com\n\nI have built payment systems for ten years.\n"


def _materialize(folder, resources, *, raise_on_error=True):
    return dg.materialize(
        [user_resumes, user_resume_probes],
        resources=resources,
        run_config={"ops": {"user_resumes": {"config": {"folder": str(folder)}}}},
        raise_on_error=raise_on_error,
    )


def test_an_empty_folder_says_it_is_empty(tmp_path, resources):
    folder = tmp_path / "cvs"
    folder.mkdir()
    with pytest.raises(dg.Failure, match=rf"user_resumes: the folder {folder} holds no résumé file"):
        _materialize(folder, resources)


def test_a_folder_of_unreadable_files_says_why_each_was_not_read(tmp_path, resources):
    folder = tmp_path / "cvs"
    write(folder / "locked.pdf", encrypted_pdf_bytes(generate_resumes(1, seed=2)["text"].iloc[0]))
    with pytest.raises(dg.Failure, match=r"none of its 1 file\(s\) could be read: locked.pdf: .*encrypted"):
        _materialize(folder, resources)


def test_the_run_prints_a_table_per_file(tmp_path, resources):
    texts = generate_resumes(1, seed=11)["text"].tolist()
    folder = tmp_path / "cvs"
    write(folder / "a.pdf", pdf_bytes(texts[0]))
    write(folder / "jane.txt", FREE_FORM)
    write(folder / "locked.pdf", encrypted_pdf_bytes(texts[1]))
    result = _materialize(folder, resources)
    out = io.StringIO()
    metadata = result.asset_materializations_for_node("user_resumes")[0].metadata
    user_resumes_report(str(tmp_path / "study.duckdb"), metadata["not_read"].value, out)
    text = out.getvalue()
    lines = {
        line.split()[0]: line for line in text.splitlines() if line.split() and line.split()[0].endswith(("pdf", "txt"))
    }
    assert set(lines) == {"a.pdf", "jane.txt", "locked.pdf"}
    assert "not read" in lines["locked.pdf"] and "encrypted" in lines["locked.pdf"]
    assert "Jane Doe" in lines["jane.txt"]
    # Every axis that does not apply is named with its reason.
    assert "does not apply" in text or "applies to every axis" in text
