"""The twins' edits: one job-relevant change whose direction the job description's requirements
give (a skill, years in the current role, a degree level, a certification), or one that must not matter (two
skills of equal weight swapped; the placebo edits are the probe catalog's).

Each edit reads the résumé with ``core/resumes/reader.read_resume`` and returns a probe
``Signal`` (the twin's lines, the values taken out and written in, the lines that may change),
so the twin goes through the probes' one-signal check. An edit the résumé cannot take, or for
which the job description gives no direction, raises ``NotApplicable`` with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from resumebias_dagster.core.jd_audit.job_descriptions import DEGREES, JobRequirements
from resumebias_dagster.core.jd_audit.probes.edits import (
    _NO_POSITIONS,
    MissingField,
    _At,
    _Edit,
    _move_dates,
    _shift_education,
    _signal,
)
from resumebias_dagster.core.jd_audit.probes.terms import Signal
from resumebias_dagster.core.resumes.fields import Layout, end_month
from resumebias_dagster.core.resumes.layout import YEARS_PHRASE, years_phrase
from resumebias_dagster.core.resumes.sections import heading_words, section_of

# Years a years twin adds to or takes from the current role: whole years, because degree dates
# are years and the degree moves with the rest of the history (as in the career-gap probe).
YEARS_STEP = 2
# The least a current role may keep after a worse twin takes years from it.
MIN_ROLE_MONTHS = 6


class NotApplicable(ValueError):
    """The résumé cannot take the edit, or the job description gives it no direction; the message says why."""


@dataclass(frozen=True)
class Twin:
    signal: Signal
    detail: str  # what changed, in words ("adds Service design (required)")


# --------------------------------------------------------------------------- skills


@dataclass(frozen=True)
class SkillEntry:
    """One entry of the skills section: characters ``start:end`` of line ``line``."""

    line: int
    start: int
    end: int
    text: str


_LABEL = re.compile(r"^\s*(?:[-•*▪◦●]\s+)?(?:[A-Z][A-Za-z &/-]{0,30}:\s*)?")
_ENTRY = re.compile(r"[^,;|•·]+")
_NO_SKILLS = "in a skills section (a SKILLS, Technical Skills or Competencies heading with its entries)"


def skill_entries(layout: Layout) -> list[SkillEntry]:
    """The entries of the skills section, separated by commas, semicolons, bars or bullets."""
    rows = layout.sections.get("SKILLS")
    found = []
    for i in rows or ():
        line = layout.lines[i]
        at = _LABEL.match(line).end()  # type: ignore[union-attr]  # the pattern matches every line
        for m in _ENTRY.finditer(line, at):
            text = m.group(0).strip().rstrip(".")
            if text:
                start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
                found.append(SkillEntry(i, start, start + len(text), text))
    if not found:
        raise MissingField("skills", _NO_SKILLS)
    return found


def _pattern(skill: str) -> re.Pattern[str]:
    # Short skills (Go, C, Git, SQL) are matched as written: "go" and "c" are ordinary words too.
    flags = 0 if len(skill) <= 3 else re.IGNORECASE
    return re.compile(rf"(?<![A-Za-z0-9+#]){re.escape(skill)}(?![A-Za-z0-9+#])", flags)


def mentions(skill: str, text: str) -> int:
    """How many times ``text`` names ``skill``."""
    return len(_pattern(skill).findall(text))


def _requirements(req: JobRequirements) -> list[tuple[tuple[str, ...], str]]:
    return [(r, "required") for r in req.required_skills] + [(r, "preferred") for r in req.preferred_skills]


def _which(alternatives: tuple[str, ...], weight: str) -> str:
    return weight if len(alternatives) == 1 else f"{weight}: one of {', '.join(alternatives)}"


def _written(skill: str) -> str:
    return skill[0].upper() + skill[1:] if skill[0].islower() else skill


def add_skill(layout: Layout, req: JobRequirements) -> Twin:
    """Better: a required skill (else a preferred one) of a requirement the résumé does not meet
    (it names none of its alternatives anywhere), added as the skills section's last entry."""
    if not _requirements(req):
        raise NotApplicable("the job description states no required or preferred skills")
    entries = skill_entries(layout)
    text = "\n".join(layout.lines)
    for alternatives, weight in _requirements(req):
        if not any(mentions(s, text) for s in alternatives):
            last = entries[-1]
            skill = _written(alternatives[0])
            lines = list(layout.lines)
            lines[last.line] = lines[last.line][: last.end] + ", " + skill + lines[last.line][last.end :]
            signal = Signal(tuple(lines), (), (skill,), frozenset({last.line}))
            return Twin(signal, f"adds {skill} ({_which(alternatives, weight)})")
    raise NotApplicable("the résumé already names a skill of every required and preferred skill of the job description")


