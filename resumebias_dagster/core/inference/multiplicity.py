"""Multiplicity control: Benjamini–Hochberg within a family, and families selected first.

A study tests many things (every probe level on every job description, each name contrast),
grouped into declared families (per model: a study's experiment, an arm and axis of the
fit audit). ``family_adjusted`` follows Benjamini & Bogomolov (2014): each family's Simes
p-value; Benjamini–Hochberg over those selects R of the m families at level alpha; within a
selected family, Benjamini–Hochberg at level alpha * R / m. That controls the false
discovery rate within the selected families, and when nothing is there at all (the null
the calibration simulates) the chance of any finding is at most alpha, however many
families the study has. One family's p-values never enter another family's ranking, so a
family of near-certain findings (a hidden instruction in the résumé) does not loosen the
threshold inside another; it only counts towards R. Keeping whole groups of families apart
(``scope``: the fit audit's arms) and a Simes gate over all of them keeps both promises: a
study with nothing in it has at most an alpha chance of any finding, and prompt-injection
families never enter the probe families' selection.
"""

from __future__ import annotations

import numpy as np


def bh_qvalues(p: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Benjamini–Hochberg q-values of ``p`` within each group (NaN p: NaN q, not counted)."""
    p = np.asarray(p, dtype=float)
    groups = np.zeros(len(p), dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    q = np.full(len(p), np.nan)
    idx = np.flatnonzero(np.isfinite(p))
    if not len(idx):
        return q
    g, pv = groups[idx], p[idx]
    order = np.lexsort((pv, g))
    gs, ps = g[order], pv[order]
    counts = np.bincount(gs)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(ps)) - starts[gs] + 1
    raw = np.minimum(ps * counts[gs] / rank, 1.0)
    # Step-up: running minimum from the largest p down, restarted per group. Walking
    # backwards the groups come in descending order, so adding 2*group keeps each group's
    # values (in [0, 1]) below all earlier ones and one accumulate does every group.
    shifted = raw[::-1] + 2.0 * gs[::-1]
    q[idx[order]] = np.minimum.accumulate(shifted)[::-1] - 2.0 * gs
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


def family_adjusted(
    p: np.ndarray,
    family: np.ndarray,
    scope: np.ndarray | None = None,
    alpha: float = 0.05,
    gate: np.ndarray | None = None,
) -> np.ndarray:
    """Adjusted p of every finding: at most ``alpha`` exactly when it is a discovery of the
    Benjamini–Bogomolov procedure run over the families of each ``scope`` (e.g. an arm of a
    model), behind the Simes test of everything in its ``gate`` (e.g. the model).

    ``family``, ``scope`` and ``gate`` are codes per finding. The value is the largest of the
    gate's Simes p, the family's BH-adjusted Simes p and the within-family q times m / R,
    capped at 1; NaN where p is NaN. The gate keeps the chance of any finding in a study with
    nothing in it at alpha however many scopes it has; once it is passed (a hidden
    instruction that works passes it), each scope is judged on its own families only.
    """
    p = np.asarray(p, dtype=float)
    family = np.asarray(family, dtype=np.int64)
    scope = np.zeros(len(p), dtype=np.int64) if scope is None else np.asarray(scope, dtype=np.int64)
    out = np.full(len(p), np.nan)
    if not len(p):
        return out
    q_within = bh_qvalues(p, family)
    family_p = simes(p, family)
    family_scope = np.zeros(len(family_p), dtype=np.int64)
    family_scope[family] = scope
    tested = np.isfinite(family_p)
    family_q = np.full(len(family_p), np.nan)
    family_q[tested] = bh_qvalues(family_p[tested], family_scope[tested])
    m = np.bincount(family_scope[tested], minlength=int(scope.max()) + 1).astype(float)
    r = np.bincount(family_scope[tested & (family_q <= alpha)], minlength=len(m)).astype(float)
    fs = family_scope[family]
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = q_within * m[fs] / np.maximum(r[fs], 1.0)
    out = np.minimum(1.0, np.fmax(family_q[family], scaled))
    if gate is not None:
        gate = np.asarray(gate, dtype=np.int64)
        out = np.minimum(1.0, np.fmax(out, simes(p, gate)[gate]))
    return np.where(np.isfinite(p), out, np.nan)
