"""The edit of each axis: what one level writes into a résumé, and which lines it may change."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from resumebias_dagster.core.common.diffing import tokens
from resumebias_dagster.core.jd_audit.probes.terms import (
    ANONYMIZE_SIGNALS,
    PLACEBO_OPS,
    PLACEHOLDERS,
    Axis,
    Signal,
)
from resumebias_dagster.core.resumes.layout import (
    REFERENCE_INDEX,
    REFERENCE_YEAR,
    YEARS_PHRASE,
    Layout,
    PositionLine,
    contact_line,
    date_range,
    employer_line,
    end_month,
    field_kind,
    gap_line,
    school_line,
    years_phrase,
)
from resumebias_dagster.core.resumes.names import name_tokens, replace_person

# --------------------------------------------------------------------------- edits


def _own_name(layout: Layout) -> tuple[str, str]:
    first, _, last = layout.lines[0].strip().partition(" ")
    if not last:
        raise ValueError(f"the first line {layout.lines[0]!r} is not a first and last name")
    return first, last


def pool_name(value: str | list[str], position: int, layout: Layout) -> str:
    """The "First Last" a person_name level writes into the résumé at ``position`` of the arm.

    A single name is itself. From a pool the résumé at position k gets entry k modulo the
    pool's size (deterministic and balanced: while the arm has no more résumés than the pool
    has names, each name is used once); an entry sharing a word with the résumé's own name
    (the swap could not be verified) is skipped for the next one."""
    if isinstance(value, str):
        return value
    own = name_tokens(*_own_name(layout))
    for step in range(len(value)):
        name = value[(position + step) % len(value)]
        if not name_tokens(*name.split(" ", 1)) & own:
            return name
    raise ValueError(f"every name of the pool shares a word with the résumé's own name {layout.lines[0].strip()!r}")


def _person_name(layout: Layout, value: str, axis: Axis) -> Signal:
    old_first, old_last = _own_name(layout)
    new_first, _, new_last = value.partition(" ")
    text = replace_person("\n".join(layout.lines), old_first, old_last, new_first, new_last)
    old = _name_forms(old_first, old_last)
    changed = frozenset(i for i, line in enumerate(layout.lines) if old & set(tokens(line)))
    return Signal(tuple(text.split("\n")), tuple(sorted(old)), tuple(sorted(_name_forms(new_first, new_last))), changed)


def _name_forms(first: str, last: str) -> set[str]:
    """Tokens of a name in every form an e-mail or slug writes it; a hyphenated last name
    glued to the first name ("mohammedal-said") tokenises differently from the words."""
    return name_tokens(first, last) | set(tokens(first + last)) | set(tokens(last + first))


def _shift_education(layout: Layout, lines: list[str], years: int) -> tuple[list[str], list[str], set[int]]:
    """Move every degree year and every position before the degree by ``years`` (so their
    order and the internship's season stay); returns the removed and added values and lines."""
    removed, added, changed = [], [], set()
    for s in layout.schools:
        lines[s.line] = school_line(s.school, s.year + years)
        removed.append(str(s.year))
        added.append(str(s.year + years))
        changed.add(s.line)
    for p in layout.before_degree():
        moved = PositionLine(
            p.line, p.employer, p.city, p.start + 12 * years, None if p.end is None else p.end + 12 * years
        )
        lines[p.line] = employer_line(p.employer, p.city, moved.dates)
        removed.append(p.dates)
        added.append(moved.dates)
        changed.add(p.line)
    return removed, added, changed


def _graduation_year(layout: Layout, value: int, axis: Axis) -> Signal | None:
    # The degree year dates a career: a candidate who graduated years earlier and has worked
    # since shows the same positions over a longer career (an unexplained decade between
    # degree and first job would be a second signal, a career gap). Each position keeps its
    # share of the career; the summary's years of experience follow. Experience is part of
    # this signal, which the axis declares (`changes_experience`).
    degree_year = layout.degree_year  # None exactly when there is no school line
    if degree_year is None:
        raise ValueError("EDUCATION has no 'School | year' line")
    offset = value - degree_year
    if offset == 0:
        return None
    career = layout.career()
    if not career:
        raise ValueError("EXPERIENCE has no position after the degree to date the career by")
    first = career[-1].start
    span = REFERENCE_INDEX - first + 1
    new_span = span - 12 * offset
    if new_span < 3 * len(career):
        raise ValueError(f"a degree in {value} leaves {new_span} months for {len(career)} positions")

    def moved(month: int) -> int:  # a month boundary of the career, scaled towards the reference month
        return REFERENCE_INDEX + 1 - round((REFERENCE_INDEX + 1 - month) * new_span / span)

    lines = list(layout.lines)
    removed, added, changed = _shift_education(layout, lines, offset)
    for p in career:
        new = PositionLine(p.line, p.employer, p.city, moved(p.start), None if p.end is None else moved(p.end + 1) - 1)
        lines[p.line] = employer_line(p.employer, p.city, new.dates)
        removed.append(p.dates)
        added.append(new.dates)
        changed.add(p.line)
    for g in layout.gaps:
        new_gap = gap_line(g.label, date_range(moved(g.start), None if g.end is None else moved(g.end + 1) - 1))
        removed.append(lines[g.line])
        added.append(new_gap)
        lines[g.line] = new_gap
        changed.add(g.line)
    years = sum(end_month(None if p.end is None else moved(p.end + 1) - 1) - moved(p.start) + 1 for p in career) // 12
    for i in layout.sections.get("SUMMARY", ()):
        if m := YEARS_PHRASE.search(lines[i]):
            phrase = m.group(0).replace(m.group(0).split(" of ")[0], years_phrase(years), 1)
            removed.append(m.group(0))
            added.append(phrase)
            lines[i] = lines[i][: m.start()] + phrase + lines[i][m.end() :]
            changed.add(i)
    return Signal(tuple(lines), tuple(removed), tuple(added), frozenset(changed))


def _address(layout: Layout, value: str, axis: Axis) -> Signal | None:
    i = layout.contact_field("location")
    if i is None:
        raise ValueError(f"the contact line {layout.lines[1]!r} has no location")
    if layout.contact[i] == value:
        return None
    contact = list(layout.contact)
    contact[i] = value
    lines = list(layout.lines)
    lines[1] = contact_line(contact)
    return Signal(tuple(lines), (layout.contact[i],), (value,), frozenset({1}))


def _career_gap(layout: Layout, value: str, axis: Axis) -> Signal | None:
    # The gap goes right before the newest position, whose dates stay. Everything older
    # moves back by `months`, so every tenure and the total experience stay, the dates stay
    # in order, and the degree still leads straight into the first position: a career with a
    # break started earlier. The degree year moves by the gap, which is whole years (_check_gap).
    months = axis.params["months"]
    career = layout.career()
    if not career:
        raise ValueError("EXPERIENCE has no position after the degree to put a gap before")
    newest = career[0]
    held = [p for p in career[1:] if p.end is None]
    if held:
        raise ValueError(
            f"an older position ({held[0].employer}, from line {held[0].line + 1}) is still current: a gap cannot go "
            "before the newest position while another is held"
        )
    lines = list(layout.lines)
    removed, added, changed = _shift_education(layout, lines, -(months // 12))
    for p in career[1:]:
        new = PositionLine(p.line, p.employer, p.city, p.start - months, p.end - months)
        lines[p.line] = employer_line(p.employer, p.city, new.dates)
        removed.append(p.dates)
        added.append(new.dates)
        changed.add(p.line)
    for g in layout.gaps:
        new_gap = gap_line(g.label, date_range(g.start - months, end_month(g.end) - months))
        removed.append(lines[g.line])
        added.append(new_gap)
        lines[g.line] = new_gap
        changed.add(g.line)
    gap = gap_line(value, date_range(newest.start - months, newest.start - 1))
    added.append(gap)
    # Written where the next (older) entry begins: its title line, or the section's end.
    older = [p.line - 1 for p in layout.positions if p.line > newest.line]
    if older:
        at = min(older)
        lines[at:at] = [gap, ""]
    else:
        at = layout.sections["EXPERIENCE"].stop
        while at > layout.sections["EXPERIENCE"].start and not lines[at - 1].strip():
            at -= 1
        lines[at:at] = ["", gap]
    return Signal(tuple(lines), tuple(removed), tuple(added), frozenset(changed), inserts=True)


def _rename(layout: Layout, values: list[str], field: str) -> Signal | None:
    """Map the distinct employers (or their cities), in order of appearance, onto ``values``."""
    distinct = list(dict.fromkeys(getattr(p, field) for p in layout.positions))
    if not distinct:
        raise ValueError("EXPERIENCE has no 'Employer | City | dates' line")
    if len(distinct) > len(values):
        raise ValueError(f"{len(distinct)} distinct {field} values but the level lists only {len(values)}")
    new = dict(zip(distinct, values))
    if all(k == v for k, v in new.items()):
        return None
    lines = list(layout.lines)
    for p in layout.positions:
        employer = new[p.employer] if field == "employer" else p.employer
        city = new[p.city] if field == "city" else p.city
        lines[p.line] = employer_line(employer, city, p.dates)
    return Signal(tuple(lines), tuple(distinct), tuple(new.values()), frozenset(p.line for p in layout.positions))


def _employer_names(layout: Layout, value: list[str], axis: Axis) -> Signal | None:
    return _rename(layout, value, "employer")


def _employer_locations(layout: Layout, value: list[str], axis: Axis) -> Signal | None:
    return _rename(layout, value, "city")


def _school(layout: Layout, value: str, axis: Axis) -> Signal | None:
    if not layout.schools:
        raise ValueError("EDUCATION has no 'School | year' line")
    if all(s.school == value for s in layout.schools):
        return None
    lines = list(layout.lines)
    for s in layout.schools:
        lines[s.line] = school_line(value, s.year)
    return Signal(
        tuple(lines), tuple(s.school for s in layout.schools), (value,), frozenset(s.line for s in layout.schools)
    )


def _duration(p: PositionLine) -> str:
    months = (REFERENCE_INDEX if p.end is None else p.end) - p.start + 1
    years, rest = divmod(months, 12)
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((years, "year"), (rest, "month")) if n]
    return " ".join(parts) + (" (current)" if p.end is None else "")


def _letters(values: Iterable[str], template: str) -> dict[str, str]:
    return {v: template.format(letter=chr(ord("A") + k)) for k, v in enumerate(dict.fromkeys(values))}


def _anonymize(layout: Layout, value: list[str], axis: Axis) -> Signal | None:
    blind = set(value)
    ph = axis.params["placeholders"]
    lines = list(layout.lines)
    removed: list[str] = []
    added: list[str] = []

    def put(i: int, old: str, new: str, line: str) -> None:
        if old != new:
            removed.append(old)
            added.append(new)
        lines[i] = line

    if "name" in blind:
        put(0, lines[0], ph["name"], ph["name"])
    signal_of = {"email": "contact", "phone": "contact", "link": "links", "location": "locations"}
    contact = [ph[field_kind(f)] if signal_of[field_kind(f)] in blind else f for f in layout.contact]
    for old, new in zip(layout.contact, contact):
        put(1, old, new, contact_line(contact))
    employer_of = _letters((p.employer for p in layout.positions), ph["employer"])
    for p in layout.positions:
        employer = employer_of[p.employer] if "employers" in blind else p.employer
        city = ph["location"] if "locations" in blind else p.city
        dates = _duration(p) if "dates" in blind else p.dates
        for old, new in ((p.employer, employer), (p.city, city), (p.dates, dates)):
            put(p.line, old, new, employer_line(employer, city, dates))
    school_of = _letters((s.school for s in layout.schools), ph["school"])
    for s in layout.schools:
        school = school_of[s.school] if "schools" in blind else s.school
        year = ph["year"] if "dates" in blind else str(s.year)
        for old, new in ((s.school, school), (str(s.year), year)):
            put(s.line, old, new, school_line(school, year))
    if not removed:
        return None
    if "name" in blind:
        first, _, last = layout.lines[0].strip().partition(" ")
        name = _name_forms(first, last)
        left = next((i for i, line in enumerate(lines) if name & set(tokens(line))), None)
        if left is not None:
            raise ValueError(
                f"the name is still on line {left + 1} ({lines[left]!r}) after blinding {sorted(blind)}; "
                "blind 'contact' and 'links' with 'name'"
            )
    changed = frozenset(i for i, (a, b) in enumerate(zip(layout.lines, lines)) if a != b)
    return Signal(tuple(lines), tuple(removed), tuple(added), changed)


def _add_line(layout: Layout, value: dict[str, str], axis: Axis) -> Signal:
    lines = list(layout.lines)
    if value["where"] == "top":
        lines[2:2] = [value["text"]]
    else:
        end = len(lines)
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = ["", value["text"]]
    return Signal(tuple(lines), (), (value["text"],), frozenset(), inserts=True)


def _placebo(layout: Layout, value: dict[str, str], axis: Axis) -> Signal | None:
    lines = list(layout.lines)
    op = value["op"]
    if op == "blank_line":
        at = layout.sections["EXPERIENCE"].start - 1
        lines[at:at] = [""]
        return Signal(tuple(lines), (), (), frozenset(), inserts=True)
    if op == "trailing_space":
        at = next(i for i in layout.sections.get("SUMMARY", layout.sections["EXPERIENCE"]) if lines[i].strip())
        lines[at] += "  "
        return Signal(tuple(lines), (), (), frozenset({at}))
    if op == "bullet_glyph":
        bullets = [i for i, line in enumerate(lines) if line.startswith("- ")]
        for i in bullets:
            lines[i] = f"{value['glyph']} {lines[i][2:]}"
        return Signal(tuple(lines), (), (), frozenset(bullets)) if bullets else None
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(value['find'])}(?![A-Za-z0-9])")
    found = [i for i in layout.sections.get(value["section"], ()) if word.search(lines[i])]
    for i in found:
        lines[i] = word.sub(value["replace"], lines[i])
    return Signal(tuple(lines), (value["find"],), (value["replace"],), frozenset(found)) if found else None


# edit name -> (apply to a parsed baseline, validate a level value)
# --- the value each edit accepts, checked when the catalog is read


def _words(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or "|" in value or "\n" in value:
        raise ValueError(f"{what} must be a non-empty one-line string without '|', got {value!r}")
    return value


_PERSON = re.compile(r"[A-Z][A-Za-z'-]* [A-Z][A-Za-z' -]*")


def _check_person(value: Any, axis: Axis) -> None:
    """One "First Last", or a pool: a non-empty list of them, none twice."""
    if isinstance(value, list):
        if not value:
            raise ValueError("the name pool is empty; list at least one 'First Last'")
        for i, entry in enumerate(value):
            if not isinstance(entry, str) or not _PERSON.fullmatch(entry):
                raise ValueError(
                    f"pool entry {i + 1} ({entry!r}) must be 'First Last' in capitalised words (letters, "
                    "apostrophe, hyphen)"
                )
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            raise ValueError(f"the name pool lists {twice[0]!r} more than once")
        return
    if not isinstance(value, str) or not _PERSON.fullmatch(value):
        raise ValueError(f"a name level must be 'First Last' in capitalised words, or a list of them, got {value!r}")


def _check_year(value: Any, axis: Axis) -> None:
    if not isinstance(value, int) or not 1900 <= value <= REFERENCE_YEAR:
        raise ValueError(f"a graduation year level must be a year up to {REFERENCE_YEAR}, got {value!r}")


def _check_text(value: Any, axis: Axis) -> None:
    _words(value, "the level")


def _check_gap(value: Any, axis: Axis) -> None:
    _words(value, "the gap label")
    months = axis.params.get("months")
    if not isinstance(months, int) or months < 12 or months % 12:
        # Degrees carry a year only: a gap of 18 months would move the degree by 12 or 24, and
        # change the wait between degree and first job as well as the gap (two signals).
        raise ValueError(f"`months` must be whole years (12, 24, ...) because degree dates are years, got {months!r}")


def _check_list(value: Any, axis: Axis) -> None:
    if not isinstance(value, list) or not value:
        raise ValueError(f"the level must be a non-empty list, got {value!r}")
    for v in value:
        _words(v, "each entry")
    if len(set(value)) < len(value):
        raise ValueError(f"the level lists a value twice: {value!r}")


def _check_anonymize(value: Any, axis: Axis) -> None:
    if not isinstance(value, list) or not value or not set(value) <= set(ANONYMIZE_SIGNALS):
        raise ValueError(f"the level must list signals out of {list(ANONYMIZE_SIGNALS)}, got {value!r}")
    placeholders = axis.params.get("placeholders")
    if not isinstance(placeholders, dict) or set(PLACEHOLDERS) - set(placeholders):
        raise ValueError(f"the axis needs `placeholders` with {list(PLACEHOLDERS)}")
    for key in PLACEHOLDERS:
        _words(placeholders[key], f"placeholder {key!r}")
    for key in ("employer", "school"):
        if "{letter}" not in placeholders[key]:
            raise ValueError(f"placeholder {key!r} must contain {{letter}} (distinct entities stay distinct)")


def _check_add_line(value: Any, axis: Axis) -> None:
    if not isinstance(value, dict) or value.get("where") not in ("top", "end"):
        raise ValueError(f"the level must be {{where: top|end, text: ...}}, got {value!r}")
    _words(value.get("text"), "the injected text")


def _check_placebo(value: Any, axis: Axis) -> None:
    op = value.get("op") if isinstance(value, dict) else None
    if op not in PLACEBO_OPS:
        raise ValueError(f"the level must be {{op: ...}} with op one of {list(PLACEBO_OPS)}, got {value!r}")
    glyph = value.get("glyph")
    if op == "bullet_glyph" and (not isinstance(glyph, str) or not glyph.strip() or tokens(glyph)):
        raise ValueError(f"bullet_glyph needs a `glyph` without letters or digits, got {value.get('glyph')!r}")
    if op == "replace_word":
        for key in ("section", "find", "replace"):
            _words(value.get(key), f"replace_word's {key!r}")


_EDITS: dict[str, tuple[Callable[[Layout, Any, Axis], Signal | None], Callable[[Any, Axis], None]]] = {
    "person_name": (_person_name, _check_person),
    "graduation_year": (_graduation_year, _check_year),
    "address": (_address, _check_text),
    "career_gap": (_career_gap, _check_gap),
    "employer_names": (_employer_names, _check_list),
    "employer_locations": (_employer_locations, _check_list),
    "school": (_school, _check_text),
    "anonymize": (_anonymize, _check_anonymize),
    "add_line": (_add_line, _check_add_line),
    "placebo": (_placebo, _check_placebo),
}