def remove_skill(layout: Layout, req: JobRequirements) -> Twin:
    """Worse: the one skill meeting a required (else preferred) requirement, taken out of the
    skills section, where that entry is the only place the résumé names it (so the twin no longer
    has the skill, and meets the requirement no other way)."""
    if not _requirements(req):
        raise NotApplicable("the job description states no required or preferred skills")
    entries = skill_entries(layout)
    text = "\n".join(layout.lines)
    for alternatives, weight in _requirements(req):
        named = [s for s in alternatives if mentions(s, text)]
        if len(named) != 1 or mentions(named[0], text) != 1:
            continue
        k = next(
            (k for k, e in enumerate(entries) if mentions(named[0], e.text) and e.text.lower() == named[0].lower()),
            None,
        )
        if k is None:
            continue
        entry = entries[k]
        same_line = [e for e in entries if e.line == entry.line]
        if len(same_line) == 1:
            continue  # the entry alone on its line: taking it out would leave an empty line
        position = same_line.index(entry)
        lines = list(layout.lines)
        line = lines[entry.line]
        if position + 1 < len(same_line):  # the entry and the separator after it
            cut = (entry.start, same_line[position + 1].start)
        else:  # the last entry: the separator before it
            cut = (same_line[position - 1].end, entry.end)
        lines[entry.line] = line[: cut[0]] + line[cut[1] :]
        signal = Signal(tuple(lines), (entry.text,), (), frozenset({entry.line}))
        return Twin(signal, f"removes {entry.text} ({_which(alternatives, weight)})")
    raise NotApplicable(
        "no requirement is met by one skill named only once, as an entry of the skills section "
        "(removing it would leave the skill, or another of the requirement, in the résumé)"
    )


def reorder_skills(layout: Layout, req: JobRequirements) -> Twin:
    """Equal: the first two neighbouring skills of one line with the same weight (both required,
    both preferred or both neither) swapped."""
    entries = skill_entries(layout)
    weight = {s.lower(): w for alternatives, w in _requirements(req) for s in alternatives}
    for a, b in zip(entries, entries[1:]):
        if a.line == b.line and a.text != b.text and weight.get(a.text.lower()) == weight.get(b.text.lower()):
            lines = list(layout.lines)
            line = lines[a.line]
            lines[a.line] = line[: a.start] + b.text + line[a.end : b.start] + a.text + line[b.end :]
            signal = Signal(tuple(lines), (a.text, b.text), (b.text, a.text), frozenset({a.line}))
            return Twin(
                signal, f"swaps {a.text} and {b.text} (the same weight: {weight.get(a.text.lower(), 'neither')})"
            )
    raise NotApplicable("no two neighbouring skills of one line carry the same weight")


# --------------------------------------------------------------------------- years


