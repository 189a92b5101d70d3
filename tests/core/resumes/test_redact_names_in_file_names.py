"""Redaction catches a candidate's name however a file name or an id writes it (issue 39: the
report's redacted table showed ``cv_00_akaminski.pdf``, ``ZamoraR-CV.txt`` and
``jose_garcia.pdf``): joined with an initial, abbreviated, in any case, with or without accents."""

import pytest

from resumebias_dagster.core.resumes.user_files import redact


@pytest.mark.parametrize(
    ("text", "name", "shown"),
    [
        ("cv_00_akaminski.pdf", "Anna Kaminski", "cv_00_[name].pdf"),
        ("ZamoraR-CV.txt", "Rosa Zamora", "[name]-CV.txt"),
        ("jose_garcia.pdf", "José García", "[name].pdf"),
        ("JOSÉ GARCÍA resume.docx", "Jose Garcia", "[name] resume.docx"),
        ("a.kaminski_2024.pdf", "Anna Kaminski", "[name]_2024.pdf"),
        ("kaminski-anna.md", "Anna Kaminski", "[name].md"),
        ("AnnaK.txt", "Anna Kaminski", "[name].txt"),
        ("Cambridge_CV.pdf", "Anna Kaminski", "Cambridge_CV.pdf"),
    ],
)
def test_names_in_file_names_are_redacted(text, name, shown):
    assert redact(text, name=name) == shown


def test_accents_in_the_text_are_no_way_round_the_redaction():
    text = "José García\njose.garcia@example.com\nJosé led the GARCIA-labs project."
    shown = redact(text, name="Jose Garcia")
    assert "jos" not in shown.lower() and "garc" not in shown.lower()
