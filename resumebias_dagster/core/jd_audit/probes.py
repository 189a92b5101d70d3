"""Single-signal variants of a résumé for the job-description audit (seed 003).

Every variant differs from its baseline in exactly one signal: a name, a country, a school,
the employers, a gap, a hidden instruction, or (placebo arm) an edit that cannot matter.
Axes and levels are data (``catalog/probe_axes.yaml``, where the edits are described);
this module parses the résumé layout of ``core/seniority/generation.py`` and applies the edits.

A variant is named ``<axis>_<level>`` (``addressCountry_brazil``, ``anonymize_all``);
axis ids have no underscore, so the axis is always the text before the first underscore.
The baseline row of each résumé is named ``baseline`` (arm and axis ``baseline`` too) and
is the base text plus the catalog's INTERESTS line, identical in every variant.

``check_probe_variants`` re-derives what each variant may change (the old and new values
of its signal, and the baseline lines that hold them) and diffs the texts token by token
and line by line (``verify_single_signal``): anything else that changed is reported.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.common.diffing import tokens, unexplained_changes
from resumebias_dagster.core.seniority.names import name_tokens, replace_person
from resumebias_dagster.core.seniority.resume_text import (
    MONTHS,
    REFERENCE_MONTH,
    REFERENCE_YEAR,
    SECTION_HEADERS,
    years_phrase,
)

AXES_FILE = "probe_axes.yaml"
# fit_effects gives these arms meaning: placebo sets the noise floor, probe the bias index.
ARMS = ("probe", "anonymize", "prompt_injection", "placebo")
BASELINE = "baseline"
INTERESTS = "INTERESTS"
VARIANT_COLUMNS = ["resume_id", "variant", "arm", "axis", "level", "text"]
PROBLEM_COLUMNS = ["resume_id", "variant", "problem"]
ANONYMIZE_SIGNALS = ("name", "contact", "links", "employers", "schools", "locations", "dates")
PLACEHOLDERS = ("name", "email", "phone", "link", "location", "employer", "school", "year")
PLACEBO_OPS = ("blank_line", "trailing_space", "bullet_glyph", "replace_word")

CatalogDir = str | os.PathLike | None

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


# --------------------------------------------------------------------------- axes


@dataclass(frozen=True)
class Axis:
    id: str
    arm: str
    label: str
    edit: str
    levels: dict[str, Any]  # level slug -> value, in file order
    params: dict[str, Any]  # the axis' other keys (months, placeholders)


@dataclass(frozen=True)
class ProbeAxes:
    interests: str  # appended to every résumé of the arm; "" for none
    axes: tuple[Axis, ...]

    def arms(self) -> dict[str, str]:
        return {a.id: a.arm for a in self.axes}

    def select(self, ids: Iterable[str]) -> ProbeAxes:
        ids = list(ids)
        unknown = sorted(set(ids) - {a.id for a in self.axes})
        if unknown:
            raise ValueError(f"unknown probe axes {unknown}; known: {[a.id for a in self.axes]}")
        return ProbeAxes(self.interests, tuple(a for a in self.axes if a.id in ids))


@dataclass(frozen=True)
class Signal:
    """One applied level: the variant's lines and what it was allowed to change."""

    lines: tuple[str, ...]
    removed: tuple[str, ...]  # values taken out of the baseline
    added: tuple[str, ...]  # values written in
    changed: frozenset[int]  # baseline lines that hold the signal
    inserts: bool = False  # whether lines may be added

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _words(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or "|" in value or "\n" in value:
        raise ValueError(f"{what} must be a non-empty one-line string without '|', got {value!r}")
    return value


def _check_person(value: Any, axis: Axis) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Z][A-Za-z'-]* [A-Z][A-Za-z' -]*", value):
        raise ValueError(f"a name level must be 'First Last' in capitalised words, got {value!r}")


