"""The generator's layout (core/resumes/layout.py): the text render_resume writes, read back by read_resume."""

from resumebias_dagster.core.resumes.layout import (
    Degree,
    Position,
    ResumeContent,
    render_resume,
)
from resumebias_dagster.core.resumes.reader import read_resume
from resumebias_dagster.core.resumes.timeline import timeline_problems

CONTENT = ResumeContent(
    name="Ada Quill",
    email="ada.quill@example.com",
    phone="(303) 555-0100",
    city="Denver, CO",
    linkedin="",
    summary="Physicist with 5 years of professional experience in optics.",
    positions=(
        Position("Optics Engineer", "Lumen Works", "Denver, CO", 2020 * 12 + 2, None, ("Built a lens bench.",)),
        Position(
            "Lab Intern",
            "Prism Labs",
            "Omaha, NE",
            2018 * 12 + 5,
            2018 * 12 + 7,
            ("Logged data.",),
            "A maker of prisms.",
        ),
    ),
    education=(Degree("B.S. Physics", "State College", 2019),),
    skills=("Zemax", "Python"),
    coursework=("Optics", "Lasers"),
    certifications=("PMP",),
)


def test_render_resume_writes_the_layout_the_probes_parse():
    assert render_resume(CONTENT) == (
        "Ada Quill\nada.quill@example.com | (303) 555-0100 | Denver, CO\n\nSUMMARY\n"
        "Physicist with 5 years of professional experience in optics.\n\nEXPERIENCE\n"
        "Optics Engineer\nLumen Works | Denver, CO | Mar 2020 – Present\n- Built a lens bench.\n\n"
        "Lab Intern\nPrism Labs | Omaha, NE | Jun 2018 – Aug 2018\nA maker of prisms.\n- Logged data.\n\n"
        "EDUCATION\nB.S. Physics\nState College | 2019\nRelevant coursework: Optics, Lasers\nCertification: PMP\n"
        "\nSKILLS\nZemax, Python\n"
    )


def test_read_resume_reads_back_what_render_resume_wrote():
    layout = read_resume(render_resume(CONTENT))
    assert layout.lines[0] == CONTENT.name
    assert layout.name is not None and (layout.name.text, layout.name.line) == (CONTENT.name, 0)
    assert layout.contact == (CONTENT.email, CONTENT.phone, CONTENT.city)
    assert [(p.employer, p.city, p.start, p.end) for p in layout.positions] == [
        (p.employer, p.city, p.start, p.end) for p in CONTENT.positions
    ]
    assert [(s.school, s.year) for s in layout.schools] == [(d.school, d.year) for d in CONTENT.education]
    assert set(layout.sections) == {"SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS"}
    assert [layout.contact_field(k) for k in ("email", "phone", "location", "link")] == [0, 1, 2, None]
    # The internship ends before the degree year: not a career position, no gap to explain.
    assert layout.career() == layout.positions[:1]
    assert timeline_problems(render_resume(CONTENT)) == []


def test_section_headers_are_read_in_any_case():
    """A user's résumé writes "Experience" or "Education:", not the generator's capitals: the
    sections are found all the same (issue 28), and keyed by the generator's names."""
    text = render_resume(CONTENT).replace("EXPERIENCE\n", "Experience\n").replace("EDUCATION\n", "Education:\n")
    layout = read_resume(text)
    assert set(layout.sections) == {"SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS"}
    assert [p.employer for p in layout.positions] == ["Lumen Works", "Prism Labs"]
    assert [s.school for s in layout.schools] == ["State College"]
    # A line of prose is not a header because it contains one's word.
    assert "Experience in optics" not in {layout.lines[r.start - 1] for r in layout.sections.values()}
