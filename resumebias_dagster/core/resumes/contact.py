"""Who a résumé is about and how to reach them: the name, e-mail, phone, links and address, found in its text.

``user_files`` finds the name with these (the ``name`` column of the user's résumés) and
``reader`` finds them with their place in the text, so that a probe edit changes exactly those
characters. A location is "City, ST" (a US state's code or name), "City, Country", either
with a street before it or a ZIP code after it, or the value of an "Address:" or "Location:"
field; a town without its state or country is not told apart from any other words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME_SEARCH_LINES = 5
_NAME_WORD = re.compile(r"(?:[A-Z]\.|[A-Z][A-Za-z\u00c0-\u024f'’]*(?:-[A-Z][A-Za-z\u00c0-\u024f'’]*)*)")
# Words of job titles: a title line such as "Software Engineer" is also two capitalised words,
# and a position's title is told from its employer by them (``entries``).
JOB_WORDS = frozenset(
    """engineer developer manager analyst scientist designer consultant director officer specialist architect
    administrator assistant associate lead head intern teacher nurse accountant technician coordinator
    representative executive president vp chair artist coach fellow resident extern student generalist educator
    principal controller supervisor clerk agent advisor adviser planner researcher programmer editor writer
    strategist operator founder owner instructor professor lecturer trainee apprentice paralegal attorney
    lawyer pharmacist therapist electrician mechanic foreman superintendent estimator buyer recruiter auditor
    economist statistician surveyor inspector drafter chemist biologist physician dentist receptionist
    cashier secretary bookkeeper producer photographer journalist translator tutor counselor counsellor
    librarian steward chef cook driver nanny caregiver volunteer partner member contractor freelancer
    consultant cto ceo cfo coo svp evp avp tester steward marketer merchandiser advocate liaison""".split()
)
# Words on a résumé's first lines that are not part of a name: headings, and job titles.
NOT_NAME_WORDS = JOB_WORDS | frozenset(
    """resume résumé curriculum vitae cv profile summary contact contacts details personal information
    experience education skills objective references page confidential software data senior junior staff
    chief university college school street road avenue inc ltd llc gmbh email phone mobile address linkedin
    github portfolio""".split()
)
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d ().\-/]{6,}\d(?!\w)")
_YEARS = re.compile(r"\d{4}\s*[-/]\s*\d{2,4}")
URL = re.compile(r"(?i)\b(?:https?://|www\.)\S+|\b(?:[a-z0-9-]+\.)*(?:linkedin|github|gitlab)\.com/\S*")
_LABEL = re.compile(r"(?i)^\s*(?P<label>full name|name|address|location|city)\s*:\s*(?P<value>.+?)\s*$")

US_STATES = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California", "CO": "Colorado",
    "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia", "FL": "Florida", "GA": "Georgia",
    "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa", "KS": "Kansas",
    "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland", "MA": "Massachusetts", "MI": "Michigan",
    "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada",
    "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York", "NC": "North Carolina",
    "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas",
    "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington", "WV": "West Virginia",
    "WI": "Wisconsin", "WY": "Wyoming",
}  # fmt: skip
COUNTRIES = """USA|U\\.S\\.A\\.|United States|UK|United Kingdom|England|Scotland|Wales|Ireland|Canada|Mexico|Brazil
    |Argentina|Chile|Colombia|Peru|Germany|France|Spain|Portugal|Italy|Netherlands|Belgium|Switzerland|Austria
    |Sweden|Norway|Denmark|Finland|Poland|Romania|Czech Republic|Czechia|Hungary|Greece|Turkey|Israel|Egypt
    |Nigeria|Kenya|Ghana|South Africa|Morocco|Ethiopia|India|Pakistan|Bangladesh|Sri Lanka|Nepal|China|Japan
    |South Korea|Korea|Taiwan|Hong Kong|Singapore|Malaysia|Indonesia|Philippines|Vietnam|Thailand|Australia
    |New Zealand|UAE|United Arab Emirates|Saudi Arabia|Qatar|Ukraine|Russia""".replace("\n", "").replace(" |", "|")
_PLACE_WORD = r"[A-Z][A-Za-z.'’\u00c0-\u024f-]*"
_REGION = rf"(?:{'|'.join(US_STATES)}|{'|'.join(sorted(US_STATES.values(), key=len, reverse=True))}|{COUNTRIES})"
_STREET = rf"\d+[A-Za-z]? {_PLACE_WORD}(?: {_PLACE_WORD}){{0,4}}, "
# "Denver, CO", "Denver, CO 80202", "São Paulo, Brazil", "12 Main St, Springfield, IL 62701"; "Remote".
LOCATION = re.compile(
    rf"(?<![\w@/.])(?:{_STREET})?{_PLACE_WORD}(?: {_PLACE_WORD}){{0,3}}, {_REGION}(?: \d{{5}}(?:-\d{{4}})?)?(?![\w@])"
    r"|(?<![\w@/])Remote(?![\w@/])"
)


def looks_like_name(line: str) -> bool:
    """Whether ``line`` is two to four capitalised words that could be a person's name."""
    words = line.strip().split()
    if not 2 <= len(words) <= 4 or any(c.isdigit() or c == "@" for c in line):
        return False
    if not all(_NAME_WORD.fullmatch(w) for w in words) or words[-1].endswith("."):
        return False
    return not any(w.lower().strip(".,") in NOT_NAME_WORDS for w in words)


