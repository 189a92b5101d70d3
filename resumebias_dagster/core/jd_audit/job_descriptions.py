"""Job descriptions of the fit-scoring audit (study 003) and the fit-scoring prompt.

A job description is a Markdown file with a small YAML front matter::

    ---
    id: staff-software-engineer          # partition key: lower-case letters, digits, "-" and "_"
    title: Staff Software Engineer
    seniority: staff                     # optional hint, as in the title
    required_skills: [Go, [Java, Kotlin]] # optional: what the Requirements section states;
    preferred_skills: [Terraform]         #   a list inside the list is "one of"
    min_years: 8                          # optional: years of relevant experience (null: none stated)
    degree: bachelor                      # optional: none, bachelor, master or phd (null: none stated)
    certifications: [[CKA, CKAD]]         # optional: a person's certifications it requires or prefers
    ---
    ## About the role
    ...

The packaged set lives in ``catalog/job_descriptions/``; a user catalog folder with its own
``job_descriptions/`` folder replaces it, and ``folder=`` points at any other folder.

The requirement keys feed the validity pairs (``core/jd_audit/validity``): a file without them
still loads, and its pairs say which edits its job description gives no direction for.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from resumebias_dagster.catalog import CatalogError, catalog_path
from resumebias_dagster.core.common.prompts import RESUME_CHAR_CAP, load_prompt
from resumebias_dagster.core.tables import JobDescriptions, columns

JD_FOLDER = "job_descriptions"
FIT_PROMPT = "fit_scoring"
FIT_PROMPT_FIELDS = frozenset({"job_description", "resume_text"})
JD_COLUMNS = columns(JobDescriptions)  # the job_descriptions table (core/tables/)

CatalogDir = str | os.PathLike | None

_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


# Degree levels a job description may ask for, lowest first ("none": it asks for no degree).
DEGREES = ("none", "bachelor", "master", "phd")
REQUIREMENT_KEYS = ("required_skills", "preferred_skills", "min_years", "degree", "certifications")


@dataclass(frozen=True)
class JobRequirements:
    """What a job description's Requirements section states (its front matter's requirement keys).

    A skill requirement is a tuple of alternatives ("one or more of Go, Java or Python"); one
    skill is a tuple of one. ``min_years`` and ``degree`` are None where the file states none.
    ``certifications``: the certifications of a person it requires or prefers, as skills are (a
    tuple of alternatives each); a product's certification (FIPS, Common Criteria) is none."""

    required_skills: tuple[tuple[str, ...], ...] = ()
    preferred_skills: tuple[tuple[str, ...], ...] = ()
    min_years: int | None = None
    degree: str | None = None
    certifications: tuple[tuple[str, ...], ...] = ()


def _skill(path: Path, key: str, k: int, value: Any, what: str = "skill") -> str:
    if not isinstance(value, str) or not value.strip() or "\n" in value or "," in value:
        raise CatalogError(
            f"{path}: {key}: entry {k} ({value!r}) must be a {what} (a one-line string without commas) "
            f"or a list of alternative {what}s"
        )
    return " ".join(value.split())


