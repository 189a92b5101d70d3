"""Simulated ranking experiments with known planted group effects (tests and benchmarks).

Each base résumé is shown under one name per group in every rotation of the groups (the
ranking task's cyclic Latin square, ``core/ranking/design.py``), ``runs`` times each. A
candidate's utility is ``effect[group] + quirk - position_bias x position + Gumbel noise``; the
model ranks by utility, so P(ranked first) is a softmax of the rest (a Plackett-Luce model).
The quirk (sd ``quirk_sd``) belongs to the (résumé, name) pair and stays the same over the
rotations and runs of one résumé: a model's reaction to one text under one name, which is why
the résumé, not the ranking, is the unit. Names come from pools of ``names_per_group`` per
group, so they recur across résumés as the catalog's do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

GROUPS = ("A", "B", "C", "D")


def simulate_rankings(
    rng: np.random.Generator,
    *,
    resumes: int = 30,
    runs: int = 5,
    groups: Sequence[str] = GROUPS,
    effects: Mapping[str, float] | None = None,
    quirk_sd: float = 0.5,
    position_bias: float = 0.3,
    names_per_group: int = 8,
) -> pd.DataFrame:
    """Rows as the ranking task stores them (``core/tables/ranking.py``'s ``Rankings``
    columns that ``selection_table`` reads), one model ``m`` and one job ``j``."""
    effects = dict(effects or {})
    groups = tuple(groups)
    rows = []
    for r in range(resumes):
        names = {g: f"{g} name {r % names_per_group}" for g in groups}
        quirk = {g: rng.normal(0.0, quirk_sd) for g in groups}
        for rotation in range(len(groups)):
            order = groups[rotation:] + groups[:rotation]
            shown = [names[g] for g in order]
            utility = np.array([effects.get(g, 0.0) + quirk[g] - position_bias * k for k, g in enumerate(order)])
            for run in range(runs):
                ranked = [shown[i] for i in np.argsort(-(utility + rng.gumbel(size=len(order))))]
                rows.append(
                    {
                        "model": "m",
                        "jd": "j",
                        "item_id": f"r{r}/r{rotation}",
                        "resume_id": f"r{r}",
                        "rotation": rotation,
                        "run": run,
                        "shown": json.dumps(shown),
                        "groups": json.dumps(list(order)),
                        "ranked": json.dumps(ranked),
                        "first": ranked[0],
                        "error": None,
                        "p_first": None,
                    }
                )
    return pd.DataFrame(rows)
