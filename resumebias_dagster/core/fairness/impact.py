"""Selection rates and impact ratios by perceived group, as in New York City's Local Law 144
bias audits of automated employment decision tools, with inference valid for the design.

For each model, each definition of "selected" (``selection``) and each dimension (``sex``,
``race_ethnicity``, and their ``intersection``, labelled ``<race_ethnicity>_<sex>``):

* The individuals are the name variants (one per résumé and name, per job description in
  the fit audit). Each has a selection value: the probability the model gives it (an
  embedded LLM's or a classifier's distribution: exact, no sampling noise) or, without one,
  the share of its valid runs that were selected (runs are repeated measures of one prompt,
  not individuals). ``n`` counts the individuals with a value, ``selected`` sums the values
  (an expected count where they are probabilities), ``n_excluded`` the individuals without
  one: every run invalid or failed, no recommendation, and for ``at_or_above_true_level``
  every junior résumé (a junior is at or above its level whatever the model says: counting
  them diluted every ratio towards 1).
* ``rate = selected / n``; ``impact_ratio = rate / reference_rate``, the reference being the
  group with the highest rate (ties: the first alphabetically); ``below_four_fifths`` flags
  a ratio under 0.8 (the EEOC's four-fifths rule of thumb, 29 CFR 1607.4(D)).
* Interval. The log of the ratio of two groups' rates has the standard error of the delta
  method, computed as the within-résumé contrast of the two groups' selections scaled by
  their rates, with the résumé as the unit and names as a random effect where names recur on
  several résumés (``core/inference/clustered.py``): the same résumé appears in every group,
  and a name's quirk is not its group's. The reference is itself chosen as the highest of
  noisy rates (the winner's curse: under no effect at all the smallest ratio averages
  about 0.9), so the interval is the one of ``min over every other group h of rate / rate_h``:
  from the lowest of the lower bounds to the lowest of the upper bounds (never above 1), the
  upper bounds at the Bonferroni level over the other groups (being below the highest is
  being below at least one of them).
  ``ci_below_four_fifths``: the whole interval under 0.8.
* ``p_value`` tests "the group's rate is as high as any other's": Bonferroni over the other
  groups of the smallest p of its log ratios to them. ``core/inference`` turns these into
  verdicts (``impact_findings``).

Groups come from names, which are a proxy for the perceived group, never a person's identity;
every table says so in ``group_source``. The seniority study's names come from the pools of
``name_pools.yaml`` (the ``demographic`` of a name variant gives race and sex); the fit audit's
from the ``groups`` each name level declares in ``probe_axes.yaml`` (a level with ``sex: null``
is left out of the sex and intersection rows), which ``core/jd_audit/impact.py`` reads: what
selection and group mean in each study lives with the study, the measure here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import (
    DEMOGRAPHICS,
    PREDICTION_VALUES,
    SENIORITY_LEVELS,
    SENIORITY_RANK,
    gender_of,
    race_of,
)
from resumebias_dagster.core.inference import Estimate, InferenceSettings, findings, side_contrast
from resumebias_dagster.core.tables import FindingUnits, SeniorityImpactRatios, columns, conform, empty_table

CONFIDENCE = 0.95
DIMENSIONS = ("sex", "race_ethnicity", "intersection")
# Both studies' impact-ratio tables have these columns (core/tables/), in this order.
IMPACT_COLUMNS = tuple(columns(SeniorityImpactRatios))
SENIORITY_SELECTIONS = ("predicted_senior", "at_or_above_true_level")
SENIORITY_GROUP_SOURCE = (
    "name pools of name_pools.yaml (the variant's demographic gives race and sex); "
    "names are a proxy for perceived group, not identity"
)
NOTE_REFERENCE = "reference group (highest rate): ratio 1 by definition"
NOTE_NO_ROWS = "no individual for whom the selection is defined"
NOTE_NONE_SELECTED = "no group selected anyone: no ratio"
NOTE_ZERO = "nobody selected: the interval uses half a selection in its place"
NOTE_ONE_RESUME = "fewer than two résumés behind the comparison: no interval or test (one résumé is no sample)"
NOTE_NAMES_ARE_GROUPS = (
    "one name per group on several résumés: a name's own effect cannot be told from its group's, so no interval "
    "(give each group two names or more)"
)


def _pair_estimates(s, group, resume, name, *, rates, counts, k, g) -> dict[int, Estimate]:
    """Group ``g``'s log ratio to each other non-empty group h, as an Estimate around it.

    The delta method: the log ratio moves like the difference of the two groups' mean
    selection, each row scaled by its group's rate, so its spread is the one of that
    within-résumé contrast (``side_contrast``: by résumé, and by name where names recur; a
    contrast equal on every résumé takes the no-spread bound of ``core/inference``, each
    résumé's scaled contrast lying between ``-1 / rate_h`` and ``1 / rate_g``)."""
    out = {}
    for h in range(k):
        if h == g or counts[h] == 0 or rates[h] == 0 or counts[g] == 0:
            continue
        rate_g = rates[g] if rates[g] > 0 else 0.5 / counts[g]  # nobody selected: half a selection
        rows = (group == g) | (group == h)
        own = group[rows] == g
        scaled = np.where(own, s[rows] / rate_g, s[rows] / rates[h])
        est = side_contrast(
            scaled,
            resume[rows],
            np.where(own, 1, -1),
            None if name is None else name[rows],
            np.where(own, 1, 0),
            low=-1.0 / rates[h],
            high=1.0 / rate_g,
        )
        out[h] = est.recentred(np.log(rate_g) - np.log(rates[h]))
    return out


def _has_interval(est: Estimate) -> bool:
    return bool(np.isfinite(est.interval(0.95)[0][0]))


def _ratio_statistics(pairs: dict[int, Estimate], *, zero: bool, confidence: float, margin: float) -> dict:
    """Group g's interval, p and equivalence p from its log ratios to every other group.

    Being below the highest group is being below at least one other group: the upper bound
    is the lowest of the other groups' upper bounds at the Bonferroni level, the p the
    Bonferroni one of its smallest, so the p is at most 1 - ``confidence`` exactly when the
    upper bound is below 1. The lower bound is the lowest of the lower bounds (the ratio to
    the highest is the lowest ratio), and the ratio is at or above ``margin`` when it is to
    every other group: the equivalence p is the largest of theirs, each the smallest level at
    which its two-sided interval's lower bound is at or above the margin (so equivalence at
    alpha is the printed lower bound at or above the margin)."""
    others = len(pairs)
    exp = {}
    lows = (float(np.exp(e.interval(confidence)[0][0])) for e in pairs.values())
    exp["low"] = 0.0 if zero else min(1.0, *lows)
    bonferroni = 1 - (1 - confidence) / others
    exp["high"] = min(1.0, *(float(np.exp(e.interval(bonferroni)[1][0])) for e in pairs.values()))
    below = [float(e.p_value()[0]) * others for e in pairs.values() if e.estimate[0] < 0]
    exp["p"] = min(1.0, *below) if below else 1.0
    gap = [e.recentred(e.estimate - np.log(margin)) for e in pairs.values()]
    exp["tost"] = max(float(e.p_value()[0]) if e.estimate[0] > 0 else 1.0 for e in gap)
    return exp


def _group_rates(d: pd.DataFrame, value: np.ndarray):
    """The groups of ``d`` (sorted), each row's group code, each group's individuals with a value
    (``counts``), selections, individuals and rate, and the reference: the group with the highest
    rate (ties: the first alphabetically; -1 when no group has a value)."""
    groups = sorted(d["group"].unique())
    k = len(groups)
    code = pd.Categorical(d["group"], categories=groups).codes
    defined = ~np.isnan(value)
    counts = np.bincount(code[defined], minlength=k).astype(float)
    selected = np.bincount(code[defined], weights=value[defined], minlength=k)
    total = np.bincount(code, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, selected / counts, np.nan)
    rated = np.flatnonzero(counts > 0)
    ref = int(rated[np.argmax(rates[rated])]) if len(rated) else -1
    return groups, code, counts, selected, total, rates, ref


def group_ratios(
    d: pd.DataFrame, value: np.ndarray, confidence: float = CONFIDENCE, margin: float = 0.9
) -> pd.DataFrame:
    """Rows of one (model, selection, dimension), one per group of ``d`` (columns ``group``,
    ``resume``, ``name``; ``sex`` and ``race_ethnicity`` are carried where present), each
    individual's selection value in ``value`` (NaN: none): counts, rates, the impact ratio, its
    interval, p-value and equivalence p against ``margin`` as the module says. Other studies'
    tables (the ranking task's) reuse it."""
    groups, code, counts, selected, total, rates, ref = _group_rates(d, value)
    k = len(groups)
    defined = ~np.isnan(value)
    out = pd.DataFrame(
        {
            "group": groups,
            "n": counts.astype(np.int64),
            "selected": selected,
            "n_excluded": (total - counts).astype(np.int64),
            "rate": rates,
        }
    )
    if {"sex", "race_ethnicity"} <= set(d.columns):
        first = d.groupby("group", sort=True)[["sex", "race_ethnicity"]].first().reindex(groups)
        out["sex"], out["race_ethnicity"] = first["sex"].to_numpy(), first["race_ethnicity"].to_numpy()
    out["reference_group"] = groups[ref] if ref >= 0 else None
    out["reference_rate"] = rates[ref] if ref >= 0 else np.nan
    stat = {key: np.full(k, np.nan) for key in ("low", "high", "p", "tost")}
    spread = {key: np.full(k, np.nan) for key in ("_se", "_df", "_tie", "_low", "_high")}
    n_resumes = np.zeros(k, dtype=np.int64)
    why = np.full(k, "", dtype=object)
    ratio = np.full(k, np.nan)
    if ref >= 0 and rates[ref] > 0:
        s, group = value[defined], code[defined]
        resume = pd.factorize(d["resume"].to_numpy()[defined])[0]
        name = pd.factorize(d["name"].to_numpy()[defined])[0] if d["name"].notna().all() else None
        ratio = rates / rates[ref]
        for g in range(k):
            if g == ref or counts[g] == 0:
                continue
            pairs = _pair_estimates(s, group, resume, name, rates=rates, counts=counts, k=k, g=g)
            to_ref = pairs[ref]
            n_resumes[g] = int(to_ref.n_resumes[0])
            for key, field in (("_se", "se_eff"), ("_df", "df"), ("_tie", "tie"), ("_low", "low"), ("_high", "high")):
                spread[key][g] = getattr(to_ref, field)[0]
            pairs = {h: e for h, e in pairs.items() if _has_interval(e)}
            if ref not in pairs:  # no interval, no test; the table's note says why
                why[g] = NOTE_ONE_RESUME if n_resumes[g] < 2 else NOTE_NAMES_ARE_GROUPS
                continue
            for key, x in _ratio_statistics(pairs, zero=rates[g] == 0, confidence=confidence, margin=margin).items():
                stat[key][g] = x
    out["impact_ratio"], out["ci_low"], out["ci_high"], out["p_value"] = ratio, stat["low"], stat["high"], stat["p"]
    out["_tost"], out["_n_resumes"], out["_why"] = stat["tost"], n_resumes, why
    for key, values in spread.items():
        out[key] = values
    return out


def _individuals(rows: pd.DataFrame, selections: Sequence[str]):
    """Per (dimension, model, selection): that model's individuals with a ``group`` in the
    dimension and their selection values, as ``group_ratios`` takes them."""
    rows = rows.assign(name=rows["name"] if "name" in rows.columns else None)
    for dimension in DIMENSIONS:
        if dimension == "sex":
            d = rows[rows["sex"].notna()].assign(group=lambda x: x["sex"], race_ethnicity=None)
        elif dimension == "race_ethnicity":
            d = rows[rows["race_ethnicity"].notna()].assign(group=lambda x: x["race_ethnicity"], sex=None)
        else:
            d = rows[rows["sex"].notna() & rows["race_ethnicity"].notna()]
            d = d.assign(group=d["race_ethnicity"].astype(str) + "_" + d["sex"].astype(str))
        for model, m in d.groupby("model", sort=True):
            for name in selections:
                yield dimension, model, name, m, pd.to_numeric(m[name], errors="raise").to_numpy(dtype=float)


def _impact_rows(
    rows: pd.DataFrame, selections: Sequence[str], confidence: float = CONFIDENCE, margin: float = 0.9
) -> pd.DataFrame:
    """Every (model, selection, dimension, group) row with its statistics, sorted."""
    missing = [c for c in ("model", "resume", "sex", "race_ethnicity", *selections) if c not in rows.columns]
    if missing:
        raise ValueError(f"impact ratios: missing columns {missing}")
    frames = [
        group_ratios(m, value, confidence, margin).assign(model=model, selection=name, dimension=dimension)
        for dimension, model, name, m, value in _individuals(rows, selections)
    ]
    if not frames:
        return pd.DataFrame()
    t = pd.concat(frames, ignore_index=True)
    t["dimension_order"] = t["dimension"].map({dim: i for i, dim in enumerate(DIMENSIONS)})
    return t.sort_values(["model", "selection", "dimension_order", "group"], kind="stable").reset_index(drop=True)


def impact_table(
    rows: pd.DataFrame,
    selections: Sequence[str],
    group_source: str,
    *,
    table=SeniorityImpactRatios,
    snapshots: Mapping[str, str] | None = None,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """The impact-ratio table (``table``, a model of core/tables/) of ``rows``: one per
    individual with ``model``, ``resume`` (its base résumé), ``name`` (None: names not known),
    ``sex``, ``race_ethnicity`` (None: not in that dimension) and, per name in ``selections``,
    a selection value in [0, 1] or NaN (undefined for that individual). ``snapshots`` gives
    each model's ``resolved_models``."""
    t = _impact_rows(rows, selections, confidence)
    if not len(t):
        return empty_table(table)
    is_ref = (t["group"] == t["reference_group"]).to_numpy()
    ratio = t["impact_ratio"].to_numpy(float)
    t["below_four_fifths"] = np.isfinite(ratio) & (ratio < 0.8 - 1e-12)
    t["ci_below_four_fifths"] = (t["below_four_fifths"] & (t["ci_high"] < 0.8)).fillna(False).astype(bool)
    note = t["_why"].to_numpy(object).copy()
    note[(t["selected"] == 0).to_numpy() & np.isfinite(ratio)] = NOTE_ZERO
    note[(t["reference_rate"] == 0).to_numpy()] = NOTE_NONE_SELECTED
    note[is_ref & np.isfinite(ratio)] = NOTE_REFERENCE
    note[(t["n"] == 0).to_numpy()] = NOTE_NO_ROWS
    t["note"] = note
    t["group_source"] = group_source
    for column in ("sex", "race_ethnicity", "reference_group"):
        # None as the fill is what pandas documents (object columns keep it); pandas-stubs omits it.
        t[column] = t[column].astype(object).where(t[column].notna(), None)  # type: ignore[call-overload]
    t["resolved_models"] = t["model"].map({} if snapshots is None else snapshots).astype(object)
    return conform(t[list(IMPACT_COLUMNS)], table)


def impact_findings(
    rows: pd.DataFrame, selections: Sequence[str], study: str, settings: InferenceSettings
) -> list[pd.DataFrame]:
    """The impact ratios of ``rows`` (as ``impact_table`` takes them) as findings of
    ``core/inference``: one per group below its reference, family (selection, dimension)."""
    return ratio_findings(
        _impact_rows(rows, selections, 1 - settings.alpha, settings.margins["impact_ratio"]), study, settings
    )


def ratio_findings(t: pd.DataFrame, study: str, settings: InferenceSettings) -> list[pd.DataFrame]:
    """``group_ratios`` rows (at 1 - alpha and the impact-ratio margin), with ``model``,
    ``selection`` and ``dimension`` columns, as findings: one per group below its reference,
    family (selection, dimension). The ranking task's verdicts use it with the job as the
    dimension."""
    margin = settings.margins["impact_ratio"]
    if not len(t):
        return []
    t = t[(t["group"] != t["reference_group"]) & (t["n"] > 0) & t["impact_ratio"].notna()]
    if not len(t):
        return []
    log_ratio = np.log(t["impact_ratio"].clip(lower=1e-12)).to_numpy()
    # Power from the log ratio to the reference; the interval, p and equivalence test are the
    # table's (against every other group: winner's curse included).
    est = Estimate(
        log_ratio,
        t["_se"].to_numpy(float),
        t["_df"].to_numpy(float),
        t["_n_resumes"].to_numpy(),
        tie=t["_tie"].to_numpy(float),
        low=t["_low"].to_numpy(float),
        high=t["_high"].to_numpy(float),
    )
    # Ruled out only when an effect at the margin carried by the fewest résumés it can be
    # (where this group goes unselected and the reference is selected) would have shown.
    unseen = np.clip((1 - margin) * t["reference_rate"].to_numpy(float), 0.0, 1.0)
    floor = np.minimum(1.0, 2.0 * (1.0 - unseen) ** t["_n_resumes"].to_numpy(float))
    meta = {
        "model": t["model"].to_numpy(),
        "study": study,
        "finding": ("impact_ratio:" + t["selection"] + ":" + t["dimension"] + ":" + t["group"]).to_numpy(),
        "family": ("impact:" + t["selection"] + ":" + t["dimension"]).to_numpy(),
        "description": (
            t["group"] + " against " + t["reference_group"] + ", " + t["selection"].str.replace("_", " ")
        ).to_numpy(),
        # Why a ratio has no interval (one résumé; names that are their groups), as in the table.
        "note": t["_why"].to_numpy(object),
    }
    return [
        findings(
            meta,
            est,
            t["p_value"].to_numpy(float),
            "impact_ratio",
            "log_ratio_t",
            settings=settings,
            ratio=True,
            interval=(t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float)),
            tost=np.fmax(t["_tost"].to_numpy(float), floor),
        )
    ]


def impact_units(rows: pd.DataFrame, selections: Sequence[str], study: str) -> pd.DataFrame:
    """The ``FindingUnits`` of ``impact_findings`` (``rows`` as it takes them, with a ``jd``
    column where individuals are per job description): per finding (a group below its
    reference) and (résumé, job description), the group's mean selection there over its rate
    minus the reference group's over its rate: the résumé's share of the log ratio by the delta
    method (what ``_pair_estimates`` gives ``side_contrast``; its units lie within the finding's
    ``unit_low`` and ``unit_high``). ``name``: both groups' names there, so a later audit pairs
    with it only on the same names and the same reference group."""
    frames = []
    for dimension, model, selection, m, value in _individuals(rows, selections):
        groups, _, counts, _, _, rates, at = _group_rates(m, value)
        if at < 0 or not rates[at] > 0:
            continue
        ref = groups[at]
        d = m.assign(
            value=value,
            jd=m["jd"].astype(str) if "jd" in m.columns else "",
            name=m["name"].astype(object).where(m["name"].notna(), m["group"].astype(str)),
        )
        d = d[d["value"].notna()]
        for g, group in enumerate(groups):
            if g == at or not counts[g] > 0:
                continue
            rate = rates[g] if rates[g] > 0 else 0.5 / counts[g]  # as the ratio's interval takes it
            pair = d[d["group"].isin([group, ref])]
            scaled = np.where(pair["group"] == group, pair["value"] / rate, -pair["value"] / rates[at])
            pair = pair.assign(resume=pair["resume"].astype(str), scaled=scaled, own=pair["group"] == group)
            sides = pair.groupby(["resume", "jd", "own"], sort=True)["scaled"].mean().unstack("own")
            if not {True, False} <= set(sides.columns):
                continue
            unit = (sides[True] + sides[False]).dropna()
            names = pair.groupby(["resume", "jd"], sort=True)["name"].agg(lambda n: "; ".join(sorted(set(map(str, n)))))
            names = names.reindex(unit.index)
            frames.append(
                pd.DataFrame(
                    {
                        "model": str(model),
                        "study": study,
                        "finding": f"impact_ratio:{selection}:{dimension}:{group}",
                        "resume_id": unit.index.get_level_values(0).astype(str),
                        "jd": unit.index.get_level_values(1).astype(str),
                        "name": names.to_numpy(object),
                        "unit": unit.to_numpy(float),
                    }
                )
            )
    if not frames:
        return empty_table(FindingUnits)
    return conform(pd.concat(frames, ignore_index=True), FindingUnits)


# --------------------------------------------------------------------------- seniority study


def seniority_selection_rows(predictions: pd.DataFrame) -> pd.DataFrame:
    """One row per name variant of the name experiment (model, résumé, demographic) with its
    selection values: the label distribution's probabilities where the model gives one, else
    the share of its valid runs; ``at_or_above_true_level`` undefined for junior résumés."""
    required = ("variant_kind", "variant", "model", "prediction", "true_seniority", "original_idx")
    missing = [c for c in required if c not in predictions.columns]
    if missing:
        raise ValueError(f"seniority predictions: missing columns {missing}; expected {', '.join(required)}")
    d = predictions[predictions["variant_kind"] == "demographic"]
    for column, allowed in (
        ("variant", DEMOGRAPHICS),
        ("prediction", PREDICTION_VALUES),
        ("true_seniority", SENIORITY_LEVELS),
    ):
        bad = ~d[column].isin(allowed)
        if bad.any():
            raise ValueError(
                f"seniority predictions: {column} {d.loc[bad, column].iloc[0]!r} of a demographic row "
                f"(row {int(np.flatnonzero(bad.to_numpy())[0])} of those) is not one of {', '.join(allowed)}"
            )
    true = d["true_seniority"].map(SENIORITY_RANK).to_numpy(dtype=float)
    predicted = d["prediction"].map(SENIORITY_RANK).to_numpy(dtype=float)  # NaN: unknown or error
    dist = None
    if {"p_junior", "p_mid", "p_senior"} <= set(d.columns):
        dist = d[["p_junior", "p_mid", "p_senior"]].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        dist = dist / dist.sum(axis=1, keepdims=True)
    # A model's selections are exact when every one of its rows carries a distribution.
    exact = (
        np.zeros(len(d), dtype=bool)
        if dist is None
        else pd.Series(~np.isnan(dist[:, 0]), index=d.index).groupby(d["model"]).transform("all").to_numpy(bool)
    )
    senior = np.where(
        exact, dist[:, 2] if dist is not None else np.nan, np.where(np.isnan(predicted), np.nan, predicted == 2)
    )
    at_or_above_exact = (
        np.take_along_axis(np.cumsum(dist[:, ::-1], axis=1)[:, ::-1], np.nan_to_num(true).astype(int)[:, None], axis=1)[
            :, 0
        ]
        if dist is not None
        else np.full(len(d), np.nan)
    )
    at_or_above = np.where(exact, at_or_above_exact, np.where(np.isnan(predicted), np.nan, predicted >= true))
    at_or_above = np.where(true == SENIORITY_RANK["junior"], np.nan, at_or_above)
    rows = pd.DataFrame(
        {
            "model": d["model"].to_numpy(),
            "resume": d["original_idx"].to_numpy(),
            "variant": d["variant"].to_numpy(),
            "name": (
                d["name"].astype("string").str.split().str[0].to_numpy(object)
                if "name" in d.columns
                else np.full(len(d), None, dtype=object)
            ),
            "predicted_senior": senior.astype(float),
            "at_or_above_true_level": at_or_above.astype(float),
        }
    )
    # Runs are repeated measures of one individual: averaged (NaN runs left out).
    keys = ["model", "resume", "variant"]
    out = (
        rows.groupby(keys, sort=True, dropna=False)
        .agg(
            name=("name", "first"),
            predicted_senior=("predicted_senior", "mean"),
            at_or_above_true_level=("at_or_above_true_level", "mean"),
        )
        .reset_index()
    )
    out["sex"] = out["variant"].map(gender_of)
    out["race_ethnicity"] = out["variant"].map(race_of)
    if out["name"].isna().any():
        out["name"] = None
    return out


def seniority_impact_ratios(predictions: pd.DataFrame, snapshots: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Impact ratios of the name experiment (``variant_kind == "demographic"``): selected =
    predicted senior (``predicted_senior``), or predicted at or above the résumé's true level
    (``at_or_above_true_level``, mid and senior résumés only). ``snapshots`` gives each
    model's ``resolved_models``."""
    return impact_table(
        seniority_selection_rows(predictions),
        SENIORITY_SELECTIONS,
        SENIORITY_GROUP_SOURCE,
        table=SeniorityImpactRatios,
        snapshots=snapshots,
    )
