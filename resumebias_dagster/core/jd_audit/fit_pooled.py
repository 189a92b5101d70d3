"""The fit audit's findings: each level's change pooled over the job descriptions, with the
résumé as the unit (``pooled_levels``), and the per-level summary table (``axis_summary``).

A name level (its rows carry a ``name``, as the firstName axis's do) is a sample of names:
where a name recurs on several résumés its own effect is a random effect, as in the name-group
contrasts (``core/inference/clustered.side_contrast``), so one name's quirk is not read as the
level's effect; with each name on one résumé that is the paired t over résumés. Reading names
as fixed in the levels and random in the groups covered 88-92% of true level effects once
names recurred (more than 12 résumés).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import Estimate, InferenceSettings, paired, side_contrast
from resumebias_dagster.core.jd_audit.fit_stats import (
    BASELINE,
    SCORE_RANGE,
    _checked_scores,
    _labels,
    _Texts,
    text_values,
)
from resumebias_dagster.core.tables import FindingUnits, FitAxisSummary, columns, conform, empty_table

AXIS_SUMMARY_COLUMNS = tuple(columns(FitAxisSummary))


def pooled_levels(
    scores: pd.DataFrame, settings: InferenceSettings | None = None, arms: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, Estimate, np.ndarray, np.ndarray]:
    """Per (model, variant) over the job descriptions: the keys (model, variant, axis, level,
    arm, n_jds), the Estimate of the mean change, its p and its test. The unit is the résumé
    (its change averaged over the JDs it was scored under; the paired t over résumés); with
    one résumé, the job descriptions (t over JDs, a claim about that résumé). These are the
    fit audit's findings, ranked with every other finding of the model behind one gate: a
    randomisation test's floor (2 / 2**G) would leave nothing able to pass a gate of dozens
    of findings at the default design's 9 résumés, so the t is used here and the cells keep
    the exact randomisation test."""
    settings = settings or InferenceSettings()
    t = _Texts(scores, _checked_scores(scores))
    value = t.grid(t.value)
    d = value - value[:, :, t.base : t.base + 1, :]
    d[:, :, t.base] = np.nan
    present = ~np.isnan(d)
    n_jds = present.any(axis=3).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # (model, variant, résumé): each résumé's change averaged over the JDs it has.
        per_resume = np.where(present, d, 0.0).sum(axis=1) / present.sum(axis=1)
    pm, pv = np.nonzero(n_jds > 0)
    units = per_resume[pm, pv]
    one = (~np.isnan(units)).sum(axis=1) <= 1
    if one.any():
        # One résumé: its per-JD changes are the units instead.
        with np.errstate(invalid="ignore", divide="ignore"):
            by_jd = np.where(present, d, 0.0).sum(axis=3) / present.sum(axis=3)  # (model, jd, variant)
        width = max(units.shape[1], by_jd.shape[1])
        units = np.pad(units, ((0, 0), (0, width - units.shape[1])), constant_values=np.nan)
        units[one] = np.pad(by_jd[pm[one], :, pv[one]], ((0, 0), (0, width - by_jd.shape[1])), constant_values=np.nan)
    units_est = paired(units, *SCORE_RANGE)
    # One résumé: the job descriptions are the units of the test, the résumé still one.
    est = replace(units_est, n_resumes=np.where(one, np.minimum(units_est.n_resumes, 1), units_est.n_resumes))
    labels = _labels(scores, t.variants, arms)
    test = np.where(one, "t_jd", "t_resume").astype(object)
    if "name" in scores.columns:
        models, variants = np.asarray(t.models[pm]), np.asarray(t.variants[pv])
        est, test = _names_random(scores, est, test, models=models, variants=variants, one=one)
    # A t over the units: a sign-flip test's floor (2 / 2**G, 0.0039 with 9 résumés) would sit
    # under a gate of dozens of findings, where nothing could ever pass it.
    p = est.p_value()
    keys = pd.DataFrame(
        {
            "model": t.models[pm],
            "variant": t.variants[pv],
            "axis": labels["axis"].to_numpy()[pv],
            "level": labels["level"].to_numpy()[pv],
            "arm": labels["arm"].to_numpy()[pv],
            "n_jds": n_jds[pm, pv],
        }
    )
    return keys, est, p, test


def level_units(scores: pd.DataFrame) -> pd.DataFrame:
    """The ``FindingUnits`` of the ``fit_level`` findings: each level's change to each résumé's
    text under each job description (its value minus its baseline's, as ``pooled_levels``
    takes them before averaging over the job descriptions), with the name the text carried."""
    texts = text_values(scores)
    keys = ["model", "jd", "resume_id"]
    base = texts.loc[texts["variant"] == BASELINE, [*keys, "value"]].rename(columns={"value": "baseline"})
    levels = texts[texts["variant"] != BASELINE].merge(base, on=keys)
    if not len(levels):
        return empty_table(FindingUnits)
    out = pd.DataFrame(
        {
            "model": levels["model"].astype(str),
            "study": "jd_audit",
            "finding": "fit_level:" + levels["variant"].astype(str),
            "resume_id": levels["resume_id"].astype(str),
            "jd": levels["jd"].astype(str),
            "name": levels["name"].astype(object) if "name" in levels.columns else None,
            "unit": (levels["value"] - levels["baseline"]).astype(float),
        }
    )
    return conform(out[out["unit"].notna()].reset_index(drop=True), FindingUnits)


def _names_random(
    scores: pd.DataFrame, est: Estimate, test: np.ndarray, *, models: np.ndarray, variants: np.ndarray, one: np.ndarray
) -> tuple[Estimate, np.ndarray]:
    """``est`` with each name level's change (rows with a ``name``, over two or more résumés)
    re-estimated as the within-résumé contrast of the level against the baseline with the
    names a random effect, their variance estimated from every name of the level's axis."""
    texts = text_values(scores)
    named = texts["name"].notna() & (texts["variant"] != BASELINE)
    if not named.any():
        return est, test
    texts = texts.assign(axis=texts["variant"].map(lambda v: v.partition("_")[0]))
    # Each résumé's text of a variant, averaged over the job descriptions it was scored under.
    per_resume = texts.groupby(["model", "axis", "resume_id", "variant"], as_index=False, sort=True).agg(
        value=("value", "mean"), name=("name", "first")
    )
    fields: dict[str, Any] = {
        f: np.array(getattr(est, f), dtype=float) for f in ("estimate", "se", "df", "extra_var", "tie", "n_units")
    }
    fields["n_names"] = np.zeros(len(est)) if est.n_names is None else np.array(est.n_names, dtype=float)
    for i in np.flatnonzero(~one & np.isin(variants, texts.loc[named, "variant"].unique())):
        axis = variants[i].partition("_")[0]
        mine = per_resume[(per_resume["model"] == models[i]) & (per_resume["axis"] == axis)]
        base = per_resume[(per_resume["model"] == models[i]) & (per_resume["variant"] == BASELINE)]
        rows = pd.concat([mine, base.assign(name=BASELINE + ":" + base["resume_id"])], ignore_index=True)
        side = np.where(rows["variant"] == variants[i], 1, np.where(rows["variant"] == BASELINE, -1, 0))
        contrast = side_contrast(
            rows["value"].to_numpy(float),
            pd.factorize(rows["resume_id"])[0],
            side,
            pd.factorize(rows["name"].astype(str))[0],
            pd.factorize(rows["variant"])[0],
            low=SCORE_RANGE[0],
            high=SCORE_RANGE[1],
            named=(rows["variant"] != BASELINE).to_numpy(),  # the names' variance from the name levels alone
        )
        for f in fields:
            value = getattr(contrast, f)
            fields[f][i] = np.asarray(value, dtype=float)[0] if value is not None else 0.0
        fields["n_names"][i] = mine.loc[mine["variant"] == variants[i], "name"].nunique()  # the level's own
        test[i] = "t_resume_name"
    return replace(est, **fields), test