def shift_years(layout: Layout, years: int) -> Signal:
    """The current role started ``years`` earlier (negative: later); every older position, gap
    and degree moves by the same time, so tenures before it, the degree-to-first-job wait and
    the order of the dates stay, and the summary's years of experience follow."""
    career = layout.career()
    if not career:
        raise MissingField("dated position", _NO_POSITIONS)
    current, months = career[0], 12 * years
    start = current.start - months
    if end_month(current.end) - start + 1 < MIN_ROLE_MONTHS:
        raise NotApplicable(
            f"the current role ({current.dates}) is too short to take {-years} years from it "
            f"(it must keep {MIN_ROLE_MONTHS} months)"
        )
    edit = _Edit()
    _move_dates(layout, edit, current, start, current.end)
    for p in career[1:]:
        _move_dates(layout, edit, p, p.start - months, None if p.end is None else p.end - months)
    for g in layout.gaps:
        if end_month(g.end) < current.start:
            _move_dates(layout, edit, g, g.start - months, end_month(g.end) - months)
    _shift_education(layout, edit, -years)
    stated = (layout.experience_months() + months) // 12
    for i in layout.sections.get("SUMMARY", ()):
        if m := YEARS_PHRASE.search(layout.lines[i]):
            phrase = m.group(0).replace(m.group(0).split(" of ")[0], years_phrase(stated), 1)
            edit.put(m.group(0), _At(i, m.start(), m.end()), phrase)
    return _signal(layout, edit)


def _years_of(layout: Layout) -> int:
    return layout.experience_months() // 12


def add_years(layout: Layout, req: JobRequirements, step: int = YEARS_STEP) -> Twin:
    """Better: ``step`` more years in the current role, where the résumé has fewer years than
    the job description's minimum (more years narrow the shortfall)."""
    if req.min_years is None:
        raise NotApplicable("the job description states no minimum years of experience")
    have = _years_of(layout)
    if have >= req.min_years:
        raise NotApplicable(f"the résumé's {have} years already meet the minimum of {req.min_years}")
    return Twin(
        shift_years(layout, step),
        f"{step} more years in the current role ({have} -> {have + step}; minimum {req.min_years})",
    )