def _check_year(value: Any, axis: Axis) -> None:
    if not isinstance(value, int) or not 1900 <= value <= REFERENCE_YEAR:
        raise ValueError(f"a graduation year level must be a year up to {REFERENCE_YEAR}, got {value!r}")


def _check_text(value: Any, axis: Axis) -> None:
    _words(value, "the level")


def _check_gap(value: Any, axis: Axis) -> None:
    _words(value, "the gap label")
    months = axis.params.get("months")
    if not isinstance(months, int) or months < 1:
        raise ValueError(f"the axis needs `months`, a positive whole number of months, got {months!r}")


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


def _load_axis(axis_id: Any, spec: Any) -> Axis:
    if not isinstance(axis_id, str) or not _AXIS_ID.fullmatch(axis_id) or axis_id == BASELINE:
        raise ValueError(
            f"axis id {axis_id!r} must be camelCase letters and digits (no underscore: the variant name "
            "'<axis>_<level>' is split at its first underscore) and not 'baseline'"
        )
    if not isinstance(spec, dict):
        raise ValueError("must be a mapping with arm, edit and levels")
    if spec.get("arm") not in ARMS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {spec.get('arm')!r}")
    if spec.get("edit") not in _EDITS:
        raise ValueError(f"edit must be one of {sorted(_EDITS)}, got {spec.get('edit')!r}")
    levels = spec.get("levels")
    if not isinstance(levels, dict) or not levels:
        raise ValueError("needs a non-empty mapping `levels`")
    params = {k: v for k, v in spec.items() if k not in ("arm", "label", "edit", "levels")}
    axis = Axis(axis_id, spec["arm"], str(spec.get("label") or axis_id), spec["edit"], {}, params)
    check = _EDITS[spec["edit"]][1]
    for key, value in levels.items():
        level = str(key)
        if not _LEVEL_ID.fullmatch(level):
            raise ValueError(f"level {level!r} must use lower-case letters, digits and underscores")
        try:
            check(value, axis)
        except ValueError as exc:
            raise ValueError(f"level {level!r}: {exc}") from exc
        axis.levels[level] = value
    if "groups" in params:
        params["groups"] = _check_groups(params["groups"], axis)
    return axis


# Perceived sex of a name level; None: the name gives none (left out of the sex tables).
GROUP_SEXES = ("male", "female", None)


def _check_groups(groups: Any, axis: Axis) -> dict[str, dict[str, str | None]]:
    """``groups``: level -> {sex, race_ethnicity}, the perceived group of each name level
    (the impact-ratio tables, core/fairness/impact.py); every level once, nothing else."""
    if axis.edit != "person_name":
        raise ValueError("`groups` declares the perceived group of names: only a person_name axis has one")
    if not isinstance(groups, dict):
        raise ValueError(f"`groups` must map each level to {{sex, race_ethnicity}}, got {groups!r}")
    keys = {str(k) for k in groups}
    if keys != set(axis.levels):
        missing, extra = sorted(set(axis.levels) - keys), sorted(keys - set(axis.levels))
        raise ValueError(f"`groups` must list every level once: missing {missing}, not a level {extra}")
    out = {}
    for key, group in groups.items():
        level = str(key)
        if not isinstance(group, dict) or set(group) != {"sex", "race_ethnicity"}:
            raise ValueError(f"groups.{level} must be {{sex: ..., race_ethnicity: ...}}, got {group!r}")
        if group["sex"] not in GROUP_SEXES:
            raise ValueError(f"groups.{level}.sex must be male, female or null (no perceived sex), got {group['sex']!r}")
        race = group["race_ethnicity"]
        if race is not None and (not isinstance(race, str) or not _LEVEL_ID.fullmatch(race)):
            raise ValueError(
                f"groups.{level}.race_ethnicity must be null or lower-case letters, digits and underscores, got {race!r}"
            )
        out[level] = {"sex": group["sex"], "race_ethnicity": race}
    return out


