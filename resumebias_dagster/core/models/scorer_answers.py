"""What a scorer of the user's may answer, whatever carries it (``kind: python``, ``kind: http``).

- task ``seniority``: a label (``"junior"``, ``"mid"`` or ``"senior"``), or a mapping of each of
  the three labels to its probability (a distribution summing to 1 within ``SUM_TOLERANCE``);
- task ``fit``: a number from 1 to 10, or a mapping ``{"score": number, "recommend": "yes" |
  "no" | "maybe"}`` (``recommend`` optional).

``validate`` turns one answer into an ``Answer`` or says why it breaks the contract.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.common.parsing import UNREADABLE, shown

RECOMMENDATIONS = ("yes", "no", "maybe")
SUM_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Answer:
    """One item's validated answer: a seniority distribution (label index -> probability; one-hot
    with ``label`` set for a bare label) or a fit ``score`` with an optional ``recommend``."""

    probs: tuple[float, ...] | None = None
    label: str | None = None
    score: float | None = None
    recommend: str | None = None
    latency_s: float = math.nan


def _seniority(result: Any) -> tuple[tuple[float, ...], str | None] | str:
    """The distribution (and label, for a bare label) of one answer, or why it breaks the contract."""
    levels = list(SENIORITY_LEVELS)
    if isinstance(result, str):
        if result not in levels:
            return f"label {shown(result)} is not one of {', '.join(levels)}"
        return tuple(float(label == result) for label in levels), result
    if isinstance(result, dict):
        if set(result) != set(levels):
            return f"a distribution must map exactly {', '.join(levels)} to probabilities, got keys {shown(sorted(map(str, result)))}"
        probs = []
        for label in levels:
            p = result[label]
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                return f"probability of {label} {shown(p)} is not a number in [0, 1]"
            probs.append(float(p))
        if abs(sum(probs) - 1) > SUM_TOLERANCE:
            return f"the probabilities sum to {sum(probs)!r}, not 1 (within {SUM_TOLERANCE})"
        return tuple(probs), None
    return f"a seniority answer must be a label or a mapping label -> probability, got {type(result).__name__}"


def _score(raw: Any) -> float | str:
    # An int is compared as it is: 10**400 has no float (math.isfinite would raise).
    finite = isinstance(raw, int) or (isinstance(raw, float) and math.isfinite(raw))
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not finite or not 1 <= raw <= 10:
        return f"score {shown(raw)} is not a number from 1 to 10"
    return float(raw)


def _fit(result: Any) -> tuple[float, str | None] | str:
    if isinstance(result, dict):
        unknown = set(result) - {"score", "recommend"}
        if unknown:
            return (
                f"unknown key(s) {shown(', '.join(sorted(map(str, unknown))))} (a fit answer has score and recommend)"
            )
        if "score" not in result:
            return "a fit answer mapping has no score"
        score = _score(result["score"])
        recommend = result.get("recommend")
        if recommend is not None and recommend not in RECOMMENDATIONS:
            return f"recommend {shown(recommend)} is not one of {', '.join(RECOMMENDATIONS)}"
        return score if isinstance(score, str) else (score, recommend)
    score = _score(result)
    return score if isinstance(score, str) else (score, None)


def validate(result: Any, task: str) -> Answer | str:
    """One answer of ``task`` as an ``Answer``, or the reason it breaks the contract (never an
    exception: the answer is stored already, and an exception would fail every re-run)."""
    try:
        return _validated(result, task)
    except UNREADABLE as exc:
        return f"the answer cannot be read ({type(exc).__name__})"


def _validated(result: Any, task: str) -> Answer | str:
    if task == "seniority":
        checked = _seniority(result)
        return checked if isinstance(checked, str) else Answer(probs=checked[0], label=checked[1])
    fit = _fit(result)
    return fit if isinstance(fit, str) else Answer(score=fit[0], recommend=fit[1])