@dataclass(frozen=True)
class NameSpan:
    """The candidate's name as written: its line (0-based) and characters there."""

    text: str
    line: int
    start: int
    end: int

    @property
    def words(self) -> list[str]:
        return self.text.split()


# What may follow a name on its line: a title or the contact details after a separator.
_AFTER_NAME = re.compile(r"\s+(?:[|·•–—]|-{1,2})\s+|,\s+")


def name_in_line(line: str, number: int) -> NameSpan | None:
    """The name on ``line`` (0-based ``number``): the whole line, the value of a "Name:" field,
    or the part before a separator ("Jane Doe | Data Analyst"), when it looks like a name."""
    if (m := _LABEL.match(line)) and m["label"].lower() in ("name", "full name"):
        if looks_like_name(m["value"]):
            return NameSpan(m["value"], number, m.start("value"), m.end("value"))
        return None
    stripped = line.strip()
    if looks_like_name(stripped):
        start = line.index(stripped)
        return NameSpan(" ".join(stripped.split()), number, start, start + len(stripped))
    if sep := _AFTER_NAME.search(line):
        head = line[: sep.start()].strip()
        if head and looks_like_name(head):
            start = line.index(head)
            return NameSpan(" ".join(head.split()), number, start, start + len(head))
    return None


def find_name_span(lines: list[str] | tuple[str, ...]) -> NameSpan | None:
    """The name on the first of the first ``NAME_SEARCH_LINES`` non-empty lines that has one."""
    seen = 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if (found := name_in_line(line, i)) is not None:
            return found
        seen += 1
        if seen >= NAME_SEARCH_LINES:
            break
    return None


def phones_in(text: str) -> list[re.Match[str]]:
    """The phone numbers of ``text`` (9 to 15 digits, not a year range), as matches."""
    found = []
    for m in PHONE.finditer(text):
        value = m.group(0).strip()
        digits = sum(c.isdigit() for c in value)
        if 9 <= digits <= 15 and not _YEARS.fullmatch(value):
            found.append(m)
    return found


@dataclass(frozen=True)
class ContactSpan:
    """One contact detail: ``kind`` is email, phone, link or location."""

    kind: str
    line: int
    start: int
    end: int
    text: str


def contact_in_line(line: str, number: int, *, skip: tuple[int, int] | None = None) -> list[ContactSpan]:
    """The contact details written in ``line``, in order; ``skip`` is a span (the name) left alone."""
    found: list[ContactSpan] = []
    taken: list[tuple[int, int]] = [skip] if skip else []

    def add(kind: str, start: int, end: int) -> None:
        if any(start < b and a < end for a, b in taken):
            return
        taken.append((start, end))
        found.append(ContactSpan(kind, number, start, end, line[start:end]))

    for m in EMAIL.finditer(line):
        add("email", m.start(), m.end())
    for m in URL.finditer(line):
        add("link", m.start(), m.end() - len(m.group(0)) + len(m.group(0).rstrip(".,;)|")))
    for m in phones_in(line):
        add("phone", m.start(), m.start() + len(m.group(0).strip()))
    if (labelled := _LABEL.match(line)) and labelled["label"].lower() not in ("name", "full name"):
        add("location", labelled.start("value"), labelled.end("value"))
    for m in LOCATION.finditer(line):
        add("location", m.start(), m.end())
    return sorted(found, key=lambda c: c.start)
