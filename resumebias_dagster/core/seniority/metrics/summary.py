"""Notebook 001's metrics, step 3: the group table, the bias summary and the analysis JSON."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import (
    DEMOGRAPHICS,
    gender_of,
    race_of,
)
from resumebias_dagster.core.seniority.metrics.prepare import (
    _COUNTS,
    _FLOOR_SUMS,
    _MEASURES,
    _SUMS,
    BIAS_THRESHOLD,
    FLOOR_Z,
    GENDERS,
    KIND_ORDER,
    RACES,
)
from resumebias_dagster.core.seniority.metrics.scoring import _comb, _score, _Scored
from resumebias_dagster.core.tables import SeniorityBiasSummary, SeniorityGroupMetrics, columns

# The tables' columns, in order, as core/tables/ declares them.
GROUP_METRICS_COLUMNS = tuple(columns(SeniorityGroupMetrics))
BIAS_SUMMARY_COLUMNS = tuple(columns(SeniorityBiasSummary))


# --------------------------------------------------------------------------- tables


def _group_members(variants: pd.Index, variant_kind: np.ndarray) -> list[tuple[int, str, str, np.ndarray]]:
    """(kind code, group_kind, group, variant mask) in output order."""
    members = []
    is_demo = (variant_kind == KIND_ORDER.index("demographic")) & variants.isin(DEMOGRAPHICS)
    race = np.array([race_of(v) if d else "" for v, d in zip(variants, is_demo)], dtype=object)
    gender = np.array([gender_of(v) if d else "" for v, d in zip(variants, is_demo)], dtype=object)
    for k, kind in enumerate(KIND_ORDER):
        in_kind = variant_kind == k
        members.append((k, "all", "all", in_kind))
        members += [(k, kind, v, (variants == v) & in_kind) for v in variants[in_kind]]
        if kind == "demographic":
            members += [(k, "race", r, race == r) for r in RACES if (race == r).any()]
            members += [(k, "gender", g, gender == g) for g in GENDERS if (gender == g).any()]
    return members


def _nan_to_zero(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), 0.0, x)  # measures are finite or NaN: cheaper than nan_to_num


def _group_table(scored: _Scored) -> pd.DataFrame:
    """``GROUP_METRICS_COLUMNS`` plus the ``_FLOOR_SUMS`` the bias floors are built from."""
    rows = scored.rows
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype=_dtype(c)) for c in GROUP_METRICS_COLUMNS + _FLOOR_SUMS})
    models = rows["model"].cat.categories
    variants = rows["variant"].cat.categories
    n_m, n_k, n_v = len(models), len(KIND_ORDER), len(variants)
    cell = (
        rows["model"].cat.codes.to_numpy(np.int64) * n_k + rows["variant_kind"].cat.codes.to_numpy(np.int64)
    ) * n_v + rows["variant"].cat.codes.to_numpy(np.int64)
    has_dist = rows["has_dist"].to_numpy()
    counts = {
        "n": None,  # plain bincount
        "n_valid": rows["valid"].to_numpy(),
        "n_dist": has_dist,
        "promotions": rows["promoted"].to_numpy(),
        "demotions": rows["demoted"].to_numpy(),
    }
    any_dist = bool(has_dist.any())

    texts = scored.texts
    text_cell = (
        texts["model"].cat.codes.to_numpy(np.int64) * n_k + texts["variant_kind"].cat.codes.to_numpy(np.int64)
    ) * n_v + texts["variant"].cat.codes.to_numpy(np.int64)

    def cell_sums(stat: str) -> np.ndarray:
        if stat in counts:
            return np.bincount(cell, weights=counts[stat], minlength=n_m * n_k * n_v)
        if stat in ("sum_ss_within", "sum_df_within"):  # per text, not per row
            return np.bincount(
                text_cell, weights=texts[stat.removeprefix("sum_")].to_numpy(float), minlength=n_m * n_k * n_v
            )
        measure = stat.removeprefix("sum_")
        if not any_dist and measure.startswith("exp_"):
            return np.zeros(n_m * n_k * n_v)  # no distributions: skip the all-NaN expected measures
        return np.bincount(cell, weights=_nan_to_zero(rows[measure].to_numpy(dtype=float)), minlength=n_m * n_k * n_v)

    # sums[model, kind, variant, stat]: every group is a sum of its variants' cells.
    sums = np.stack([cell_sums(s) for s in _SUMS], axis=-1).reshape(n_m, n_k, n_v, len(_SUMS))
    members = _group_members(variants, scored.variant_kind)
    group_sums = np.stack([sums[:, k][:, mask].sum(axis=1) for k, _, _, mask in members], axis=1)
    flat = group_sums.reshape(n_m * len(members), len(_SUMS))
    present = flat[:, _SUMS.index("n")] > 0

    def per_member(values) -> np.ndarray:
        return np.tile(np.asarray(values, dtype=object), n_m)[present]

    demographic = KIND_ORDER.index("demographic")
    # Name scope per (model, member): the model's, on the demographic experiment only.
    scopes = [scored.name_scopes.get(m) if k == demographic else None for m in range(n_m) for k, _, _, _ in members]
    out = pd.DataFrame(
        {
            "model": np.repeat(models.to_numpy(dtype=object), len(members))[present],
            "variant_kind": per_member([KIND_ORDER[k] for k, _, _, _ in members]),
            "name_scope": pd.Series(np.asarray(scopes, dtype=object)[present], dtype=object),
            "group_kind": per_member([gk for _, gk, _, _ in members]),
            "group": per_member([g for _, _, g, _ in members]),
        }
    )
    stats = {s: flat[present, i] for i, s in enumerate(_SUMS)}
    for c in _COUNTS:
        out[c] = np.rint(stats[c]).astype(np.int64)
    out["n_invalid"] = out["n"] - out["n_valid"]
    with np.errstate(invalid="ignore", divide="ignore"):
        for rate, (measure, count) in _MEASURES.items():
            denominator = out[count].to_numpy()
            out[rate] = np.where(denominator > 0, stats[f"sum_{measure}"] / denominator, np.nan)
    out["net"] = out["promotions"] - out["demotions"]
    for stat in _FLOOR_SUMS:
        out[stat] = stats[stat]
    return out[list(GROUP_METRICS_COLUMNS + _FLOOR_SUMS)]


def _group_metrics_from(scored: _Scored) -> pd.DataFrame:
    return _group_table(scored)[list(GROUP_METRICS_COLUMNS)]


def _dtype(column: str) -> str:
    if column in ("model", "variant_kind", "name_scope", "group_kind", "group", "resolved_models") or column.endswith(
        "_reading"
    ):
        return "object"
    if column.startswith("n_") or column in ("n", "promotions", "demotions", "net"):
        return "int64"
    return "float64"


def group_metrics(df: pd.DataFrame) -> pd.DataFrame:
    """Notebook 001 metrics per model, experiment and group (long table).

    Columns: ``model, variant_kind, name_scope, group_kind, group, n, n_valid,
    n_invalid, accuracy, rank_diff, senior_share, junior_share, promotions,
    demotions, net, n_dist, exp_accuracy, exp_rank_diff, exp_senior_share,
    exp_junior_share``. ``name_scope`` is the model's on the demographic rows
    (null on style rows and where not recorded; module docstring).
    ``group_kind`` is ``all`` (group "all"), ``style`` or ``demographic`` (group =
    the variant), and for the demographic experiment ``race`` (caucasian,
    african_american) and ``gender`` (male, female). Rates are fractions over the
    ``n_valid`` valid predictions (NaN when there are none); promotions and
    demotions are notebook 001's Analysis 6, counted per run and summed. Rows are sorted by
    model, experiment (style first), group kind (in the order above) and the
    canonical group order (labels.py), groups absent from the data left out.

    ``n_dist`` counts the rows carrying a label distribution and the ``exp_*``
    rates are means over those rows of p(true label), expected rank − true rank,
    p_senior and p_junior: expectations under the stored distribution (see the
    module docstring), NaN when the group has no distribution rows.
    """
    return _group_metrics_from(_score(df))


def _reading(value: float, positive: str, negative: str) -> str | None:
    if value is None or not np.isfinite(value):
        return None
    if value > BIAS_THRESHOLD:
        return positive
    if value < -BIAS_THRESHOLD:
        return negative
    return "within_threshold"


_INDICATOR_GROUPS = (
    ("racial", "race", "caucasian", "african_american", "favors_caucasian", "favors_african_american"),
    ("gender", "gender", "male", "female", "favors_male", "favors_female"),
    (
        "extreme",
        "demographic",
        "caucasian_male",
        "african_american_female",
        "favors_caucasian_male",
        "favors_african_american_female",
    ),
)


def _mean_variances(groups: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per group row: the retest variance of its mean rank, estimated from the runs
    (pooled within-text variance / valid rows) and exact from the distributions
    (sum of the rows' rank variances / rows with one squared); NaN where not measurable."""
    df_within = np.rint(groups["sum_df_within"].to_numpy(float))
    n_valid = groups["n_valid"].to_numpy(float)
    n_dist = groups["n_dist"].to_numpy(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        sampled = np.where(
            (df_within > 0) & (n_valid > 0), groups["sum_ss_within"].to_numpy(float) / df_within / n_valid, np.nan
        )
        exact = np.where(n_dist > 0, groups["sum_exp_rank_var"].to_numpy(float) / n_dist**2, np.nan)
    return sampled, exact


def _bias_summary_from(scored: _Scored, groups: pd.DataFrame, snapshots=None) -> pd.DataFrame:
    """``groups`` is the full ``_group_table`` (with the floor sums); ``snapshots`` gives each
    model's ``resolved_models`` (``core.common.snapshots``)."""
    if groups.empty:
        return pd.DataFrame({c: pd.Series(dtype=_dtype(c)) for c in BIAS_SUMMARY_COLUMNS})
    res = scored.resumes
    models = res["model"].cat.categories
    n_k = len(KIND_ORDER)
    size = len(models) * n_k
    cell = res["model"].cat.codes.to_numpy(np.int64) * n_k + res["variant_kind"].cat.codes.to_numpy(np.int64)

    def distinct_per_cell(values: np.ndarray) -> np.ndarray:
        codes, uniques = pd.factorize(values)
        width = max(len(uniques), 1)
        return np.bincount(pd.unique(cell * width + codes) // width, minlength=size)

    n_runs = distinct_per_cell(res["run"].to_numpy())
    n_originals = distinct_per_cell(res["original_idx"].to_numpy())
    n_inconsistent = np.bincount(cell, weights=res["inconsistent"].to_numpy(), minlength=size)

    out = groups.loc[
        groups["group_kind"] == "all",
        ["model", "variant_kind", "name_scope", "n", "n_valid", "n_invalid", "accuracy", "rank_diff"],
    ].reset_index(drop=True)
    kind_code = out["variant_kind"].map(KIND_ORDER.index).to_numpy()
    at = models.get_indexer(pd.Index(out["model"])) * n_k + kind_code
    out["n_runs"] = n_runs[at].astype(np.int64)
    out["n_originals"] = n_originals[at].astype(np.int64)
    out["n_inconsistent"] = np.rint(n_inconsistent[at]).astype(np.int64)
    # Seed denominator: every original present for the model and experiment, once per run.
    out["inconsistency_rate"] = out["n_inconsistent"] / (out["n_originals"] * out["n_runs"])
    # Retest floor: the same rule on V-subsets of each text's runs; one pseudo-résumé per
    # (original, variant, subset), none when there are fewer runs than variants.
    texts = scored.texts
    t_cell = texts["model"].cat.codes.to_numpy(np.int64) * n_k + texts["variant_kind"].cat.codes.to_numpy(np.int64)
    subsets = np.bincount(t_cell, weights=texts["inconsistent_subsets"].to_numpy(float), minlength=size)[at]
    v = scored.n_variants[kind_code]
    pseudo = out["n_originals"].to_numpy(float) * v * _comb(out["n_runs"].to_numpy(), v)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["inconsistency_floor"] = np.where(pseudo > 0, subsets / pseudo, np.nan)

    # Expected values: exp_accuracy / exp_rank_diff of the "all" group, and the
    # expected inconsistency over originals whose every variant has a distribution.
    overall = groups.loc[groups["group_kind"] == "all", ["n_dist", "exp_accuracy", "exp_rank_diff"]]
    out["n_dist"] = overall["n_dist"].to_numpy(np.int64)
    out["exp_accuracy"] = overall["exp_accuracy"].to_numpy(float)
    out["exp_rank_diff"] = overall["exp_rank_diff"].to_numpy(float)
    dist = scored.dist_originals
    d_cell = dist["model"].cat.codes.to_numpy(np.int64) * n_k + dist["variant_kind"].cat.codes.to_numpy(np.int64)
    complete = dist["complete"].to_numpy()
    n_dist_originals = np.bincount(d_cell, weights=complete, minlength=size)[at]
    out["n_dist_originals"] = np.rint(n_dist_originals).astype(np.int64)
    for column, source in (
        ("exp_inconsistency_rate", "exp_inconsistency"),
        ("exp_inconsistency_floor", "exp_inconsistency_floor"),
    ):
        total = np.bincount(d_cell, weights=np.where(complete, dist[source].to_numpy(float), 0.0), minlength=size)[at]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[column] = np.where(n_dist_originals > 0, total / n_dist_originals, np.nan)

    keys = list(zip(out["model"], out["variant_kind"]))
    group_keys = list(zip(groups["model"], groups["variant_kind"], groups["group_kind"], groups["group"]))
    sampled_var, exact_var = _mean_variances(groups)
    for prefix, variance in (("", sampled_var), ("exp_", exact_var)):
        rank = dict(zip(group_keys, groups[f"{prefix}rank_diff"]))
        var = dict(zip(group_keys, variance))
        for name, group_kind, a, b, favors_a, favors_b in _INDICATOR_GROUPS:
            # Only the demographic experiment has these groups; a missing one gives NaN.
            sides = [((m, k, group_kind, a), (m, k, group_kind, b)) for m, k in keys]
            values = [rank.get(ka, np.nan) - rank.get(kb, np.nan) for ka, kb in sides]
            out[f"{prefix}{name}_bias"] = np.asarray(values, dtype=float)
            spread = np.asarray([var.get(ka, np.nan) + var.get(kb, np.nan) for ka, kb in sides], dtype=float)
            out[f"{prefix}{name}_bias_floor"] = FLOOR_Z * np.sqrt(spread)
            if not prefix:
                out[f"{name}_reading"] = pd.Series([_reading(v, favors_a, favors_b) for v in values], dtype=object)
    out["resolved_models"] = out["model"].map({} if snapshots is None else snapshots).astype(object)
    return out[list(BIAS_SUMMARY_COLUMNS)]


def bias_summary(df: pd.DataFrame, snapshots=None) -> pd.DataFrame:
    """Notebook 001 headline figures, one row per (model, variant_kind).

    Columns: ``BIAS_SUMMARY_COLUMNS``: ``model, variant_kind, name_scope, n,
    n_valid, n_invalid, n_runs, n_originals, n_inconsistent, inconsistency_rate,
    inconsistency_floor, accuracy, rank_diff``, then each bias indicator with its
    floor and reading (``racial_bias, racial_bias_floor, racial_reading``, gender,
    extreme), then the expected values with their floors, then ``resolved_models`` (from
    ``snapshots``, each model's resolved snapshots; None without).

    Inconsistency (notebook 001's Analysis 5): within one run, an original résumé is
    inconsistent when every variant of the experiment (the distinct variants of
    that ``variant_kind`` in the data) has a valid prediction and those
    predictions are not all equal. ``n_inconsistent`` sums that over runs and
    ``inconsistency_rate = n_inconsistent / (n_originals * n_runs)``, where
    ``n_originals`` counts every original present for the model and experiment
    (including ones with errors or missing variants) and ``n_runs`` the distinct
    runs: with one run this is exactly the seniority study's figure.

    Bias indicators (demographic experiment only, NaN otherwise) are differences
    of mean ``rank_diff``: racial = caucasian − african_american, gender = male −
    female, extreme = caucasian_male − african_american_female, each read as
    favouring a side beyond ±0.05 (``BIAS_THRESHOLD``); a missing group gives NaN
    and a null reading.

    Expected values (NaN for a model without label distributions): ``n_dist``
    rows with a distribution, ``exp_accuracy`` and ``exp_rank_diff`` as in
    ``group_metrics`` (group "all"), ``exp_racial_bias`` / ``exp_gender_bias`` /
    ``exp_extreme_bias`` the same contrasts on ``exp_rank_diff`` (no readings),
    and ``exp_inconsistency_rate`` the mean over the ``n_dist_originals``
    originals whose every variant has a distribution of ``1 - sum_k prod_v
    p_v(k)``, the probability that independent draws for the variants are not
    all the same label. It is computed once per original, not per run, since a
    variant's distribution is the same on all its run rows.

    Floors (module docstring, "Test-retest floors"): ``inconsistency_floor`` is the
    inconsistency rule applied to V-subsets of the runs of one identical text (NaN:
    not measurable, fewer runs than variants), ``*_bias_floor`` the 95% retest band
    ``FLOOR_Z * SE`` of each indicator from the within-text spread of the runs (NaN:
    no text with two valid runs), and ``exp_inconsistency_floor`` /
    ``exp_*_bias_floor`` the same floors exact under the stored distributions. A
    figure at or under its floor is within sampling noise.
    """
    scored = _score(df)
    return _bias_summary_from(scored, _group_table(scored), snapshots)


def _tables(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    scored = _score(df)
    groups = _group_table(scored)
    return groups[list(GROUP_METRICS_COLUMNS)], _bias_summary_from(scored, groups)


# --------------------------------------------------------------------------- JSON


def _num(x: Any) -> float | int | None:
    if x is None:
        return None
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    x = float(x)
    return None if math.isnan(x) else x


_JSON_EXPERIMENTS = {"style": "style", "demographic": "social"}


def _analysis_json_from(groups: pd.DataFrame, summary: pd.DataFrame) -> dict:
    out: dict[str, dict] = {name: {} for name in _JSON_EXPERIMENTS.values()}
    n_valid = summary["n_valid"].to_numpy(np.int64)
    for i, row in enumerate(summary.itertuples(index=False)):
        sel = groups[
            (groups["model"] == row.model)
            & (groups["variant_kind"] == row.variant_kind)
            & (groups["group_kind"] == row.variant_kind)
        ]
        entry: dict[str, Any] = {
            "accuracy": {g: _num(v) for g, v in zip(sel["group"], sel["accuracy"])},
            "rank_diff": {g: _num(v) for g, v in zip(sel["group"], sel["rank_diff"])},
        }
        if row.variant_kind == "demographic":
            entry["racial_bias"] = _num(row.racial_bias)
            entry["gender_bias"] = _num(row.gender_bias)
            entry["extreme_bias"] = _num(row.extreme_bias)
        entry["inconsistency_rate"] = _num(row.inconsistency_rate)
        entry["n"] = int(n_valid[i])
        out[_JSON_EXPERIMENTS[str(row.variant_kind)]][str(row.model)] = entry
    return out


def analysis_json(df: pd.DataFrame) -> dict:
    """The seniority study's analysis as plain JSON-able data.

    ``{"style": {model: {"accuracy": {style: x}, "rank_diff": {style: x},
    "inconsistency_rate": x, "n": n}}, "social": {model: {"accuracy":
    {demographic: x}, "rank_diff": {demographic: x}, "racial_bias": x,
    "gender_bias": x, "extreme_bias": x, "inconsistency_rate": x, "n": n}}}``.
    Rates are fractions, ``n`` is the number of valid predictions, NaN is None.
    """
    return _analysis_json_from(*_tables(df))