def _skills(path: Path, key: str, value: Any, what: str = "skill") -> tuple[tuple[str, ...], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise CatalogError(f"{path}: {key} must be a list of {what}s, got {value!r}")
    out = []
    for k, entry in enumerate(value, 1):
        if isinstance(entry, list):
            if not entry:
                raise CatalogError(f"{path}: {key}: entry {k} is an empty list of alternatives")
            out.append(tuple(_skill(path, key, k, v, what) for v in entry))
        else:
            out.append((_skill(path, key, k, entry, what),))
    return tuple(out)


def parse_requirements(path: Path, meta: dict[str, Any]) -> JobRequirements:
    """The requirement keys of a front matter (each optional), checked; a malformed value is a
    ``CatalogError`` naming the file and the key."""
    years = meta.get("min_years")
    if years is not None and (isinstance(years, bool) or not isinstance(years, int) or not 0 <= years <= 50):
        raise CatalogError(f"{path}: min_years must be a whole number of years from 0 to 50 or null, got {years!r}")
    degree = meta.get("degree")
    if degree is not None and degree not in DEGREES:
        raise CatalogError(f"{path}: degree must be one of {', '.join(DEGREES)} or null, got {degree!r}")
    return JobRequirements(
        _skills(path, "required_skills", meta.get("required_skills")),
        _skills(path, "preferred_skills", meta.get("preferred_skills")),
        years,
        degree,
        _skills(path, "certifications", meta.get("certifications"), "certification"),
    )


def _front_matter(path: Path) -> tuple[dict[str, Any], str]:
    match = _FRONT_MATTER.match(_read_text(path).lstrip("\ufeff"))
    if match is None:
        raise CatalogError(
            f"{path}: no YAML front matter (the file must start with a '---' line, then id and title, then '---')"
        )
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: the front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise CatalogError(f"{path}: the front matter must be a mapping with at least id and title")
    return meta, match.group(2)


def parse_job_description(path: Path) -> dict[str, str]:
    """``{jd, title, seniority, text}`` of one file; ``text`` is the title as a heading plus the body.
    The requirement keys are checked too (``parse_requirements``), so a malformed one stops the load."""
    meta, body = _front_matter(path)
    missing = [k for k in ("id", "title") if not str(meta.get(k) or "").strip()]
    if missing:
        raise CatalogError(f"{path}: the front matter lacks {' and '.join(missing)}")
    jd = str(meta["id"]).strip()
    if not _ID.fullmatch(jd):
        raise CatalogError(
            f"{path}: id {jd!r} may use only lower-case letters, digits, '-' and '_' "
            "(it becomes a Dagster partition key)"
        )
    parse_requirements(path, meta)
    body = body.strip()
    if not body:
        raise CatalogError(f"{path}: the job description body is empty")
    title = " ".join(str(meta["title"]).split())
    return {"jd": jd, "title": title, "seniority": str(meta.get("seniority") or ""), "text": f"# {title}\n\n{body}\n"}


def load_job_descriptions(folder: str | os.PathLike | None = None, catalog_dir: CatalogDir = None) -> pd.DataFrame:
    """Every ``*.md`` job description of ``folder`` (default: the catalog's), sorted by id.

    Columns ``jd`` (the id, a partition key), ``title``, ``seniority`` (may be empty), ``text``.
    """
    root = Path(folder) if folder is not None else catalog_path(JD_FOLDER, catalog_dir)
    if not root.is_dir():
        raise CatalogError(f"job description folder {root} does not exist or is not a folder")
    paths = sorted(root.glob("*.md"))
    if not paths:
        raise CatalogError(f"job description folder {root} holds no .md files")
    rows: list[dict[str, str]] = []
    seen: dict[str, Path] = {}
    for path in paths:
        row = parse_job_description(path)
        if row["jd"] in seen:
            raise CatalogError(f"{path}: id {row['jd']!r} is already used by {seen[row['jd']]}")
        seen[row["jd"]] = path
        rows.append(row)
    return pd.DataFrame(rows, columns=JD_COLUMNS).sort_values("jd", ignore_index=True)


def load_job_requirements(
    folder: str | os.PathLike | None = None, catalog_dir: CatalogDir = None
) -> dict[str, JobRequirements]:
    """Job description id -> its ``JobRequirements``, for every job description ``load_job_descriptions`` reads."""
    root = Path(folder) if folder is not None else catalog_path(JD_FOLDER, catalog_dir)
    load_job_descriptions(root)  # the same checks, and the same errors, as the table
    out = {}
    for path in sorted(root.glob("*.md")):
        meta, _ = _front_matter(path)
        out[str(meta["id"]).strip()] = parse_requirements(path, meta)
    return out


def load_fit_template(catalog_dir: CatalogDir = None) -> str:
    """The fit-scoring prompt template, with exactly the fields ``{job_description}`` and ``{resume_text}``.

    Its final newline is dropped: an embedded model continues the template's last line.
    """
    return load_prompt(FIT_PROMPT, catalog_dir, FIT_PROMPT_FIELDS)


def fit_prompt(template: str, job_description: str, resume_text: str) -> str:
    """Fill the fit template; the résumé is capped as in study 003."""
    return template.format(job_description=job_description.strip(), resume_text=resume_text[:RESUME_CHAR_CAP])
