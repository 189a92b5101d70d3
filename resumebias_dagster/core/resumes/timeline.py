"""Whether the dates of a written résumé hang together.

The seniority study refuses generated résumés whose dates do not (``core/seniority/llm_generation.py``),
and the job-description audit checks that an edit added no timeline problem its baseline lacked
(``core/jd_audit/probes/variants.py``); both read the text through ``reader.read_resume``.

A date written as a year spans its twelve months (``dates.DateMark``): a problem is reported
only where the dates have it at every reading of them ("2019–2021" then "2021–2023" is no
overlap). The generator writes every month, so its résumés read exactly as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from resumebias_dagster.core.resumes.fields import Layout, end_month
from resumebias_dagster.core.resumes.layout import REFERENCE_INDEX, YEARS_PHRASE, month_label
from resumebias_dagster.core.resumes.reader import read_resume

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


@dataclass(frozen=True)
class TimelineIssue:
    """One way a résumé's dates do not hang together.

    ``message`` is what ``timeline_problems`` says (it names employers); ``key`` identifies the
    problem without any name: its ``kind``, the positions involved by their index among the
    written positions (newest first), their dates, and the months or years it is about. So a
    variant that renames the employers (companyNames, anonymisation) keeps its baseline's keys,
    while one that moves a date gets a new key.
    """

    kind: str
    key: tuple[object, ...]
    message: str


def timeline_problems(text: str) -> list[str]:
    """Why a résumé's dates do not hang together (empty list: they do).

    Checked: each position and gap starts before it ends and not after the reference month;
    positions are listed newest first without overlap; every month between two positions,
    after the newest one, and between the degree and the first position (beyond
    ``DEGREE_TO_FIRST_POSITION_MONTHS``) is covered by a dated gap line; earlier degrees do
    not postdate the latest; positions before the degree year end within it; the summary's
    "N years of professional experience" is the listed experience in whole years.
    """
    return [issue.message for issue in timeline_issues(text)]


def timeline_issues(text: str) -> list[TimelineIssue]:
    """``timeline_problems`` with a key per problem that names no employer (``TimelineIssue``)."""
    layout = read_resume(text)
    index = {p: k for k, p in enumerate(layout.positions)}
    issues = []

    def issue(kind: str, message: str, *key: object) -> None:
        issues.append(TimelineIssue(kind, (kind, *key), message))

    for p in layout.positions:
        if p.start > end_month(p.end) or end_month(p.end_earliest) > REFERENCE_INDEX:
            reference = month_label(REFERENCE_INDEX)
            issue(
                "position_dates",
                f"{p.employer}: dates {p.dates} are out of order or after {reference}",
                index[p],
                p.dates,
            )
    for k, g in enumerate(layout.gaps):
        if g.start > end_month(g.end) or end_month(g.end) > REFERENCE_INDEX:
            reference = month_label(REFERENCE_INDEX)
            issue("gap_dates", f"gap {g.label!r}: dates out of order or after {reference}", k, g.start, g.end)
    career = layout.career()
    for newer, older in zip(career, career[1:]):
        pair = (index[older], index[newer], older.dates, newer.dates)
        if older.start > newer.start_latest or end_month(older.end_earliest) >= newer.start_latest:
            message = f"{older.employer} ({older.dates}) overlaps or follows {newer.employer} ({newer.dates})"
            issue("overlap", message, *pair)
        elif end_month(older.end) + 1 < newer.start and not _covered(layout, end_month(older.end) + 1, newer.start - 1):
            months = newer.start - end_month(older.end) - 1
            issue(
                "gap_between",
                f"unexplained gap of {months} months between {older.employer} and {newer.employer}",
                *pair,
            )
    if career and career[0].end is not None and not _covered(layout, career[0].end + 1, REFERENCE_INDEX):
        months = REFERENCE_INDEX - career[0].end
        issue("gap_after", f"unexplained gap of {months} months after {career[0].employer}", index[career[0]], months)
    year = layout.degree_year
    if year is not None:
        if career:
            wait = _uncovered(layout, year * 12 + 12, career[-1].start - 1)
            if wait > DEGREE_TO_FIRST_POSITION_MONTHS:
                message = (
                    f"unexplained gap of {wait} months between the degree ({year}) and the first position "
                    f"at {career[-1].employer}"
                )
                issue("gap_after_degree", message, year, index[career[-1]], wait)
        for p in layout.before_degree():
            if end_month(p.end_earliest) > year * 12 + 11:
                message = f"{p.employer} starts before the degree year {year} and runs past it"
                issue("runs_past_degree", message, index[p], p.dates, year)
    summary = "\n".join(layout.lines[i] for i in layout.sections.get("SUMMARY", ()))
    if career and (m := YEARS_PHRASE.search(summary)):
        stated = int(m["n"]) if m["n"] else 0
        listed = layout.experience_months() // 12
        if not layout.least_experience_months() // 12 <= stated <= listed:
            message = f"the summary states {m.group(0)!r} but the positions add up to {listed} years"
            issue("summary_years", message, stated, listed)
    return issues
