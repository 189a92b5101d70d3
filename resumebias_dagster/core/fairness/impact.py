"""Selection rates and impact ratios by perceived group, as in New York City's Local Law 144
bias audits of automated employment decision tools.

For each model, each definition of "selected" (``selection``) and each dimension (``sex``,
``race_ethnicity``, and their ``intersection``, labelled ``<race_ethnicity>_<sex>``):

* ``rate = selected / n`` per group, over the group's rows where selection is defined;
  the rest (an invalid prediction, a failed run, no recommendation) are ``n_excluded``.
* ``impact_ratio = rate / reference_rate``, the reference being the group with the highest
  rate in that (model, selection, dimension) (ties: the first in alphabetical order). The
  four-fifths rule flags ``impact_ratio < 0.8`` (``below_four_fifths``);
  ``ci_below_four_fifths`` says whether the whole 95% interval lies below 0.8, i.e. whether
  the shortfall is more than sampling noise. A flag without it, on a few hundred rows, is
  what a model answering at random produces now and then: report both.
* 95% interval of the ratio of two proportions by the Katz log method:
  ``exp(log(ratio) ± 1.96·sqrt(1/x - 1/n + 1/x_ref - 1/n_ref))``, x the selected counts.
  Zero counts: a group that selected nobody has ratio 0, ``ci_low = 0`` and ``ci_high`` the
  Katz upper limit with 0.5 added to every cell of the 2x2 table (``x + 0.5`` of ``n + 1``
  on both sides), so the interval still says how large a ratio the data allow. When no group
  selected anyone the ratio is undefined (NaN, not flagged). The reference group's own ratio
  is 1 by definition and gets no interval.
* The interval treats every row as an independent trial. The design is paired (each résumé
  appears under every name), which makes it conservative; repeated runs of one prompt are
  not independent, which makes it optimistic. Read it as approximate.

Groups come from names, which are a proxy for the perceived group, never a person's identity;
every table says so in ``group_source``. The seniority study's names come from the pools of
``name_pools.yaml`` (the ``demographic`` of a name variant gives race and sex); the fit audit's
from the ``groups`` each name level declares in ``probe_axes.yaml`` (a level with ``sex: null``
is left out of the sex and intersection rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from resumebias_dagster.core.common.labels import (
    DEMOGRAPHICS,
    PREDICTION_VALUES,
    SENIORITY_LEVELS,
    SENIORITY_RANK,
    gender_of,
    race_of,
)
from resumebias_dagster.core.jd_audit.fit_stats import recommend_yes
from resumebias_dagster.core.tables import FitImpactRatios, SeniorityImpactRatios, columns, conform, empty_table

CONFIDENCE = 0.95
DEFAULT_SCORE_CUT = 7.0
DIMENSIONS = ("sex", "race_ethnicity", "intersection")
# Both studies' impact-ratio tables have these columns (core/tables/), in this order.
IMPACT_COLUMNS = tuple(columns(SeniorityImpactRatios))
SENIORITY_SELECTIONS = ("predicted_senior", "at_or_above_true_level")
SENIORITY_GROUP_SOURCE = (
    "name pools of name_pools.yaml (the variant's demographic gives race and sex); "
    "names are a proxy for perceived group, not identity"
)
FIT_GROUP_SOURCE = (
    "groups declared per name level in probe_axes.yaml; names are a proxy for perceived group, not identity"
)
NOTE_REFERENCE = "reference group (highest rate): ratio 1 by definition"
NOTE_NO_ROWS = "no row where the selection is defined"
NOTE_NONE_SELECTED = "no group selected anyone: no ratio"
NOTE_ZERO = "nobody selected: ci_high with 0.5 added to every cell"


def katz_interval(
    x: np.ndarray, n: np.ndarray, x_ref: np.ndarray, n_ref: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratio of proportions ``(x/n) / (x_ref/n_ref)`` and its Katz log interval, elementwise,
    with the zero-count rule of the module docstring. NaN where ``n``, ``n_ref`` or ``x_ref`` is 0."""
    x, n, x_ref, n_ref = (np.asarray(a, dtype=float) for a in (x, n, x_ref, n_ref))
    z = stats.norm.ppf(0.5 + confidence / 2)
    defined = (n > 0) & (n_ref > 0) & (x_ref > 0)
    zero = defined & (x == 0)
    # Haldane: 0.5 added to each of the four cells where the group selected nobody.
    xa, na = np.where(zero, x + 0.5, x), np.where(zero, n + 1, n)
    xr, nr = np.where(zero, x_ref + 0.5, x_ref), np.where(zero, n_ref + 1, n_ref)
    with np.errstate(invalid="ignore", divide="ignore"):
        log_ratio = np.log((xa / na) / (xr / nr))
        se = np.sqrt(1 / xa - 1 / na + 1 / xr - 1 / nr)
        ratio = (x / n) / (x_ref / n_ref)
    low = np.where(zero, 0.0, np.exp(log_ratio - z * se))
    high = np.exp(log_ratio + z * se)
    nan = np.full(len(x), np.nan)
    return (np.where(defined, ratio, nan), np.where(defined, low, nan), np.where(defined, high, nan))


