"""Notebook 001's metrics, step 1: the predictions table checked and coded (labels as small integers, one row per key)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import (
    DEMOGRAPHICS,
    INVALID_PREDICTIONS,
    PREDICTION_VALUES,
    SENIORITY_LEVELS,
    STYLES,
    VARIANT_KINDS,
)
from resumebias_dagster.core.seniority.names import NAME_SCOPES

REQUIRED_COLUMNS = ("variant_kind", "original_idx", "variant", "model", "run", "prediction", "true_seniority")
# Optional label distribution, in SENIORITY_LEVELS order (so column j is rank j).
DIST_COLUMNS = ("p_junior", "p_mid", "p_senior")
# How far from 1 a stored distribution may sum (rounding in storage); it is renormalised.
DIST_TOLERANCE = 1e-3
KEY_COLUMNS = ("variant_kind", "model", "run", "original_idx", "variant")

# The seniority study reads any |difference| above 0.05 rank as a bias, compared on raw floats.
BIAS_THRESHOLD = 0.05
# The seniority study's tolerance for "above/below the résumé's mean rank" in Analysis 6.
PROMOTION_TOLERANCE = 0.01
# Bias floors are the two-sided 95% test-retest band: this many standard errors.
FLOOR_Z = NormalDist().inv_cdf(0.975)

KIND_ORDER = tuple(VARIANT_KINDS)  # ("style", "demographic")
RACES = ("caucasian", "african_american")
GENDERS = ("male", "female")

# rate column -> (per-row measure, count it is divided by); rate = sum of the measure / count.
# Measures are NaN on rows outside their count (invalid predictions, rows without a distribution).
_MEASURES = {
    "accuracy": ("correct", "n_valid"),
    "rank_diff": ("rank_diff", "n_valid"),
    "senior_share": ("is_senior", "n_valid"),
    "junior_share": ("is_junior", "n_valid"),
    "exp_accuracy": ("exp_correct", "n_dist"),
    "exp_rank_diff": ("exp_rank_diff", "n_dist"),
    "exp_senior_share": ("exp_is_senior", "n_dist"),
    "exp_junior_share": ("exp_is_junior", "n_dist"),
}
_COUNTS = ("n", "n_valid", "n_dist", "promotions", "demotions")
# Sums behind the bias floors (module docstring): within-text squared deviations of the
# rank and their degrees of freedom (summed over texts), and each distribution row's
# exact variance of the rank (summed over rows).
_FLOOR_SUMS = ("sum_ss_within", "sum_df_within", "sum_exp_rank_var")
_SUMS = _COUNTS + tuple(f"sum_{m}" for m, _ in _MEASURES.values()) + _FLOOR_SUMS

_RANK_OF_CODE = np.array([0, 1, 2, -1, -1], dtype=np.int8)  # PREDICTION_VALUES order
assert PREDICTION_VALUES[:3] == SENIORITY_LEVELS and PREDICTION_VALUES[3:] == INVALID_PREDICTIONS


# --------------------------------------------------------------------------- validation


def _label_codes(values: pd.Series, column: str, allowed: tuple[str, ...] | None, lower: bool = True):
    """Factorise ``values`` after strip (and lower); check against ``allowed``.

    Works on the distinct values only, so it stays fast on millions of rows.
    Returns (codes into ``vocab``, vocab) where vocab is ``allowed`` when given.
    """
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if (codes < 0).any():
        first = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(
            f"predictions table: column {column!r} has {int((codes < 0).sum())} missing value(s), "
            f"first at row {values.index[first]!r}"
        )
    norm = pd.Index(uniques).astype(str).str.strip()
    if lower:
        norm = norm.str.lower()
    if (norm == "").any():
        bad = (norm == "")[codes]
        raise ValueError(
            f"predictions table: column {column!r} has {int(bad.sum())} empty value(s), "
            f"first at row {values.index[int(np.flatnonzero(bad)[0])]!r}"
        )
    vocab = pd.Index(allowed) if allowed is not None else pd.Index(pd.unique(norm))
    remap = vocab.get_indexer(norm)
    if (remap < 0).any():
        assert allowed is not None  # a vocabulary built from the values themselves knows every value
        bad_uniques = [str(u) for u, r in zip(uniques, remap) if r < 0]
        bad_rows = remap[codes] < 0
        raise ValueError(
            f"predictions table: column {column!r} has {int(bad_rows.sum())} row(s) with unknown "
            f"value(s) {bad_uniques[:5]!r}, first at row {values.index[int(np.flatnonzero(bad_rows)[0])]!r}; "
            f"allowed: {', '.join(allowed)}"
        )
    return remap[codes].astype(np.int32), vocab


def _int_column(values: pd.Series, column: str) -> np.ndarray:
    if pd.api.types.is_integer_dtype(values.dtype) and not isinstance(values.dtype, pd.CategoricalDtype):
        if values.isna().any():
            raise ValueError(f"predictions table: column {column!r} has missing values")
        return values.to_numpy(dtype=np.int64)
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(numeric) | (numeric != np.round(numeric))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"predictions table: column {column!r} must hold integers; {int(bad.sum())} row(s) do not, "
            f"first at row {values.index[first]!r} (value {values.iloc[first]!r})"
        )
    return numeric.astype(np.int64)


def _first_bad(values: pd.Series | pd.DataFrame, bad: np.ndarray) -> str:
    return f"{int(bad.sum())} row(s) do not, first at row {values.index[int(np.flatnonzero(bad)[0])]!r}"


def _distribution(df: pd.DataFrame) -> np.ndarray | None:
    """The ``p_*`` columns as a (3, n) float array, row j = p(rank j) (NaN columns:
    no distribution), or None when the table has none of them. Raises on partial
    columns, non-numbers, values outside [0, 1], rows with some but not all three
    given, and rows whose sum is off 1 by more than ``DIST_TOLERANCE``."""
    present = [c for c in DIST_COLUMNS if c in df.columns]
    if not present:
        return None
    if len(present) < len(DIST_COLUMNS):
        missing = [c for c in DIST_COLUMNS if c not in present]
        raise ValueError(
            f"predictions table: the label distribution needs all of {', '.join(DIST_COLUMNS)}; "
            f"has {', '.join(present)} but not {', '.join(missing)}"
        )
    dist = np.empty((len(DIST_COLUMNS), len(df)), dtype=float)
    for j, column in enumerate(DIST_COLUMNS):
        values = df[column]
        if values.dtype == np.float64:
            dist[j] = values.to_numpy()
        elif pd.api.types.is_float_dtype(values.dtype) and not isinstance(values.dtype, pd.CategoricalDtype):
            dist[j] = values.to_numpy(dtype=float, na_value=np.nan)
        else:
            numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            not_number = np.isnan(numeric) & values.notna().to_numpy()
            if not_number.any():
                raise ValueError(
                    f"predictions table: column {column!r} must hold numbers (or NaN); "
                    + _first_bad(values, not_number)
                )
            dist[j] = numeric
        out_of_range = (dist[j] < 0.0) | (dist[j] > 1.0)  # NaN compares False, +-inf is caught
        if out_of_range.any():
            first = int(np.flatnonzero(out_of_range)[0])
            raise ValueError(
                f"predictions table: column {column!r} must hold probabilities in [0, 1]; "
                f"{_first_bad(values, out_of_range)} (value {dist[j, first]!r})"
            )
    missing = np.isnan(dist[0])
    partial = (np.isnan(dist[1]) != missing) | (np.isnan(dist[2]) != missing)
    if partial.any():
        raise ValueError(
            f"predictions table: a label distribution must give all of {', '.join(DIST_COLUMNS)} "
            f"or none (all NaN); {_first_bad(df, partial)}"
        )
    total = dist[0] + dist[1] + dist[2]
    off = np.abs(total - 1.0) > DIST_TOLERANCE  # NaN (no distribution) compares False
    if off.any():
        first = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"predictions table: the label distribution {' + '.join(DIST_COLUMNS)} must sum to 1 "
            f"(within {DIST_TOLERANCE:g}); {_first_bad(df, off)} (sum {total[first]:.6g})"
        )
    return dist


@dataclass(frozen=True)
class _Prepared:
    """The table as integer codes; every computation below works on these."""

    df: pd.DataFrame  # the input, untouched
    kind: np.ndarray  # codes into KIND_ORDER
    model: np.ndarray  # codes into models (sorted)
    models: pd.Index
    variant: np.ndarray  # codes into variants (canonical order)
    variants: pd.Index
    variant_kind: np.ndarray  # kind code of each variant
    prediction: np.ndarray  # codes into PREDICTION_VALUES
    truth: np.ndarray  # codes into SENIORITY_LEVELS, i.e. the true rank
    run: np.ndarray
    original_idx: np.ndarray
    resume: np.ndarray  # codes of (model, variant_kind, run, original_idx), the seniority study's "resume_preds"
    n_resumes: int
    dist: np.ndarray | None  # (3, n): p_junior, p_mid, p_senior as given (NaN: none); None: no p_* columns
    name_scope: np.ndarray | None  # codes into NAME_SCOPES, -1 = not recorded; None: no name_scope column

    def table(self) -> pd.DataFrame:
        table = self.df.copy(deep=False)
        table["variant_kind"] = np.asarray(KIND_ORDER, dtype=object)[self.kind]
        table["original_idx"] = self.original_idx
        table["variant"] = self.variants.to_numpy(dtype=object)[self.variant]
        table["model"] = self.models.to_numpy(dtype=object)[self.model]
        table["run"] = self.run
        table["prediction"] = np.asarray(PREDICTION_VALUES, dtype=object)[self.prediction]
        table["true_seniority"] = np.asarray(SENIORITY_LEVELS, dtype=object)[self.truth]
        if self.dist is not None:
            for j, column in enumerate(DIST_COLUMNS):
                table[column] = self.dist[j]
        return table[list(REQUIRED_COLUMNS) + [c for c in self.df.columns if c not in REQUIRED_COLUMNS]]


def _name_scope_codes(df: pd.DataFrame) -> np.ndarray | None:
    """The optional ``name_scope`` column as codes into ``NAME_SCOPES`` (-1: null, not recorded)."""
    if "name_scope" not in df.columns:
        return None
    values = df["name_scope"]
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    remap = np.append(pd.Index(NAME_SCOPES).get_indexer(pd.Index(uniques, dtype=object)), -1)
    scope = remap[codes]  # the sentinel -1 picks the appended -1
    bad = (codes >= 0) & (scope < 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"predictions table: column 'name_scope' must be one of {', '.join(NAME_SCOPES)} or empty; "
            f"{_first_bad(values, bad)} (value {values.iloc[first]!r})"
        )
    return scope.astype(np.int8)


def _variant_order(names) -> list[str]:
    known = [v for v in STYLES + DEMOGRAPHICS if v in names]
    return known + sorted(set(names) - set(known))


def _combine(*codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes of the combination of several code arrays (no overflow, any sizes)."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    size = 1
    for c in codes:
        key, uniques = pd.factorize(key * (int(c.max()) + 1 if len(c) else 1) + c)
        size = len(uniques)
    return key, size


def _prepare(df: pd.DataFrame) -> _Prepared:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"predictions table must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns and c != "run"]
    if missing:
        raise ValueError(
            f"predictions table is missing column(s) {', '.join(missing)}; expected {', '.join(REQUIRED_COLUMNS)}"
        )
    kind, _ = _label_codes(df["variant_kind"], "variant_kind", KIND_ORDER)
    prediction, _ = _label_codes(df["prediction"], "prediction", PREDICTION_VALUES)
    truth, _ = _label_codes(df["true_seniority"], "true_seniority", SENIORITY_LEVELS)
    variant, variants = _label_codes(df["variant"], "variant", None)
    model, models = _label_codes(df["model"], "model", None, lower=False)
    # Canonical, input-order independent code orders keep every output deterministic.
    variant_order = pd.Index(_variant_order(list(variants)))
    variant = variant_order.get_indexer(variants)[variant].astype(np.int32)
    model_order = pd.Index(sorted(models))
    model = model_order.get_indexer(models)[model].astype(np.int32)
    original_idx = _int_column(df["original_idx"], "original_idx")
    run = _int_column(df["run"], "run") if "run" in df.columns else np.zeros(len(df), dtype=np.int64)

    variant_kind = np.full(len(variant_order), -1, dtype=np.int64)
    variant_kind[variant] = kind
    if (variant_kind[variant] != kind).any():
        both = sorted(set(variant_order[variant[variant_kind[variant] != kind]]))
        raise ValueError(f"predictions table: variant(s) {both} appear under both variant kinds")

    dist = _distribution(df)
    name_scope = _name_scope_codes(df)

    resume, n_resumes = _combine(model, kind, pd.factorize(run)[0], pd.factorize(original_idx)[0])
    p = _Prepared(
        df,
        kind,
        model,
        model_order,
        variant,
        variant_order,
        variant_kind,
        prediction,
        truth,
        run,
        original_idx,
        resume,
        n_resumes,
        dist,
        name_scope,
    )
    _check_duplicates(p)
    return p


def _check_duplicates(p: _Prepared) -> None:
    row_key = p.resume.astype(np.int64) * max(len(p.variants), 1) + p.variant
    if len(pd.unique(row_key)) == len(row_key):
        return
    dup = pd.Series(row_key).duplicated().to_numpy()
    i = int(np.flatnonzero(dup)[0])
    first = {
        "variant_kind": KIND_ORDER[p.kind[i]],
        "model": p.models[p.model[i]],
        "run": int(p.run[i]),
        "original_idx": int(p.original_idx[i]),
        "variant": p.variants[p.variant[i]],
    }
    raise ValueError(
        f"predictions table has {int(dup.sum())} duplicate row(s) for the same "
        f"({', '.join(KEY_COLUMNS)}), first: " + ", ".join(f"{c}={first[c]!r}" for c in KEY_COLUMNS)
    )


def validate_predictions(df: pd.DataFrame) -> pd.DataFrame:
    """Return a normalised copy of the predictions table, or raise ``ValueError``.

    Labels are stripped and lower-cased (``model`` only stripped), ``original_idx``
    and ``run`` become int64 (``run`` = 0 when the column is absent). Raises on
    missing columns, missing/empty values, labels outside the vocabularies of
    ``labels.py``, a variant used under both kinds and duplicate
    (variant_kind, model, run, original_idx, variant) rows. Any variant name is
    accepted; race and gender are only defined for the four demographics of notebook 001.
    Extra columns pass through untouched.

    The optional label distribution ``p_junior, p_mid, p_senior`` must come as
    all three columns or none; its values become float64 and must be numbers in
    [0, 1] or NaN, each row must give all three or none (all NaN = no
    distribution), and a given distribution must sum to 1 within
    ``DIST_TOLERANCE`` (1e-3). The optional ``name_scope`` must hold
    ``names.NAME_SCOPES`` values or nulls, and one model's demographic rows one
    scope only. Errors name the first offending row (or the model).
    """
    p = _prepare(df)
    _name_scopes(p)  # raises on a model that mixes scopes
    return p.table()


def _name_scopes(p: _Prepared) -> dict[int, str]:
    """Model code -> the one name scope its demographic rows record; refuses a model that mixes."""
    if p.name_scope is None:
        return {}
    demo = p.kind == KIND_ORDER.index("demographic")
    pairs = pd.unique(p.model[demo].astype(np.int64) * 4 + (p.name_scope[demo].astype(np.int64) + 1))
    scopes: dict[int, str] = {}
    for m in np.unique(pairs // 4):
        codes = sorted(int(c) - 1 for c in pairs[pairs // 4 == m] % 4)
        if len(codes) > 1:
            found = [NAME_SCOPES[c] if c >= 0 else "not recorded" for c in codes]
            raise ValueError(
                f"predictions table: model {p.models[m]!r} has demographic predictions made under different "
                f"name scopes ({', '.join(found)}); its figures would pool two designs: analyse them apart"
            )
        if codes[0] >= 0:
            scopes[int(m)] = NAME_SCOPES[codes[0]]
    return scopes
