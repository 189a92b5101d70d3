"""The report an auditor reads in five minutes (issue 43): the worked example's report
(examples/own_tool, two screeners on twelve résumés) opened in Chromium as a reader opens it, and
printed to PDF as a reader files it."""

import re
import unicodedata

import pytest

from resumebias_dagster.testing.worked_example import run_worked_example

pytestmark = pytest.mark.slow

FIRST_SCREEN_MAX_PX = 1500
IDENTIFIER = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b|\b[a-z]+[A-Z][a-zA-Z]*\b")
SCIENTIFIC = re.compile(r"\d[eE][-+]?\d")
EEO1 = ("White", "Black or African American", "Hispanic or Latino", "Asian")
WIDER_THAN_PAGE = (
    "[...document.querySelectorAll('table')].filter(t => t.offsetParent)"
    ".filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).map(t => t.id)"
)
NOT_EEO1 = ("caucasian", "african_american", "african-american", "hispanic_latino")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    run = run_worked_example(tmp_path_factory.mktemp("worked_example"))
    assert run.proc.returncode == 0, run.output[-6000:]
    return run.report


def test_the_first_screen_of_each_tool_is_short_plain_and_names_groups_as_eeo1_does(report, page, screenshots):
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(report.as_uri())
    tools = page.locator("section.tool")
    assert tools.count() == 2
    for tool in tools.all():
        height = tool.evaluate(
            "s => s.querySelector('.first-screen').getBoundingClientRect().bottom - s.getBoundingClientRect().top"
        )
        text = tool.locator(".first-screen").inner_text()
        name = tool.locator("h2").inner_text()
        assert height <= FIRST_SCREEN_MAX_PX, f"{name}: first screen {height:.0f} px"
        assert not IDENTIFIER.findall(text), f"{name}: {IDENTIFIER.findall(text)}"
        assert not SCIENTIFIC.search(text), name
        assert all(group in text for group in EEO1), f"{name}: {text}"
        assert not any(word in text.lower() for word in NOT_EEO1), name
    http = page.locator("#tool-acme-http .verdict-moved").inner_text()
    assert (
        "a two-year caregiving gap in the career lowers the score by 1.4 points on the 1–10 fit scale" in http.lower()
    )
    assert (
        "résumés" in page.locator("#asked").inner_text() and "2 job descriptions" in page.locator("#asked").inner_text()
    )
    # Details stay collapsed: the full tables open on a click.
    assert not page.locator("#verdicts-tool-acme-http").is_visible()
    page.screenshot(path=str(screenshots / "worked_example_report.png"))


def test_the_printed_report_has_a_page_per_section_and_no_cut_table(report, page, tmp_path):
    from pypdf import PdfReader

    page.goto(report.as_uri())
    page.emulate_media(media="print")
    sections = page.evaluate("[...document.querySelectorAll('body > section h2:first-child')].map(h => h.innerText)")
    cut = page.evaluate(WIDER_THAN_PAGE)
    assert not cut, f"tables wider than the printed page: {cut}"
    rows = page.evaluate(
        "[...document.querySelectorAll('tr')].filter(r => r.offsetParent)"
        ".map(r => getComputedStyle(r).breakInside).filter(b => b !== 'avoid').length"
    )
    assert rows == 0, "a table row may be cut across pages"
    pdf = tmp_path / "report.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    firsts = [
        unicodedata.normalize("NFKC", p.extract_text()).strip().splitlines()[0] for p in PdfReader(str(pdf)).pages
    ]
    pages = []
    for title in sections:
        title = unicodedata.normalize("NFKC", title)
        starts = [i for i, line in enumerate(firsts) if title.startswith(line.strip()) or line.startswith(title)]
        assert starts, f"section {title!r} does not start a page: {firsts}"
        pages.append(starts[0])
    assert pages == sorted(set(pages)) and len(pages) >= 8, pages
    assert firsts[0] == "Résumé-screening bias audit"  # the run's identity on the first page
    # A reader who opens every detail before printing gets no cut table either.
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert not page.evaluate(WIDER_THAN_PAGE)
