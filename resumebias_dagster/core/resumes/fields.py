"""What ``reader.read_resume`` finds in a résumé's text, each part with its place in the lines.

A probe edit (``core/jd_audit/probes/edits.py``) rewrites exactly the characters of the field it
changes (``Field``: a line and a character span there), and the timeline check (``timeline.py``)
reads the dates. Months count from year 0 (``year * 12 + month - 1``); a date written as a year
only spans its twelve months, so each date has an earliest and a latest month
(``dates.DateMark``) and the timeline calls dates out of order only where they are at every
reading of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from resumebias_dagster.core.resumes.contact import ContactSpan, NameSpan
from resumebias_dagster.core.resumes.dates import DateMark
from resumebias_dagster.core.resumes.layout import REFERENCE_INDEX


@dataclass(frozen=True)
class Field:
    """Characters ``start:end`` of line ``line`` (0-based), and what they say."""

    line: int
    start: int
    end: int
    text: str


def end_month(month: int | None) -> int:
    """The last month of a span: "Present" (None) is the reference month."""
    return REFERENCE_INDEX if month is None else month


@dataclass(frozen=True)
class PositionLine:
    """One dated position of an EXPERIENCE section: the line holding its dates, its employer,
    place and title where the entry names them ("" and None where it does not)."""

    line: int
    employer: str
    city: str
    start: int  # the earliest month it may have begun
    end: int | None  # the latest month it may have ended; None: "Present"
    first: DateMark
    last: DateMark
    dates: str  # as written ("Jan 2019 – Present", "2019–2022")
    employer_at: Field | None = None
    city_at: Field | None = None
    title_at: Field | None = None
    top: int = -1  # the entry's first line (its title line in the generator's layout)

    @property
    def start_latest(self) -> int:
        return self.start if self.first.latest is None else self.first.latest

    @property
    def end_earliest(self) -> int | None:
        return self.last.earliest


@dataclass(frozen=True)
class SchoolLine:
    """One degree of an EDUCATION section: the school and the graduation year where written."""

    line: int
    school: str  # "" where the entry names no school
    year: int | None
    school_at: Field | None = None
    year_at: DateMark | None = None
    began_at: DateMark | None = None  # the first year of "2011 – 2015", which moves with the degree


@dataclass(frozen=True)
class GapLine:
    """A dated gap in the work history ("Career break | Jun 2022 – Nov 2023")."""

    line: int
    label: str
    start: int
    end: int | None
    first: DateMark
    last: DateMark


@dataclass(frozen=True)
class Layout:
    """A résumé's text, read: its lines and where each part a probe needs sits in them."""

    lines: tuple[str, ...]
    sections: dict[str, range]  # section key -> its content lines (the last such section)
    contact: tuple[str, ...]  # the contact details as written, in order
    positions: tuple[PositionLine, ...]  # as written
    schools: tuple[SchoolLine, ...]
    gaps: tuple[GapLine, ...] = ()
    name: NameSpan | None = None
    contacts: tuple[ContactSpan, ...] = ()
    top: int = 0  # the first line after the name and contact lines
    headings: tuple[int, ...] = field(default=())  # lines that are section headings

    @property
    def degree_year(self) -> int | None:
        return max((s.year for s in self.schools if s.year is not None), default=None)

    def newest_first(self) -> tuple[PositionLine, ...]:
        """The positions newest first: as written, or reversed where the résumé lists them oldest first."""
        p = self.positions
        oldest_first = len(p) > 1 and all(a.start < b.start for a, b in zip(p, p[1:]))
        return tuple(reversed(p)) if oldest_first else p

    def career(self) -> tuple[PositionLine, ...]:
        """Positions from the latest degree's year on (newest first); earlier ones are
        internships or student jobs, which do not count as professional experience."""
        year = self.degree_year
        return tuple(p for p in self.newest_first() if year is None or p.start >= year * 12)

    def before_degree(self) -> tuple[PositionLine, ...]:
        career = set(self.career())
        return tuple(p for p in self.positions if p not in career)

    def experience_months(self) -> int:
        """The career's months, each position from its earliest start to its latest end."""
        return sum(end_month(p.end) - p.start + 1 for p in self.career())

    def least_experience_months(self) -> int:
        """The career's months, each position from its latest start to its earliest end
        (``experience_months`` where every date names its month)."""
        return sum(max(0, end_month(p.end_earliest) - p.start_latest + 1) for p in self.career())

    def contact_field(self, kind: str) -> int | None:
        return next((i for i, c in enumerate(self.contacts) if c.kind == kind), None)
