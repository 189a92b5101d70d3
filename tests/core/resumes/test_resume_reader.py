"""The résumé reader (core/resumes/reader.py): the hard cases of real layouts, and what it says of bad input."""

import pytest

from resumebias_dagster.core.resumes.dates import find_ranges, read_date
from resumebias_dagster.core.resumes.reader import read_resume
from resumebias_dagster.core.resumes.sections import section_of
from resumebias_dagster.core.resumes.timeline import timeline_problems


def span(layout, field):
    return layout.lines[field.line][field.start : field.end]


@pytest.mark.parametrize(
    ("line", "section"),
    [
        ("Work History", "EXPERIENCE"),
        ("PROFESSIONAL EXPERIENCE", "EXPERIENCE"),
        ("Employment History:", "EXPERIENCE"),
        ("employment", "EXPERIENCE"),
        ("Education & Training", "EDUCATION"),
        ("Technical Skills", "SKILLS"),
        ("Career Summary", "SUMMARY"),
        ("Contact Details", "CONTACT"),
        ("Selected Projects", "OTHER"),
        ("Experience in optics and lasers", None),  # prose, not a heading
        ("- Skills", None),  # a bullet
    ],
)
def test_headings_in_any_case_and_wording(line, section):
    assert section_of(line) == section


def test_title_employer_city_and_years_on_one_line():
    layout = read_resume(
        "Ana Lima\nana@example.com | Denver, CO\n\nWork History\n"
        "Data Analyst, Initech — Austin, TX (2019–Present)\n- Built reports\n"
        "Analyst Intern, Hooli — Boise, ID (2018–2019)\n\nEducation\nB.S. Statistics, Purdue University, 2018\n"
    )
    first = layout.positions[0]
    assert (span(layout, first.title_at), first.employer, first.city, first.dates) == (
        "Data Analyst",
        "Initech",
        "Austin, TX",
        "2019–Present",
    )
    second = layout.positions[1]
    assert (second.start, second.end) == (2018 * 12, 2019 * 12 + 11)  # a year spans its twelve months
    assert [(s.school, s.year) for s in layout.schools] == [("Purdue University", 2018)]
    # "2018–2019" then "2019–Present" share 2019: no overlap at some reading, so none is reported.
    assert timeline_problems("\n".join(layout.lines)) == []


def test_dates_on_their_own_line_and_the_employer_above_the_title():
    layout = read_resume(
        "Ana Lima\n\nEMPLOYMENT\nInitech, Austin, TX\nData Analyst\n03/2018 – 11/2020\n• Built reports\n"
    )
    (p,) = layout.positions
    assert (p.employer, p.city, span(layout, p.title_at), p.start, p.end) == (
        "Initech",
        "Austin, TX",
        "Data Analyst",
        2018 * 12 + 2,
        2020 * 12 + 10,
    )


def test_employer_with_years_and_the_title_below():
    layout = read_resume("Ana Lima\n\nEXPERIENCE:\nHooli | 2019 - Present\nMarketing Manager\n")
    (p,) = layout.positions
    assert (p.employer, p.city, span(layout, p.title_at), p.end) == ("Hooli", "", "Marketing Manager", None)


def test_title_at_employer_over_city_and_month_names():
    layout = read_resume(
        "Ana Lima\n\nProfessional Experience\nSenior Engineer at Globex\nAustin, TX · March 2018 to June 2020\n"
    )
    (p,) = layout.positions
    assert (p.employer, p.city, p.dates) == ("Globex", "Austin, TX", "March 2018 to June 2020")
    assert p.first.rewrite(2017 * 12 + 1) == "February 2017"  # written back in the résumé's own form


def test_wrapped_contact_lines_a_name_field_and_a_contact_section():
    wrapped = read_resume(
        "Ana Lima\nana@example.com · (303) 555-0100\nDenver, CO · linkedin.com/in/ana\n\nSkills\nSQL\n"
    )
    assert [c.kind for c in wrapped.contacts] == ["email", "phone", "location", "link"]
    assert wrapped.top == 3
    labelled = read_resume(
        "Curriculum Vitae\nName: Ana Lima\n\nSkills\nSQL\n\nContact Details\nAddress: 4 Elm Road, Columbus, OH\n"
    )
    assert labelled.name is not None and (labelled.name.text, labelled.name.line) == ("Ana Lima", 1)
    location = labelled.contacts[labelled.contact_field("location")]
    assert location.text == "4 Elm Road, Columbus, OH"


def test_a_name_before_a_separator_and_a_name_in_capitals():
    assert read_resume("Ana Lima | Data Analyst\nana@example.com\n").name.text == "Ana Lima"
    assert read_resume("ANA LIMA\nana@example.com\n").name.text == "ANA LIMA"


def test_a_career_break_line_is_a_gap_not_a_position():
    layout = read_resume(
        "Ana Lima\n\nExperience\nData Analyst\nInitech | Jan 2023 – Present\n\n"
        "Career break | Jan 2021 – Dec 2022\n\nAnalyst\nHooli | Jan 2019 – Dec 2020\n"
    )
    assert [p.employer for p in layout.positions] == ["Initech", "Hooli"]
    assert [(g.label, g.start, g.end) for g in layout.gaps] == [("Career break", 2021 * 12, 2022 * 12 + 11)]
    assert timeline_problems("\n".join(layout.lines)) == []


def test_bad_input_reads_as_nothing_found_not_an_error():
    for text in ("", "\n\n", "lorem ipsum dolor sit amet\n", "EXPERIENCE\n\nEDUCATION\n"):
        layout = read_resume(text)
        assert (layout.name, layout.positions, layout.schools, layout.contacts) == (None, (), (), ())
    # A date range inside a sentence dates no entry; a product code is no date range.
    assert read_resume("Ana Lima\n\nExperience\nI worked there from 2019 to 2021 happily.\n").positions == ()
    assert find_ranges(0, "Certified ISO 9001-2015 auditor") == []


def test_a_string_that_is_not_a_date_says_so():
    with pytest.raises(ValueError, match=r"^'Spring 2019' is not a date$"):
        read_date("Spring 2019")
    assert read_date("Sept. 2019")[0] == 2019 * 12 + 8
