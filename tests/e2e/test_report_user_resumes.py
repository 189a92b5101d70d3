"""The report's "Your résumés" section opened from disk in a real browser (Debian's Chromium via
Playwright): a résumé's text is folded until its summary is clicked, then shows redacted; the
axes that did not apply are listed; a script in a résumé is text, never run."""

from resumebias_dagster.core.jd_audit.probes.applicability import probe_applicability
from resumebias_dagster.core.reporting.render import ReportTables, render_report
from resumebias_dagster.core.reporting.user_resumes import REDACTED_NOTE
from resumebias_dagster.core.resumes.user_files import read_resume_folder
from resumebias_dagster.core.tables import (
    ProbeApplicability,
    UserResumes,
    conform,
)

TEXT = (
    "Jane Doe\njane.doe@example.com | +1 (555) 123-4567\n\n"
    "I have built payment systems for ten years.<script>window.pwned = 1</script>\n"
)


def _tables(folder) -> ReportTables:
    folder.mkdir()
    (folder / "Jane_Doe_CV.txt").write_text(TEXT, encoding="utf-8")
    rows, _ = read_resume_folder(folder)
    rows = conform(rows, UserResumes)
    return ReportTables(
        user_resumes=rows,
        user_resume_probes=conform(probe_applicability(rows), ProbeApplicability),
    )


def test_your_resumes_render_folded_and_redacted(page, screenshots, tmp_path):
    tables = _tables(tmp_path / "cvs")
    resume_id = tables.user_resumes["resume_id"].iloc[0]
    path = tmp_path / "audit_report.html"
    path.write_text(render_report(tables), encoding="utf-8")
    page.goto(path.as_uri())

    section = page.locator("#your-resumes")
    assert section.locator("h2").inner_text() == "Your résumés"
    assert REDACTED_NOTE in section.locator("#your-resumes-texts").inner_text()
    text = page.locator(f"#user-resume-{resume_id} pre")
    assert not text.is_visible()  # folded
    page.locator(f"#user-resume-{resume_id} summary").click()
    assert text.is_visible()
    shown = text.inner_text()
    assert shown.startswith("[name]\n[email] | [phone]") and "window.pwned = 1" in shown
    assert "Jane" not in section.inner_text() and "jane.doe" not in section.inner_text()
    assert page.evaluate("() => window.pwned") is None  # the résumé's script is text
    reasons = page.locator("#user-resume-probes-not-applied").inner_text()
    # Every axis whose field the résumé has applies (issue 39); the others name the field missing.
    assert "firstName" not in reasons and "graduationYear" in reasons and "no graduation year found" in reasons
    page.screenshot(path=str(screenshots / "audit_report_your_resumes.png"), full_page=True)