def load_probe_axes(catalog_dir: CatalogDir = None) -> ProbeAxes:
    """The axes of ``probe_axes.yaml`` (a user catalog folder's copy first), validated."""
    data = load_yaml(AXES_FILE, catalog_dir)
    if not isinstance(data, dict) or not isinstance(data.get("axes"), dict) or not data["axes"]:
        raise CatalogError(f"{AXES_FILE}: needs a non-empty mapping `axes`")
    interests = (data.get("baseline") or {}).get("interests") or ""
    if interests:
        try:
            _words(interests, "baseline.interests")
        except ValueError as exc:
            raise CatalogError(f"{AXES_FILE}: {exc}") from exc
    axes = []
    for axis_id, spec in data["axes"].items():
        try:
            axes.append(_load_axis(axis_id, spec))
        except ValueError as exc:
            raise CatalogError(f"{AXES_FILE}: axis {axis_id!r}: {exc}") from exc
    return ProbeAxes(interests, tuple(axes))


def axis_arms(catalog_dir: CatalogDir = None) -> dict[str, str]:
    """Axis id -> arm, from the catalog."""
    return load_probe_axes(catalog_dir).arms()


# --------------------------------------------------------------------------- edits


def _person_name(layout: _Layout, value: str, axis: Axis) -> Signal:
    old_first, _, old_last = layout.lines[0].strip().partition(" ")
    if not old_last:
        raise ValueError(f"the first line {layout.lines[0]!r} is not a first and last name")
    new_first, _, new_last = value.partition(" ")
    text = replace_person("\n".join(layout.lines), old_first, old_last, new_first, new_last)
    old = _name_forms(old_first, old_last)
    changed = frozenset(i for i, line in enumerate(layout.lines) if old & set(tokens(line)))
    return Signal(tuple(text.split("\n")), tuple(sorted(old)), tuple(sorted(_name_forms(new_first, new_last))), changed)


def _name_forms(first: str, last: str) -> set[str]:
    """Tokens of a name in every form an e-mail or slug writes it; a hyphenated last name
    glued to the first name ("mohammedal-said") tokenises differently from the words."""
    return name_tokens(first, last) | set(tokens(first + last)) | set(tokens(last + first))


def _shift_education(layout: _Layout, lines: list[str], years: int) -> tuple[list[str], list[str], set[int]]:
    """Move every degree year and every position before the degree by ``years`` (so their
    order and the internship's season stay); returns the removed and added values and lines."""
    removed, added, changed = [], [], set()
    for s in layout.schools:
        lines[s.line] = f"{s.school} | {s.year + years}"
        removed.append(str(s.year))
        added.append(str(s.year + years))
        changed.add(s.line)
    for p in layout.before_degree():
        moved = _Position(p.line, p.employer, p.city, p.start + 12 * years, None if p.end is None else p.end + 12 * years)
        lines[p.line] = _employer_line(p.employer, p.city, _dates(moved))
        removed.append(_dates(p))
        added.append(_dates(moved))
        changed.add(p.line)
    return removed, added, changed


