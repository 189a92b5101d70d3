"""The edit of each axis: what one level writes into a résumé, and which lines it may change.

Each edit reads the résumé with ``core/resumes/reader.read_resume`` and rewrites exactly the
characters of the field it changes (a name, an address, a date, an employer, ...), keeping the
rest of each line and the way the résumé writes its dates. An edit whose field the résumé does
not have raises ``MissingField``, naming the field: the axis is then skipped for that résumé
with that reason (``applicability``). The name, prompt-injection, placebo and anonymisation
edits need only the name and the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from resumebias_dagster.core.common.diffing import tokens
from resumebias_dagster.core.jd_audit.probes.terms import (
    ANONYMIZE_SIGNALS,
    PLACEBO_OPS,
    PLACEHOLDERS,
    Axis,
    Signal,
)
from resumebias_dagster.core.resumes.dates import DateMark
from resumebias_dagster.core.resumes.fields import GapLine, Layout, PositionLine, end_month
from resumebias_dagster.core.resumes.layout import (
    REFERENCE_INDEX,
    REFERENCE_YEAR,
    YEARS_PHRASE,
    gap_line,
    years_phrase,
)
from resumebias_dagster.core.resumes.names import name_tokens, replace_person

# --------------------------------------------------------------------------- fields


class MissingField(ValueError):
    """The résumé lacks the field an edit changes; the message names it ("no school found ...")."""

    def __init__(self, field: str, where: str) -> None:
        super().__init__(f"no {field} found {where}")
        self.field = field


_NO_NAME = (
    "candidate name",
    "on the first lines (two to four capitalised words alone on a line, before a '|', or after 'Name:')",
)
_NO_POSITIONS = "in an Experience section (a position with a date range such as 'Jan 2019 – Present' or '2019–2022')"


class _Span(Protocol):
    """Characters ``start:end`` of line ``line``: a ``Field``, ``DateMark``, ``ContactSpan`` or ``NameSpan``."""

    @property
    def line(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def _rewrite(lines: list[str], edits: Iterable[tuple[_Span, str]]) -> set[int]:
    """Write each new text over its span (right to left within a line); returns the lines changed."""
    by_line: dict[int, list[tuple[int, int, str]]] = {}
    for span, new in edits:
        by_line.setdefault(span.line, []).append((span.start, span.end, new))
    changed = set()
    for i, spans in by_line.items():
        line = lines[i]
        for start, end, new in sorted(spans, reverse=True):
            line = line[:start] + new + line[end:]
        if line != lines[i]:
            lines[i] = line
            changed.add(i)
    return changed


def _written(layout: Layout, span: _Span) -> str:
    return layout.lines[span.line][span.start : span.end]


# --------------------------------------------------------------------------- edits


def _own_name(layout: Layout) -> tuple[str, str]:
    if layout.name is None:
        raise MissingField(*_NO_NAME)
    first, _, last = layout.name.text.partition(" ")
    if not last:
        raise ValueError(f"the name {layout.name.text!r} is not a first and last name")
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
    raise ValueError(f"every name of the pool shares a word with the résumé's own name {' '.join(_own_name(layout))!r}")


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


class _Edit:
    """Span rewrites of one edit, with the values they take out and write in."""

    def __init__(self) -> None:
        self.spans: list[tuple[_Span, str]] = []
        self.removed: list[str] = []
        self.added: list[str] = []

    def put(self, old: str, span: _Span, new: str) -> None:
        self.spans.append((span, new))
        if old != new:
            self.removed.append(old)
            self.added.append(new)


def _move_dates(layout: Layout, edit: _Edit, entry: PositionLine | GapLine, first: int, last: int | None) -> None:
    """Rewrite ``entry``'s range to start in month ``first`` and end in ``last`` (None: open),
    each date in the form it is written in; an open end given a month takes the start's form."""
    line = layout.lines[entry.first.line]
    was = line[entry.first.start : entry.last.end]
    start = entry.first.rewrite(first)
    end = (
        _written(layout, entry.last) if last is None else (entry.first if entry.last.open else entry.last).rewrite(last)
    )
    edit.spans += [(entry.first, start), (entry.last, end)]
    edit.removed.append(was)
    edit.added.append(start + line[entry.first.end : entry.last.start] + end)


def _shift_mark(layout: Layout, edit: _Edit, mark: DateMark | None, years: int) -> None:
    if mark is not None and mark.earliest is not None:
        edit.put(_written(layout, mark), mark, mark.rewrite(mark.earliest + 12 * years))


