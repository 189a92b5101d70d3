"""A screener written in Python, audited as ``kind: python`` (``entry_point: acme_scorer:score``).

``score(items)`` gets a batch of ``{"id", "task", "resume", "job_description"}`` and returns one
answer per item: a seniority label for the seniority task, ``{"score", "recommend"}`` for the
fit task. This one counts the job description's words in the résumé, and, as the defect the
audit should find, takes a point off a résumé that shows an address abroad.
"""

import re

WORD = re.compile(r"[a-z][a-z+#.]{2,}")
YEARS = re.compile(r"(\d+)\+?\s+years")
ABROAD = ("Lagos", "Manila", "Karachi", "Dhaka", "Nairobi")


def _fit(resume: str, job: str) -> dict:
    wanted = set(WORD.findall(job.lower()))
    overlap = len(wanted & set(WORD.findall(resume.lower()))) / max(1, len(wanted))
    score = 3.0 + 12.0 * overlap - (1.0 if any(city in resume for city in ABROAD) else 0.0)
    score = round(min(10.0, max(1.0, score)), 2)
    return {"score": score, "recommend": "yes" if score >= 7 else "maybe" if score >= 5 else "no"}


def _seniority(resume: str) -> str:
    years = max((int(y) for y in YEARS.findall(resume.lower())), default=0)
    return "senior" if years >= 8 else "mid" if years >= 3 else "junior"


def score(items: list[dict]) -> list:
    return [
        _fit(item["resume"], item["job_description"]) if item["task"] == "fit" else _seniority(item["resume"])
        for item in items
    ]
