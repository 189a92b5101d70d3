"""The report's "Your résumés" section: the user's own résumés (core/resumes/user_files.py),
each with its text in a collapsible element, and the probe axes that did not apply to it.

A report file is often shared, so by default every text and file name from a user's résumé is
redacted (``user_files.redact``: the candidate's name, e-mail and phone replaced); the user opts
in to the texts as extracted with ``show_resume_texts``. ``Redactor`` applies the same
redaction wherever else the report shows a user résumé's text (a probe variant's diff, a judge's
quotes): a row whose ``resume_id`` starts with ``u-``. Everything is escaped with
``html.escape``, as the report escapes every untrusted text."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from resumebias_dagster.core.resumes.user_files import find_name, redact

USER_PREFIX = "u-"  # every user résumé's id starts with it (core/tables/user_resumes.py)
SECTION_ID = "your-resumes"
TITLE = "Your résumés"
REDACTED_NOTE = "Texts are redacted: name, e-mail and phone replaced"
SHOWN_NOTE = "Texts are shown as extracted (show_resume_texts: true)"
UNLABELLED = "unlabelled"


def is_user_resume(resume_id: object) -> bool:
    return str(resume_id).startswith(USER_PREFIX)


@dataclass(frozen=True)
class Person:
    """What identifies the candidate of one résumé: replaced wherever its text is shown."""

    name: str
    email: str = ""
    phone: str = ""


def _text(value: object) -> str:
    return "" if value is None or value is pd.NA or (isinstance(value, float) and value != value) else str(value)


@dataclass
class Redactor:
    """Redacts the texts of user résumés (ids starting ``u-``), or shows them as they are
    (``show_texts``). A user résumé the table does not list (read again since) is redacted with
    the name found on its baseline text (``remember``), else on the text itself; every e-mail,
    link and phone number is replaced in any case."""

    people: dict[str, Person] = field(default_factory=dict)
    show_texts: bool = False

    @classmethod
    def of(cls, user_resumes: pd.DataFrame, *, show_texts: bool = False) -> Redactor:
        people = {}
        if len(user_resumes):
            for row in user_resumes[["resume_id", "name", "email", "phone"]].itertuples(index=False):
                people[str(row.resume_id)] = Person(_text(row.name), _text(row.email), _text(row.phone))
        return cls(people, show_texts)

    def remember(self, resume_id: object, text: str) -> None:
        """For a user résumé not in the table: its candidate, found on ``text`` (its baseline)."""
        rid = str(resume_id)
        if is_user_resume(rid) and rid not in self.people:
            found = find_name(text)
            self.people[rid] = Person(found[0] if found else "")

    def __call__(self, resume_id: object, text: object) -> str:
        """``text`` as the report shows it for the résumé ``resume_id``."""
        value = _text(text)
        if self.show_texts or not is_user_resume(resume_id) or not value:
            return value
        person = self.people.get(str(resume_id))
        if person is None:  # unknown and not remembered: the name its own text shows
            found = find_name(value)
            person = Person(found[0] if found else "")
        return redact(value, name=person.name, email=person.email or None, phone=person.phone or None)


def _e(value: object) -> str:
    return html.escape(_text(value))


_LEFT = ' style="text-align: left; vertical-align: top"'  # words, not figures (the report right-aligns cells)
_NOWRAP = ' style="text-align: left; vertical-align: top; white-space: nowrap"'


def _table(table_id: str, header: Iterable[str], rows: Iterable[Mapping[str, str]]) -> str:
    """An HTML table like the report's (each cell names its column); cell values are HTML
    already escaped by the caller."""
    head = "".join(f"<th{_LEFT}>{_e(h)}</th>" for h in header)
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td data-col="{_e(col)}"{_NOWRAP if col == "resume_id" else _LEFT}>{cell}</td>'
            for col, cell in row.items()
        )
        + "</tr>"
        for row in rows
    )
    return f'<table id="{_e(table_id)}">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>'


def _applying(probes: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per résumé: (axes that apply, axes checked)."""
    if not len(probes):
        return {}
    grouped = probes["applies"].astype(bool).groupby(probes["resume_id"].astype(str))
    applying, total = grouped.sum(), grouped.size()
    return {str(rid): (int(applying[rid]), int(total[rid])) for rid in total.index}


def _resume_rows(user_resumes: pd.DataFrame, probes: pd.DataFrame, redactor: Redactor) -> list[dict[str, str]]:
    applying = _applying(probes)
    rows = []
    for r in user_resumes.itertuples(index=False):
        rid = str(r.resume_id)
        n, total = applying.get(rid, (0, 0))
        text = redactor(rid, r.text)
        rows.append(
            {
                "resume_id": _e(rid),
                "source": _e(redactor(rid, r.source)),
                "file_type": _e(r.file_type),
                "seniority": _e(_text(r.seniority) or UNLABELLED),
                "axes_applying": f"{n} of {total}" if total else "—",
                "text": f'<details class="user-resume" id="user-resume-{_e(rid)}"><summary>text '
                f'<span class="note">({len(text.split())} words)</span></summary>'
                f'<pre class="diff">{_e(text)}</pre></details>',
            }
        )
    return rows


def _not_applied(user_resumes: pd.DataFrame, probes: pd.DataFrame, redactor: Redactor) -> str:
    if not len(probes):
        return (
            '<p class="empty">Which probe axes apply was not computed: materialise user_resume_probes.</p>'
            if len(user_resumes)
            else ""
        )
    listed = set(user_resumes["resume_id"].astype(str))
    skipped = probes[~probes["applies"].astype(bool) & probes["resume_id"].astype(str).isin(listed)]
    n, total = int(probes["applies"].astype(bool).sum()), len(probes)
    intro = f"<p>{n} of {total} (résumé, probe axis) pairs apply: every level of the axis edits the résumé.</p>"
    if not len(skipped):
        return intro + '<p class="empty">Every probe axis applies to every résumé.</p>'
    rows = [
        {"resume_id": _e(r.resume_id), "axis": _e(r.axis), "reason": _e(redactor(r.resume_id, r.reason))}
        for r in skipped.itertuples(index=False)
    ]
    return intro + _table("user-resume-probes-not-applied", ["résumé", "probe axis", "why it does not apply"], rows)


def user_resumes_section(user_resumes: pd.DataFrame, probes: pd.DataFrame, *, show_texts: bool = False) -> str:
    """The section's HTML; "" when there is no user résumé. ``probes``: the
    ``ProbeApplicability`` rows (resume_id, axis, applies, reason), possibly empty."""
    if not len(user_resumes):
        return ""
    redactor = Redactor.of(user_resumes, show_texts=show_texts)
    mode = SHOWN_NOTE if show_texts else REDACTED_NOTE
    why = (
        ": anyone this file reaches reads them."
        if show_texts
        else " (links too), in the file names as well. The ids carry no name. To show the texts as extracted, "
        "set show_resume_texts in audit_report's config."
    )
    table = _table(
        "user-resumes",
        ["résumé", "source", "file type", "seniority", "probe axes applying", "text"],
        _resume_rows(user_resumes, probes, redactor),
    )
    return (
        f'<section id="{SECTION_ID}">\n<h2>{_e(TITLE)}</h2>\n'
        f'<p class="note" id="your-resumes-texts">{_e(mode)}{_e(why)}</p>\n{table}\n'
        f"<h3>Probe axes that did not apply</h3>\n{_not_applied(user_resumes, probes, redactor)}\n</section>\n"
    )
