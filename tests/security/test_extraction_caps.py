"""Caps on the work one résumé file may take (issue 40, item 12): an 8 KB PDF whose pages share
one Flate stream took 23 s, a 600 KB DOCX 914 s and 3.4 GB, and a Markdown line of repeated
``**x `` grew quadratically (10 s at 32 KB). Each file now stops at a cap on its text, its DOCX
XML and its seconds, with one line saying which; the Markdown reader is linear (a bold span
never holds its own marker, so an unclosed marker is not searched past the next one)."""

import pytest

from resumebias_dagster.core.resumes import extract
from resumebias_dagster.core.resumes.extract import ExtractionError, extract_bytes, markdown_to_text
from resumebias_dagster.testing.resume_files import docx_bytes, pdf_bytes

RESUME = "Jordan Lee\njordan@example.com\nEXPERIENCE\nEngineer, Acme (2019-2023)\nEDUCATION\nBSc, 2018\n"


def test_a_text_past_the_cap_is_refused():
    text = RESUME + "Python " * (extract.MAX_TEXT_CHARS // 7 + 10)
    with pytest.raises(ExtractionError, match=r"more than 200,000 characters of text; a résumé has fewer"):
        extract_bytes(text.encode(), ".txt")


def test_a_pdf_that_takes_too_long_stops_with_the_reason(monkeypatch):
    data = pdf_bytes(RESUME)
    monkeypatch.setattr(extract, "MAX_EXTRACT_S", -1.0)
    with pytest.raises(ExtractionError, match=r"still not read after -1 s"):
        extract_bytes(data, ".pdf")


def test_a_docx_whose_text_passes_the_cap_stops_at_it(monkeypatch):
    data = docx_bytes(RESUME + "A line of a long table of skills.\n" * 200)
    monkeypatch.setattr(extract, "MAX_TEXT_CHARS", 1_000)
    with pytest.raises(ExtractionError, match="more than 1,000 characters of text"):
        extract_bytes(data, ".docx")


def test_a_docx_whose_xml_unpacks_past_the_cap_is_refused(monkeypatch):
    data = docx_bytes(RESUME)
    monkeypatch.setattr(extract, "MAX_DOCX_XML_BYTES", 1_000)
    with pytest.raises(ExtractionError, match=r"its XML unpacks to [\d,]+ bytes; more than 1,000 is no résumé"):
        extract_bytes(data, ".docx")


def test_markdown_bold_never_spans_its_own_marker():
    # The old reader's ".+?" let a bold span run over other markers: many unclosed "**" made it
    # search to the end of the line from each one.
    assert markdown_to_text("**Senior Engineer** at __Acme__") == "Senior Engineer at Acme"
    assert markdown_to_text("**a*b**") == "**a*b**"
    line = "**x " * 50_000
    assert markdown_to_text(line) == line
