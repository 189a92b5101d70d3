"""The report's "Your résumés" section: the user's own résumés with their texts redacted (name,
e-mail and phone replaced, in the file names too) unless the user opts in, escaped, the probe
axes that did not apply with the reason, nothing at all without a user résumé; and the same
redaction wherever else the report shows a user résumé's text (its probe variants' diffs, a
judge's quotes)."""

import re

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.probes.applicability import probe_applicability
from resumebias_dagster.core.jd_audit.probes.variants import probe_variants
from resumebias_dagster.core.reporting.render import ReportTables, render_report
from resumebias_dagster.core.reporting.user_resumes import (
    REDACTED_NOTE,
    SHOWN_NOTE,
    Redactor,
    user_resumes_section,
)
from resumebias_dagster.core.resumes.user_files import read_resume_folder
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.core.tables import (
    ProbeApplicability,
    UserResumes,
    conform,
    empty_table,
)

NAME, EMAIL, PHONE = "Jane Doe", "jane.doe@example.com", "+1 (555) 123-4567"
FREE_FORM = (
    f"{NAME}\n{EMAIL} | {PHONE} | Denver, CO\n\n"
    "I have built payment systems for ten years. <script>alert('x')</script> Jane leads the on-call rota.\n"
)


@pytest.fixture(scope="module")
def resumes(tmp_path_factory):
    """Two résumé files read as user_resumes reads them: a free-form one whose file name carries
    the name, and a generated one (the probes' layout) with its label."""
    folder = tmp_path_factory.mktemp("cvs")
    (folder / "Jane_Doe_CV.txt").write_text(FREE_FORM, encoding="utf-8")
    generated = generate_resumes(1, seed=11)
    (folder / "resume-2.txt").write_text(generated["text"].iloc[0], encoding="utf-8")
    (folder / "labels.csv").write_text(f"file,seniority\nresume-2.txt,{generated['seniority'].iloc[0]}\n")
    rows, problems = read_resume_folder(folder)
    assert not problems
    rows = conform(rows, UserResumes)
    return rows, conform(probe_applicability(rows), ProbeApplicability)


def _jane(rows: pd.DataFrame) -> pd.Series:
    return rows[rows["source"] == "Jane_Doe_CV.txt"].iloc[0]


def _text_of(html: str, resume_id: str) -> str:
    return re.search(
        rf'<details class="user-resume" id="user-resume-{resume_id}">.*?<pre[^>]*>(.*?)</pre>', html, re.S
    )[1]


def test_the_texts_and_file_names_are_redacted_by_default(resumes):
    rows, probes = resumes
    jane = _jane(rows)
    assert (jane["name"], jane["email"], jane["phone"]) == (NAME, EMAIL, PHONE)
    html = user_resumes_section(rows, probes)
    assert REDACTED_NOTE in html and SHOWN_NOTE not in html
    text = _text_of(html, jane["resume_id"])
    assert "[name]" in text and "[email]" in text and "[phone]" in text
    for word in ("Jane", "Doe", EMAIL, "555", "123-4567"):
        assert word not in html, word
    assert "payment systems for ten years" in text  # the rest of the text stays
    assert "[name]_CV.txt" in html  # the file name carried the name (first_last: one form)
    other = rows[rows["source"] == "resume-2.txt"].iloc[0]
    assert other["name"].split()[0] not in html and other["email"] not in html and other["phone"] not in html


def test_the_texts_are_shown_as_extracted_when_the_user_opts_in(resumes):
    rows, probes = resumes
    jane = _jane(rows)
    html = user_resumes_section(rows, probes, show_texts=True)
    assert SHOWN_NOTE in html and REDACTED_NOTE not in html
    text = _text_of(html, jane["resume_id"])
    assert NAME in text and EMAIL in text and PHONE in text
    assert "Jane_Doe_CV.txt" in html


def test_one_row_per_resume_with_its_id_type_label_and_applying_axes(resumes):
    rows, probes = resumes
    html = user_resumes_section(rows, probes)
    table = re.search(r'<table id="user-resumes">(.*?)</table>', html, re.S)[1]
    assert table.count("<tr><td") == len(rows) == 2
    assert set(re.findall(r'<td data-col="resume_id"[^>]*>(u-[0-9a-f]{12})</td>', table)) == set(rows["resume_id"])
    seniorities = re.findall(r'<td data-col="seniority"[^>]*>([^<]*)</td>', table)
    assert sorted(seniorities) == sorted(["unlabelled", rows["seniority"].dropna().iloc[0]])
    assert re.findall(r'<td data-col="file_type"[^>]*>([^<]*)</td>', table) == ["txt", "txt"]
    n_axes = probes["axis"].nunique()
    applying = re.findall(r'<td data-col="axes_applying"[^>]*>([^<]*)</td>', table)
    # Free form: the axes that need only its name, its address and its text (docs/resume-reader.md).
    assert sorted(applying) == sorted([f"4 of {n_axes}", f"{n_axes} of {n_axes}"])


def test_the_probe_axes_that_did_not_apply_are_listed_with_the_reason(resumes):
    rows, probes = resumes
    jane = _jane(rows)
    html = user_resumes_section(rows, probes)
    table = re.search(r'<table id="user-resume-probes-not-applied">(.*?)</table>', html, re.S)[1]
    listed = re.findall(
        r'<tr><td data-col="resume_id"[^>]*>([^<]*)</td><td data-col="axis"[^>]*>([^<]*)</td>'
        r'<td data-col="reason"[^>]*>([^<]*)</td></tr>',
        table,
    )
    skipped = probes[~probes["applies"]]
    assert [(r, a) for r, a, _ in listed] == list(zip(skipped["resume_id"], skipped["axis"]))
    assert {r for r, _, _ in listed} == {jane["resume_id"]}
    assert any(reason.startswith("no school found in an Education section") for _, _, reason in listed)
    applying = int(probes["applies"].sum())
    assert f"{applying} of {len(probes)} (résumé, probe axis) pairs apply" in html


