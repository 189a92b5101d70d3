"""Planted chat answers to the pairwise prompt (``prompts/pairwise.txt``), for the fake provider
server (``fake_providers``): one that reads both résumés as ``planted_validity.qualification``
does and names the more qualified (or says equal), and one that answers at random (a hash of
the prompt and the call's seed, so a re-run answers the same)."""

from __future__ import annotations

import hashlib
import re

from resumebias_dagster.testing.planted_validity import qualification

_PROMPT = re.compile(
    r"Job description:\n(?P<jd>.*?)\n\n=== Candidate A ===\n(?P<a>.*?)\n\n=== Candidate B ===\n(?P<b>.*)\n\nAnswer with one word",
    re.DOTALL,
)
# The planted follower's answers, in the forms the parser reads (core/jd_audit/pairwise_parse.py).
FORMS = {
    "A": ("A", "**A**", "Candidate A is more qualified."),
    "B": ("B", "Answer: B", "B. It lists more of the skills."),
}
EQUAL_FORMS = ("Equal", "They are equally qualified.")


def pair_of(prompt: str) -> tuple[str, str, str]:
    """The job description and the résumés shown as A and B in a pairwise prompt."""
    m = _PROMPT.search(prompt)
    if m is None:
        raise ValueError("not a pairwise prompt: no job description and candidates A and B")
    return m.group("jd"), m.group("a"), m.group("b")


def _pick(prompt: str, forms: tuple[str, ...]) -> str:
    return forms[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(forms)]


def follows(prompt: str) -> str:
    """The more qualified candidate by the job description's requirements, or equal."""
    jd, a, b = pair_of(prompt)
    qa = qualification({"job_description": jd, "resume": a})
    qb = qualification({"job_description": jd, "resume": b})
    if abs(qa - qb) < 1e-9:
        return _pick(prompt, EQUAL_FORMS)
    return _pick(prompt, FORMS["A" if qa > qb else "B"])


def at_random(prompt: str, seed: object = "") -> str:
    """A, B or Equal, by a hash of the prompt and ``seed`` (a third each)."""
    return _pick(f"{seed}|{prompt}", ("A", "B", "Equal"))
