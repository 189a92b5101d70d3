"""Dates as résumés write them, found with their exact place in a line, and written back the same way.

A date is a month (``Jan 2019``, ``Jan. 2019``, ``Sept 2019``, ``January 2019``, ``01/2019``,
``1/2019``, ``01.2019``), a year (``2019``), or the open end of a range (``Present``,
``Current``, ``Now``, ``Today``, ``to date``). A range joins two with a dash, ``to``,
``until`` or ``through`` (``Jan 2019 – Present``, ``01/2019 - 03/2021``, ``2019–2022``,
``March 2018 to June 2020``). Each date keeps its ``DateStyle``, so an edit that moves it
writes the new month as the résumé writes its others, and changes only those characters.

A year is a span of months: "2019" as a start may mean any month of 2019, as an end too.
``DateMark`` carries both bounds (``earliest``, ``latest``); a month's are the same, and
the timeline check (``timeline.py``) only calls dates out of order where they are so at
every reading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from resumebias_dagster.core.resumes.layout import MONTHS, REFERENCE_INDEX

FULL_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH_WORD = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_YEAR = r"(?:19[5-9]\d|20\d\d)"
_NAMED = rf"{_MONTH_WORD}\.?,? {_YEAR}"
_NUMERIC = rf"(?:0?[1-9]|1[0-2])[/.]{_YEAR}"
_OPEN = r"(?:present|current|currently|now|today|ongoing|to date|date)"
_DATE = rf"(?:{_NAMED}|{_NUMERIC}|{_YEAR})"
_DASH = r"(?:\s*[–—-]+\s*|\s+(?:to|until|through|till)\s+)"
# A range: two dates (or a date and an open end) joined; letters or digits right beside it
# would make it part of something else ("ISO 9001-2015", "2019-2020-era").
RANGE = re.compile(rf"(?<![\w/.])(?P<start>{_DATE}){_DASH}(?P<end>{_DATE}|{_OPEN})(?![\w/])", re.IGNORECASE)
DATE = re.compile(rf"(?<![\w/.])(?:{_DATE})(?![\w/])", re.IGNORECASE)
YEAR = re.compile(rf"(?<![\w/.]){_YEAR}(?![\w/])")
_OPEN_WORD = re.compile(rf"{_OPEN}", re.IGNORECASE)


@dataclass(frozen=True)
class DateStyle:
    """How one date is written: ``kind`` is ``named`` (month word), ``numeric`` (``MM/YYYY``),
    ``year`` or ``open`` (Present); the rest says which form of it."""

    kind: str
    full: bool = False  # "January" rather than "Jan"
    sept: bool = False  # "Sept" for September
    dot: bool = False  # "Jan." ("May" has none)
    comma: bool = False  # "Jan, 2019"
    case: str = "title"  # title, upper or lower
    padded: bool = True  # "01/2019" rather than "1/2019"
    separator: str = "/"

    def format(self, month: int) -> str:
        """``month`` (months since year 0) as this style writes it."""
        year, index = divmod(month, 12)
        if self.kind == "named":
            word = FULL_MONTHS[index] if self.full else ("Sept" if self.sept and index == 8 else MONTHS[index])
            if self.dot and not self.full and word != "May":
                word += "."
            word = word.upper() if self.case == "upper" else word.lower() if self.case == "lower" else word
            return f"{word}{',' if self.comma else ''} {year}"
        if self.kind == "numeric":
            return f"{index + 1:02d}{self.separator}{year}" if self.padded else f"{index + 1}{self.separator}{year}"
        if self.kind == "year":
            return str(year)
        raise ValueError("an open end (Present) has no month to write")

    @property
    def precise(self) -> bool:
        return self.kind in ("named", "numeric")


def _case(word: str) -> str:
    return "upper" if word.isupper() and len(word) > 1 else "lower" if word.islower() else "title"


def read_date(text: str) -> tuple[int | None, DateStyle]:
    """The month (months since year 0; the first month of a year; None for an open end) of one
    date as written, and its style; ``ValueError`` if it is not a date."""
    text = text.strip()
    if _OPEN_WORD.fullmatch(text):
        return None, DateStyle("open")
    if re.fullmatch(_YEAR, text):
        return int(text) * 12, DateStyle("year")
    if m := re.fullmatch(rf"((?:0?[1-9]|1[0-2]))([/.])({_YEAR})", text):
        return int(m[3]) * 12 + int(m[1]) - 1, DateStyle("numeric", padded=len(m[1]) == 2, separator=m[2])
    if m := re.fullmatch(rf"({_MONTH_WORD})(\.?)(,?) ({_YEAR})", text, re.IGNORECASE):
        word = m[1]
        index = next(k for k, name in enumerate(FULL_MONTHS) if name.lower().startswith(word.lower()[:3]))
        style = DateStyle(
            "named",
            full=len(word) > 3 and word.lower() != "sept",
            sept=word.lower() == "sept",
            dot=bool(m[2]),
            comma=bool(m[3]),
            case=_case(word),
        )
        return int(m[4]) * 12 + index, style
    raise ValueError(f"{text!r} is not a date")


@dataclass(frozen=True)
class DateMark:
    """One date in a résumé: its line and characters, its months and its style."""

    line: int
    start: int  # character offsets in the line
    end: int
    earliest: int | None  # months since year 0; None: an open end ("Present")
    latest: int | None
    style: DateStyle

    @property
    def open(self) -> bool:
        return self.earliest is None

    def rewrite(self, month: int) -> str:
        """``month`` written as this date is written."""
        return self.style.format(month)


def mark(line: int, start: int, text: str, *, is_end: bool) -> DateMark:
    """The ``DateMark`` of ``text`` written at ``start`` of ``line``; a year spans its twelve
    months (an end never later than the reference month: "2025" may end this month)."""
    month, style = read_date(text)
    if month is None:
        return DateMark(line, start, start + len(text), None, None, style)
    latest = month if style.precise else month + 11
    if is_end or not style.precise:
        latest = min(latest, max(month, REFERENCE_INDEX))
    return DateMark(line, start, start + len(text), month, latest, style)


@dataclass(frozen=True)
class RangeMark:
    """A date range in a line: its whole span and its two dates."""

    line: int
    start: int
    end: int
    first: DateMark
    last: DateMark


def _agreeing(a: DateMark, b: DateMark, written: str) -> DateMark:
    """``a`` with the form of ``b`` where ``a`` alone cannot tell it ("May" is both "May" and
    "May", abbreviated or full, with or without a dot)."""
    if written.lower().startswith("may") and a.style.kind == b.style.kind == "named":
        return replace(a, style=replace(a.style, full=b.style.full, dot=b.style.dot))
    return a


def find_ranges(line_no: int, line: str) -> list[RangeMark]:
    """The date ranges written in ``line`` (``RANGE``), in order."""
    out = []
    for m in RANGE.finditer(line):
        first = mark(line_no, m.start("start"), m["start"], is_end=False)
        last = mark(line_no, m.start("end"), m["end"], is_end=True)
        first, last = _agreeing(first, last, m["start"]), _agreeing(last, first, m["end"])
        out.append(RangeMark(line_no, m.start(), m.end(), first, last))
    return out
