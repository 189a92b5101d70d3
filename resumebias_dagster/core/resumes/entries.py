"""The entries of a résumé's EXPERIENCE and EDUCATION sections, found in the forms people write them.

A position is an entry with a date range (``dates.RANGE``) at the start or end of a line, or on
a line of its own; its title, employer and place are on that line or the one or two lines
above it (or the line below, where the dates come first), in any order and separated by
``|``, a dash, a comma, "at" or brackets:

    Title                                  Title, Employer — City, ST (2019–2022)
    Employer | City, ST | Jan 2019 – Present
                                           Employer | 2019 - Present
    Employer | City, ST                    Title — City, ST
    Title
    01/2019 - 03/2021                      Title at Employer
                                           City, ST · March 2018 to June 2020

The title is the part with a job word (``contact.JOB_WORDS``: engineer, analyst, nurse, ...),
the place a "City, ST" or "City, Country" (``contact.LOCATION``), the employer the part left.
A dated line whose label is a career break (or that stands alone between blank lines, as
the career-gap probe writes it) is a gap, not a position. A school is the part naming a
University, College, Institute, School or Academy; its graduation year is the year (or the end
of the range, "Class of 2015", "May 2015") on its line or the next lines of its entry.
The generator's own lines (``layout.render_resume``) are read by their exact formats first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from resumebias_dagster.core.resumes.contact import JOB_WORDS, LOCATION
from resumebias_dagster.core.resumes.dates import DATE, RangeMark, find_ranges, mark
from resumebias_dagster.core.resumes.fields import Field, GapLine, PositionLine, SchoolLine
from resumebias_dagster.core.resumes.layout import REFERENCE_YEAR

_GEN_DATE = r"[A-Z][a-z]{2} \d{4}"
_GEN_POSITION = re.compile(
    rf"(?P<employer>[^|]+?) \| (?P<city>[^|]+?) \| (?P<dates>(?P<start>{_GEN_DATE}) – (?P<end>{_GEN_DATE}|Present))"
)
_GEN_SCHOOL = re.compile(r"(?P<school>[^|]+?) \| (?P<year>\d{4})")
_BULLET = re.compile(r"^\s*(?:[-•*▪◦●‣·–—>]|\d+[.)])\s")
_SEPARATORS = re.compile(
    r"\s+[|·•–—]\s+|\s+-{1,2}\s+|\s*\|\s*|,\s+(?!(?:Inc|LLC|Ltd|Co|Corp|GmbH|PLC|LLP|S\.A|N\.A)\b\.?)"
    r"|\s+(?:at|@|from)\s+|\s*[()\[\]]\s*"
)
_GAP_WORDS = re.compile(
    r"(?i)\b(?:career (?:break|gap|pause)|break|gap|sabbatical|(?:parental|maternity|paternity|family|medical) leave"
    r"|caregiv\w*|time off)\b"
)
_SCHOOL_WORDS = re.compile(
    r"\b(?:University|College|Institute|School|Academy|Polytechnic|Conservatory|Univ\.|Universit[äéy]\w*"
    r"|Universidad|École|Ecole|Politecnico|Hochschule)\b"
)
_NOT_EDUCATION = re.compile(r"(?i)^\s*(?:certification|certificate|relevant coursework|coursework|gpa|honou?rs)\b")
_ABBREVIATION_END = re.compile(r"(?:Inc|Ltd|Co|Corp|Jr|Sr|St|S\.A|N\.A|L\.P)\.$")
_MAX_HEAD_WORDS = 12


def is_bullet(line: str) -> bool:
    return bool(_BULLET.match(line))


def _dated_range(line_no: int, line: str) -> RangeMark | None:
    """The range that dates an entry: at the end of ``line`` (brackets and stops aside), at its
    start, or alone on it; a range inside a sentence dates no entry."""
    ranges = find_ranges(line_no, line)
    if not ranges:
        return None
    last = ranges[-1]
    if not line[last.end :].strip(" )].,;:"):
        return last
    first = ranges[0]
    if not line[: first.start].strip(" ([|·•–—-"):
        return first
    return None


def _short(line: str) -> bool:
    """Whether ``line`` could be a title, employer or place line (not a sentence, not a bullet)."""
    text = line.strip()
    if not text or is_bullet(line) or len(text.split()) > _MAX_HEAD_WORDS or text[0].islower():
        return False
    return not (text.endswith(".") and not _ABBREVIATION_END.search(text))


def _segments(line_no: int, line: str, skip: Sequence[tuple[int, int]]) -> list[Field]:
    """The parts of ``line`` between separators, outside the spans ``skip`` (dates, places)."""
    cuts = sorted([(m.start(), m.end()) for m in _SEPARATORS.finditer(line)] + list(skip))
    out, at = [], 0
    for a, b in [*cuts, (len(line), len(line))]:
        if a > at:
            raw = line[at:a]
            text = raw.strip(" *_\"'“”:;")
            if any(c.isalpha() for c in text):
                start = at + raw.index(text)
                out.append(Field(line_no, start, start + len(text), text))
        at = max(at, b)
    return out


def _has_job_word(text: str) -> bool:
    return any(w in JOB_WORDS for w in re.findall(r"[a-z]+", text.lower()))


def _places(line_no: int, line: str, skip: Sequence[tuple[int, int]]) -> list[Field]:
    return [
        Field(line_no, m.start(), m.end(), m.group(0))
        for m in LOCATION.finditer(line)
        if not any(m.start() < b and a < m.end() for a, b in skip)
    ]


def _classify(lines: Sequence[str], head: Sequence[int], dated: RangeMark) -> tuple[Field | None, ...]:
    """(title, employer, place) among the entry's head lines (``head``, top down)."""
    places: list[Field] = []
    segments: list[Field] = []
    for i in head:
        skip = [(dated.start, dated.end)] if i == dated.line else []
        found = _places(i, lines[i], skip)
        places += found
        segments += _segments(i, lines[i], skip + [(p.start, p.end) for p in found])
    titles = [s for s in segments if _has_job_word(s.text)]
    title = titles[0] if titles else None
    rest = [s for s in segments if s is not title]
    # With no job word, a line of its own above the dates is the title ("Title" over "Employer | dates").
    if title is None and len({s.line for s in rest}) > 1 and rest[0].line < dated.line:
        title, rest = rest[0], rest[1:]
    employer = rest[0] if rest else None
    place = next((p for p in places if p.line == dated.line), places[0] if places else None)
    return title, employer, place


