"""The one layout of a résumé's text: the facts it is written from, the writer, the parser.

Both generators of the seniority study fill a ``ResumeContent`` (the template of
``core/seniority/generation.py``, a provider model's structured answer in
``core/seniority/llm_generation.py``) and ``render_resume`` writes it; the probe edits of
``core/jd_audit/probes`` read that text back with ``parse_layout`` and rewrite its lines.
The line formats (``employer_line``, ``school_line``, ``gap_line``, ``contact_line``, the
dates) are defined once below and used by both sides, so a change to the layout cannot
leave the writer and the parser disagreeing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.tables import BaseResumes, columns

# "Present" means this month, fixed so the output never depends on today's date.
REFERENCE_YEAR = 2025
REFERENCE_MONTH = 6
REFERENCE_INDEX = REFERENCE_YEAR * 12 + REFERENCE_MONTH - 1  # the month as months since year 0
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SECTION_HEADERS = ("SUMMARY", "EXPERIENCE", "EDUCATION", "SKILLS")
# The section the job-description audit's baseline appends (``baseline.interests`` of
# probe_axes.yaml); render_resume never writes it, but the parser must know it as a header.
INTERESTS = "INTERESTS"
HEADERS = (*SECTION_HEADERS, INTERESTS)
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
    """The résumé text in the one layout every probe edit parses (``parse_layout``): the
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


# --------------------------------------------------------------------------- parser

_DATE = r"[A-Z][a-z]{2} \d{4}"
_EMPLOYER_LINE = re.compile(
    rf"(?P<employer>[^|]+?) \| (?P<city>[^|]+?) \| (?P<start>{_DATE}) – (?P<end>{_DATE}|Present)"
)
_SCHOOL_LINE = re.compile(r"(?P<school>[^|]+?) \| (?P<year>\d{4})")
# A gap line has two fields, not three.
_GAP_LINE = re.compile(rf"(?P<label>[^|]+?) \| (?P<start>{_DATE}) – (?P<end>{_DATE}|Present)")
# The summary's experience phrase, as ``years_phrase`` writes it.
YEARS_PHRASE = re.compile(r"\b(?:(?P<n>\d+) years?|less than one year) of professional experience\b")
_PHONE = re.compile(r"\+?[\d ().-]{7,}")


@dataclass(frozen=True)
class PositionLine:
    line: int  # the "Employer | City | dates" line; the title is the line above
    employer: str
    city: str
    start: int  # months since year 0
    end: int | None  # None: "Present"

    @property
    def dates(self) -> str:
        return date_range(self.start, self.end)


@dataclass(frozen=True)
class SchoolLine:
    line: int
    school: str
    year: int


@dataclass(frozen=True)
class GapLine:
    line: int
    label: str
    start: int
    end: int | None


@dataclass(frozen=True)
class Layout:
    """A written résumé, parsed: its lines and where each part of the layout sits in them."""

    lines: tuple[str, ...]
    sections: dict[str, range]  # header -> its content lines
    contact: tuple[str, ...]  # fields of the contact line
    positions: tuple[PositionLine, ...]  # newest first, as written
    schools: tuple[SchoolLine, ...]
    gaps: tuple[GapLine, ...] = ()

    @property
    def degree_year(self) -> int | None:
        return max((s.year for s in self.schools), default=None)

    def career(self) -> tuple[PositionLine, ...]:
        """Positions from the latest degree's year on (newest first); earlier ones are
        internships or student jobs, which do not count as professional experience."""
        year = self.degree_year
        return tuple(p for p in self.positions if year is None or p.start >= year * 12)

    def before_degree(self) -> tuple[PositionLine, ...]:
        career = set(self.career())
        return tuple(p for p in self.positions if p not in career)

    def experience_months(self) -> int:
        return sum(end_month(p.end) - p.start + 1 for p in self.career())

    def contact_field(self, kind: str) -> int | None:
        return next((i for i, f in enumerate(self.contact) if field_kind(f) == kind), None)


def field_kind(field: str) -> str:
    """What a field of the contact line holds: email, link, phone or location."""
    if "@" in field:
        return "email"
    if "linkedin" in field.lower() or "/" in field:
        return "link"
    if _PHONE.fullmatch(field):
        return "phone"
    return "location"


def _month(label: str) -> int | None:
    return None if label == "Present" else _date_month(label)


def _date_month(label: str) -> int:
    """Months since year 0 of a "Mon YYYY" date (a span's start is always one)."""
    mon, year = label.split()
    return int(year) * 12 + MONTHS.index(mon)


def end_month(month: int | None) -> int:
    """The last month of a span: "Present" (None) is the reference month."""
    return REFERENCE_INDEX if month is None else month


def is_header(line: str) -> bool:
    """Whether ``line`` would be read as a section header (``parse_layout``)."""
    return _header(line) in HEADERS


def _header(line: str) -> str:
    """A line as a section header: the generator writes "EXPERIENCE", people write "Experience"
    or "Experience:"; a header is the whole line, never a word inside prose."""
    return line.strip().rstrip(":").strip().upper()


def parse_layout(text: str) -> Layout:
    """Where the parts of ``render_resume``'s layout sit in ``text`` (which may have been edited)."""
    lines = tuple(text.split("\n"))
    headers = [i for i, line in enumerate(lines) if is_header(line)]
    sections = {
        _header(lines[i]): range(i + 1, headers[k + 1] if k + 1 < len(headers) else len(lines))
        for k, i in enumerate(headers)
    }
    missing = [h for h in ("EXPERIENCE", "EDUCATION") if h not in sections]
    if len(lines) < 3 or missing:
        raise ValueError(
            f"not in the generator's layout (name line, contact line, {', '.join(SECTION_HEADERS)} sections); "
            f"missing {missing or 'the name and contact lines'}"
        )
    positions = tuple(
        PositionLine(i, m["employer"], m["city"], _date_month(m["start"]), _month(m["end"]))
        for i in sections["EXPERIENCE"]
        if (m := _EMPLOYER_LINE.fullmatch(lines[i]))
    )
    schools = tuple(
        SchoolLine(i, m["school"], int(m["year"]))
        for i in sections["EDUCATION"]
        if (m := _SCHOOL_LINE.fullmatch(lines[i]))
    )
    gaps = tuple(
        GapLine(i, m["label"], _date_month(m["start"]), _month(m["end"]))
        for i in sections["EXPERIENCE"]
        if (m := _GAP_LINE.fullmatch(lines[i]))
    )
    return Layout(lines, sections, tuple(lines[1].split(_FIELD_SEPARATOR)), positions, schools, gaps)