def test_a_reason_quoting_the_resume_is_redacted_too(resumes):
    rows, _ = resumes
    jane = _jane(rows)
    probes = pd.DataFrame(
        [(jane["resume_id"], "firstName", False, f"the first line {NAME!r} is not a first and last name")],
        columns=["resume_id", "axis", "applies", "reason"],
    )
    html = user_resumes_section(rows[rows["resume_id"] == jane["resume_id"]], probes)
    assert "the first line &#x27;[name]&#x27; is not" in html and "Jane" not in html
    assert "Jane" in user_resumes_section(rows, probes, show_texts=True)


def test_every_text_is_escaped(resumes):
    rows, probes = resumes
    for show in (False, True):
        html = user_resumes_section(rows, probes, show_texts=show)
        assert "<script" not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    hostile = rows.assign(source='"><img src=x onerror=alert(1)>.txt', file_type="txt")
    html = user_resumes_section(hostile, probes, show_texts=True)
    assert "<img" not in html and "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.txt" in html


def test_no_user_resume_no_section(resumes):
    assert user_resumes_section(empty_table(UserResumes), empty_table(ProbeApplicability)) == ""
    html = render_report(_report(empty_table(UserResumes), empty_table(ProbeApplicability)))
    assert 'id="your-resumes"' not in html and "Your résumés" not in html


def test_without_probes_yet_the_section_says_so(resumes):
    rows, _ = resumes
    html = user_resumes_section(rows, empty_table(ProbeApplicability))
    assert "materialise user_resume_probes" in html and 'id="user-resume-probes-not-applied"' not in html


def _report(rows: pd.DataFrame, probes: pd.DataFrame, **overrides) -> ReportTables:
    tables = dict(
        user_resumes=rows,
        user_resume_probes=probes,
    )
    return ReportTables(**{**tables, **overrides})


def test_the_report_shows_the_section_before_the_variants(resumes):
    rows, probes = resumes
    html = render_report(_report(rows, probes))
    assert html.count('<section id="your-resumes">') == 1
    assert html.index('<section id="your-resumes">') < html.index('<section id="variants">')
    assert "Jane" not in html and EMAIL not in html
    assert NAME in render_report(_report(rows, probes, show_resume_texts=True))


def _judged(variants: pd.DataFrame, quote: str) -> pd.DataFrame:
    """A judge's verdict on each variant that quotes ``quote`` (the columns the report reads)."""
    probes = variants[variants["variant"] != "baseline"]
    return pd.DataFrame(
        {
            "judge": "j",
            "model": "m",
            "jd": "staff-software-engineer",
            "resume_id": probes["resume_id"],
            "variant": probes["variant"],
            "verdict_typical": "biased",
            "confidence_typical": "high",
            "rationale_typical": f"The evaluation calls the candidate {quote} twice.",
            "bias_signals_typical": f'"{quote} seems a strong fit"',
            "n_non_verbatim_typical": 0,
        }
    )


def test_a_user_resumes_probe_variants_and_the_judges_quotes_are_redacted_too(resumes):
    rows, probes = resumes
    user = rows[rows["source"] == "resume-2.txt"]
    person = user.iloc[0]
    variants = probe_variants(user, axes=["firstName", "addressCountry"])
    assert variants["resume_id"].str.startswith("u-").all()
    judged = _judged(variants, person["name"])
    tables = _report(rows, probes, probe_variants=variants, judge_verdicts=judged)
    html = render_report(tables)
    variants_part = html[html.index('<section id="variants">') :]
    first, last = person["first_name"], person["last_name"]
    for secret in (first, last, person["email"], person["phone"]):
        assert secret not in html, secret
    # A firstName variant still shows the name it puts in: a probe's name, not the candidate's.
    for name in variants.loc[variants["axis"] == "firstName", "name"]:
        assert f"<del>[name]</del><ins>{name}</ins>" in variants_part
    assert "\n[email] | [phone] | " in variants_part
    assert "The evaluation calls the candidate [name] twice." in variants_part
    assert "&#34;[name] seems a strong fit&#34;" in variants_part
    shown = render_report(_report(rows, probes, probe_variants=variants, judge_verdicts=judged, show_resume_texts=True))
    assert last in shown[shown.index('<section id="variants">') :]


def test_a_user_resumes_variants_are_redacted_even_when_the_table_no_longer_lists_it(resumes):
    rows, _ = resumes
    user = rows[rows["source"] == "resume-2.txt"]
    variants = probe_variants(user, axes=["addressCountry"])
    html = render_report(_report(empty_table(UserResumes), empty_table(ProbeApplicability), probe_variants=variants))
    assert user.iloc[0]["last_name"] not in html and user.iloc[0]["email"] not in html


def test_generated_resumes_variants_are_shown_as_they_are():
    redactor = Redactor.of(empty_table(UserResumes))
    text = f"{NAME}\n{EMAIL}\n"
    assert redactor("r1", text) == text  # not a user's résumé: the generator's invented person
    assert redactor("u-000000000000", text) == "[name]\n[email]\n"
