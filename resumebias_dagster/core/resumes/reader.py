"""A résumé's text read for the probes: the name, contact details, sections and entries, each where it is written.

``read_resume`` reads the text ``user_files`` extracts from a PDF, DOCX, Markdown or text file
(or a generated résumé: ``layout.render_resume``'s lines are read by their exact formats, so
a generated résumé and its variants read as they always did):

* the name: the first of the first lines that reads as a person's name, the value of a
  "Name:" field, or the part of a line before a separator ("Jane Doe | Data Analyst");
* the contact details (e-mail, phone, links, the address or "City, ST"): on the lines above
  the first section heading, however they wrap, and in a Contact section;
* the sections, by their headings in any case and common wording (``sections``);
* the positions, gaps and degrees of the Experience and Education sections (``entries``).

Nothing is refused: what is not found is absent, and each probe edit that needs it says so.
"""

from __future__ import annotations

from resumebias_dagster.core.resumes.contact import ContactSpan, NameSpan, contact_in_line, find_name_span
from resumebias_dagster.core.resumes.entries import find_positions, find_schools
from resumebias_dagster.core.resumes.fields import Layout
from resumebias_dagster.core.resumes.sections import section_of

# Contact details are looked for above the first heading, but no further down than this.
MAX_HEADER_LINES = 12


def _sections(lines: tuple[str, ...]) -> tuple[list[int], list[tuple[str, range]]]:
    """The heading lines, and each section's key and content lines, in order."""
    headings = [i for i, line in enumerate(lines) if section_of(line) is not None]
    spans = [
        (str(section_of(lines[i])), range(i + 1, headings[k + 1] if k + 1 < len(headings) else len(lines)))
        for k, i in enumerate(headings)
    ]
    return headings, spans


def _contacts(
    lines: tuple[str, ...], name: NameSpan | None, header_end: int, contact_ranges: list[range]
) -> list[ContactSpan]:
    found: list[ContactSpan] = []
    where = [*range(min(header_end, MAX_HEADER_LINES)), *(i for r in contact_ranges for i in r)]
    for i in where:
        skip = (name.start, name.end) if name is not None and name.line == i else None
        found += contact_in_line(lines[i], i, skip=skip)
    return found


def read_resume(text: str) -> Layout:
    """What the probes need of ``text``, each part with its line and characters (``fields``)."""
    lines = tuple(text.split("\n"))
    headings, spans = _sections(lines)
    header_end = headings[0] if headings else len(lines)
    name = find_name_span(lines[:header_end]) if header_end else None
    contacts = _contacts(lines, name, header_end, [r for key, r in spans if key == "CONTACT"])
    above = [c.line for c in contacts if c.line < header_end] + ([name.line] if name is not None else [])
    positions, gaps = find_positions(lines, [r for key, r in spans if key == "EXPERIENCE"])
    schools = find_schools(lines, [r for key, r in spans if key == "EDUCATION"])
    return Layout(
        lines=lines,
        sections=dict(spans),
        contact=tuple(c.text for c in contacts),
        positions=tuple(positions),
        schools=tuple(schools),
        gaps=tuple(gaps),
        name=name,
        contacts=tuple(contacts),
        top=max(above) + 1 if above else 0,
        headings=tuple(headings),
    )
