"""The résumé layout every probe edit parses (core/seniority/resume_text.py writes it), and the timeline check."""

from __future__ import annotations

import re
from dataclasses import dataclass

from resumebias_dagster.core.jd_audit.probes.terms import INTERESTS
from resumebias_dagster.core.seniority.resume_text import (
    MONTHS,
    REFERENCE_MONTH,
    REFERENCE_YEAR,
    SECTION_HEADERS,
)

_HEADERS = (*SECTION_HEADERS, INTERESTS)
_AXIS_ID = re.compile(r"[a-z][A-Za-z0-9]*")
_LEVEL_ID = re.compile(r"[a-z0-9][a-z0-9_]*")
_DATE = r"[A-Z][a-z]{2} \d{4}"
_EMPLOYER_LINE = re.compile(
    rf"(?P<employer>[^|]+?) \| (?P<city>[^|]+?) \| (?P<start>{_DATE}) – (?P<end>{_DATE}|Present)"
)
_SCHOOL_LINE = re.compile(r"(?P<school>[^|]+?) \| (?P<year>\d{4})")
# A dated gap in the work history ("Career break | Jun 2022 – Nov 2023"): two fields, not three.
_GAP_LINE = re.compile(rf"(?P<label>[^|]+?) \| (?P<start>{_DATE}) – (?P<end>{_DATE}|Present)")
# The summary's experience phrase, as core/seniority/generation.py writes it.
_YEARS_PHRASE = re.compile(r"\b(?:(?P<n>\d+) years?|less than one year) of professional experience\b")
_PHONE = re.compile(r"\+?[\d ().-]{7,}")
_NOW = REFERENCE_YEAR * 12 + REFERENCE_MONTH - 1


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class _Position:
    line: int  # the "Employer | City | dates" line; the title is the line above
    employer: str
    city: str
    start: int  # months since year 0
    end: int | None  # None: "Present"


@dataclass(frozen=True)
class _School:
    line: int
    school: str
    year: int


@dataclass(frozen=True)
class _Gap:
    line: int
    label: str
    start: int
    end: int | None


@dataclass(frozen=True)
class _Layout:
    lines: tuple[str, ...]
    sections: dict[str, range]  # header -> its content lines
    contact: tuple[str, ...]  # fields of the contact line
    positions: tuple[_Position, ...]  # newest first, as written
    schools: tuple[_School, ...]
    gaps: tuple[_Gap, ...] = ()

    @property
    def degree_year(self) -> int | None:
        return max((s.year for s in self.schools), default=None)

    def career(self) -> tuple[_Position, ...]:
        """Positions from the latest degree's year on (newest first); earlier ones are
        internships or student jobs, which do not count as professional experience."""
        year = self.degree_year
        return tuple(p for p in self.positions if year is None or p.start >= year * 12)

    def before_degree(self) -> tuple[_Position, ...]:
        career = set(self.career())
        return tuple(p for p in self.positions if p not in career)

    def experience_months(self) -> int:
        return sum(_end(p.end) - p.start + 1 for p in self.career())

    def contact_field(self, kind: str) -> int | None:
        return next((i for i, f in enumerate(self.contact) if _field_kind(f) == kind), None)


def _field_kind(field: str) -> str:
    if "@" in field:
        return "email"
    if "linkedin" in field.lower() or "/" in field:
        return "link"
    if _PHONE.fullmatch(field):
        return "phone"
    return "location"


def _month(label: str) -> int | None:
    if label == "Present":
        return None
    mon, year = label.split()
    return int(year) * 12 + MONTHS.index(mon)


def _end(month: int | None) -> int:
    return _NOW if month is None else month


def _label(month: int | None) -> str:
    return "Present" if month is None else f"{MONTHS[month % 12]} {month // 12}"


def _employer_line(employer: str, city: str, dates: str) -> str:
    return f"{employer} | {city} | {dates}"


def _dates(p: _Position) -> str:
    return f"{_label(p.start)} – {_label(p.end)}"


