"""Simulated answers to the pairwise task (tests and the calibration benchmark), as
``PairwiseChoices`` rows, with the true value of every pairwise finding known exactly.

Each (job description, résumé, group) set has a better and a worse twin per edit and equal twins
(``EQUAL_EDITS``), every pair shown with the twin at A and at B in every run, as
``core/jd_audit/pairwise.py`` shows them. A simulated chooser answers each (pair, order, run)
independently:

* on a better or worse twin: the more qualified résumé with probability ``validity - tie / 2``,
  "equal" with probability ``tie``, else the less qualified, whatever the order, so its true
  criterion validity (equal counting half) is ``validity`` for its group;
* on an equal twin: "equal" with probability ``equal``, else either résumé at random;
* ``always_a``: candidate A, whatever it is shown (a chooser that follows position only);
* ``sticky``: the answer of run 0 repeated in every run (temperature 0: the same choice every
  run), so the runs add no information.

The truths (``truths``): criterion validity per group is ``validity``; the abstention on equals of
a pair-run (``pairwise_stats.abstention_rows``) is ``P(equal) + P(A)^2 + P(B)^2`` for answers
that choose A, B and equal with those probabilities in both orders, so ``equal + (1 - equal)^2 / 2``
here (0.5 for a chooser that never says equal, 1 for ``always_a``); the position finding's is 0,
or 0.5 for ``always_a``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from resumebias_dagster.core.jd_audit.pairwise import CHOICE_COLUMNS
from resumebias_dagster.testing.validity_simulation import EDITS, GROUPS

EQUAL_EDITS = ("reorder", "placebo")
MORE = {"better": "twin", "worse": "baseline"}
OTHER = {"twin": "baseline", "baseline": "twin"}


def _per_group(value: float | Mapping[str, float], groups: Sequence[str], default: float) -> dict[str, float]:
    return {g: float(value.get(g, default)) if isinstance(value, Mapping) else float(value) for g in groups}


def _grid(resumes: int, jds: int, groups: Sequence[str], runs: int, names: dict) -> pd.DataFrame:
    """Every (jd, résumé, group, twin, order, run) of the design, with its set's name."""
    twins = [(f"{role}:{e}", role, e) for e in EDITS for role in ("better", "worse")]
    twins += [(f"equal:{e}", "equal", e) for e in EQUAL_EDITS]
    rows = [
        (f"j{j}", f"r{r:03d}", g, names[g, r], twin, role, edit, pos, run)
        for j in range(jds)
        for r in range(resumes)
        for g in groups
        for twin, role, edit in twins
        for pos in ("A", "B")
        for run in range(runs)
    ]
    columns = ["jd", "resume_id", "group", "name", "twin", "role", "edit", "twin_position", "run"]
    return pd.DataFrame(rows, columns=columns)


def simulate_choices(
    seed: int,
    *,
    resumes: int,
    jds: int = 1,
    runs: int = 5,
    groups: Sequence[str] = GROUPS[:2],
    validity: float | Mapping[str, float] = 0.5,
    tie: float = 0.0,
    equal: float | Mapping[str, float] = 0.0,
    always_a: bool = False,
    sticky: bool = False,
    name_pool: int = 0,
    model: str = "chat",
) -> pd.DataFrame:
    """``PairwiseChoices`` rows (every column, in order) of one simulated chooser (module
    docstring); ``validity`` and ``equal`` per group or one for all, ``validity`` within
    ``tie / 2 .. 1 - tie / 2``."""
    rng = np.random.default_rng(seed)
    names = {
        (g, r): f"{g}#{r if name_pool == 0 else int(rng.integers(name_pool))}" for g in groups for r in range(resumes)
    }
    d = _grid(resumes, jds, groups, runs, names)
    v = d["group"].map(_per_group(validity, groups, 0.5)).to_numpy(float)
    q = d["group"].map(_per_group(equal, groups, 0.0)).to_numpy(float)
    u = rng.random(len(d))
    coin = rng.random(len(d)) < 0.5
    if sticky:  # run 0's draws in every run
        first = d.groupby(["jd", "resume_id", "group", "twin", "twin_position"], sort=False).ngroup().to_numpy()
        at_run0 = np.flatnonzero(d["run"].to_numpy() == 0)
        u, coin = u[at_run0][first], coin[at_run0][first]
    role = d["role"].to_numpy()
    more = np.where(role == "worse", "baseline", "twin")
    unequal = np.where(u < tie, "equal", np.where(u < v + tie / 2, more, np.vectorize(OTHER.get)(more)))
    on_equal = np.where(u < q, "equal", np.where(coin, "twin", "baseline"))
    picked = np.where(role == "equal", on_equal, unequal)
    position = d["twin_position"].to_numpy()
    if always_a:
        picked = np.where(position == "A", "twin", "baseline")
    other_position = np.where(position == "A", "B", "A")
    choice = np.where(picked == "equal", "equal", np.where(picked == "twin", position, other_position))
    d = d.assign(model=model, choice=choice.astype(object), picked=picked.astype(object))
    n = len(d)
    d = d.assign(error=None, answer=choice.astype(object), resolved_model=model, latency_s=0.0, p_choice=None)
    d["error"] = pd.Series([None] * n, dtype=object)
    d["p_choice"] = pd.Series([None] * n, dtype=object)
    return d[list(CHOICE_COLUMNS)]


def truths(
    *,
    groups: Sequence[str] = GROUPS[:2],
    validity: float | Mapping[str, float] = 0.5,
    equal: float | Mapping[str, float] = 0.0,
    always_a: bool = False,
    **_: object,
) -> dict[str, dict[str, float]]:
    """The true criterion validity and abstention per group, and the position finding's truth."""
    crit = _per_group(validity, groups, 0.5)
    q = _per_group(equal, groups, 0.0)
    if always_a:
        crit = dict.fromkeys(groups, 0.5)
        abst = dict.fromkeys(groups, 1.0)
    else:
        abst = {g: q[g] + (1 - q[g]) ** 2 / 2 for g in groups}
    return {"criterion": crit, "abstention": abst, "position": {"": 0.5 if always_a else 0.0}}


__all__ = ["EQUAL_EDITS", "simulate_choices", "truths"]
