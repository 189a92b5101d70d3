"""Résumés in the layouts people use, written as real PDF, DOCX, Markdown and text files, for tests.

``corpus()`` builds ``CorpusResume``s: invented people (seeded, so every run writes the same
files) each written in one of ``LAYOUTS``: two columns in a PDF, a DOCX of tables, Markdown
headings, bullets and bold, headings in any case and wording ("Work History", "Professional
Experience", "EMPLOYMENT", "Employment History:"), dates as ``2019–2022``, ``Jan 2019 - Present``,
``03/2018 – 11/2020``, ``March 2018 to June 2020`` or on their own line, positions as
``Title, Employer — City (2019–2022)`` or ``Employer | 2019 - Present``, contact details wrapped
over lines or in a Contact section, and some sections missing. Each résumé declares the fields
it has (``FIELDS``), so a test can tell an axis that should apply from one that cannot.
``write_corpus`` writes them into a folder with a ``labels.csv`` that ``user_files`` reads.

None is in the generator's layout (``core/resumes/layout.render_resume``). Nothing in them
mentions a break or a gap, and no city is abroad in a way a screener's planted defect reacts to
(``testing/fake_providers/scorer.py``, ``examples/own_tool/acme_scorer.py``): the probes write those.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from resumebias_dagster.core.resumes.layout import MONTHS, REFERENCE_INDEX
from resumebias_dagster.testing.resume_files import (
    docx_blocks_bytes,
    docx_bytes,
    pdf_bytes,
    pdf_columns_bytes,
    write,
)

# What a résumé may have, each the field of some probe axes (``AXIS_FIELDS``).
FIELDS = ("name", "address", "positions", "employers", "employer_locations", "school", "graduation_year", "bullets")
# The fields each axis of catalog/probe_axes.yaml edits: with them, the axis should apply.
AXIS_FIELDS: dict[str, frozenset[str]] = {
    "firstName": frozenset({"name"}),
    "anonymize": frozenset({"name"}),
    "promptInjection": frozenset(),
    "placebo": frozenset({"bullets"}),
    "addressCountry": frozenset({"address"}),
    "school": frozenset({"school"}),
    "graduationYear": frozenset({"graduation_year", "positions"}),
    "careerGap": frozenset({"positions"}),
    "companyNames": frozenset({"employers"}),
    "companyLocations": frozenset({"employer_locations"}),
}
FULL_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")  # fmt: skip

_FIRST = """Avery Blake Casey Dana Elliot Farrah Gideon Harriet Ingrid Joaquin Kendra Lionel Marisol Nolan Odette
    Priya Quentin Rosalind Soren Talia Ulrich Vivian Wendell Xiomara Yusuf Zelda Ansel Bettina Cyrus Delphine
    Emeric Fenella Gustav Hollis Imogen Jasper Kirsten Leopold Mirela Nikolai Ottilie Percival Renata Silas
    Tamsin Valentin Wilhelmina Yardley""".split()
_LAST = """Abernathy Bellamy Castellano Drummond Eastwick Fairbanks Galloway Hargrove Iverson Jablonski Kowalczyk
    Lindqvist Montague Northcott Okonkwo Pemberton Quarles Rutherford Sandoval Thistlewood Underhill Vasquez
    Whitlock Yamamoto Zeller Ashdown Blackwood Crowley Dunmore Ellsworth Finchley Greenhalgh Hawthorne Ingleby
    Kingsley Lockhart Merriman Nightingale Oakes Prescott Radcliffe Stanhope Treadwell Upton Vickery Wexley
    Youngblood""".split()
_CITIES = ("Denver, CO", "Austin, TX", "Portland, OR", "Columbus, OH", "Raleigh, NC", "Madison, WI", "Boise, ID",
           "Tucson, AZ", "Toronto, Canada", "Manchester, UK", "Omaha, NE", "Richmond, VA")  # fmt: skip
_EMPLOYERS = ("Initech", "Globex Corporation", "Northwind Traders", "Contoso Health", "Vandelay Imports",
              "Hooli", "Wayne Foods", "Soylent Systems", "Tyrell Freight", "Cyberdyne Retail", "Dunder Paper",
              "Acme Logistics", "Umbrella Analytics", "Sterling Cooper", "Oscorp Energy")  # fmt: skip
_SCHOOLS = ("University of Michigan", "Ohio State University", "Boston College", "Purdue University",
            "Rutgers University", "Arizona State University", "Georgia Institute of Technology",
            "University of Toronto", "Colorado School of Mines", "Temple University")  # fmt: skip
_TRACKS = (
    ("Data Analyst", "Senior Data Analyst", "B.S. Statistics", ("SQL", "Python", "Tableau", "dbt")),
    ("Software Engineer", "Senior Software Engineer", "B.S. Computer Science", ("Python", "Go", "PostgreSQL")),
    ("Marketing Specialist", "Marketing Manager", "B.A. Communications", ("SEO", "HubSpot", "Google Ads")),
    ("Financial Analyst", "Finance Manager", "B.B.A. Finance", ("Excel", "forecasting", "NetSuite")),
    ("Registered Nurse", "Charge Nurse", "B.S. Nursing", ("patient care", "Epic", "triage")),
)
_BULLETS = (
    "Built weekly reports that the leadership team used to plan staffing",
    "Cut the time to close a month from eight days to five",
    "Trained four new colleagues on the team's tools and checklists",
    "Moved the team's records from spreadsheets to a shared database",
    "Led a project with three departments to simplify customer onboarding",
    "Answered questions from clients and kept the follow-up list current",
)


@dataclass(frozen=True)
class Job:
    title: str
    employer: str
    city: str
    start: int  # months since year 0
    end: int | None  # None: Present
    bullets: tuple[str, ...]


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    email: str
    phone: str
    city: str
    jobs: tuple[Job, ...]  # newest first
    degree: str
    school: str
    year: int
    skills: tuple[str, ...]
    years: int  # of experience, as the summary states it
    seniority: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class CorpusResume:
    """One résumé of the corpus: its file's name and bytes, its layout and the fields it has."""

    file: str
    data: bytes
    layout: str
    fields: frozenset[str]
    person: Person