def _head(lines: Sequence[str], i: int, lo: int, claimed: set[int], dated: RangeMark) -> list[int]:
    """The lines of the entry dated on line ``i``: up to two short lines above it, and the
    line below where the dates' line names no title or employer with them."""
    head = [i]
    j = i - 1
    while j >= lo and len(head) < 3 and j not in claimed and _short(lines[j]) and not _dated_range(j, lines[j]):
        head.insert(0, j)
        j -= 1
    alone = not _segments(i, lines[i], [(dated.start, dated.end)])
    below = i + 1
    if (len(head) == 1 or alone and len(head) < 3) and below < len(lines) and _short(lines[below]):
        if not _dated_range(below, lines[below]):
            head.append(below)
    return head


def _position(lines: Sequence[str], i: int, lo: int, claimed: set[int]) -> PositionLine | GapLine | None:
    dated = _dated_range(i, lines[i])
    if dated is None or dated.first.earliest is None:
        return None
    dates = lines[i][dated.start : dated.end]
    start, end = dated.first.earliest, dated.last.latest
    if m := _GEN_POSITION.fullmatch(lines[i]):  # the generator's "Employer | City | dates" under its title
        title = Field(i - 1, 0, len(lines[i - 1]), lines[i - 1]) if i > lo and lines[i - 1].strip() else None
        named = Field(i, m.start("employer"), m.end("employer"), m["employer"])
        city = Field(i, m.start("city"), m.end("city"), m["city"])
        claimed.update({i - 1, i})
        return PositionLine(
            i, named.text, city.text, start, end, dated.first, dated.last, dates, named, city, title, i - 1
        )
    label = lines[i][: dated.start].strip(" |,–—-(") + lines[i][dated.end :].strip(" )|,.")
    isolated = all(k < lo or k >= len(lines) or not lines[k].strip() for k in (i - 1, i + 1))
    if label and (_GAP_WORDS.search(label) or isolated and " | " in lines[i]):
        claimed.add(i)
        return GapLine(i, label, start, end, dated.first, dated.last)
    head = _head(lines, i, lo, claimed, dated)
    claimed.update(head)
    title, employer, place = _classify(lines, head, dated)
    return PositionLine(
        i,
        employer.text if employer else "",
        place.text if place else "",
        start,
        end,
        dated.first,
        dated.last,
        dates,
        employer,
        place,
        title,
        head[0],
    )


