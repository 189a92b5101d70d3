"""Notebook 001's metrics, step 2: per-row measures, per-résumé originals and the sums behind every rate and floor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from resumebias_dagster.core.seniority.metrics.prepare import (
    _RANK_OF_CODE,
    DIST_COLUMNS,
    KIND_ORDER,
    PROMOTION_TOLERANCE,
    _combine,
    _name_scopes,
    _prepare,
    _Prepared,
)

# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class _Originals:
    """Codes of the originals, one original = a résumé code without its run."""

    of_resume: np.ndarray  # original code of each résumé code (``p.resume``)
    model: np.ndarray  # model code of each original
    kind: np.ndarray  # kind code of each original
    original_idx: np.ndarray  # original_idx of each original


@dataclass(frozen=True)
class _Scored:
    rows: pd.DataFrame  # one row per prediction, with the per-row measures
    resumes: pd.DataFrame  # one row per (model, variant_kind, run, original_idx)
    variant_kind: np.ndarray  # kind code of each variant category of ``rows``
    # One row per (model, variant_kind, original_idx) with at least one distribution row.
    dist_originals: pd.DataFrame
    # One row per text (model, variant_kind, original_idx, variant): inconsistent run subsets.
    texts: pd.DataFrame
    n_variants: np.ndarray  # variants of each kind in the data (the "V" of the floors)
    name_scopes: dict[int, str]  # model code -> name scope of its demographic rows (absent: not recorded)


def _comb(n: npt.ArrayLike, k: npt.ArrayLike) -> np.ndarray:
    """Binomial coefficients C(n, k) elementwise, as floats (exact integers below 2**53); 0 where n < k."""
    n, k = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(k, dtype=np.int64))
    out = np.ones(n.shape)
    for i in range(int(k.max()) if k.size else 0):
        out *= np.where(i < k, (n - i) / (i + 1), 1.0)  # after step i: C(n, i + 1)
    return np.where(n >= k, np.rint(out), 0.0)


def _dist_originals(
    p: _Prepared, dist: np.ndarray, has_dist: np.ndarray, n_variants: np.ndarray, originals: _Originals
) -> pd.DataFrame:
    """Per original: are all variants distributed, P(independent draws disagree), and the floor.

    ``dist`` is the renormalised (3, n) distribution. A variant's distribution is
    averaged over its run rows (they are identical by construction), then the
    agreement probability ``sum_k prod_v p_v(k)`` is a product over the variants of
    each original (one sort and ``multiply.reduceat``, no Python loop). The floor
    ``exp_inconsistency_floor`` is the mean over the original's variants of
    ``1 - sum_k p_v(k)^V``: V draws of one variant's text instead of one draw per variant.
    """
    idx = np.flatnonzero(has_dist)
    if len(idx) == 0:
        return pd.DataFrame(
            {
                "model": _categorical(np.zeros(0, np.int32), p.models),
                "variant_kind": _categorical(np.zeros(0, np.int32), KIND_ORDER),
                "original_idx": np.zeros(0, np.int64),
                "n_variants_dist": np.zeros(0, np.int64),
                "complete": np.zeros(0, bool),
                "exp_inconsistency": np.zeros(0, float),
                "exp_inconsistency_floor": np.zeros(0, float),
            }
        )
    res_orig, o_model, o_kind, o_idx = originals.of_resume, originals.model, originals.kind, originals.original_idx
    n_orig = len(o_model)
    # (original, variant) pairs with a distribution: mean distribution over the runs.
    width = max(len(p.variants), 1)
    pair, pair_keys = pd.factorize(res_orig[p.resume[idx]] * width + p.variant[idx])
    pair_orig = np.asarray(pair_keys, dtype=np.int64) // width
    rows_per_pair = np.bincount(pair, minlength=len(pair_keys))
    pair_dist = (
        np.stack([np.bincount(pair, weights=dist[j, idx], minlength=len(pair_keys)) for j in range(len(dist))], axis=1)
        / rows_per_pair[:, None]
    )
    n_variants_dist = np.bincount(pair_orig, minlength=n_orig)
    order = np.argsort(pair_orig, kind="stable")
    sorted_orig = pair_orig[order]
    starts = np.flatnonzero(np.r_[True, sorted_orig[1:] != sorted_orig[:-1]])
    agree = np.zeros(n_orig)
    agree[sorted_orig[starts]] = np.multiply.reduceat(pair_dist[order], starts, axis=0).sum(axis=1)
    # Retest: V independent draws of the pair's own distribution all agree.
    v = n_variants[o_kind[pair_orig]]
    self_agree = (pair_dist ** v[:, None]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        floor = np.bincount(pair_orig, weights=1.0 - self_agree, minlength=n_orig) / n_variants_dist
    complete = n_variants_dist == n_variants[o_kind]
    keep = n_variants_dist > 0
    return pd.DataFrame(
        {
            "model": _categorical(o_model[keep], p.models),
            "variant_kind": _categorical(o_kind[keep], KIND_ORDER),
            "original_idx": o_idx[keep],
            "n_variants_dist": n_variants_dist[keep],
            "complete": complete[keep],
            "exp_inconsistency": np.where(complete, np.clip(1.0 - agree, 0.0, 1.0), np.nan)[keep],
            "exp_inconsistency_floor": np.where(complete, np.clip(floor, 0.0, 1.0), np.nan)[keep],
        }
    )


def _categorical(codes: np.ndarray, categories: pd.Index | tuple[str, ...]) -> pd.Categorical:
    """``pd.Categorical.from_codes`` on code arrays (pandas-stubs types its arguments narrower than pandas takes)."""
    return pd.Categorical.from_codes(codes, categories)  # type: ignore[arg-type]  # pandas takes any array-like


@dataclass(frozen=True)
class _Resumes:
    """Per-résumé arrays (a résumé = model, variant_kind, run, original_idx), indexed by ``p.resume``."""

    kind: np.ndarray
    model: np.ndarray
    run: np.ndarray
    original_idx: np.ndarray
    n_rows: np.ndarray
    n_valid: np.ndarray
    n_distinct: np.ndarray
    complete: np.ndarray
    inconsistent: np.ndarray
    mean_rank: np.ndarray

    def frame(self, p: _Prepared) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "model": _categorical(self.model, p.models),
                "variant_kind": _categorical(self.kind, KIND_ORDER),
                "run": self.run,
                "original_idx": self.original_idx,
                "n_rows": self.n_rows,
                "n_valid": self.n_valid,
                "n_distinct": self.n_distinct,
                "complete": self.complete,
                "inconsistent": self.inconsistent,
            }
        )


def _resumes(p: _Prepared, pred_rank: np.ndarray, valid: np.ndarray, n_variants: np.ndarray) -> _Resumes:
    """Each résumé's counts, mean rank, completeness and the seniority study's inconsistency."""
    gid, n_groups = p.resume, p.n_resumes
    g_kind = np.zeros(n_groups, dtype=np.int64)
    g_model = np.zeros(n_groups, dtype=np.int64)
    g_run = np.zeros(n_groups, dtype=np.int64)
    g_orig = np.zeros(n_groups, dtype=np.int64)
    # All rows of a group share these values, so the scatter order does not matter.
    g_kind[gid], g_model[gid], g_run[gid], g_orig[gid] = p.kind, p.model, p.run, p.original_idx
    g_rows = np.bincount(gid, minlength=n_groups)
    g_valid = np.bincount(gid, weights=valid, minlength=n_groups).astype(np.int64)
    g_rank_sum = np.bincount(gid, weights=np.where(valid, pred_rank, 0), minlength=n_groups)
    g_distinct = np.zeros(n_groups, dtype=np.int64)
    for r in range(3):
        g_distinct += (np.bincount(gid[pred_rank == r], minlength=n_groups) > 0).astype(np.int64)
    # Duplicates are rejected, so the count of valid rows is the count of distinct
    # variants with a valid prediction (the seniority study's ``len(resume_preds) == 4``).
    g_complete = g_valid == n_variants[g_kind]
    g_inconsistent = g_complete & (g_distinct > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        g_mean_rank = g_rank_sum / g_valid
    return _Resumes(
        g_kind, g_model, g_run, g_orig, g_rows, g_valid, g_distinct, g_complete, g_inconsistent, g_mean_rank
    )


def _originals(g: _Resumes) -> _Originals:
    """An original is a résumé without its run: coded on the (runs x variants shorter) résumé arrays."""
    res_orig, n_orig = _combine(g.model, g.kind, pd.factorize(g.original_idx)[0])
    o_model = np.zeros(n_orig, dtype=np.int64)
    o_kind = np.zeros(n_orig, dtype=np.int64)
    o_idx = np.zeros(n_orig, dtype=np.int64)
    o_model[res_orig], o_kind[res_orig], o_idx[res_orig] = g.model, g.kind, g.original_idx
    return _Originals(res_orig, o_model, o_kind, o_idx)


def _texts(
    p: _Prepared, pred_rank: np.ndarray, valid: np.ndarray, n_variants: np.ndarray, originals: _Originals
) -> pd.DataFrame:
    """A text is one variant of one original over its runs: what the retest floors compare.

    Its label counts come from one bincount; the dense key needs no hashing.
    """
    res_orig, n_orig = originals.of_resume, len(originals.model)
    width = max(len(p.variants), 1)
    text_key = res_orig[p.resume].astype(np.int64) * width + p.variant
    decode: np.ndarray | None = None
    if n_orig * width > 8 * len(text_key) + 64:  # many variant names: sparse keys, hash them instead
        text_key, uniques = pd.factorize(text_key)
        decode = np.asarray(uniques, dtype=np.int64)
    n_keys = n_orig * width if decode is None else len(decode)
    counts = np.bincount(text_key[valid] * 3 + pred_rank[valid], minlength=n_keys * 3).reshape(-1, 3)
    seen = np.flatnonzero(np.bincount(text_key, minlength=n_keys))
    counts = counts[seen].astype(float)
    keys = seen if decode is None else decode[seen]
    t_orig, t_variant = keys // width, keys % width
    t_kind, t_model = originals.kind[t_orig], originals.model[t_orig]
    t_valid = counts.sum(axis=1)
    v = n_variants[t_kind]
    # Subsets of V valid runs whose labels are not all equal (module docstring).
    t_inconsistent = _comb(t_valid, v) - sum(_comb(counts[:, r], v) for r in range(3))
    t_sum = counts[:, 1] + 2.0 * counts[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        # Within-text sum of squared deviations of the rank (exact: small integer sums).
        t_ss = np.where(t_valid > 0, counts[:, 1] + 4.0 * counts[:, 2] - t_sum**2 / t_valid, 0.0)
    return pd.DataFrame(
        {
            "model": _categorical(t_model, p.models),
            "variant_kind": _categorical(t_kind, KIND_ORDER),
            "variant": _categorical(t_variant, p.variants),
            "original_idx": originals.original_idx[t_orig],
            "inconsistent_subsets": t_inconsistent,
            "ss_within": np.clip(t_ss, 0.0, None),
            "df_within": np.maximum(t_valid - 1.0, 0.0),
        }
    )


@dataclass(frozen=True)
class _DistMeasures:
    """Per-row measures of the label distribution (NaN on rows without one)."""

    has_dist: np.ndarray
    dist: np.ndarray  # renormalised (3, n)
    exp_rank_diff: np.ndarray
    exp_correct: np.ndarray
    exp_rank_var: np.ndarray


def _dist_measures(p: _Prepared) -> _DistMeasures:
    has_dist = np.zeros(len(p.df), dtype=bool) if p.dist is None else ~np.isnan(p.dist[0])  # all three or none
    if p.dist is not None and has_dist.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            dist = p.dist / (p.dist[0] + p.dist[1] + p.dist[2])  # renormalised; NaN stays NaN
        # Clipped: renormalisation may leave an ulp beyond the [0, 2] expected rank.
        exp_rank = np.clip(dist[1] + 2.0 * dist[2], 0.0, 2.0)
        exp_rank_diff = exp_rank - p.truth
        exp_correct = np.where(p.truth == 0, dist[0], np.where(p.truth == 1, dist[1], dist[2]))
        exp_rank_var = np.clip(dist[1] + 4.0 * dist[2] - exp_rank**2, 0.0, None)
    else:
        dist = np.full((len(DIST_COLUMNS), len(p.df)), np.nan)
        exp_rank_diff = exp_correct = exp_rank_var = dist[0]
    return _DistMeasures(has_dist, dist, exp_rank_diff, exp_correct, exp_rank_var)


def _rows(p: _Prepared, pred_rank: np.ndarray, valid: np.ndarray, g: _Resumes, d: _DistMeasures) -> pd.DataFrame:
    """One row per prediction with its per-row measures (NaN outside their count)."""
    row_complete = g.complete[p.resume]
    row_mean = g.mean_rank[p.resume]
    promoted = valid & row_complete & (pred_rank > row_mean + PROMOTION_TOLERANCE)
    demoted = valid & row_complete & (pred_rank < row_mean - PROMOTION_TOLERANCE)

    def where_valid(x: np.ndarray) -> np.ndarray:
        return np.where(valid, x, np.nan)

    return pd.DataFrame(
        {
            "model": _categorical(p.model, p.models),
            "variant_kind": _categorical(p.kind, KIND_ORDER),
            "variant": _categorical(p.variant, p.variants),
            "run": p.run,
            "original_idx": p.original_idx,
            "valid": valid,
            "correct": where_valid(p.prediction == p.truth),
            "rank_diff": where_valid(pred_rank.astype(np.int64) - p.truth),
            "is_senior": where_valid(pred_rank == 2),
            "is_junior": where_valid(pred_rank == 0),
            "complete": row_complete,
            "promoted": promoted,
            "demoted": demoted,
            "has_dist": d.has_dist,
            "exp_correct": d.exp_correct,
            "exp_rank_diff": d.exp_rank_diff,
            "exp_is_senior": d.dist[2],
            "exp_is_junior": d.dist[0],
            "exp_rank_var": d.exp_rank_var,
        },
        index=p.df.index,
        copy=False,  # fresh arrays; skips consolidating them into blocks
    )


def _score(df: pd.DataFrame) -> _Scored:
    """The per-row and per-résumé frames every table is aggregated from."""
    p = _prepare(df)
    pred_rank = _RANK_OF_CODE[p.prediction]
    valid = pred_rank >= 0
    # "Every variant of the experiment" = the distinct variants of that kind in the data.
    n_variants = np.bincount(p.variant_kind[p.variant_kind >= 0], minlength=len(KIND_ORDER))
    resumes = _resumes(p, pred_rank, valid, n_variants)
    originals = _originals(resumes)
    texts = _texts(p, pred_rank, valid, n_variants, originals)
    d = _dist_measures(p)
    rows = _rows(p, pred_rank, valid, resumes, d)
    dist_originals = _dist_originals(p, d.dist, d.has_dist, n_variants, originals)
    return _Scored(rows, resumes.frame(p), p.variant_kind, dist_originals, texts, n_variants, _name_scopes(p))