def axis_summary(
    effects: pd.DataFrame,
    scores: pd.DataFrame | None = None,
    settings: InferenceSettings | None = None,
    arms: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per (model, axis, level), over the job descriptions: the spread of the cells'
    changes, how many are beyond noise, and the pooled change (``pooled_levels``) with its
    95% interval and p. The verdicts of these pooled changes are the fit audit's findings
    (``core/jd_audit/verdicts.py``)."""
    if not len(effects):
        return empty_table(FitAxisSummary)
    e = effects
    keys = ["model", "axis", "level"]
    sig = e["significant"].astype(bool)
    out = (
        e.assign(_sig=sig, _neg=sig & (e["delta"] < 0), _pos=sig & (e["delta"] > 0))
        .groupby(keys, sort=True)
        .agg(
            variant=("variant", "first"),
            arm=("arm", "first"),
            n_jds=("jd", "nunique"),
            mean_delta=("delta", "mean"),
            min_delta=("delta", "min"),
            max_delta=("delta", "max"),
            n_significant=("_sig", "sum"),
            n_significant_negative=("_neg", "sum"),
            n_significant_positive=("_pos", "sum"),
        )
        .reset_index()
    )
    if scores is None:
        raise ValueError("axis_summary: the scores behind non-empty effects are needed for the pooled changes")
    pooled, est, p, test = pooled_levels(scores, settings, arms)
    low, high = est.interval(0.95)
    pooled = pooled.assign(
        n_resumes=est.n_resumes.astype(np.int64),
        pooled_delta=est.estimate,
        pooled_se=est.se_eff,
        pooled_ci_low=low,
        pooled_ci_high=high,
        pooled_p=p,
        pooled_test=test,
    )
    out = out.merge(pooled.drop(columns=["axis", "level", "arm", "n_jds"]), on=["model", "variant"], how="left")
    for c in ("n_significant", "n_significant_negative", "n_significant_positive", "n_jds", "n_resumes"):
        out[c] = out[c].fillna(0).astype(np.int64)
    return out[list(AXIS_SUMMARY_COLUMNS)]
