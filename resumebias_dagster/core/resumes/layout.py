"""The generator's layout of a résumé's text: the facts it is written from, and the writer.

Both generators of the seniority study fill a ``ResumeContent`` (the template of
``core/seniority/generation.py``, a provider model's structured answer in
``core/seniority/llm_generation.py``) and ``render_resume`` writes it. The probe edits of
``core/jd_audit/probes`` read any résumé, this layout among others, with ``reader.read_resume``,
which reads these line formats (``employer_line``, ``school_line``, ``gap_line``,
``contact_line``, the dates) exactly, so a generated résumé and its variants keep their texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.resumes.sections import is_heading
from resumebias_dagster.core.tables import BaseResumes, columns

# "Present" means this month, fixed so the output never depends on today's date.
REFERENCE_YEAR = 2025
REFERENCE_MONTH = 6
REFERENCE_INDEX = REFERENCE_YEAR * 12 + REFERENCE_MONTH - 1  # the month as months since year 0
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SECTION_HEADERS = ("SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS")
# The section the job-description audit's baseline appends (``baseline.interests`` of
# probe_axes.yaml); render_resume never writes it.
INTERESTS = "INTERESTS"
# The base_resumes table's columns (core/tables/).
COLUMNS = columns(BaseResumes)
_FIELD_SEPARATOR = " | "


# --------------------------------------------------------------------------- content


@dataclass(frozen=True)
class Position:
    """One position of the EXPERIENCE section; months count from year 0 (``year * 12 + month - 1``)."""

    title: str
    employer: str
    city: str
    start: int
    end: int | None  # None: "Present"
    bullets: tuple[str, ...]
    description: str = ""  # one line about the employer under its line; "" for none


@dataclass(frozen=True)
class Degree:
    degree: str
    school: str
    year: int


@dataclass(frozen=True)
class ResumeContent:
    """The facts of one résumé, as both generators produce them (the template of
    ``core/seniority/generation.py``, a provider model's JSON in ``core/seniority/llm_generation.py``);
    ``render_resume`` writes the text."""

    name: str
    email: str
    phone: str
    city: str
    linkedin: str  # "" for none
    summary: str
    positions: tuple[Position, ...]  # newest first
    education: tuple[Degree, ...]  # newest first
    skills: tuple[str, ...]  # as written on the skills line
    coursework: tuple[str, ...] = ()
    certifications: tuple[str, ...] = ()


# --------------------------------------------------------------------------- line formats


def month_label(index: int | None) -> str:
    """``Mon YYYY`` of a month index; None is "Present"."""
    return "Present" if index is None else f"{MONTHS[index % 12]} {index // 12}"


def date_range(start: int, end: int | None) -> str:
    """``Mon YYYY – Mon YYYY|Present``, as a position or gap line writes its dates."""
    return f"{month_label(start)} – {month_label(end)}"


def employer_line(employer: str, city: str, dates: str) -> str:
    return _FIELD_SEPARATOR.join((employer, city, dates))


def school_line(school: str, year: int | str) -> str:
    """A school and its graduation year (or the placeholder a blinding edit writes in its place)."""
    return f"{school}{_FIELD_SEPARATOR}{year}"


def gap_line(label: str, dates: str) -> str:
    """A dated gap in the work history ("Career break | Jun 2022 – Nov 2023")."""
    return f"{label}{_FIELD_SEPARATOR}{dates}"


def contact_line(fields: Iterable[str]) -> str:
    return _FIELD_SEPARATOR.join(fields)


def years_phrase(years: int) -> str:
    """How the summary states the years of experience (``YEARS_PHRASE`` finds it again)."""
    if years == 0:
        return "less than one year"
    return "1 year" if years == 1 else f"{years} years"


# --------------------------------------------------------------------------- writer


def render_resume(content: ResumeContent) -> str:
    """The résumé text in the generator's layout: the
    name line, the contact line ``email | phone | City, ST | linkedin``, then SUMMARY,
    EXPERIENCE (``Title`` then ``Employer | City | Mon YYYY – Mon YYYY|Present``, an optional
    description line and ``- `` bullets), EDUCATION (``Degree`` then ``School | YYYY``) and
    SKILLS."""
    contact = (content.email, content.phone, content.city, content.linkedin)
    lines = [content.name, contact_line(x for x in contact if x), ""]
    lines += ["SUMMARY", content.summary, "", "EXPERIENCE"]
    for pos in content.positions:
        lines += [pos.title, employer_line(pos.employer, pos.city, date_range(pos.start, pos.end))]
        if pos.description:
            lines.append(pos.description)
        lines += [f"- {b}" for b in pos.bullets]
        lines.append("")
    lines.append("EDUCATION")
    for degree in content.education:
        lines += [degree.degree, school_line(degree.school, degree.year)]
    if content.coursework:
        lines.append("Relevant coursework: " + ", ".join(content.coursework))
    lines += [f"Certification: {c}" for c in content.certifications]
    lines += ["", "SKILLS", ", ".join(content.skills)]
    return "\n".join(lines) + "\n"


def resume_row(
    content: ResumeContent,
    *,
    resume_id: str,
    seniority: str,
    occupation: str,
    first_name: str,
    last_name: str,
    years_experience: int,
    n_positions: int,
) -> dict[str, Any]:
    """The ``COLUMNS`` of one résumé: its facts beside the rendered text."""
    latest = content.education[0]
    return {
        "resume_id": resume_id,
        "seniority": seniority,
        "occupation": occupation,
        "name": content.name,
        "first_name": first_name,
        "last_name": last_name,
        "email": content.email,
        "phone": content.phone,
        "city": content.city,
        "linkedin": content.linkedin,
        "years_experience": years_experience,
        "n_positions": n_positions,
        "titles": "; ".join(p.title for p in content.positions),
        "employers": "; ".join(p.employer for p in content.positions),
        "degree": latest.degree,
        "school": latest.school,
        "graduation_year": latest.year,
        "certifications": "; ".join(content.certifications),
        "skills": ", ".join(content.skills),
        "text": render_resume(content),
    }


# --------------------------------------------------------------------------- reading

# The summary's experience phrase, as ``years_phrase`` writes it.
YEARS_PHRASE = re.compile(r"\b(?:(?P<n>\d+) years?|less than one year) of professional experience\b")


def is_header(line: str) -> bool:
    """Whether ``line`` would be read as a section heading (``sections.section_of``): a generated
    line that is one would split its section when the résumé is read back."""
    return is_heading(line)
