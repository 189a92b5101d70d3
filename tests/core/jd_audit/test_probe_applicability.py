"""Which probe axes apply to a user's résumés (core/jd_audit/probes/applicability.py), read from real files."""

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.probes import check_probe_variants, load_probe_axes, probe_variants
from resumebias_dagster.core.jd_audit.probes.applicability import (
    APPLICABILITY_COLUMNS,
    applicable_rows,
    probe_applicability,
)
from resumebias_dagster.core.resumes.user_files import read_resume_folder
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.testing.resume_files import FREE_FORM_RESUME, docx_bytes, pdf_bytes, write

AXES = [a.id for a in load_probe_axes().axes]

# A résumé as people write them: the contact line has no city, the position reads
# "Title, Employer (2019 to now)" and the degree "Degree, School, 2018"; the middle initial
# keeps the surname of the e-mail address out of replace_person's reach.
FREE_FORM = FREE_FORM_RESUME


@pytest.fixture(scope="module")
def generated():
    return generate_resumes(1, seed=7)


def reasons(table, resume_id):
    rows = table[table["resume_id"] == resume_id]
    return dict(zip(rows["axis"], rows["reason"]))


def test_generated_resumes_read_from_pdf_and_docx_take_every_axis(tmp_path, generated):
    for k, text in enumerate(generated["text"]):
        write(tmp_path / f"r{k}.pdf", pdf_bytes(text))
        write(tmp_path / f"r{k}.docx", docx_bytes(text))
    rows, problems = read_resume_folder(tmp_path)
    # The PDF and DOCX of one résumé differ in blank lines only, so both are read.
    assert problems == [] and len(rows) == 2 * len(generated)
    table = probe_applicability(rows)
    assert list(table.columns) == APPLICABILITY_COLUMNS
    assert len(table) == len(rows) * len(AXES)
    assert table["applies"].all(), table[~table["applies"]].to_dict("records")
    assert table["reason"].eq("").all()
    # So probe_variants takes them, and its blocking check finds nothing.
    variants = probe_variants(rows)
    assert check_probe_variants(variants).empty


def test_a_free_form_resume_gets_a_reason_per_axis(tmp_path, generated):
    write(tmp_path / "jane.txt", FREE_FORM)
    write(tmp_path / "gen.docx", docx_bytes(generated["text"].iloc[0]))
    rows, problems = read_resume_folder(tmp_path)
    assert problems == []
    table = probe_applicability(rows)
    jane = rows.loc[rows["source"] == "jane.txt", "resume_id"].iloc[0]
    why = reasons(table, jane)
    applies = dict(zip(table.loc[table["resume_id"] == jane, "axis"], table.loc[table["resume_id"] == jane, "applies"]))
    assert {a for a, ok in applies.items() if ok} == set(AXES) - {"firstName", "addressCountry", "companyLocations"}
    assert why["firstName"] == (
        "level 'white_male': 'doe' of the name 'Jane Q. Doe' is still in the text after replacement"
    )
    assert why["addressCountry"] == (
        "no address found on the contact lines (a 'City, ST', 'City, Country', 'Remote' or an 'Address:' line)"
    )
    assert why["companyLocations"] == (
        "no employer location ('City, ST' or 'City, Country') found beside a position's dates in an Experience section"
    )
    # The generated résumé beside it is not held back.
    other = table[table["resume_id"] != jane]
    assert other["applies"].all()
    # Only the résumés an axis applies to go on to its variants.
    assert applicable_rows(rows, table, "addressCountry")["source"].tolist() == ["gen.docx"]
    assert set(applicable_rows(rows, table, "placebo")["source"]) == {"gen.docx", "jane.txt"}


def test_a_resume_without_sections_gets_the_axes_that_need_only_the_name_and_the_text():
    rows = pd.DataFrame({"resume_id": ["x"], "text": ["Jane Doe\nI build things.\nExperience: lots\n"]})
    table = probe_applicability(rows)
    applies = dict(zip(table["axis"], table["applies"]))
    assert {a for a, ok in applies.items() if ok} == {"firstName", "promptInjection", "anonymize"}
    why = reasons(table, "x")
    assert why["school"].startswith("no school found in an Education section")
    assert why["graduationYear"].startswith("no graduation year found in an Education section")
    assert why["careerGap"].startswith("no dated position found in an Experience section")
    assert why["companyNames"] == "no employer name found beside a position's dates in an Experience section"
    assert why["placebo"] == "no bullet lines found (lines starting '- ', '• ' or '* ') to change the glyph of"
    assert all("\n" not in r for r in why.values())


def test_an_edit_that_raises_is_a_reason_not_a_crash(generated):
    # Two current positions (a side job held alongside): the career-gap edit cannot move an
    # open-ended older position back, and says so.
    senior = generated[generated["seniority"] == "senior"].iloc[0]
    lines = senior["text"].split("\n")
    dated = [i for i, line in enumerate(lines) if line.count(" | ") == 2 and "–" in line]
    assert len(dated) >= 2
    lines[dated[1]] = lines[dated[1]].rsplit("– ", 1)[0] + "– Present"
    rows = pd.DataFrame({"resume_id": ["two-jobs"], "text": ["\n".join(lines)]})
    table = probe_applicability(rows, ["careerGap", "graduationYear", "addressCountry"])
    why = reasons(table, "two-jobs")
    assert why["careerGap"].startswith("level 'unexplained': an older position (")
    assert why["careerGap"].endswith(
        "is still current: a gap cannot go before the newest position while another is held"
    )
    assert table.set_index("axis").loc["addressCountry", "applies"]
    # The overlap is in the baseline already; check_probe_variants reports the variants' new
    # overlaps (moved dates), so the axis does not apply either, with the check's words.
    assert why["graduationYear"].startswith("graduationYear_2005: timeline: ")
    assert "overlaps or follows" in why["graduationYear"]


def test_a_level_that_changes_nothing_is_a_reason(generated):
    row = generated.iloc[0]
    layout_city = row["text"].split("\n")[1].split(" | ")[2]
    axes = load_probe_axes()
    axis = next(a for a in axes.axes if a.id == "addressCountry")
    axis.levels["usa"] = layout_city  # the résumé already lives there
    from resumebias_dagster.core.jd_audit.probes import ProbeAxes

    table = probe_applicability(
        pd.DataFrame({"resume_id": ["r"], "text": [row["text"]]}), ProbeAxes(axes.interests, (axis,))
    )
    assert table["reason"].tolist() == [
        "level 'usa' leaves the résumé unchanged (it already has that value, or lacks what the edit changes)"
    ]


def test_rows_need_an_id_and_a_text():
    with pytest.raises(ValueError, match=r"probe_applicability: rows lack columns \['text'\]"):
        probe_applicability(pd.DataFrame({"resume_id": ["a"]}))