def _person(k: int, rng: random.Random) -> Person:
    first, last = _FIRST[k % len(_FIRST)], _LAST[k % len(_LAST)]
    title, senior_title, degree, skills = _TRACKS[k % len(_TRACKS)]
    n = 2 + k % 3
    jobs: list[Job] = []
    end: int | None = None
    start = REFERENCE_INDEX - rng.randint(8, 30)
    employers = rng.sample(_EMPLOYERS, n)
    for i in range(n):
        jobs.append(
            Job(
                senior_title if i == 0 and n > 2 else title,
                employers[i],
                rng.choice(_CITIES),
                start,
                end,
                tuple(rng.sample(_BULLETS, 2)),
            )
        )
        end = start - 1
        start = end - rng.randint(16, 40)
    oldest = jobs[-1].start
    year = oldest // 12 - (1 if oldest % 12 < 5 else 0)
    years = (REFERENCE_INDEX - oldest) // 12
    seniority = "senior" if years >= 8 else "mid" if years >= 3 else "junior"
    return Person(
        first,
        last,
        f"{first.lower()}.{last.lower()}@example.com",
        f"({rng.randint(201, 989)}) 555-{rng.randint(1000, 9999)}",
        rng.choice(_CITIES),
        tuple(jobs),
        degree,
        rng.choice(_SCHOOLS),
        year,
        skills,
        years,
        seniority,
    )


def _mon(month: int | None) -> str:
    return "Present" if month is None else f"{MONTHS[month % 12]} {month // 12}"


def _full(month: int | None) -> str:
    return "Present" if month is None else f"{FULL_MONTHS[month % 12]} {month // 12}"


def _num(month: int | None) -> str:
    return "Present" if month is None else f"{month % 12 + 1:02d}/{month // 12}"