def _graduation_year(layout: _Layout, value: int, axis: Axis) -> Signal | None:
    # The degree year dates a career: a candidate who graduated years earlier and has worked
    # since shows the same positions over a longer career (an unexplained decade between
    # degree and first job would be a second signal, a career gap). Each position keeps its
    # share of the career; the summary's years of experience follow. Experience is part of
    # this signal, which the axis declares (`changes_experience`).
    if not layout.schools:
        raise ValueError("EDUCATION has no 'School | year' line")
    offset = value - layout.degree_year
    if offset == 0:
        return None
    career = layout.career()
    if not career:
        raise ValueError("EXPERIENCE has no position after the degree to date the career by")
    first = career[-1].start
    span = _NOW - first + 1
    new_span = span - 12 * offset
    if new_span < 3 * len(career):
        raise ValueError(f"a degree in {value} leaves {new_span} months for {len(career)} positions")

    def moved(month: int) -> int:  # a month boundary of the career, scaled towards the reference month
        return _NOW + 1 - round((_NOW + 1 - month) * new_span / span)

    lines = list(layout.lines)
    removed, added, changed = _shift_education(layout, lines, offset)
    for p in career:
        new = _Position(p.line, p.employer, p.city, moved(p.start), None if p.end is None else moved(p.end + 1) - 1)
        lines[p.line] = _employer_line(p.employer, p.city, _dates(new))
        removed.append(_dates(p))
        added.append(_dates(new))
        changed.add(p.line)
    for g in layout.gaps:
        new_gap = f"{g.label} | {_label(moved(g.start))} – {_label(None if g.end is None else moved(g.end + 1) - 1)}"
        removed.append(lines[g.line])
        added.append(new_gap)
        lines[g.line] = new_gap
        changed.add(g.line)
    years = sum(_end(None if p.end is None else moved(p.end + 1) - 1) - moved(p.start) + 1 for p in career) // 12
    for i in layout.sections.get("SUMMARY", ()):
        if m := _YEARS_PHRASE.search(lines[i]):
            phrase = m.group(0).replace(m.group(0).split(" of ")[0], years_phrase(years), 1)
            removed.append(m.group(0))
            added.append(phrase)
            lines[i] = lines[i][: m.start()] + phrase + lines[i][m.end():]
            changed.add(i)
    return Signal(tuple(lines), tuple(removed), tuple(added), frozenset(changed))


def _address(layout: _Layout, value: str, axis: Axis) -> Signal | None:
    i = layout.contact_field("location")
    if i is None:
        raise ValueError(f"the contact line {layout.lines[1]!r} has no location")
    if layout.contact[i] == value:
        return None
    contact = list(layout.contact)
    contact[i] = value
    lines = list(layout.lines)
    lines[1] = " | ".join(contact)
    return Signal(tuple(lines), (layout.contact[i],), (value,), frozenset({1}))


def _career_gap(layout: _Layout, value: str, axis: Axis) -> Signal | None:
    # The gap goes right before the newest position, whose dates stay. Everything older
    # moves back by `months`, so every tenure and the total experience stay, the dates stay
    # in order, and the degree still leads straight into the first position: a career with a
    # break started earlier. The degree year moves by the gap in whole years (rounded).
    months = axis.params["months"]
    career = layout.career()
    if not career:
        raise ValueError("EXPERIENCE has no position after the degree to put a gap before")
    newest = career[0]
    lines = list(layout.lines)
    removed, added, changed = _shift_education(layout, lines, -round(months / 12))
    for p in career[1:]:
        new = _Position(p.line, p.employer, p.city, p.start - months, p.end - months)
        lines[p.line] = _employer_line(p.employer, p.city, _dates(new))
        removed.append(_dates(p))
        added.append(_dates(new))
        changed.add(p.line)
    for g in layout.gaps:
        new_gap = f"{g.label} | {_label(g.start - months)} – {_label(_end(g.end) - months)}"
        removed.append(lines[g.line])
        added.append(new_gap)
        lines[g.line] = new_gap
        changed.add(g.line)
    gap = f"{value} | {_label(newest.start - months)} – {_label(newest.start - 1)}"
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


def _rename(layout: _Layout, values: list[str], field: str) -> Signal | None:
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
        lines[p.line] = _employer_line(employer, city, _dates(p))
    return Signal(tuple(lines), tuple(distinct), tuple(new.values()), frozenset(p.line for p in layout.positions))


def _employer_names(layout: _Layout, value: list[str], axis: Axis) -> Signal | None:
    return _rename(layout, value, "employer")


def _employer_locations(layout: _Layout, value: list[str], axis: Axis) -> Signal | None:
    return _rename(layout, value, "city")


