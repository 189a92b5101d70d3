"""Simulated validity pairs and their scores (tests and the calibration benchmark), built to the
tables' interface (``ValidityPairs``, ``FitScores`` rows), with the true value of every
validity finding known exactly.

Each (job description, résumé, group) set has a baseline and, per edit, a better and a worse
twin, plus equal twins (edits that must not matter). Two kinds of screener:

* ``deterministic_validity``: one run, each text scored once. Each twin ties its baseline with
  probability ``tie``, else lands on the right side of it with the probability that makes the
  share of comparisons ordered right (ties half) exactly ``validity`` for its group. Equal twins
  move by ``equal_shift`` of their group.
* ``noisy_validity``: an LLM's sampled runs: a better twin's mean score sits ``delta`` above its
  baseline's, a worse one's ``delta`` below, every run adds normal noise of ``sd``. A comparison
  (of the means of ``runs`` runs) is right with probability ``Phi(delta / (sd sqrt(2 / runs)))``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

GROUPS = ("white_male", "black_female", "hispanic_male", "asian_female")
EDITS = ("skill", "years")
EQUAL_EDITS = ("reorder",)


def _names(rng: np.random.Generator, groups: Sequence[str], resumes: int, pool: int) -> dict[tuple[str, int], str]:
    """Each (group, résumé)'s name: its own (``pool`` 0), one of ``pool`` per group, or one per group (1)."""
    if pool == 0:
        return {(g, r): f"{g}#{r}" for g in groups for r in range(resumes)}
    return {(g, r): f"{g}#{int(rng.integers(pool))}" for g in groups for r in range(resumes)}


def _frames(rows: list[tuple], model: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, pairs) from rows (jd, resume_id, group, name, role, edit, run, score)."""
    raw = pd.DataFrame(rows, columns=["jd", "resume_id", "group", "name", "role", "edit", "run", "score"])
    raw["variant"] = np.where(
        raw["role"] == "baseline", raw["group"] + ":baseline", raw["group"] + ":" + raw["role"] + ":" + raw["edit"]
    )
    pairs = raw.drop_duplicates(["jd", "resume_id", "variant"]).drop(columns=["run", "score"]).reset_index(drop=True)
    pairs["detail"] = pairs["role"] + " " + pairs["edit"]
    pairs["text"] = "résumé " + pairs["resume_id"] + " " + pairs["variant"]
    pairs = pairs.assign(arm="validity", axis=pairs["edit"], level=pairs["role"])
    scores = raw.assign(model=model, arm="validity", axis=raw["edit"], level=raw["role"])
    columns = ["model", "jd", "resume_id", "variant", "arm", "axis", "level", "name", "run", "score"]
    return scores[columns], pairs


def deterministic_validity(
    seed: int,
    *,
    resumes: int,
    jds: int = 1,
    groups: Sequence[str] = GROUPS[:2],
    edits: Sequence[str] = EDITS,
    validity: float | Mapping[str, float] = 0.5,
    tie: float = 0.0,
    equal_shift: Mapping[str, float] | None = None,
    name_pool: int = 0,
    model: str = "tool",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, pairs) of a deterministic scorer (module docstring); ``validity`` per group or
    one for all, at least ``tie / 2`` and at most ``1 - tie / 2``."""
    rng = np.random.default_rng(seed)
    per_group = {g: validity.get(g, 0.5) if isinstance(validity, Mapping) else validity for g in groups}
    shift = dict(equal_shift or {})
    names = _names(rng, groups, resumes, name_pool)
    rows = []
    for j in range(jds):
        for r in range(resumes):
            base = round(float(rng.uniform(3.0, 8.0)), 2)
            for g in groups:
                name = names[g, r]
                rows.append((f"j{j}", f"r{r:03d}", g, name, "baseline", "baseline", 0, base))
                right = (per_group[g] - tie / 2) / (1 - tie) if tie < 1 else 0.5
                for e in edits:
                    for role, sign in (("better", 1.0), ("worse", -1.0)):
                        u = rng.random()
                        step = round(float(rng.uniform(0.5, 2.0)), 2)
                        direction = 0.0 if u < tie else (sign if rng.random() < right else -sign)
                        rows.append((f"j{j}", f"r{r:03d}", g, name, role, e, 0, base + direction * step))
                for e in EQUAL_EDITS:
                    rows.append((f"j{j}", f"r{r:03d}", g, name, "equal", e, 0, base + shift.get(g, 0.0)))
    return _frames(rows, model)


def noisy_validity(
    seed: int,
    *,
    resumes: int,
    jds: int = 1,
    runs: int = 5,
    groups: Sequence[str] = GROUPS[:2],
    edits: Sequence[str] = EDITS,
    delta: float | Mapping[str, float] = 0.0,
    sd: float = 1.0,
    equal_shift: Mapping[str, float] | None = None,
    name_pool: int = 0,
    model: str = "llm",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, pairs) of a sampled LLM (module docstring): ``delta`` per group or one for all."""
    rng = np.random.default_rng(seed)
    per_group = {g: delta.get(g, 0.0) if isinstance(delta, Mapping) else delta for g in groups}
    shift = dict(equal_shift or {})
    names = _names(rng, groups, resumes, name_pool)
    rows = []
    for j in range(jds):
        for r in range(resumes):
            base = float(rng.uniform(4.0, 7.0))
            for g in groups:
                texts = [("baseline", "baseline", base)]
                texts += [
                    (role, e, base + sign * per_group[g])
                    for e in edits
                    for role, sign in (("better", 1), ("worse", -1))
                ]
                texts += [("equal", e, base + shift.get(g, 0.0)) for e in EQUAL_EDITS]
                for role, e, mean in texts:
                    for k, noise in enumerate(rng.normal(0.0, sd, runs)):
                        rows.append((f"j{j}", f"r{r:03d}", g, names[g, r], role, e, k, mean + float(noise)))
    return _frames(rows, model)


def noisy_truth(delta: float, sd: float, runs: int) -> float:
    """The true criterion validity of ``noisy_validity``: P(a twin's mean falls on its side of the baseline's)."""
    return float(stats.norm.cdf(delta / (sd * np.sqrt(2.0 / runs))))


def delta_for(validity: float, sd: float, runs: int) -> float:
    """The ``delta`` at which ``noisy_validity``'s criterion validity is ``validity``."""
    return float(stats.norm.ppf(validity) * sd * np.sqrt(2.0 / runs))


__all__ = ["EDITS", "EQUAL_EDITS", "GROUPS", "delta_for", "deterministic_validity", "noisy_truth", "noisy_validity"]
