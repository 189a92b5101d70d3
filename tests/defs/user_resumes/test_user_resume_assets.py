"""Your own résumés through Dagster: a folder of real PDF and DOCX files (one encrypted, one with
no text layer) becomes the user_resumes table in a real DuckDB file, the unreadable files are
listed by name while the others go on, and user_resume_probes says per résumé and axis whether
each probe applies, with the reason where it does not."""

import dagster as dg
import duckdb
import pytest

from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.settings import ConfigPathError
from resumebias_dagster.testing.resume_files import (
    docx_bytes,
    encrypted_pdf_bytes,
    pdf_bytes,
    scanned_pdf_bytes,
    write,
)

FREE_FORM = "Jane Doe\njane.doe@example.com\n\nI have built payment systems for ten years.\n"


def test_a_folder_of_resume_files_becomes_a_table_and_its_probes(tmp_path, resources):
    texts = generate_resumes(1, seed=11)["text"].tolist()  # one junior, one mid, one senior
    folder = tmp_path / "cvs"
    write(folder / "a.pdf", pdf_bytes(texts[0]))
    write(folder / "b.pdf", pdf_bytes(texts[1]))
    write(folder / "c.docx", docx_bytes(texts[2]))
    write(folder / "jane.txt", FREE_FORM)
    write(folder / "locked.pdf", encrypted_pdf_bytes(texts[0]))
    write(folder / "scan.pdf", scanned_pdf_bytes())
    write(folder / "labels.csv", "file,seniority\na.pdf,junior\nc.docx,senior\n")

    result = dg.materialize(
        [user_resumes, user_resume_probes],
        resources=resources,
        run_config={"ops": {"user_resumes": {"config": {"folder": str(folder)}}}},
    )
    assert result.success
    with duckdb.connect(str(tmp_path / "study.duckdb"), read_only=True) as con:
        rows = con.execute("select * from audit.user_resumes order by source").df()
        probes = con.execute("select * from audit.user_resume_probes").df()
    assert rows["source"].tolist() == ["a.pdf", "b.pdf", "c.docx", "jane.txt"]
    assert rows["seniority"].tolist()[:3] == ["junior", None, "senior"]
    not_read = result.asset_materializations_for_node("user_resumes")[0].metadata["not_read"].value
    assert "locked.pdf" in not_read and "encrypted" in not_read
    assert "scan.pdf" in not_read and "no text layer" in not_read

    axes = [a.id for a in load_probe_axes().axes]
    assert len(probes) == len(rows) * len(axes)
    generated = probes[probes["resume_id"].isin(rows.loc[rows["source"] != "jane.txt", "resume_id"])]
    assert generated.loc[generated["axis"] == "firstName", "applies"].all()
    jane = probes[probes["resume_id"] == rows.loc[rows["source"] == "jane.txt", "resume_id"].iloc[0]]
    skipped = jane[~jane["applies"]]
    assert len(skipped) and (skipped["reason"] != "").all()  # every skip says why


def test_no_folder_configured_reads_as_no_resume(resources):
    result = dg.materialize([user_resumes, user_resume_probes], resources=resources)
    assert result.success
    assert len(result.output_for_node("user_resumes")) == 0
    assert len(result.output_for_node("user_resume_probes")) == 0


def test_a_folder_outside_the_allowed_folders_is_refused_naming_the_setting(resources):
    with pytest.raises(ConfigPathError, match="user_resumes.folder: /etc is outside the folders"):
        dg.materialize(
            [user_resumes], resources=resources, run_config={"ops": {"user_resumes": {"config": {"folder": "/etc"}}}}
        )