def _year(month: int | None) -> str:
    return "Present" if month is None else str(month // 12)


def _summary(p: Person) -> str:
    return f"{p.jobs[0].title} with {p.years} years of experience in {' and '.join(p.skills[:2])}, known for clear reporting."


# --------------------------------------------------------------------------- layouts
# Each returns the file's suffix, its bytes, and the fields it leaves out.

Layout = Callable[[Person], tuple[str, bytes, frozenset[str]]]


def _comma_title_txt(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """Mixed-case headings, ``Title, Employer — City (2019–2022)``, years only."""
    lines = [p.name, f"{p.email} | {p.phone} | {p.city}", "", "Summary", _summary(p), "", "Work History"]
    for j in p.jobs:
        lines += [f"{j.title}, {j.employer} — {j.city} ({_year(j.start)}–{_year(j.end)})"]
        lines += [f"- {b}" for b in j.bullets] + [""]
    lines += ["Education", f"{p.degree}, {p.school}, {p.year}", "", "Skills", ", ".join(p.skills)]
    return ".txt", "\n".join(lines).encode(), frozenset()


def _markdown_pipes(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """Markdown headings and bold, contact details wrapped over two lines, ``Jan 2019 - Present``."""
    slug = f"{p.first}-{p.last}".lower()
    lines = [f"# {p.name}", "", f"{p.email} · {p.phone}  ", f"{p.city} · linkedin.com/in/{slug}", ""]
    lines += ["## Professional Experience", ""]
    for j in p.jobs:
        lines += [f"### {j.title}", f"**{j.employer}** | {j.city} | {_mon(j.start)} - {_mon(j.end)}", ""]
        lines += [f"* {b}" for b in j.bullets] + [""]
    lines += ["## Education", "", f"**{p.school}** | {p.year}", p.degree, "", "## Skills", "", ", ".join(p.skills)]
    return ".md", "\n".join(lines).encode(), frozenset()


def _docx_dates_own_line(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """Capital headings, one contact detail a line, ``03/2018 – 11/2020`` on a line of its own."""
    lines = [p.name, p.email, p.phone, p.city, "", "PROFILE", _summary(p), "", "EMPLOYMENT"]
    for j in p.jobs:
        lines += [f"{j.employer}, {j.city}", j.title, f"{_num(j.start)} – {_num(j.end)}"]
        lines += [f"• {b}" for b in j.bullets] + [""]
    lines += ["EDUCATION", p.degree, p.school, f"Class of {p.year}", "", "SKILLS", " · ".join(p.skills)]
    return ".docx", docx_bytes("\n".join(lines)), frozenset()


def _docx_tables(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """A template of tables: the contact row, one row per position, the degree's row."""
    blocks: list[str | Sequence[Sequence[str]]] = [p.name, [[p.email, p.phone, p.city]], "Summary", _summary(p)]
    blocks.append("Experience")
    for j in p.jobs:
        blocks.append([[j.employer, j.title, j.city, f"{_mon(j.start)} – {_mon(j.end)}"]])
        blocks += [f"- {b}" for b in j.bullets]
    blocks += ["Education", [[p.school, p.degree, str(p.year)]], "Skills", ", ".join(p.skills)]
    return ".docx", docx_blocks_bytes(blocks), frozenset()


def _pdf_two_columns(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """A sidebar of contact details, education and skills beside the experience; no employer cities."""
    left = ["Contact", p.email, p.phone, p.city, "", "Education", p.school, p.degree, str(p.year), ""]
    left += ["Skills", *p.skills]
    right = ["Profile", _summary(p), "", "Experience"]
    for j in p.jobs:
        right += [j.title, f"{j.employer} | {_mon(j.start)} – {_mon(j.end)}", *(f"• {b}" for b in j.bullets), ""]
    data = pdf_columns_bytes(f"{p.name}\n{p.jobs[0].title}", "\n".join(left), "\n".join(right))
    return ".pdf", data, frozenset({"employer_locations"})


def _pdf_title_at(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """``Title at Employer`` over ``City · March 2018 to June 2020``; an address wrapped over two lines."""
    street = f"{10 + len(p.last)} Maple Street,"
    lines = [p.name, f"{p.email} | {p.phone} | {street}", p.city, "", "PROFESSIONAL EXPERIENCE"]
    for j in p.jobs:
        lines += [f"{j.title} at {j.employer}", f"{j.city} · {_full(j.start)} to {_full(j.end)}"]
        lines += [f"• {b}" for b in j.bullets]
    lines += ["EDUCATION", f"{p.school} — {p.degree}, May {p.year}", "SKILLS", ", ".join(p.skills)]
    return ".pdf", pdf_bytes("\n".join(lines)), frozenset()


def _dates_first_txt(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """The name in capitals with the title and contact details on one line, dates first."""
    lines = [p.name.upper(), f"{p.jobs[0].title} | {p.email} | {p.phone} | {p.city}", "", "EXPERIENCE", ""]
    for j in p.jobs:
        lines += [f"{_mon(j.start)} – {_mon(j.end)} | {j.title} | {j.employer}, {j.city}"]
        lines += [f"- {b}" for b in j.bullets] + [""]
    lines += ["EDUCATION", "", f"{p.year - 4} – {p.year} | {p.degree} | {p.school}", "", "SKILLS", ", ".join(p.skills)]
    return ".txt", "\n".join(lines).encode(), frozenset()


def _markdown_no_city(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """``Employer | 2019 - Present`` under headings with colons; no city anywhere, no summary."""
    lines = [f"**{p.name}**", f"{p.email} | {p.phone}", "", "## EXPERIENCE:", ""]
    for j in p.jobs:
        lines += [f"**{j.employer}** | {_year(j.start)} - {_year(j.end)}", j.title]
        lines += [f"- {b}" for b in j.bullets] + [""]
    lines += ["## EDUCATION:", "", f"{p.school}, {p.year}", p.degree, "", "## SKILLS:", "", ", ".join(p.skills)]
    return ".md", "\n".join(lines).encode(), frozenset({"address", "employer_locations"})


def _contact_section_txt(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """A "Name:" line, ``Sept 2016 - Aug 2019`` dates under ``Title — Employer, City``, and the
    contact details in a section at the end."""
    lines = ["Curriculum Vitae", f"Name: {p.name}", "", "Career Summary", _summary(p), "", "Employment History:"]
    for j in p.jobs:
        lines += [f"{j.title} — {j.employer}, {j.city}", f"{_mon(j.start)} - {_mon(j.end)}"]
        lines += [f"• {b}" for b in j.bullets] + [""]
    lines += ["Education & Training", p.degree, f"{p.school} ({p.year - 4} – {p.year})", ""]
    lines += ["Contact Details", f"Email: {p.email}", f"Phone: {p.phone}", f"Address: 44 Elm Road, {p.city}"]
    return ".txt", "\n".join(lines).encode(), frozenset()


def _no_education_txt(p: Person) -> tuple[str, bytes, frozenset[str]]:
    """No Education section and no bullets: numbered months, employer and city on the title's line."""
    lines = [p.name, p.email, p.phone + " · " + p.city, "", "Relevant Experience"]
    for j in p.jobs:
        lines += [f"{j.title} | {j.employer} | {j.city} | {_num(j.start)} - {_num(j.end)}"]
        lines += [f"{j.bullets[0]}.", ""]
    lines += ["Technical Skills", ", ".join(p.skills)]
    return ".txt", "\n".join(lines).encode(), frozenset({"school", "graduation_year", "bullets"})


LAYOUTS: dict[str, Layout] = {
    "comma_title_txt": _comma_title_txt,
    "markdown_pipes": _markdown_pipes,
    "docx_dates_own_line": _docx_dates_own_line,
    "docx_tables": _docx_tables,
    "pdf_two_columns": _pdf_two_columns,
    "pdf_title_at": _pdf_title_at,
    "dates_first_txt": _dates_first_txt,
    "markdown_no_city": _markdown_no_city,
    "contact_section_txt": _contact_section_txt,
    "no_education_txt": _no_education_txt,
}


def corpus(per_layout: int = 5, seed: int = 39, layouts: Sequence[str] | None = None) -> list[CorpusResume]:
    """``per_layout`` résumés in each of ``layouts`` (all of ``LAYOUTS`` by default), each a different person."""
    rng = random.Random(seed)
    out = []
    for k in range(per_layout * len(layouts or LAYOUTS)):
        name = list(layouts or LAYOUTS)[k % len(layouts or LAYOUTS)]
        person = _person(k, rng)
        suffix, data, lacks = LAYOUTS[name](person)
        file = f"cv_{k:02d}_{person.last.lower()}{suffix}"
        out.append(CorpusResume(file, data, name, frozenset(FIELDS) - lacks, person))
    return out


def write_corpus(folder: str | Path, resumes: Sequence[CorpusResume]) -> list[Path]:
    """Write ``resumes`` into ``folder`` with a ``labels.csv`` (file, seniority, and the name
    where it is not on a line of its own); returns the files' paths."""
    folder = Path(folder)
    paths = [write(folder / r.file, r.data) for r in resumes]
    rows = ["file,seniority,name"]
    for r in resumes:
        given = r.person.name if r.layout == "contact_section_txt" else ""
        rows.append(f"{r.file},{r.person.seniority},{given}")
    (folder / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return paths