def remove_years(layout: Layout, req: JobRequirements, step: int = YEARS_STEP) -> Twin:
    """Worse: fewer years in the current role (``step``, or the whole years it can give while
    keeping ``MIN_ROLE_MONTHS``), where that leaves the résumé below the job description's minimum."""
    if req.min_years is None:
        raise NotApplicable("the job description states no minimum years of experience")
    career = layout.career()
    if not career:
        raise MissingField("dated position", _NO_POSITIONS)
    role = end_month(career[0].end) - career[0].start + 1
    step = min(step, (role - MIN_ROLE_MONTHS) // 12)
    if step < 1:
        raise NotApplicable(
            f"the current role ({career[0].dates}) is too short to take a year from it (it must keep {MIN_ROLE_MONTHS} months)"
        )
    have = _years_of(layout)
    if have - step >= req.min_years:
        raise NotApplicable(f"the résumé's {have} years less {step} would still meet the minimum of {req.min_years}")
    return Twin(
        shift_years(layout, -step),
        f"{step} fewer years in the current role ({have} -> {have - step}; minimum {req.min_years})",
    )


# --------------------------------------------------------------------------- degree

# A degree as written at the start of an education line -> (level, one level up, one level down);
# None where the form has no such neighbour (the edit is then not made).
_DEGREE_FORMS: dict[str, tuple[str, str | None, str | None]] = {
    "B.S.": ("bachelor", "M.S.", None),
    "B.A.": ("bachelor", "M.A.", None),
    "B.Sc.": ("bachelor", "M.Sc.", None),
    "BSc": ("bachelor", "MSc", None),
    "BS": ("bachelor", "MS", None),
    "BA": ("bachelor", "MA", None),
    "Bachelor's": ("bachelor", "Master's", None),
    "Bachelor": ("bachelor", "Master", None),
    "M.S.": ("master", "Ph.D.", "B.S."),
    "M.A.": ("master", "Ph.D.", "B.A."),
    "M.Sc.": ("master", "Ph.D.", "B.Sc."),
    "MSc": ("master", "PhD", "BSc"),
    "MS": ("master", "PhD", "BS"),
    "MA": ("master", "PhD", "BA"),
    "Master's": ("master", None, "Bachelor's"),
    "Master": ("master", None, "Bachelor"),
    "Ph.D.": ("phd", None, "M.S."),
    "PhD": ("phd", None, "MS"),
}
_DEGREE = re.compile(
    r"^(\s*(?:[-•*]\s+)?)("
    + "|".join(re.escape(f) for f in sorted(_DEGREE_FORMS, key=len, reverse=True))
    + r")(?=[\s,]|$)"
)


def _latest_degree(layout: Layout) -> tuple[int, int, str]:
    """(line, column, form) of the first degree of the education section (the latest, as résumés list them)."""
    for i in layout.sections.get("EDUCATION", ()):
        if m := _DEGREE.match(layout.lines[i]):
            return i, m.start(2), m.group(2)
    raise MissingField("degree", "in an Education section (a line starting B.S., M.S., Bachelor, Master, Ph.D. ...)")


def change_degree(layout: Layout, req: JobRequirements, up: bool) -> Twin:
    """Better (``up``): the latest degree one level up, where it is below the level the job
    description asks; worse: one level down, where the baseline meets that level and the twin
    would not. The degree's subject, school and year stay."""
    if req.degree is None or req.degree == "none":
        raise NotApplicable(
            "the job description asks for no degree" if req.degree == "none" else "the job description states no degree"
        )
    line, column, form = _latest_degree(layout)
    level, higher, lower = _DEGREE_FORMS[form]
    ask, have = DEGREES.index(req.degree), DEGREES.index(level)
    new = higher if up else lower
    if up and have >= ask:
        raise NotApplicable(f"the résumé's {form} already meets the {req.degree}'s degree the job description asks")
    if not up and not have - 1 < ask <= have:
        raise NotApplicable(
            f"one level below the résumé's {form} would still meet the {req.degree}'s degree the job description asks"
            if have - 1 >= ask
            else f"the résumé's {form} is already below the {req.degree}'s degree the job description asks"
        )
    if new is None:
        raise NotApplicable(f"the résumé's {form} has no degree one level {'up' if up else 'down'} (or none at all)")
    lines = list(layout.lines)
    lines[line] = lines[line][:column] + new + lines[line][column + len(form) :]
    signal = Signal(tuple(lines), (form,), (new,), frozenset({line}))
    return Twin(signal, f"{form} -> {new} (the job description asks a {req.degree}'s degree)")


# --------------------------------------------------------------------------- certification

# A line of a certification, as the generator writes one in the Education section
# ("Certification: AWS Certified Developer") and as people label one there.
_CERT_LABEL = re.compile(r"^(\s*(?:[-•*▪◦●]\s+)?)((?:Certification|Certificate|Certified|License|Licence)s?:\s*)", re.I)
_BULLET_PREFIX = re.compile(r"^\s*[-•*▪◦●]\s+")
_CERT_SEPARATORS = re.compile(r"[,;|•·]")
_NO_CERT_PLACE = (
    "in a Certifications section or an Education section (where a certification line such as "
    "'Certification: AWS Certified Developer' goes)"
)


def _asked(alternatives: tuple[str, ...]) -> str:
    if len(alternatives) == 1:
        return "the job description asks for it"
    return f"the job description asks for one of {', '.join(alternatives)}"


def _cert_sections(layout: Layout) -> list[range]:
    """The content lines of each section whose heading names certifications (Certifications,
    Certificates, Licenses, Certifications & Licenses; "Education & Certifications" is the
    Education section, whose certification lines carry a label)."""
    out = []
    for k, i in enumerate(layout.headings):
        words = heading_words(layout.lines[i])
        if "certif" in words or words in ("licenses", "licences"):
            end = layout.headings[k + 1] if k + 1 < len(layout.headings) else len(layout.lines)
            out.append(range(i + 1, end))
    return out


def _cert_entries(layout: Layout) -> dict[int, str]:
    """Line -> the certification it holds (bullet and label taken off): every non-empty line of a
    certifications section, and every labelled line ("Certification: ...") of the Education section."""
    found = {i: layout.lines[i] for r in _cert_sections(layout) for i in r if layout.lines[i].strip()}
    found.update(
        {i: layout.lines[i] for i in layout.sections.get("EDUCATION", ()) if _CERT_LABEL.match(layout.lines[i])}
    )
    out = {}
    for i, line in sorted(found.items()):
        m = _CERT_LABEL.match(line)
        at = m.end() if m else (_BULLET_PREFIX.match(line).end() if _BULLET_PREFIX.match(line) else 0)  # type: ignore[union-attr]
        out[i] = line[at:].strip()
    return out


def _cert_line(layout: Layout, cert: str) -> tuple[int, str]:
    """Where a new certification's line goes, and the line: after a certifications section's last
    entry (with its bullet), else after the Education section's last certification line (with its
    label), else as the generator puts one, ``Certification: <name>`` after the Education section's
    last line."""
    for r in reversed(_cert_sections(layout)):
        filled = [i for i in r if layout.lines[i].strip()]
        if filled:
            last = layout.lines[filled[-1]]
            m = _BULLET_PREFIX.match(last)
            return filled[-1] + 1, (m.group(0) if m else "") + cert
    education = [i for i in layout.sections.get("EDUCATION", ()) if layout.lines[i].strip()]
    labelled = [i for i in education if _CERT_LABEL.match(layout.lines[i])]
    if labelled:
        m = _CERT_LABEL.match(layout.lines[labelled[-1]])
        return labelled[-1] + 1, m.group(1) + m.group(2) + cert  # type: ignore[union-attr]
    if education:
        return education[-1] + 1, f"Certification: {cert}"
    raise MissingField("place for a certification", _NO_CERT_PLACE)


def add_certification(layout: Layout, req: JobRequirements) -> Twin:
    """Better: a certification the job description asks for (the first alternative of the first
    requirement the résumé names no alternative of, anywhere), written as a line of the
    résumé's certifications (``_cert_line``)."""
    if not req.certifications:
        raise NotApplicable("the job description states no certifications")
    text = "\n".join(layout.lines)
    for alternatives in req.certifications:
        if any(mentions(c, text) for c in alternatives):
            continue
        cert = alternatives[0]
        at, line = _cert_line(layout, cert)
        if section_of(line) is not None:
            raise NotApplicable(f"the line {line!r} would be read as a section heading")
        lines = [*layout.lines[:at], line, *layout.lines[at:]]
        signal = Signal(tuple(lines), (), (line,), frozenset(), inserts=True)
        return Twin(signal, f"adds the certification {cert} ({_asked(alternatives)})")
    raise NotApplicable("the résumé already names a certification of every certification the job description asks")


def remove_certification(layout: Layout, req: JobRequirements) -> Twin:
    """Worse: the one certification line meeting a requirement taken out, where that line is the
    only place the résumé names any of the requirement's alternatives (so the twin meets it no
    other way) and holds that one certification (no commas, semicolons or bars)."""
    if not req.certifications:
        raise NotApplicable("the job description states no certifications")
    entries = _cert_entries(layout)
    why = "the résumé names no certification the job description asks"
    for alternatives in req.certifications:
        holding = [i for i, line in enumerate(layout.lines) if any(mentions(c, line) for c in alternatives)]
        if not holding:
            continue
        if len(holding) > 1 or holding[0] not in entries:
            why = (
                f"the résumé names {' or '.join(alternatives)} on more than one line, or on a line that is no "
                "certification entry (a Certifications section's line, or 'Certification: ...' under Education)"
            )
            continue
        i = holding[0]
        if _CERT_SEPARATORS.search(entries[i]):
            why = f"the certification line {layout.lines[i].strip()!r} holds other entries too"
            continue
        section = next((r for r in _cert_sections(layout) if i in r), None)
        if section is not None and not [j for j in section if j != i and layout.lines[j].strip()]:
            why = "taking the line out would leave the certifications section empty"
            continue
        lines = [*layout.lines[:i], *layout.lines[i + 1 :]]
        signal = Signal(tuple(lines), (layout.lines[i],), (), frozenset({i}))
        return Twin(signal, f"removes the certification {entries[i]} ({_asked(alternatives)})")
    raise NotApplicable(why)
