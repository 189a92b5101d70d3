"""Whether the dates of a written résumé hang together.

The seniority study refuses generated résumés whose dates do not (``core/seniority/llm_generation.py``),
and the job-description audit checks that an edit added no timeline problem its baseline lacked
(``core/jd_audit/probes/variants.py``); both read the text through ``layout.parse_layout``.
"""

from __future__ import annotations

from resumebias_dagster.core.resumes.layout import (
    REFERENCE_INDEX,
    YEARS_PHRASE,
    Layout,
    end_month,
    month_label,
    parse_layout,
)

# Months a graduate may take to start the first position before the wait reads as a gap.
DEGREE_TO_FIRST_POSITION_MONTHS = 12


def _uncovered(layout: Layout, first: int, last: int) -> int:
    """How many months of ``first..last`` no dated gap line covers."""
    months = set(range(first, last + 1))
    for g in layout.gaps:
        months -= set(range(g.start, end_month(g.end) + 1))
    return len(months)


def _covered(layout: Layout, first: int, last: int) -> bool:
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
    layout = parse_layout(text)
    problems = []
    for p in layout.positions:
        if p.start > end_month(p.end) or end_month(p.end) > REFERENCE_INDEX:
            problems.append(f"{p.employer}: dates {p.dates} are out of order or after {month_label(REFERENCE_INDEX)}")
    for g in layout.gaps:
        if g.start > end_month(g.end) or end_month(g.end) > REFERENCE_INDEX:
            problems.append(f"gap {g.label!r}: dates out of order or after {month_label(REFERENCE_INDEX)}")
    career = layout.career()
    for newer, older in zip(career, career[1:]):
        if older.start > newer.start or end_month(older.end) >= newer.start:
            problems.append(f"{older.employer} ({older.dates}) overlaps or follows {newer.employer} ({newer.dates})")
        elif end_month(older.end) + 1 < newer.start and not _covered(layout, end_month(older.end) + 1, newer.start - 1):
            problems.append(
                f"unexplained gap of {newer.start - end_month(older.end) - 1} months between {older.employer} "
                f"and {newer.employer}"
            )
    if career and career[0].end is not None and not _covered(layout, career[0].end + 1, REFERENCE_INDEX):
        problems.append(f"unexplained gap of {REFERENCE_INDEX - career[0].end} months after {career[0].employer}")
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
            if end_month(p.end) > year * 12 + 11:
                problems.append(f"{p.employer} starts before the degree year {year} and runs past it")
    summary = "\n".join(layout.lines[i] for i in layout.sections.get("SUMMARY", ()))
    if career and (m := YEARS_PHRASE.search(summary)):
        stated = int(m["n"]) if m["n"] else 0
        listed = layout.experience_months() // 12
        if stated != listed:
            problems.append(f"the summary states {m.group(0)!r} but the positions add up to {listed} years")
    return problems