def find_positions(lines: Sequence[str], ranges: Iterable[range]) -> tuple[list[PositionLine], list[GapLine]]:
    """The dated positions and gaps of the EXPERIENCE sections ``ranges`` (lines), as written."""
    positions: list[PositionLine] = []
    gaps: list[GapLine] = []
    for section in ranges:
        claimed: set[int] = set()
        for i in section:
            if i in claimed or is_bullet(lines[i]):
                continue
            found = _position(lines, i, section.start, claimed)
            if isinstance(found, GapLine):
                gaps.append(found)
            elif found is not None:
                positions.append(found)
    return positions, gaps


# --------------------------------------------------------------------------- education


def _school_field(i: int, line: str) -> Field | None:
    for s in _segments(i, line, []):
        if _SCHOOL_WORDS.search(s.text):
            return s
    return None


def _year_marks(i: int, line: str) -> tuple[object, object] | None:
    """(graduation year, first year) written on ``line``: a range's end (and start), else its last date."""
    ranges = [r for r in find_ranges(i, line) if r.last.earliest is not None]
    if ranges:
        r = ranges[-1]
        return r.last, r.first
    dates = [m for m in DATE.finditer(line) if int(m.group(0)[-4:]) <= REFERENCE_YEAR]
    if not dates:
        return None
    m = dates[-1]
    return mark(i, m.start(), m.group(0), is_end=True), None


def find_schools(lines: Sequence[str], ranges: Iterable[range]) -> list[SchoolLine]:
    """The degrees of the EDUCATION sections ``ranges``: each school with the year on its line, or
    on the next lines of its entry (or the line above it); a year with no school is a degree too."""
    found: list[SchoolLine] = []
    for section in ranges:
        schools: dict[int, Field] = {}
        years: dict[int, tuple] = {}
        for i in section:
            line = lines[i]
            if not line.strip() or _NOT_EDUCATION.match(line):
                continue
            if m := _GEN_SCHOOL.fullmatch(line):  # the generator's "School | YYYY"
                schools[i] = Field(i, 0, m.end("school"), m["school"])
                years[i] = (mark(i, m.start("year"), m["year"], is_end=True), None)
                continue
            if (school := _school_field(i, line)) is not None:
                schools[i] = school
            if (year := _year_marks(i, line)) is not None:
                years[i] = year
        found += _pair(lines, section, schools, years)
    return found


def _pair(lines: Sequence[str], section: range, schools: dict[int, Field], years: dict[int, tuple]) -> list[SchoolLine]:
    out = []
    free = dict(years)
    for i, school in schools.items():
        at = i if i in free else None
        for k in (i + 1, i + 2, i - 1, i - 2):
            if at is not None:
                break
            between = range(min(i, k) + 1, max(i, k))
            if k in free and k in section and lines[k].strip() and not any(j in schools for j in [k, *between]):
                at = k
        year = free.pop(at) if at is not None else (None, None)
        graduation, began = year
        out.append(
            SchoolLine(
                i, school.text, None if graduation is None else graduation.earliest // 12, school, graduation, began
            )
        )
    for i, (graduation, began) in free.items():
        out.append(SchoolLine(i, "", graduation.earliest // 12, None, graduation, began))
    return sorted(out, key=lambda s: s.line)