def _school(layout: _Layout, value: str, axis: Axis) -> Signal | None:
    if not layout.schools:
        raise ValueError("EDUCATION has no 'School | year' line")
    if all(s.school == value for s in layout.schools):
        return None
    lines = list(layout.lines)
    for s in layout.schools:
        lines[s.line] = f"{value} | {s.year}"
    return Signal(
        tuple(lines), tuple(s.school for s in layout.schools), (value,), frozenset(s.line for s in layout.schools)
    )


def _duration(p: _Position) -> str:
    months = (_NOW if p.end is None else p.end) - p.start + 1
    years, rest = divmod(months, 12)
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((years, "year"), (rest, "month")) if n]
    return " ".join(parts) + (" (current)" if p.end is None else "")


def _letters(values: Iterable[str], template: str) -> dict[str, str]:
    return {v: template.format(letter=chr(ord("A") + k)) for k, v in enumerate(dict.fromkeys(values))}


def _anonymize(layout: _Layout, value: list[str], axis: Axis) -> Signal | None:
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
    contact = [ph[_field_kind(f)] if signal_of[_field_kind(f)] in blind else f for f in layout.contact]
    for old, new in zip(layout.contact, contact):
        put(1, old, new, " | ".join(contact))
    employer_of = _letters((p.employer for p in layout.positions), ph["employer"])
    for p in layout.positions:
        employer = employer_of[p.employer] if "employers" in blind else p.employer
        city = ph["location"] if "locations" in blind else p.city
        dates = _duration(p) if "dates" in blind else _dates(p)
        for old, new in ((p.employer, employer), (p.city, city), (_dates(p), dates)):
            put(p.line, old, new, _employer_line(employer, city, dates))
    school_of = _letters((s.school for s in layout.schools), ph["school"])
    for s in layout.schools:
        school = school_of[s.school] if "schools" in blind else s.school
        year = ph["year"] if "dates" in blind else str(s.year)
        for old, new in ((s.school, school), (str(s.year), year)):
            put(s.line, old, new, f"{school} | {year}")
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


def _add_line(layout: _Layout, value: dict[str, str], axis: Axis) -> Signal:
    lines = list(layout.lines)
    if value["where"] == "top":
        lines[2:2] = [value["text"]]
    else:
        end = len(lines)
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        lines[end:end] = ["", value["text"]]
    return Signal(tuple(lines), (), (value["text"],), frozenset(), inserts=True)


def _placebo(layout: _Layout, value: dict[str, str], axis: Axis) -> Signal | None:
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
        at = [i for i, line in enumerate(lines) if line.startswith("- ")]
        for i in at:
            lines[i] = f"{value['glyph']} {lines[i][2:]}"
        return Signal(tuple(lines), (), (), frozenset(at)) if at else None
    word = re.compile(rf"(?<![A-Za-z0-9]){re.escape(value['find'])}(?![A-Za-z0-9])")
    at = [i for i in layout.sections.get(value["section"], ()) if word.search(lines[i])]
    for i in at:
        lines[i] = word.sub(value["replace"], lines[i])
    return Signal(tuple(lines), (value["find"],), (value["replace"],), frozenset(at)) if at else None


