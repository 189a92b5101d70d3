"""Seed 004's generation with a provider model: neutral résumés per seniority, then their
overstated and understated rewrites, all through the response store (a re-run is free).

The prompts are seed 004's, verbatim, as catalog files (``prompts/resume_neutral.txt``,
``resume_overstated.txt``, ``resume_understated.txt``); the rewrites append the résumé after
the instructions. ``resume_fields.txt`` asks the same model for the facts the study's tables
carry (name, e-mail, occupation, ...) as one JSON object, parsed strictly.

Every function takes ``run``: a callable sending a list of ``ChatRequest`` and returning
``(results, stats)`` (``ProvidersResource.run`` bound to a model name, or
``functools.partial(run_requests, settings, store=store)``).

A generated text that still uses a level word (seed 004: "Do NOT use the words
junior/mid/senior") or that failed is drawn again with the next sample index, up to
``max_attempts`` draws; what is left failing is returned with its ``error``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from resumebias_dagster.core.labels import LEVEL_WORDS, SENIORITY_LEVELS
from resumebias_dagster.core.parsing import parse_json_object
from resumebias_dagster.core.prompts import load_prompt
from resumebias_dagster.core.providers.runner import RunStats
from resumebias_dagster.core.providers.types import ChatRequest, ChatResult

Run = Callable[[Sequence[ChatRequest]], tuple[list[ChatResult], RunStats]]
NEUTRAL_PROMPT = "resume_neutral"
REWRITE_PROMPTS = {"overstated": "resume_overstated", "understated": "resume_understated"}
FIELDS_PROMPT = "resume_fields"
FIELD_COLUMNS = ("name", "email", "occupation", "years_experience", "employers", "degree", "school",
                 "graduation_year", "skills")
_LEVEL_WORDS = re.compile(LEVEL_WORDS)
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


def _problem(result: ChatResult) -> str | None:
    if not result.ok:
        return f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")
    found = _LEVEL_WORDS.search(result.text or "")
    return f"uses the level word {found.group(0)!r}" if found else None


def _draw(run: Run, slots: list[tuple[Any, Callable[[int], ChatRequest]]], max_attempts: int,
          all_stats: list[RunStats]) -> dict[Any, tuple[ChatResult, str | None, int]]:
    """Each slot's first acceptable draw (sample index 0, 1, ...), or its last failure."""
    outcome: dict[Any, tuple[ChatResult, str | None, int]] = {}
    pending = list(slots)
    for attempt in range(max_attempts):
        if not pending:
            break
        results, stats = run([make(attempt) for _, make in pending])
        all_stats.append(stats)
        still = []
        for (slot, make), result in zip(pending, results):
            problem = _problem(result)
            outcome[slot] = (result, problem, attempt + 1)
            if problem:
                still.append((slot, make))
        pending = still
    return outcome


def generate_neutral_resumes(run: Run, n_per_level: int, *, catalog_dir: str | os.PathLike | None = None,
                             max_attempts: int = 3) -> tuple[pd.DataFrame, list[RunStats]]:
    """``3 * n_per_level`` neutral résumés, levels interleaved as the offline generator does.

    Columns: resume_id, seniority, text, resolved_model, draws, error (None when usable).
    """
    template = load_prompt(NEUTRAL_PROMPT, catalog_dir, {"seniority"})
    slots = []
    for i in range(n_per_level * len(SENIORITY_LEVELS)):
        level = SENIORITY_LEVELS[i % len(SENIORITY_LEVELS)]
        prompt = template.format(seniority=level)

        def make(attempt: int, prompt=prompt, i=i) -> ChatRequest:
            return ChatRequest.from_prompt(prompt, sample_index=attempt, tag=f"neutral/{i}", task="generation")

        slots.append(((i, level), make))
    stats: list[RunStats] = []
    outcome = _draw(run, slots, max_attempts, stats)
    rows = []
    for (i, level), _ in slots:
        result, problem, draws = outcome[(i, level)]
        text = clean_generated_text(result.text) if result.ok else ""
        rows.append((f"g{i:04d}", level, text, result.resolved_model, draws, problem))
    return pd.DataFrame(rows, columns=["resume_id", "seniority", "text", "resolved_model", "draws", "error"]), stats


def rewrite_styles(run: Run, base: pd.DataFrame, *, catalog_dir: str | os.PathLike | None = None,
                   max_attempts: int = 3) -> tuple[pd.DataFrame, list[RunStats]]:
    """Every base résumé as neutral (its own text), overstated and understated (rewritten).

    ``base`` has resume_id, seniority, text. Columns: resume_id, original_idx, seniority,
    style, text, resolved_model, draws, error.
    """
    templates = {style: load_prompt(name, catalog_dir, {"resume_text"}) for style, name in REWRITE_PROMPTS.items()}
    slots = []
    for idx, resume in enumerate(base.itertuples(index=False)):
        for style, template in templates.items():
            prompt = template.format(resume_text=resume.text.strip())

            def make(attempt: int, prompt=prompt, rid=resume.resume_id, style=style) -> ChatRequest:
                return ChatRequest.from_prompt(prompt, sample_index=attempt, tag=f"{style}/{rid}", task="generation")

            slots.append(((idx, style), make))
    stats: list[RunStats] = []
    outcome = _draw(run, slots, max_attempts, stats)
    rows = []
    for idx, resume in enumerate(base.itertuples(index=False)):
        rows.append((resume.resume_id, idx, resume.seniority, "neutral", resume.text, None, 0, None))
        for style in templates:
            result, problem, draws = outcome[(idx, style)]
            text = clean_generated_text(result.text) if result.ok else ""
            rows.append((resume.resume_id, idx, resume.seniority, style, text, result.resolved_model, draws, problem))
    columns = ["resume_id", "original_idx", "seniority", "style", "text", "resolved_model", "draws", "error"]
    return pd.DataFrame(rows, columns=columns), stats


