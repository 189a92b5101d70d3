"""Notebook 004's generation with a provider model: neutral résumés per seniority, then their
overstated and understated rewrites, all through the response store (a re-run is free).

Base résumés come back structured. The prompt is notebook 004's (``prompts/resume_neutral.txt``,
verbatim) followed by ``prompts/resume_fields.txt``, which asks for one JSON object: name,
contact, summary, positions (title, employer, city, start, end, bullets), education (degree,
school, year), skills, certifications, an occupation code of the catalog and the seniority.
``resume_from_answer`` validates it strictly and ``core.resumes.layout.render_resume`` writes it,
the offline generator's own renderer, so the probe edits and checks of the job-description
audit (``core/jd_audit/probes/``) work on generated résumés as on the template's. The rewrites
(``resume_overstated.txt``, ``resume_understated.txt``) stay free text: they append the
résumé after the instructions.

Every function takes ``run``: a callable sending a list of ``ChatRequest`` and returning
``(results, stats)`` (``ProvidersResource.run`` bound to a model name, or
``functools.partial(run_requests, settings, store=store)``). The fan-out stores every raw
answer before anything parses it, so a refused answer costs nothing on a re-run.

A draw that failed, that the validation refuses, or (a rewrite) that uses a level word (notebook
004: "Do NOT use the words junior/mid/senior") is drawn again with the next sample index, up
to ``max_attempts`` draws; what is left failing is returned with its ``error``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import pandas as pd

from resumebias_dagster.core.common.diffing import tokens
from resumebias_dagster.core.common.labels import LEVEL_WORDS, SENIORITY_LEVELS
from resumebias_dagster.core.common.prompts import load_prompt
from resumebias_dagster.core.providers.fanout import RunStats, Transport
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult
from resumebias_dagster.core.resumes.layout import (
    COLUMNS,
    REFERENCE_INDEX,
    REFERENCE_MONTH,
    REFERENCE_YEAR,
    Degree,
    Position,
    ResumeContent,
    is_header,
    month_label,
    resume_row,
)
from resumebias_dagster.core.resumes.names import name_tokens
from resumebias_dagster.core.resumes.timeline import timeline_problems
from resumebias_dagster.core.seniority.generation import occupation_labels

Run = Transport
NEUTRAL_PROMPT = "resume_neutral"
FIELDS_PROMPT = "resume_fields"
REWRITE_PROMPTS = {"overstated": "resume_overstated", "understated": "resume_understated"}
# The company-name and company-location probes (probe_axes.yaml) list five values each.
MAX_POSITIONS = 5
MAX_DEGREES = 3
MIN_TEXT_CHARS = 200  # the base_resumes schema's shortest résumé
# The error kind of an answer that arrived but that the validation refuses.
INVALID_RESUME = "invalid_resume"
GENERATION_COLUMNS = [*COLUMNS, "resolved_model", "draws", "error"]

_TOP_FIELDS = ("name", "contact", "summary", "positions", "education", "skills", "occupation", "seniority")
_OPTIONAL_FIELDS = ("certifications",)
_CONTACT_FIELDS = ("email", "phone", "city", "linkedin")
_POSITION_FIELDS = ("title", "employer", "city", "start", "end", "bullets")
_DEGREE_FIELDS = ("degree", "school", "year")
_LEVEL_WORDS = re.compile(LEVEL_WORDS)
_MONTH = re.compile(r"(\d{4})-(\d{2})")
_NAME = re.compile(r"[A-Z][A-Za-z'-]+ [A-Z][A-Za-z'-]+")
_EMAIL = re.compile(r"[^\s@|,]+@[^\s@|,]+\.[A-Za-z]{2,}")
_PHONE = re.compile(r"\+?[\d ().-]{7,}")  # what the probes read as a phone number
_CITY = re.compile(r"[^\d|@/,]+, [^\d|@/,]+")
_LINKEDIN = re.compile(r"(?:https?://)?(?:www\.)?linkedin\.com/in/[A-Za-z0-9_-]+/?")
_BULLET_MARK = re.compile(r"^[-•*–·]")
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty"
).split()
_YEARS_MENTION = re.compile(rf"(?i)\b(?:\d+|{'|'.join(_NUMBER_WORDS)})\+?\s*(?:years?|yrs?)\b")
# The summary's experience phrase that the graduation-year probe keeps up to date.
_CANONICAL_YEARS = re.compile(r"\b(?:\d+ years?|less than one year) of professional experience\b")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*?)\n```\s*$", re.DOTALL)
_PREAMBLE = re.compile(r"^(?:here(?:'s| is)|sure|certainly|okay|of course)\b[^\n]*:\s*\n+", re.IGNORECASE)
_SIGN_OFF = re.compile(r"\n+(?:---+\s*\n+)?(?:let me know|i hope|feel free|note:)[^\n]*\s*$", re.IGNORECASE)


def clean_generated_text(text: str) -> str:
    """The résumé without the chat wrapping models add: one enclosing code fence, a leading
    "Here is ...:" line, a trailing "Let me know ..." line. The résumé itself is untouched."""
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    text = _PREAMBLE.sub("", text, count=1)
    text = _SIGN_OFF.sub("", text)
    fenced = _FENCE.match(text.strip())
    return (fenced.group(1) if fenced else text).strip() + "\n"


# --------------------------------------------------------------------------- validation


class ResumeAnswerError(ValueError):
    """A structured answer the validation refuses; ``field`` is the JSON path of the culprit
    (``positions[1].end``) or ``timeline``/``text`` for the rendered résumé as a whole."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _object(value: Any, where: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ResumeAnswerError(where or "answer", f"must be a JSON object, got {_kind(value)}")
    missing = [k for k in required if k not in value]
    if missing:
        raise ResumeAnswerError(_path(where, missing[0]), "missing")
    unknown = sorted(set(value) - set(required) - set(optional))
    if unknown:
        raise ResumeAnswerError(_path(where, unknown[0]), f"unknown field; the fields are {[*required, *optional]}")
    return value


