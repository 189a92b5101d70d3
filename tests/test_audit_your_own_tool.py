"""The worked example of "Audit your own tool" (README, docs/howto/own-tool.md), end to end.

Two screeners of an employer's, an HTTP scoring service listening on 127.0.0.1 and a Python
function, are audited on a folder of résumés written here in layouts people use, not the
generator's (three PDF, two DOCX, seven text and Markdown files, and an encrypted PDF that cannot be read and is passed over), through
``resumebias run --config`` with the example's own audit file and models file
(``examples/own_tool``): the résumés are read, probed and name-swapped, both screeners score
them through the study, and the run ends with the report, which shows the résumés redacted.
Each screener has a planted defect, and the audit must find the HTTP one's; the Python one's,
exactly one point off every résumé, is too few résumés to carry to the population, and says so.
"""

import re

import duckdb
import pytest

from resumebias_dagster.testing.worked_example import KEY, run_worked_example

pytestmark = pytest.mark.slow


def test_the_worked_example_audits_an_http_and_a_python_screener_on_resume_files(tmp_path):
    run = run_worked_example(tmp_path)
    proc, example, data, written, calls, keys = run.proc, run.example, run.data, run.written, run.calls, run.keys
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert calls > 0 and keys == {KEY}
    assert f"audit file: {example / 'audit.yaml'}" in proc.stdout
    assert re.search(r"^user_resumes_job: started$", proc.stdout, re.MULTILINE)
    with duckdb.connect(str(data / "resumebias.duckdb"), read_only=True) as con:
        users = con.execute("select resume_id, file_type from audit.user_resumes order by source").fetchall()
        fit = con.execute(
            "select model, count(distinct resume_id), min(resume_id) from audit.fit_scores group by model"
        ).fetchall()
        names = con.execute("select distinct resume_id from audit.name_variants").fetchall()
        verdicts = con.execute("select model, finding, estimate, ci_low, ci_high, verdict from audit.fit_verdicts").df()
    assert [u[1] for u in users][:5] == ["pdf", "pdf", "pdf", "docx", "docx"] and len(users) == 12
    assert {m for m, *_ in fit} == {"acme-http", "acme-python"}
    assert all(n_resumes >= 10 and first.startswith("u-") for _, n_resumes, first in fit)
    assert {n for (n,) in names} == {u[0] for u in users}
    # Each screener's planted defect is found (fake_providers/scorer.py, examples/own_tool/acme_scorer.py),
    # and neither's placebo edits are.
    found = verdicts[verdicts["verdict"] == "beyond_noise"].set_index(["model", "finding"])["estimate"]
    for level in ("unexplained", "caregiving"):
        assert found[("acme-http", f"fit_level:careerGap_{level}")] == pytest.approx(-1.5, abs=0.15)
    # The Python one takes exactly a point off every résumé: no spread, which 12 résumés cannot carry
    # to the population (unseen résumés could bring the mean back to 0); its interval says so.
    abroad = verdicts.set_index(["model", "finding"]).loc[("acme-python", "fit_level:addressCountry_nigeria")]
    assert abroad["estimate"] == pytest.approx(-1.0, abs=0.05) and abroad["verdict"] == "inconclusive"
    assert abroad["ci_low"] < -1.0 < 0 < abroad["ci_high"] <= 9
    assert not [f for _, f in found.index if "placebo" in f]
    # The terminal says what the report's first screen says, in the same words (issue 43).
    assert "IN PLAIN WORDS" in proc.stdout
    assert "A two-year caregiving gap in the career lowers the score by 1.4 points" in proc.stdout
    report = data / "reports" / "audit_report.html"
    assert f"Report: {report}" in proc.stdout
    html = report.read_text(encoding="utf-8")
    assert "Your résumés" in html and "redacted" in html
    for person in written:
        assert person["name"] not in html and person["email"] not in html