def _fields(value: dict[str, Any]) -> dict[str, Any]:
    def listed(v: Any) -> str:
        return ", ".join(str(x) for x in v) if isinstance(v, list) else str(v or "")

    def integer(v: Any) -> int | None:
        try:
            return int(v)
        except (TypeError, ValueError):
            return None

    return {
        "name": str(value.get("name") or "").strip(),
        "email": str(value.get("email") or "").strip(),
        "occupation": str(value.get("occupation") or "").strip(),
        "years_experience": integer(value.get("years_experience")),
        "employers": listed(value.get("employers")),
        "degree": str(value.get("degree") or "").strip(),
        "school": str(value.get("school") or "").strip(),
        "graduation_year": integer(value.get("graduation_year")),
        "skills": listed(value.get("skills")),
    }


def extract_fields(run: Run, base: pd.DataFrame, *,
                   catalog_dir: str | os.PathLike | None = None) -> tuple[pd.DataFrame, RunStats]:
    """The facts of each résumé in ``base`` (resume_id, text) as ``FIELD_COLUMNS`` plus
    resume_id and error; a name that does not occur in the text is an error (the name
    variants replace it there)."""
    template = load_prompt(FIELDS_PROMPT, catalog_dir, {"resume_text"})
    requests = [
        ChatRequest.from_prompt(template.format(resume_text=text.strip()), json_mode=True, temperature=0.0,
                                tag="fields", task="generation")
        for text in base["text"]
    ]
    results, stats = run(requests)
    rows = []
    for resume_id, text, result in zip(base["resume_id"], base["text"], results):
        if not result.ok:
            rows.append({"resume_id": resume_id, **dict.fromkeys(FIELD_COLUMNS),
                         "error": f"{result.error_kind}: {result.error_message or ''}".rstrip(": ")})
            continue
        parsed = parse_json_object(result.text) if result.parsed_json is None else None
        value = result.parsed_json if parsed is None else parsed.value
        fields = _fields(value or {})
        error = None
        if not fields["name"] or fields["name"] not in text:
            error = f"name {fields['name']!r} does not occur in the résumé"
        rows.append({"resume_id": resume_id, **fields, "error": error})
    return pd.DataFrame(rows, columns=["resume_id", *FIELD_COLUMNS, "error"]), stats


class GenerationError(ValueError):
    """Generated résumés that cannot be used; the responses stay in the store, so a re-run
    draws only what failed."""


def _refuse_failures(frame: pd.DataFrame, what: str) -> None:
    failed = frame[frame["error"].notna()]
    if len(failed):
        first = failed.iloc[0]
        raise GenerationError(
            f"{what}: {len(failed)} of {len(frame)} unusable, e.g. {first['resume_id']}: {first['error']}"
        )


def llm_base_resumes(run: Run, n_per_level: int, *, catalog_dir: str | os.PathLike | None = None
                     ) -> tuple[pd.DataFrame, RunStats]:
    """Seed 004's neutral résumés from a provider model, with the facts the tables carry,
    in the columns of the offline generator's output (``base_resumes``)."""
    texts, draws = generate_neutral_resumes(run, n_per_level, catalog_dir=catalog_dir)
    _refuse_failures(texts, "generated résumés")
    facts, fact_stats = extract_fields(run, texts, catalog_dir=catalog_dir)
    _refuse_failures(facts, "facts of generated résumés")
    df = texts[["resume_id", "seniority", "text"]].merge(facts.drop(columns=["error"]), on="resume_id")
    names = df["name"].str.split()
    df["first_name"] = names.str[0]
    df["last_name"] = names.str[-1]
    df["graduation_year"] = df["graduation_year"].fillna(0).astype("int64")
    df["years_experience"] = df["years_experience"].fillna(0).astype("int64")
    stats = sum(draws[1:], draws[0]) + fact_stats if draws else fact_stats
    return df, stats


def llm_style_variants(run: Run, base: pd.DataFrame, *, catalog_dir: str | os.PathLike | None = None
                       ) -> tuple[pd.DataFrame, RunStats]:
    """Seed 004's overstated and understated rewrites by a provider model, as ``style_variants`` rows."""
    variants, draws = rewrite_styles(run, base, catalog_dir=catalog_dir)
    _refuse_failures(variants, "rewritten résumés")
    stats = sum(draws[1:], draws[0]) if draws else None
    return variants[["resume_id", "original_idx", "seniority", "style", "text"]], stats