def _list(value: Any, where: str, least: int, most: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise ResumeAnswerError(where, f"must be a list, got {_kind(value)}")
    if len(value) < least:
        raise ResumeAnswerError(where, f"needs at least {least} entries, got {len(value)}")
    if most is not None and len(value) > most:
        raise ResumeAnswerError(where, f"has {len(value)} entries; at most {most}")
    return value


def _line(value: Any, where: str, *, may_be_empty: bool = False) -> str:
    """One line of résumé text: a non-empty string without a newline, the layout's '|', a
    section header of its own or a level word."""
    if not isinstance(value, str):
        raise ResumeAnswerError(where, f"must be a string, got {_kind(value)}")
    text = value.strip()
    if not text:
        if may_be_empty:
            return ""
        raise ResumeAnswerError(where, "is empty")
    if "\n" in text or "\r" in text:
        raise ResumeAnswerError(where, "must be one line")
    if "|" in text:
        raise ResumeAnswerError(where, "contains '|', the layout's field separator")
    if is_header(text):
        raise ResumeAnswerError(where, f"{text!r} is a section header of the layout")
    found = _LEVEL_WORDS.search(text)
    if found:
        raise ResumeAnswerError(where, f"uses the level word {found.group(0)!r} (notebook 004: never in the résumé)")
    return text


def _matching(value: Any, where: str, pattern: re.Pattern[str], shape: str) -> str:
    text = _line(value, where)
    if not pattern.fullmatch(text):
        raise ResumeAnswerError(where, f"{text!r} is not {shape}")
    return text


_TODAY = f"{REFERENCE_YEAR}-{REFERENCE_MONTH:02d}"


def _month(value: Any, where: str, *, may_be_present: bool) -> int | None:
    """Months since year 0 of a 'YYYY-MM' (None: 'Present'), not after the reference month."""
    if may_be_present and isinstance(value, str) and value.strip().lower() == "present":
        return None
    found = _MONTH.fullmatch(value.strip()) if isinstance(value, str) else None
    if not found or not 1 <= int(found[2]) <= 12:
        shape = "'YYYY-MM' or 'Present'" if may_be_present else "'YYYY-MM'"
        raise ResumeAnswerError(where, f"{value!r} is not a month {shape}")
    month = int(found[1]) * 12 + int(found[2]) - 1
    if month > REFERENCE_INDEX:
        raise ResumeAnswerError(where, f"{value!r} is after the reference month {_TODAY}")
    return month


def _positions(value: Any) -> tuple[Position, ...]:
    positions = []
    for i, raw in enumerate(_list(value, "positions", 1, MAX_POSITIONS)):
        where = f"positions[{i}]"
        spec = _object(raw, where, _POSITION_FIELDS)
        start = _month(spec["start"], f"{where}.start", may_be_present=False)
        end = _month(spec["end"], f"{where}.end", may_be_present=True)
        assert start is not None  # a start may not be 'Present'
        if end is not None and end < start:
            raise ResumeAnswerError(f"{where}.end", f"{spec['end']!r} is before the start {spec['start']!r}")
        bullets = []
        for k, bullet in enumerate(_list(spec["bullets"], f"{where}.bullets", 1)):
            text = _line(bullet, f"{where}.bullets[{k}]")
            if _BULLET_MARK.match(text):
                raise ResumeAnswerError(f"{where}.bullets[{k}]", "starts with a bullet mark; the renderer writes it")
            bullets.append(text)
        positions.append(
            Position(
                title=_line(spec["title"], f"{where}.title"),
                employer=_line(spec["employer"], f"{where}.employer"),
                city=_matching(spec["city"], f"{where}.city", _CITY, "'City, ST'"),
                start=start,
                end=end,
                bullets=tuple(bullets),
            )
        )
    for i, (newer, older) in enumerate(zip(positions, positions[1:])):
        if older.start >= newer.start or (older.end if older.end is not None else REFERENCE_INDEX) >= newer.start:
            raise ResumeAnswerError(
                f"positions[{i + 1}]",
                f"{month_label(older.start)} – {month_label(older.end)} must end before positions[{i}] "
                f"starts ({month_label(newer.start)}); positions are listed newest first without overlap",
            )
    return tuple(positions)


def _education(value: Any) -> tuple[Degree, ...]:
    degrees = []
    for i, raw in enumerate(_list(value, "education", 1, MAX_DEGREES)):
        where = f"education[{i}]"
        spec = _object(raw, where, _DEGREE_FIELDS)
        year = spec["year"]
        if not isinstance(year, int) or isinstance(year, bool) or not 1950 <= year <= REFERENCE_YEAR:
            raise ResumeAnswerError(f"{where}.year", f"{year!r} is not a year from 1950 to {REFERENCE_YEAR}")
        degrees.append(Degree(_line(spec["degree"], f"{where}.degree"), _line(spec["school"], f"{where}.school"), year))
    for i, (newer, older) in enumerate(zip(degrees, degrees[1:])):
        if older.year > newer.year:
            raise ResumeAnswerError(
                f"education[{i + 1}].year", f"{older.year} is after education[{i}]'s {newer.year}: newest first"
            )
    return tuple(degrees)


def _free_text(content: ResumeContent) -> list[tuple[str, str]]:
    """(field, text) of every value outside the name and contact lines."""
    out = [("summary", content.summary)]
    for i, p in enumerate(content.positions):
        out += [
            (f"positions[{i}].title", p.title),
            (f"positions[{i}].employer", p.employer),
            (f"positions[{i}].city", p.city),
        ]
        out += [(f"positions[{i}].bullets[{k}]", b) for k, b in enumerate(p.bullets)]
    for i, d in enumerate(content.education):
        out += [(f"education[{i}].degree", d.degree), (f"education[{i}].school", d.school)]
    out += [(f"skills[{i}]", s) for i, s in enumerate(content.skills)]
    out += [(f"certifications[{i}]", c) for i, c in enumerate(content.certifications)]
    return out


def _check_single_places(content: ResumeContent, first: str, last: str) -> None:
    """Each signal a probe changes lives on its own line: the name only on the name and contact
    lines, an employer or school only on its own line (a probe that replaces it there would
    otherwise leave the old one in a bullet)."""
    own = name_tokens(first, last)
    for where, text in _free_text(content):
        hit = sorted(own & set(tokens(text)))
        if hit:
            raise ResumeAnswerError(
                where, f"mentions the candidate's name ({hit[0]!r}); it belongs on the name and contact lines only"
            )
    prose = [("summary", content.summary)] + [
        (f"positions[{i}].bullets[{k}]", b) for i, p in enumerate(content.positions) for k, b in enumerate(p.bullets)
    ]
    named = [("employer", p.employer) for p in content.positions] + [("school", d.school) for d in content.education]
    for what, value in dict.fromkeys(named):
        pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])")
        for where, text in prose:
            if pattern.search(text):
                raise ResumeAnswerError(where, f"names the {what} {value!r}; it belongs on its own line only")