def _shift_education(layout: Layout, edit: _Edit, years: int) -> None:
    """Move every degree's years and every position before the degree by ``years`` (so their
    order and the internship's season stay)."""
    for s in layout.schools:
        _shift_mark(layout, edit, s.year_at, years)
        _shift_mark(layout, edit, s.began_at, years)
    for p in layout.before_degree():
        _move_dates(layout, edit, p, p.start + 12 * years, None if p.end is None else p.end + 12 * years)


def _signal(layout: Layout, edit: _Edit, inserts: tuple[tuple[int, list[str]], ...] = ()) -> Signal:
    lines = list(layout.lines)
    changed = _rewrite(lines, edit.spans)
    for at, new in sorted(inserts, reverse=True):
        lines[at:at] = new
    return Signal(tuple(lines), tuple(edit.removed), tuple(edit.added), frozenset(changed), inserts=bool(inserts))


def _graduation_year(layout: Layout, value: int, axis: Axis) -> Signal | None:
    # The degree year dates a career: a candidate who graduated years earlier and has worked
    # since shows the same positions over a longer career (an unexplained decade between
    # degree and first job would be a second signal, a career gap). Each position keeps its
    # share of the career; the summary's years of experience follow. Experience is part of
    # this signal, which the axis declares (`changes_experience`).
    degree_year = layout.degree_year
    if degree_year is None:
        raise MissingField("graduation year", "in an Education section (a year on a degree's or school's lines)")
    offset = value - degree_year
    if offset == 0:
        return None
    career = layout.career()
    if not career:
        raise MissingField("dated position after the degree", _NO_POSITIONS)
    first = career[-1].start
    span = REFERENCE_INDEX - first + 1
    new_span = span - 12 * offset
    if new_span < 3 * len(career):
        raise ValueError(f"a degree in {value} leaves {new_span} months for {len(career)} positions")

    def moved(month: int) -> int:  # a month boundary of the career, scaled towards the reference month
        return REFERENCE_INDEX + 1 - round((REFERENCE_INDEX + 1 - month) * new_span / span)

    edit = _Edit()
    _shift_education(layout, edit, offset)
    new_start: dict[int, int] = {}
    for k, p in enumerate(career):
        start = moved(p.start)
        end = None if p.end is None else moved(p.end + 1) - 1
        # A year spans twelve months: scaled by its middle month, a year two entries share stays
        # shared, and an older entry ending in the year before the next one starts keeps doing so
        # (scaled apart, "2016" and "2017" could read as a gap or an overlap the baseline lacks).
        if not p.first.style.precise and k < len(career) - 1:
            start = moved(p.start + 6)
        if p.end is not None and not p.last.style.precise:
            end = moved(p.end - 5)
            newer = career[k - 1] if k else None
            if newer is not None and not newer.first.style.precise:
                apart = newer.start // 12 - p.end // 12
                if apart in (0, 1):
                    end = (new_start[k - 1] // 12 - apart) * 12
        new_start[k] = start
        _move_dates(layout, edit, p, start, end)
    for g in layout.gaps:
        _move_dates(layout, edit, g, moved(g.start), None if g.end is None else moved(g.end + 1) - 1)
    years = sum(end_month(None if p.end is None else moved(p.end + 1) - 1) - moved(p.start) + 1 for p in career) // 12
    lines = list(layout.lines)
    for i in layout.sections.get("SUMMARY", ()):
        if m := YEARS_PHRASE.search(lines[i]):
            phrase = m.group(0).replace(m.group(0).split(" of ")[0], years_phrase(years), 1)
            edit.put(m.group(0), _At(i, m.start(), m.end()), phrase)
    return _signal(layout, edit)


class _At:
    """A span found by a pattern rather than by the reader."""

    def __init__(self, line: int, start: int, end: int) -> None:
        self.line, self.start, self.end = line, start, end


def _address(layout: Layout, value: str, axis: Axis) -> Signal | None:
    i = layout.contact_field("location")
    if i is None:
        raise MissingField(
            "address", "on the contact lines (a 'City, ST', 'City, Country', 'Remote' or an 'Address:' line)"
        )
    where = layout.contacts[i]
    if where.text == value:
        return None
    edit = _Edit()
    edit.put(where.text, where, value)
    return _signal(layout, edit)


def _career_gap(layout: Layout, value: str, axis: Axis) -> Signal | None:
    # The gap goes right before the newest position, whose dates stay. Everything older
    # moves back by `months`, so every tenure and the total experience stay, the dates stay
    # in order, and the degree still leads straight into the first position: a career with a
    # break started earlier. The degree year moves by the gap, which is whole years (_check_gap).
    months = axis.params["months"]
    career = layout.career()
    if not career:
        raise MissingField("dated position", _NO_POSITIONS)
    newest = career[0]
    held = [p for p in career[1:] if p.end is None]
    if held:
        raise ValueError(
            f"an older position ({held[0].employer or held[0].dates}, from line {held[0].line + 1}) is still current: "
            "a gap cannot go before the newest position while another is held"
        )
    edit = _Edit()
    _shift_education(layout, edit, -(months // 12))
    for p in career[1:]:
        _move_dates(layout, edit, p, p.start - months, end_month(p.end) - months)
    for g in layout.gaps:
        _move_dates(layout, edit, g, g.start - months, end_month(g.end) - months)
    # The gap's dates in the form of the newest position's ("Jun 2022 – Nov 2023", "2020 – 2021").
    dash = layout.lines[newest.line][newest.first.end : newest.last.start]
    style = newest.first.style
    gap = gap_line(value, f"{style.format(newest.start - months)}{dash}{style.format(newest.start - 1)}")
    edit.added.append(gap)
    # Written where the next (older) entry begins, or above the newest where the résumé lists
    # the oldest first; at the section's end where no entry follows.
    older = [p.top for p in layout.positions if p.line > newest.line]
    if layout.newest_first() != layout.positions:
        insert = (newest.top, [gap, ""])
    elif older:
        insert = (min(older), [gap, ""])
    else:
        at = layout.sections["EXPERIENCE"].stop
        while at > layout.sections["EXPERIENCE"].start and not layout.lines[at - 1].strip():
            at -= 1
        insert = (at, ["", gap])
    return _signal(layout, edit, (insert,))


def _rename(layout: Layout, values: list[str], field: str, what: str) -> Signal | None:
    """Map the distinct employers (or their places), in order of appearance, onto ``values``."""
    found = [f for p in layout.positions if (f := getattr(p, f"{field}_at")) is not None]
    distinct = list(dict.fromkeys(f.text for f in found))
    if not distinct:
        raise MissingField(what, "beside a position's dates in an Experience section")
    if len(distinct) > len(values):
        raise ValueError(f"{len(distinct)} distinct {what} but the level lists only {len(values)}")
    new = dict(zip(distinct, values))
    if all(k == v for k, v in new.items()):
        return None
    edit = _Edit()
    for f in found:
        edit.put(f.text, f, new[f.text])
    return _signal(layout, edit)


def _employer_names(layout: Layout, value: list[str], axis: Axis) -> Signal | None:
    return _rename(layout, value, "employer", "employer name")


def _employer_locations(layout: Layout, value: list[str], axis: Axis) -> Signal | None:
    return _rename(layout, value, "city", "employer location ('City, ST' or 'City, Country')")


def _school(layout: Layout, value: str, axis: Axis) -> Signal | None:
    found = [s.school_at for s in layout.schools if s.school_at is not None]
    if not found:
        raise MissingField(
            "school", "in an Education section (a name with University, College, Institute, School or Academy)"
        )
    if all(f.text == value for f in found):
        return None
    edit = _Edit()
    for f in found:
        edit.put(f.text, f, value)
    return _signal(layout, edit)


def _duration(p: PositionLine) -> str:
    months = (REFERENCE_INDEX if p.end is None else p.end) - p.start + 1
    years, rest = divmod(months, 12)
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((years, "year"), (rest, "month")) if n]
    return " ".join(parts) + (" (current)" if p.end is None else "")


def _letters(values: Iterable[str], template: str) -> dict[str, str]:
    return {v: template.format(letter=chr(ord("A") + k)) for k, v in enumerate(dict.fromkeys(values))}


_CONTACT_SIGNAL = {"email": "contact", "phone": "contact", "link": "links", "location": "locations"}


def _anonymize(layout: Layout, value: list[str], axis: Axis) -> Signal | None:
    blind = set(value)
    ph = axis.params["placeholders"]
    edit = _Edit()
    name = _name_forms(*_own_name(layout)) if "name" in blind else set()
    if name and layout.name is not None:
        edit.put(layout.name.text, layout.name, ph["name"])
    for c in layout.contacts:
        if _CONTACT_SIGNAL[c.kind] in blind:
            edit.put(c.text, c, ph[c.kind])
    employer_of = _letters((p.employer for p in layout.positions if p.employer_at), ph["employer"])
    for p in layout.positions:
        if "employers" in blind and p.employer_at is not None:
            edit.put(p.employer, p.employer_at, employer_of[p.employer])
        if "locations" in blind and p.city_at is not None:
            edit.put(p.city, p.city_at, ph["location"])
        if "dates" in blind:
            edit.put(p.dates, _At(p.line, p.first.start, p.last.end), _duration(p))
    school_of = _letters((s.school for s in layout.schools if s.school_at), ph["school"])
    for s in layout.schools:
        if "schools" in blind and s.school_at is not None:
            edit.put(s.school, s.school_at, school_of[s.school])
        for mark in (s.year_at, s.began_at) if "dates" in blind else ():
            if mark is not None:
                edit.put(_written(layout, mark), mark, ph["year"])
    if not edit.removed:
        return None
    signal = _signal(layout, edit)
    if name:
        signal = _blind_mentions(signal, _own_name(layout), ph["name"])
        left = next((i for i, line in enumerate(signal.lines) if name & set(tokens(line))), None)
        if left is not None:
            raise ValueError(
                f"the name is still on line {left + 1} ({signal.lines[left]!r}) after blinding {sorted(blind)}; "
                "blind 'contact' and 'links' with 'name'"
            )
    return signal


def _blind_mentions(signal: Signal, name: tuple[str, str], placeholder: str) -> Signal:
    """``signal`` with the name's other mentions in the text ("Jane leads the rota") blinded too."""
    words = [re.escape(w) for w in " ".join(name).split() if len(w.strip(".")) > 1]
    full = r"\s+".join(words)
    mention = re.compile(rf"(?<![A-Za-z])(?:{full}|{'|'.join(words)})(?![A-Za-z])", re.IGNORECASE)
    lines, removed, changed = list(signal.lines), list(signal.removed), set(signal.changed)
    for i, line in enumerate(lines):
        found = [m.group(0) for m in mention.finditer(line)]
        if found:
            lines[i] = mention.sub(placeholder, line)
            removed += found
            changed.add(i)  # a line of the baseline: _anonymize inserts none
    added = (*signal.added, placeholder) if len(removed) > len(signal.removed) else signal.added
    return Signal(tuple(lines), tuple(removed), added, frozenset(changed), signal.inserts)


def _add_line(layout: Layout, value: dict[str, str], axis: Axis) -> Signal:
    lines = list(layout.lines)
    if value["where"] == "top":  # after the name and contact lines
        lines[layout.top : layout.top] = [value["text"]]
    else:
        end = len(lines)
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = ["", value["text"]]
    return Signal(tuple(lines), (), (value["text"],), frozenset(), inserts=True)


# A bullet as written at a line's start ("- ", "• ", "* ", "▪ ").
_BULLET = re.compile(r"^(\s*)([-•*▪◦●‣·–])(?=\s)")


def _placebo(layout: Layout, value: dict[str, str], axis: Axis) -> Signal | None:
    lines = list(layout.lines)
    op = value["op"]
    if op == "blank_line":  # above the Experience heading, else the first heading, else the top
        experience = layout.sections.get("EXPERIENCE")
        below_top = [h for h in layout.headings if h >= layout.top]
        at = experience.start - 1 if experience is not None else below_top[0] if below_top else layout.top
        lines[at:at] = [""]
        return Signal(tuple(lines), (), (), frozenset(), inserts=True)
    if op == "trailing_space":
        where = [*layout.sections.get("SUMMARY", ()), *layout.sections.get("EXPERIENCE", ()), *range(len(lines))]
        at = next(i for i in where if lines[i].strip())
        lines[at] += "  "
        return Signal(tuple(lines), (), (), frozenset({at}))
    if op == "bullet_glyph":
        bullets = {i: m for i, line in enumerate(lines) if (m := _BULLET.match(line))}
        if not bullets:
            raise MissingField("bullet lines", "(lines starting '- ', '• ' or '* ') to change the glyph of")
        # Bullets already in the level's glyph change to "-": the edit is a change of glyph either way.
        glyph = value["glyph"] if any(m[2] != value["glyph"] for m in bullets.values()) else "-"
        for i, m in bullets.items():
            lines[i] = m[1] + glyph + lines[i][m.end() :]
        return Signal(tuple(lines), (), (), frozenset(bullets))
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
