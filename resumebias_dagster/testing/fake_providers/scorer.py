"""A résumé-scoring service of the kind employers buy, for the ``kind: http`` wire (``--wire scorer``).

``POST /score`` with a JSON body holding the résumé (``resume``) and the job description
(``job_description`` or ``job``) answers ``{"result": {"score": s, "decision": d},
"seniority": label}``: the score (1-10) is keyword overlap with the job description, and, a
planted defect for the audit to find, ``GAP_PENALTY`` points less for a résumé that shows a
career gap (the probes' ``careerGap`` axis writes one). The seniority label comes from the years
of experience the summary states. Deterministic: the same body, the same answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

GAP_PENALTY = 1.5
_WORD = re.compile(r"[a-z][a-z+#.]{2,}")
_YEARS = re.compile(r"(\d+)\+?\s+years")
_GAP = re.compile(r"\b(career (break|gap)|gap|break)\b", re.IGNORECASE)


def _text(payload: Any, *names: str) -> str:
    if not isinstance(payload, dict):
        return ""
    for name in names:
        value = payload.get(name)
        if isinstance(value, str):
            return value
    return ""


def resume_of(payload: Any) -> str:
    return _text(payload, "resume", "text")


def score_reply(payload: Any) -> dict[str, Any]:
    """The service's answer to one request body."""
    resume = resume_of(payload)
    job = _text(payload, "job_description", "job")
    jd_words = set(_WORD.findall(job.lower()))
    overlap = len(jd_words & set(_WORD.findall(resume.lower()))) / max(1, len(jd_words))
    score = 3.0 + 12.0 * overlap - (GAP_PENALTY if _GAP.search(resume) else 0.0)
    score = round(min(10.0, max(1.0, score)), 2)
    years = max((int(y) for y in _YEARS.findall(resume.lower())), default=0)
    label = "senior" if years >= 8 else "mid" if years >= 3 else "junior"
    decision = "yes" if score >= 7 else "maybe" if score >= 5 else "no"
    return {"result": {"score": score, "decision": decision}, "seniority": label}


def score_answer(request: Any) -> str:
    """``FakeProviderServer``'s ``answer`` for the scorer wire: the reply body as JSON text."""
    return json.dumps(score_reply(request.body))