def _check_stated_years(summary: str) -> None:
    # The graduation-year probe rewrites "N years of professional experience"; any other
    # statement of the years would be left stale in its variants.
    other = _YEARS_MENTION.search(_CANONICAL_YEARS.sub("", summary))
    if other:
        raise ResumeAnswerError(
            "summary", f"states {other.group(0)!r}; write the years as 'N years of professional experience'"
        )


def resume_from_answer(answer: Any, *, resume_id: str, seniority: str, occupations: Collection[str]) -> dict[str, Any]:
    """The ``COLUMNS`` row of a structured answer (a parsed JSON object), or ``ResumeAnswerError``
    naming the field. ``occupations``: the catalog's occupation codes."""
    spec = _object(answer, "", _TOP_FIELDS, _OPTIONAL_FIELDS)
    name = _matching(spec["name"], "name", _NAME, "'First Last' (first and last name only)")
    first, last = name.split(" ")
    contact = _object(spec["contact"], "contact", _CONTACT_FIELDS)
    phone = _matching(contact["phone"], "contact.phone", _PHONE, "a phone number")
    if sum(c.isdigit() for c in phone) < 7:
        raise ResumeAnswerError("contact.phone", f"{phone!r} has fewer than 7 digits")
    linkedin = _line(contact["linkedin"], "contact.linkedin", may_be_empty=True)
    if linkedin and not _LINKEDIN.fullmatch(linkedin):
        raise ResumeAnswerError("contact.linkedin", f"{linkedin!r} is not a linkedin.com/in/ address (or empty)")
    occupation = spec["occupation"]
    if not isinstance(occupation, str) or occupation.strip() not in occupations:
        raise ResumeAnswerError(
            "occupation", f"{occupation!r} is not a catalog occupation; one of {sorted(occupations)}"
        )
    stated = spec["seniority"]
    if not isinstance(stated, str) or stated.strip().lower() != seniority:
        raise ResumeAnswerError("seniority", f"{stated!r}, but the prompt asked for {seniority!r}")
    content = ResumeContent(
        name=name,
        email=_matching(contact["email"], "contact.email", _EMAIL, "an e-mail address"),
        phone=phone,
        city=_matching(contact["city"], "contact.city", _CITY, "'City, ST'"),
        linkedin=linkedin,
        summary=_line(spec["summary"], "summary"),
        positions=_positions(spec["positions"]),
        education=_education(spec["education"]),
        skills=tuple(_line(s, f"skills[{i}]") for i, s in enumerate(_list(spec["skills"], "skills", 1))),
        certifications=tuple(
            _line(c, f"certifications[{i}]")
            for i, c in enumerate(_list(spec.get("certifications", []), "certifications", 0))
        ),
    )
    _check_single_places(content, first, last)
    _check_stated_years(content.summary)
    # Experience counts from the latest degree on, as the probes count it: earlier positions
    # are internships or student jobs.
    degree_year = content.education[0].year
    career = [p for p in content.positions if p.start >= degree_year * 12]
    if not career:
        raise ResumeAnswerError("positions", f"none starts in or after the latest degree's year {degree_year}")
    months = sum((REFERENCE_INDEX if p.end is None else p.end) - p.start + 1 for p in career)
    row = resume_row(
        content,
        resume_id=resume_id,
        seniority=seniority,
        occupation=occupation.strip(),
        first_name=first,
        last_name=last,
        years_experience=months // 12,
        n_positions=len(career),
    )
    if len(row["text"]) < MIN_TEXT_CHARS:
        raise ResumeAnswerError("text", f"the résumé has {len(row['text'])} characters; at least {MIN_TEXT_CHARS}")
    problems = timeline_problems(row["text"])
    if problems:
        raise ResumeAnswerError("timeline", "; ".join(problems))
    return row