# edit name -> (apply to a parsed baseline, validate a level value)
_EDITS: dict[str, tuple[Callable[[_Layout, Any, Axis], Signal | None], Callable[[Any, Axis], None]]] = {
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


# --------------------------------------------------------------------------- public


def with_baseline_additions(text: str, interests: str) -> str:
    """The arm's baseline: ``text`` plus an INTERESTS section when ``interests`` is set."""
    if not interests:
        return text
    return f"{text.rstrip()}\n\n{INTERESTS}\n{interests}\n"


def _spec(axes: ProbeAxes | Iterable[str] | None, catalog_dir: CatalogDir) -> ProbeAxes:
    if isinstance(axes, ProbeAxes):
        return axes
    spec = load_probe_axes(catalog_dir)
    if isinstance(axes, str):
        axes = [axes]
    return spec if axes is None else spec.select(axes)


def _signal(axis: Axis, level: str, layout: _Layout, resume_id: Any) -> Signal | None:
    try:
        signal = _EDITS[axis.edit][0](layout, axis.levels[level], axis)
    except ValueError as exc:
        raise ValueError(f"probe variant {axis.id}_{level} of résumé {resume_id}: {exc}") from exc
    if signal is not None and signal.lines == layout.lines:
        return None
    return signal


# The default arm of the audit (the ``probe_variants`` asset's config): one mid-level
# software engineer, whom the 17 software job descriptions fit.
DEFAULT_ARM = {"occupation": "software_engineer", "levels": ("mid",), "per_level": 1}


def select_probe_resumes(base: pd.DataFrame, occupation: str = DEFAULT_ARM["occupation"],
                         levels: Iterable[str] = DEFAULT_ARM["levels"], per_level: int = DEFAULT_ARM["per_level"]
                         ) -> pd.DataFrame:
    """The base résumés of the arm: the first ``per_level`` of ``occupation`` at each of ``levels``."""
    chosen = base[base["occupation"] == occupation]
    return chosen[chosen["seniority"].isin(list(levels))].groupby("seniority", sort=False).head(per_level)


def probe_variants(
    base: pd.DataFrame, axes: ProbeAxes | Iterable[str] | None = None, catalog_dir: CatalogDir = None
) -> pd.DataFrame:
    """The baseline and one variant per (axis, level) of every résumé of ``base``.

    ``base`` needs ``resume_id`` and ``text`` in the layout of ``generate_resumes``.
    ``axes``: None for every catalog axis, a list of axis ids for some, or a loaded
    ``ProbeAxes``. Columns ``resume_id, variant, arm, axis, level, text``; the baseline row
    has variant, arm and axis ``baseline`` and an empty level. A level that would leave a
    résumé unchanged is left out for that résumé.
    """
    missing = {"resume_id", "text"} - set(base.columns)
    if missing:
        raise ValueError(f"probe_variants: base lacks columns {sorted(missing)}")
    spec = _spec(axes, catalog_dir)
    rows = []
    for resume_id, text in zip(base["resume_id"], base["text"]):
        baseline = with_baseline_additions(text, spec.interests)
        try:
            layout = _parse(baseline)
        except ValueError as exc:
            raise ValueError(f"probe_variants: résumé {resume_id}: {exc}") from exc
        rows.append((resume_id, BASELINE, BASELINE, BASELINE, "", baseline))
        for axis in spec.axes:
            for level in axis.levels:
                signal = _signal(axis, level, layout, resume_id)
                if signal is None:
                    # A missing level would silently drop an axis from the arm's statistics.
                    raise ValueError(
                        f"probe_variants: axis {axis.id!r} level {level!r} leaves résumé {resume_id} unchanged "
                        "(it already has that value, or lacks what the edit changes); probe another résumé "
                        f"or remove the level from {AXES_FILE}"
                    )
                rows.append((resume_id, f"{axis.id}_{level}", axis.arm, axis.id, level, signal.text))
    return pd.DataFrame(rows, columns=VARIANT_COLUMNS)


def verify_single_signal(
    baseline_text: str,
    variant_text: str,
    allowed_tokens_removed: Collection[str],
    allowed_tokens_added: Collection[str],
    *,
    changeable_lines: Collection[int] | None = None,
    may_insert: bool = True,
) -> list[str]:
    """Problems with a variant that should change one signal (empty list: none).

    Tokens (``core.common.diffing``) removed or added outside the allowed sets are reported; with
    ``changeable_lines`` (0-based baseline line numbers) so is any other baseline line that
    changed, and with ``may_insert=False`` any added line. An unchanged variant is a problem.
    """
    if variant_text == baseline_text:
        return ["the variant is identical to the baseline"]
    problems = []
    allowed_removed = {t for v in allowed_tokens_removed for t in tokens(v)}
    allowed_added = {t for v in allowed_tokens_added for t in tokens(v)}
    stray = unexplained_changes(baseline_text, variant_text, allowed_removed, allowed_added)
    if stray:
        problems.append(f"tokens changed outside the signal: {sorted(set(stray))[:10]}")
    if changeable_lines is None and may_insert:
        return problems
    a, b = baseline_text.split("\n"), variant_text.split("\n")
    allowed_lines = None if changeable_lines is None else set(changeable_lines)
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if allowed_lines is not None:
            problems += [
                f"line {i + 1} changed outside the signal: {a[i]!r}" for i in range(a0, a1) if i not in allowed_lines
            ]
        if b1 - b0 > a1 - a0 and not may_insert:
            problems.append(f"lines added: {b[b0 + (a1 - a0) : b1]!r}")
    return problems


def check_probe_variants(
    variants: pd.DataFrame, axes: ProbeAxes | Iterable[str] | None = None, catalog_dir: CatalogDir = None
) -> pd.DataFrame:
    """One row per problem found in ``probe_variants`` output (empty frame: every variant is clean).

    For each variant the allowed change is re-derived from its baseline row and its axis
    level (old and new values of the signal, the lines holding them) and the texts are
    diffed with ``verify_single_signal``. Columns ``resume_id, variant, problem``.
    """
    missing = set(VARIANT_COLUMNS) - set(variants.columns)
    if missing:
        raise ValueError(f"check_probe_variants: variants lack columns {sorted(missing)}")
    spec = _spec(axes, catalog_dir)
    by_id = {a.id: a for a in spec.axes}
    problems = []
    for resume_id, rows in variants.groupby("resume_id", sort=False):
        baselines = rows.loc[rows["variant"] == BASELINE, "text"]
        if len(baselines) != 1:
            problems.append((resume_id, BASELINE, f"{len(baselines)} baseline rows; expected exactly one"))
            continue
        baseline = baselines.iloc[0]
        layout = _parse(baseline)
        base_timeline = set(timeline_problems(baseline))
        configured = {f"{a.id}_{level}" for a in spec.axes for level in a.levels}
        present = set(rows["variant"]) - {BASELINE}
        problems += [
            (resume_id, variant, "configured in the probe axes but missing for this résumé")
            for variant in sorted(configured - present)
        ]
        others = rows.loc[rows["variant"] != BASELINE, ["variant", "axis", "level", "text"]]
        for variant, axis_id, level, text in others.itertuples(index=False):
            axis = by_id.get(axis_id)
            if axis is None or level not in axis.levels or variant != f"{axis_id}_{level}":
                problems.append((resume_id, variant, f"no level {level!r} of axis {axis_id!r} in the probe axes"))
                continue
            signal = _signal(axis, level, layout, resume_id)
            if signal is None:
                problems.append((resume_id, variant, "this level does not apply to the résumé, yet a variant exists"))
                continue
            for problem in verify_single_signal(
                baseline, text, signal.removed, signal.added, changeable_lines=signal.changed, may_insert=signal.inserts
            ):
                problems.append((resume_id, variant, problem))
            problems += [(resume_id, variant, p) for p in _consistency_problems(layout, base_timeline, text, axis)]
    return pd.DataFrame(problems, columns=PROBLEM_COLUMNS)


def _consistency_problems(layout: _Layout, base_timeline: set[str], text: str, axis: Axis) -> list[str]:
    """Timeline problems the variant adds to its baseline's, and a change of total experience
    by an axis that does not declare experience part of its signal."""
    try:
        found = [f"timeline: {p}" for p in timeline_problems(text) if p not in base_timeline]
        variant = _parse(text)
    except ValueError as exc:
        return [f"not in the résumé layout any more: {exc}"]
    # A variant without dated positions (the anonymisation of dates) has no timeline to compare.
    if variant.career() and not axis.params.get("changes_experience"):
        before, after = layout.experience_months(), variant.experience_months()
        if before != after:
            found.append(f"total experience changed from {before} to {after} months")
    return found