def impact_table(
    rows: pd.DataFrame, selections: Sequence[str], group_source: str, table=SeniorityImpactRatios,
    snapshots: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The impact-ratio table (``table``, a model of core/tables/) of ``rows``: one per scored
    item with ``model``, ``sex``, ``race_ethnicity`` (None: not in that dimension) and, per name
    in ``selections``, a column of 1.0 (selected), 0.0 (not selected) or NaN (selection
    undefined for that row). ``snapshots`` gives each model's ``resolved_models``."""
    missing = [c for c in ("model", "sex", "race_ethnicity", *selections) if c not in rows.columns]
    if missing:
        raise ValueError(f"impact ratios: missing columns {missing}")
    frames = []
    keys = ["model", "sex", "race_ethnicity"]
    base = rows[keys].astype(object).where(rows[keys].notna(), "")
    for name in selections:
        value = pd.to_numeric(rows[name], errors="raise").to_numpy(dtype=float)
        counts = (
            pd.DataFrame({**{k: base[k].to_numpy() for k in keys}, "v": value, "d": ~np.isnan(value)})
            .groupby(keys, sort=True)
            .agg(n=("d", "sum"), total=("d", "size"), selected=("v", "sum"))
            .reset_index()
        )
        for dimension in DIMENSIONS:
            c = counts
            if dimension == "sex":
                c = c[c["sex"] != ""].assign(group=c["sex"], race_ethnicity="")
            elif dimension == "race_ethnicity":
                c = c[c["race_ethnicity"] != ""].assign(group=c["race_ethnicity"], sex="")
            else:
                c = c[(c["sex"] != "") & (c["race_ethnicity"] != "")]
                c = c.assign(group=c["race_ethnicity"] + "_" + c["sex"])
            g = c.groupby(["model", "group", "sex", "race_ethnicity"], sort=True)[["n", "total", "selected"]].sum()
            frames.append(g.reset_index().assign(selection=name, dimension=dimension))
    if not frames or not any(len(f) for f in frames):
        return empty_table(table)
    t = pd.concat(frames, ignore_index=True)
    t["n"] = t["n"].astype(np.int64)
    t["selected"] = t["selected"].astype(np.int64)
    t["n_excluded"] = t["total"].astype(np.int64) - t["n"]
    with np.errstate(invalid="ignore", divide="ignore"):
        t["rate"] = np.where(t["n"] > 0, t["selected"] / t["n"].where(t["n"] > 0, 1), np.nan)
    t["dimension_order"] = t["dimension"].map({d: i for i, d in enumerate(DIMENSIONS)})
    t = t.sort_values(["model", "selection", "dimension_order", "group"], kind="stable").reset_index(drop=True)

    unit = ["model", "selection", "dimension"]
    # Reference: highest rate; idxmax keeps the first (alphabetical) of tied groups.
    rated = t[t["rate"].notna()]
    ref_index = rated.groupby(unit, sort=False)["rate"].idxmax()
    ref = t.loc[ref_index, [*unit, "group", "selected", "n", "rate"]].rename(
        columns={"group": "reference_group", "selected": "x_ref", "n": "n_ref", "rate": "reference_rate"}
    )
    t = t.merge(ref, on=unit, how="left")
    ratio, low, high = katz_interval(
        t["selected"], t["n"], t["x_ref"].fillna(0), t["n_ref"].fillna(0)
    )
    is_ref = (t["group"] == t["reference_group"]).to_numpy()
    t["impact_ratio"] = ratio
    t["ci_low"] = np.where(is_ref, np.nan, low)
    t["ci_high"] = np.where(is_ref, np.nan, high)
    # ratio < 4/5 in whole numbers (x/n < 0.8 x_ref/n_ref): a ratio of exactly 0.8 is never
    # flagged by a rounding error.
    t["below_four_fifths"] = np.isfinite(ratio) & (
        5 * t["selected"].to_numpy() * t["n_ref"].fillna(0).to_numpy() < 4 * t["n"].to_numpy() * t["x_ref"].fillna(0).to_numpy()
    )
    t["ci_below_four_fifths"] = (t["below_four_fifths"] & (t["ci_high"] < 0.8)).fillna(False).astype(bool)
    note = np.full(len(t), "", dtype=object)
    note[(t["selected"] == 0).to_numpy() & np.isfinite(ratio)] = NOTE_ZERO
    note[(t["x_ref"] == 0).to_numpy()] = NOTE_NONE_SELECTED
    note[is_ref & np.isfinite(ratio)] = NOTE_REFERENCE
    note[(t["n"] == 0).to_numpy()] = NOTE_NO_ROWS
    t["note"] = note
    t["group_source"] = group_source
    for column in ("sex", "race_ethnicity"):
        t[column] = t[column].where(t[column] != "", None).astype(object)
    t["reference_group"] = t["reference_group"].astype(object)
    t["resolved_models"] = t["model"].map({} if snapshots is None else snapshots).astype(object)
    return conform(t[list(IMPACT_COLUMNS)], table)


# --------------------------------------------------------------------------- seniority study


def seniority_impact_ratios(predictions: pd.DataFrame, snapshots: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Impact ratios of the name experiment (``variant_kind == "demographic"``): selected =
    predicted senior (``predicted_senior``), or predicted at or above the résumé's true level
    (``at_or_above_true_level``). ``unknown``/``error`` predictions are excluded and counted.
    ``snapshots`` gives each model's ``resolved_models``."""
    required = ("variant_kind", "variant", "model", "prediction", "true_seniority")
    missing = [c for c in required if c not in predictions.columns]
    if missing:
        raise ValueError(f"seniority predictions: missing columns {missing}; expected {', '.join(required)}")
    d = predictions[predictions["variant_kind"] == "demographic"]
    for column, allowed in (("variant", DEMOGRAPHICS), ("prediction", PREDICTION_VALUES), ("true_seniority", SENIORITY_LEVELS)):
        bad = ~d[column].isin(allowed)
        if bad.any():
            raise ValueError(
                f"seniority predictions: {column} {d.loc[bad, column].iloc[0]!r} of a demographic row "
                f"(row {int(np.flatnonzero(bad.to_numpy())[0])} of those) is not one of {', '.join(allowed)}"
            )
    valid = d["prediction"].isin(SENIORITY_LEVELS).to_numpy()
    predicted = d["prediction"].map(SENIORITY_RANK).to_numpy(dtype=float)
    true = d["true_seniority"].map(SENIORITY_RANK).to_numpy(dtype=float)
    rows = pd.DataFrame(
        {
            "model": d["model"].to_numpy(),
            "sex": d["variant"].map(gender_of).to_numpy(),
            "race_ethnicity": d["variant"].map(race_of).to_numpy(),
            "predicted_senior": np.where(valid, predicted == SENIORITY_RANK["senior"], np.nan),
            "at_or_above_true_level": np.where(valid, predicted >= true, np.nan),
        }
    )
    return impact_table(rows, SENIORITY_SELECTIONS, SENIORITY_GROUP_SOURCE, SeniorityImpactRatios, snapshots)


# --------------------------------------------------------------------------- fit audit


def name_groups(catalog_dir=None) -> dict[str, dict[str, dict[str, str | None]]]:
    """Axis -> level -> {sex, race_ethnicity}: the ``groups`` the axes of ``probe_axes.yaml`` declare."""
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.jd_audit.probes import AXES_FILE, load_probe_axes

    groups = {a.id: a.params["groups"] for a in load_probe_axes(catalog_dir).axes if "groups" in a.params}
    if not groups:
        raise CatalogError(
            f"{AXES_FILE}: no axis declares `groups` (level -> {{sex, race_ethnicity}}), so the fit audit "
            "has no groups to compare; add them under the firstName axis as the packaged file does"
        )
    return groups


def score_selection(score_cut: float) -> str:
    """The ``selection`` name of "score at or above ``score_cut``"."""
    return f"score_at_least_{score_cut:g}"


def fit_impact_ratios(
    scores: pd.DataFrame,
    groups: Mapping[str, Mapping[str, Mapping[str, str | None]]] | None = None,
    score_cut: float = DEFAULT_SCORE_CUT,
    snapshots: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Impact ratios of the fit audit over the name variants (the levels of the axes in
    ``groups``, default: ``name_groups()``): selected = ``recommend`` yes (``recommend_yes``;
    "no" and "maybe" are not selected, a run without a recommendation is excluded), or a score
    at or above ``score_cut`` (``score_at_least_<cut>``; a failed run is excluded). Pooled
    over job descriptions, base résumés and runs per model. ``snapshots`` gives each model's
    ``resolved_models``."""
    if not 1 <= score_cut <= 10:
        raise ValueError(f"score_cut must lie on the 1-10 score scale, got {score_cut!r}")
    if not len(scores):
        return empty_table(FitImpactRatios)
    required = ("model", "axis", "level", "score")
    missing = [c for c in required if c not in scores.columns]
    if missing:
        raise ValueError(f"fit scores: missing columns {missing}; expected {', '.join(required)}")
    groups = name_groups() if groups is None else groups
    named = scores[scores["axis"].isin(list(groups))]
    lookup = {(axis, level): g for axis, levels in groups.items() for level, g in levels.items()}
    pairs = list(zip(named["axis"], named["level"].astype(str)))
    unknown = sorted({p for p in pairs if p not in lookup})
    if unknown:
        axis, level = unknown[0]
        raise ValueError(
            f"fit scores: level {level!r} of axis {axis!r} has no declared group in probe_axes.yaml "
            f"(`groups` of {axis}: {sorted(groups[axis])}); re-score with the current probes or declare it"
        )
    score = pd.to_numeric(named["score"], errors="coerce").to_numpy(dtype=float)
    selection = score_selection(score_cut)
    rows = pd.DataFrame(
        {
            "model": named["model"].to_numpy(),
            "sex": [lookup[p]["sex"] for p in pairs],
            "race_ethnicity": [lookup[p]["race_ethnicity"] for p in pairs],
            "recommend_yes": recommend_yes(named),
            selection: np.where(np.isnan(score), np.nan, score >= score_cut),
        }
    )
    return impact_table(rows, ("recommend_yes", selection), FIT_GROUP_SOURCE, FitImpactRatios, snapshots)