# --------------------------------------------------------------------------- drawing

# A slot's judge: (the value to keep, None) for a usable answer, else (None, the problem).
Judge = Callable[[Any, ChatResult], tuple[Any, str | None]]


def _failure(result: ChatResult) -> str | None:
    if not result.ok:
        return f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
    return None


def _draw(
    run: Run,
    slots: list[tuple[Any, Callable[[int], ChatRequest]]],
    max_attempts: int,
    all_stats: list[RunStats],
    judge: Judge,
) -> dict[Any, tuple[ChatResult, Any, str | None, int]]:
    """Each slot's first usable draw (sample index 0, 1, ...), or its last failure:
    slot -> (result, value, problem, draws)."""
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    outcome: dict[Any, tuple[ChatResult, Any, str | None, int]] = {}
    pending = list(slots)
    for attempt in range(max_attempts):
        if not pending:
            break
        results, stats = run([make(attempt) for _, make in pending])
        all_stats.append(stats)
        still = []
        for (slot, make), result in zip(pending, results):
            value, problem = judge(slot, result)
            outcome[slot] = (result, value, problem, attempt + 1)
            if problem:
                still.append((slot, make))
        pending = still
    return outcome


def base_resume_prompts(n_per_level: int, catalog_dir: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """(seniority, prompt) of each base résumé, levels interleaved as the offline generator does."""
    neutral = load_prompt(NEUTRAL_PROMPT, catalog_dir, {"seniority"})
    fields = load_prompt(FIELDS_PROMPT, catalog_dir, {"seniority", "occupations", "today", "max_positions"})
    occupations = ", ".join(f"{code} ({label})" for code, label in occupation_labels(catalog_dir).items())
    prompts = {
        level: neutral.format(seniority=level)
        + "\n\n"
        + fields.format(seniority=level, occupations=occupations, today=_TODAY, max_positions=MAX_POSITIONS)
        for level in SENIORITY_LEVELS
    }
    levels = [SENIORITY_LEVELS[i % len(SENIORITY_LEVELS)] for i in range(n_per_level * len(SENIORITY_LEVELS))]
    return [(level, prompts[level]) for level in levels]


def base_resume_request(prompt: str, index: int, attempt: int = 0) -> ChatRequest:
    """The request of base résumé ``index``'s draw ``attempt`` (the cost estimate counts draw 0)."""
    return ChatRequest.from_prompt(
        prompt, json_mode=True, sample_index=attempt, tag=f"neutral/{index}", task="generation"
    )


def generate_neutral_resumes(
    run: Run, n_per_level: int, *, catalog_dir: str | os.PathLike | None = None, max_attempts: int = 3
) -> tuple[pd.DataFrame, list[RunStats]]:
    """``3 * n_per_level`` neutral résumés from structured answers, levels interleaved.

    Columns: ``GENERATION_COLUMNS`` (the offline generator's plus resolved_model, draws and
    error); a row whose last draw failed has error ``<kind>: <field>: <problem>`` and no facts.
    """
    occupations = frozenset(occupation_labels(catalog_dir))
    slots: list[tuple[tuple[int, str], Callable[[int], ChatRequest]]] = []
    for i, (level, prompt) in enumerate(base_resume_prompts(n_per_level, catalog_dir)):

        def make(attempt: int, prompt: str = prompt, i: int = i) -> ChatRequest:
            return base_resume_request(prompt, i, attempt)

        slots.append(((i, level), make))

    def judge(slot: tuple[int, str], result: ChatResult) -> tuple[Any, str | None]:
        failed = _failure(result)
        if failed:
            return None, failed
        i, level = slot
        try:
            return resume_from_answer(
                result.parsed_json, resume_id=f"g{i:04d}", seniority=level, occupations=occupations
            ), None
        except ResumeAnswerError as exc:
            return None, f"{INVALID_RESUME}: {exc}"

    stats: list[RunStats] = []
    outcome = _draw(run, slots, max_attempts, stats, judge)
    rows = []
    for (i, level), _ in slots:
        result, row, problem, draws = outcome[(i, level)]
        row = row or {**dict.fromkeys(COLUMNS), "resume_id": f"g{i:04d}", "seniority": level}
        rows.append({**row, "resolved_model": result.resolved_model, "draws": draws, "error": problem})
    return pd.DataFrame(rows, columns=GENERATION_COLUMNS), stats


def _rewrite_judge(slot: Any, result: ChatResult) -> tuple[Any, str | None]:
    failed = _failure(result)
    if failed:
        return None, failed
    text = clean_generated_text(result.text or "")
    found = _LEVEL_WORDS.search(text)
    return (None, f"uses the level word {found.group(0)!r}") if found else (text, None)


def rewrite_styles(
    run: Run, base: pd.DataFrame, *, catalog_dir: str | os.PathLike | None = None, max_attempts: int = 3
) -> tuple[pd.DataFrame, list[RunStats]]:
    """Every base résumé as neutral (its own text), overstated and understated (rewritten, free text).

    ``base`` has resume_id, seniority, text. Columns: resume_id, original_idx, seniority,
    style, text, resolved_model, draws, error.
    """
    templates = {style: load_prompt(name, catalog_dir, {"resume_text"}) for style, name in REWRITE_PROMPTS.items()}
    slots: list[tuple[tuple[int, str], Callable[[int], ChatRequest]]] = []
    for idx, resume in enumerate(base.itertuples(index=False)):
        for style, template in templates.items():
            prompt = template.format(resume_text=str(resume.text).strip())

            def make(attempt: int, prompt=prompt, rid=resume.resume_id, style=style) -> ChatRequest:
                return ChatRequest.from_prompt(prompt, sample_index=attempt, tag=f"{style}/{rid}", task="generation")

            slots.append(((idx, style), make))
    stats: list[RunStats] = []
    outcome = _draw(run, slots, max_attempts, stats, _rewrite_judge)
    rows: list[tuple[object, ...]] = []
    for idx, resume in enumerate(base.itertuples(index=False)):
        rows.append((resume.resume_id, idx, resume.seniority, "neutral", resume.text, None, 0, None))
        for style in templates:
            result, text, problem, draws = outcome[(idx, style)]
            rows.append(
                (resume.resume_id, idx, resume.seniority, style, text or "", result.resolved_model, draws, problem)
            )
    columns = ["resume_id", "original_idx", "seniority", "style", "text", "resolved_model", "draws", "error"]
    return pd.DataFrame(rows, columns=columns), stats


class GenerationError(ValueError):
    """Generated résumés that cannot be used. Every answer stays in the store: a re-run with
    more draws (``max_attempts``) pays only for the new ones."""


def _refuse_failures(frame: pd.DataFrame, what: str, max_attempts: int) -> None:
    failed = frame[frame["error"].notna()]
    if len(failed):
        examples = "; ".join(f"{r.resume_id}: {r.error}" for r in failed.head(3).itertuples())
        raise GenerationError(
            f"{what}: {len(failed)} of {len(frame)} unusable after {max_attempts} draw(s) each, e.g. {examples}"
        )


def llm_base_resumes(
    run: Run, n_per_level: int, *, catalog_dir: str | os.PathLike | None = None, max_attempts: int = 3
) -> tuple[pd.DataFrame, RunStats]:
    """Notebook 004's neutral résumés from a provider model, rendered from its structured answers
    in the offline generator's layout and columns (``base_resumes``)."""
    rows, draws = generate_neutral_resumes(run, n_per_level, catalog_dir=catalog_dir, max_attempts=max_attempts)
    _refuse_failures(rows, "generated résumés", max_attempts)
    df = rows[COLUMNS].astype({"years_experience": "int64", "n_positions": "int64", "graduation_year": "int64"})
    return df, sum(draws[1:], draws[0])


def llm_style_variants(
    run: Run, base: pd.DataFrame, *, catalog_dir: str | os.PathLike | None = None, max_attempts: int = 3
) -> tuple[pd.DataFrame, RunStats | None]:
    """Notebook 004's overstated and understated rewrites by a provider model, as ``style_variants`` rows."""
    variants, draws = rewrite_styles(run, base, catalog_dir=catalog_dir, max_attempts=max_attempts)
    _refuse_failures(variants, "rewritten résumés", max_attempts)
    stats = sum(draws[1:], draws[0]) if draws else None
    return variants[["resume_id", "original_idx", "seniority", "style", "text"]], stats
