"""Multiplicity control: families selected with strong control, Benjamini–Hochberg within.

A study tests many things (every probe level, each name contrast, each impact ratio),
grouped into declared families (per model: a study's experiment, an arm and axis of the
fit audit). ``family_adjusted``, per model (the ``gate``):

1. Each family's Simes p-value (valid for the family's null when its tests are independent
   or positively dependent, as contrasts of one set of résumés are).
2. Holm's step-down procedure over the model's families at level alpha selects R of its m
   families. Holm controls the chance of selecting any family with nothing in it at alpha
   under every configuration (strong control): a study with nothing in it has at most an
   alpha chance of any finding, and one real effect (a hidden instruction that works) does
   not raise the chance of a false finding in the other families above alpha. The
   Benjamini–Hochberg selection it replaces let one selected family lift the others'
   threshold: 16% of studies with a working prompt injection and nothing else reported a
   null finding.
3. Within a selected family, Benjamini–Hochberg at level alpha * R / m (Benjamini &
   Bogomolov 2014): the false discovery rate within the selected families. One family's
   p-values never enter another family's ranking.

``core/inference/power.py`` simulates this same procedure for the power and minimal
detectable effect each verdict prints.
"""

from __future__ import annotations

import numpy as np


def _ranked(p: np.ndarray, groups: np.ndarray | None):
    """The finite p-values sorted within their groups: (positions in ``p``, group of each,
    p, rank from 1 within the group, the group's size); None without a finite p."""
    p = np.asarray(p, dtype=float)
    groups = np.zeros(len(p), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    idx = np.flatnonzero(np.isfinite(p))
    if not len(idx):
        return None
    order = np.lexsort((p[idx], groups[idx]))
    at, gs, ps = idx[order], groups[idx][order], p[idx][order]
    counts = np.bincount(gs)
    rank = np.arange(len(ps)) - (np.cumsum(counts) - counts)[gs] + 1
    return at, gs, ps, rank, counts[gs]


def bh_qvalues(p: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Benjamini–Hochberg q-values of ``p`` within each group (NaN p: NaN q, not counted)."""
    q = np.full(len(p), np.nan)
    ranked = _ranked(p, groups)
    if ranked is None:
        return q
    at, gs, ps, rank, size = ranked
    raw = np.minimum(ps * size / rank, 1.0)
    # Step-up: running minimum from the largest p down, restarted per group. Walking
    # backwards the groups come in descending order, so adding 2*group keeps each group's
    # values (in [0, 1]) below all earlier ones and one accumulate does every group.
    shifted = raw[::-1] + 2.0 * gs[::-1]
    q[at] = np.minimum.accumulate(shifted)[::-1] - 2.0 * gs
    return q


def simes(p: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Simes' p-value of each group code 0..max (NaN for a group without a finite p)."""
    groups = np.asarray(groups, dtype=np.int64)
    size = int(groups.max()) + 1 if len(groups) else 0
    out = np.full(size, np.nan)
    q = bh_qvalues(p, groups)  # the smallest BH q of a group is its Simes p
    ok = np.isfinite(q)
    np.fmin.at(out, groups[ok], q[ok])
    return out


def holm(p: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p within each group (NaN p: NaN, not counted)."""
    out = np.full(len(p), np.nan)
    ranked = _ranked(p, groups)
    if ranked is None:
        return out
    at, gs, ps, rank, size = ranked
    raw = np.minimum(ps * (size - rank + 1), 1.0)
    # Step-down: running maximum from the smallest p up, restarted per group (shifting each
    # group by 2 * group keeps one accumulate from crossing groups).
    out[at] = np.maximum.accumulate(raw + 2.0 * gs) - 2.0 * gs
    return out


def family_adjusted(
    p: np.ndarray,
    family: np.ndarray,
    gate: np.ndarray | None = None,
    alpha: float = 0.05,
) -> np.ndarray:
    """Adjusted p of every finding: at most ``alpha`` exactly when it is a discovery of the
    procedure of the module docstring, run over the families of each ``gate`` (a model).

    ``family`` and ``gate`` are codes per finding. The value is the largest of the family's
    Holm-adjusted Simes p (over the gate's families) and the within-family BH q times m / R
    (m families tested in the gate, R selected), capped at 1; NaN where p is NaN.
    """
    p = np.asarray(p, dtype=float)
    family = np.asarray(family, dtype=np.int64)
    gate = np.zeros(len(p), dtype=np.int64) if gate is None else np.asarray(gate, dtype=np.int64)
    out = np.full(len(p), np.nan)
    if not len(p):
        return out
    q_within = bh_qvalues(p, family)
    family_p = simes(p, family)
    family_gate = np.zeros(len(family_p), dtype=np.int64)
    family_gate[family] = gate
    tested = np.isfinite(family_p)
    family_holm = np.full(len(family_p), np.nan)
    family_holm[tested] = holm(family_p[tested], family_gate[tested])
    m = np.bincount(family_gate[tested], minlength=int(gate.max()) + 1).astype(float)
    r = np.bincount(family_gate[tested & (family_holm <= alpha)], minlength=len(m)).astype(float)
    fg = family_gate[family]
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = q_within * m[fg] / np.maximum(r[fg], 1.0)
    out = np.minimum(1.0, np.fmax(family_holm[family], scaled))
    return np.where(np.isfinite(p), out, np.nan)
