"""Planted screeners of issue 42's tests, written as a user writes a `kind: python` model (one
function over a batch of items, ``core/models/python_scorer.py``): one that ignores
qualification, one that scores what the job description's front matter asks for, and one that
does so except on résumés whose first line is a name in ``UNSEEN`` (the test fills it)."""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any

from resumebias_dagster.core.jd_audit.job_descriptions import DEGREES, load_job_descriptions, load_job_requirements

_LEVEL = {"B": 1, "M": 2, "P": 3}
_YEARS = re.compile(r"(\d+) years? of professional experience")
UNSEEN: set[str] = set()


@functools.cache
def requirements_by_text() -> dict[str, Any]:
    """Each packaged job description's requirements, by its text (what an item carries)."""
    jds = load_job_descriptions()
    return dict(zip(jds["text"].str.strip(), map(load_job_requirements().get, jds["jd"])))


def _after(resume: str, heading: str) -> str:
    lines = resume.split("\n")
    return lines[lines.index(heading) + 1]


def qualification(item: dict[str, Any]) -> float:
    """1-10: the share of required and preferred skills the skills section lists, the years the
    summary states up to the minimum, the latest degree up to the level asked, 3 points each."""
    req = requirements_by_text()[item["job_description"].strip()]
    resume = item["resume"]
    listed = {s.strip().lower() for s in _after(resume, "SKILLS").split(",")}
    groups = req.required_skills + req.preferred_skills
    met = sum(any(s.lower() in listed for s in group) for group in groups) / len(groups)
    m = _YEARS.search(resume)
    years = min(int(m.group(1)) if m else 0, req.min_years) / req.min_years
    ask = DEGREES.index(req.degree) if req.degree else 0
    degree = min(_LEVEL[_after(resume, "EDUCATION")[0]], ask) / ask if ask else 0
    return 1 + 3 * met + 3 * years + 3 * degree


def _noise(item: dict[str, Any]) -> float:
    return float(1 + int(hashlib.sha256(item["resume"].encode()).hexdigest(), 16) % 10)


def ignores(items: list[dict[str, Any]]) -> list[float]:
    return [_noise(i) for i in items]


def follows(items: list[dict[str, Any]]) -> list[float]:
    return [qualification(i) for i in items]


def follows_but_not_for_some(items: list[dict[str, Any]]) -> list[float]:
    return [_noise(i) if i["resume"].split("\n")[0].strip() in UNSEEN else qualification(i) for i in items]