def _parse(text: str) -> _Layout:
    lines = tuple(text.split("\n"))
    headers = [i for i, line in enumerate(lines) if line.strip() in _HEADERS]
    sections = {
        lines[i].strip(): range(i + 1, headers[k + 1] if k + 1 < len(headers) else len(lines))
        for k, i in enumerate(headers)
    }
    missing = [h for h in ("EXPERIENCE", "EDUCATION") if h not in sections]
    if len(lines) < 3 or missing:
        raise ValueError(
            f"not in the generator's layout (name line, contact line, {', '.join(SECTION_HEADERS)} sections); "
            f"missing {missing or 'the name and contact lines'}"
        )
    positions = tuple(
        _Position(i, m["employer"], m["city"], _month(m["start"]), _month(m["end"]))
        for i in sections["EXPERIENCE"]
        if (m := _EMPLOYER_LINE.fullmatch(lines[i]))
    )
    schools = tuple(
        _School(i, m["school"], int(m["year"]))
        for i in sections["EDUCATION"]
        if (m := _SCHOOL_LINE.fullmatch(lines[i]))
    )
    gaps = tuple(
        _Gap(i, m["label"], _month(m["start"]), _month(m["end"]))
        for i in sections["EXPERIENCE"]
        if (m := _GAP_LINE.fullmatch(lines[i]))
    )
    return _Layout(lines, sections, tuple(lines[1].split(" | ")), positions, schools, gaps)


# --------------------------------------------------------------------------- timeline

# Months a graduate may take to start the first position before the wait reads as a gap.
DEGREE_TO_FIRST_POSITION_MONTHS = 12


def _uncovered(layout: _Layout, first: int, last: int) -> int:
    """How many months of ``first..last`` no dated gap line covers."""
    months = set(range(first, last + 1))
    for g in layout.gaps:
        months -= set(range(g.start, _end(g.end) + 1))
    return len(months)


def _covered(layout: _Layout, first: int, last: int) -> bool:
    return not _uncovered(layout, first, last)


def timeline_problems(text: str) -> list[str]:
    """Why a résumé's dates do not hang together (empty list: they do).

    Checked: each position and gap starts before it ends and not after the reference month;
    positions are listed newest first without overlap; every month between two positions,
    after the newest one, and between the degree and the first position (beyond
    ``DEGREE_TO_FIRST_POSITION_MONTHS``) is covered by a dated gap line; earlier degrees do
    not postdate the latest; positions before the degree year end within it; the summary's
    "N years of professional experience" is the listed experience in whole years.
    """
    layout = _parse(text)
    problems = []
    for p in layout.positions:
        if p.start > _end(p.end) or _end(p.end) > _NOW:
            problems.append(f"{p.employer}: dates {_dates(p)} are out of order or after {_label(_NOW)}")
    for g in layout.gaps:
        if g.start > _end(g.end) or _end(g.end) > _NOW:
            problems.append(f"gap {g.label!r}: dates out of order or after {_label(_NOW)}")
    career = layout.career()
    for newer, older in zip(career, career[1:]):
        if older.start > newer.start or _end(older.end) >= newer.start:
            problems.append(f"{older.employer} ({_dates(older)}) overlaps or follows {newer.employer} ({_dates(newer)})")
        elif _end(older.end) + 1 < newer.start and not _covered(layout, _end(older.end) + 1, newer.start - 1):
            problems.append(
                f"unexplained gap of {newer.start - _end(older.end) - 1} months between {older.employer} "
                f"and {newer.employer}"
            )
    if career and career[0].end is not None and not _covered(layout, career[0].end + 1, _NOW):
        problems.append(f"unexplained gap of {_NOW - career[0].end} months after {career[0].employer}")
    year = layout.degree_year
    if year is not None:
        if career:
            wait = _uncovered(layout, year * 12 + 12, career[-1].start - 1)
            if wait > DEGREE_TO_FIRST_POSITION_MONTHS:
                problems.append(
                    f"unexplained gap of {wait} months between the degree ({year}) and the first position "
                    f"at {career[-1].employer}"
                )
        for p in layout.before_degree():
            if _end(p.end) > year * 12 + 11:
                problems.append(f"{p.employer} starts before the degree year {year} and runs past it")
    summary = "\n".join(layout.lines[i] for i in layout.sections.get("SUMMARY", ()))
    if career and (m := _YEARS_PHRASE.search(summary)):
        stated = int(m["n"]) if m["n"] else 0
        listed = layout.experience_months() // 12
        if stated != listed:
            problems.append(f"the summary states {m.group(0)!r} but the positions add up to {listed} years")
    return problems
