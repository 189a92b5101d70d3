"""The individuals of a Local Law 144 audit: one résumé with one name, with its EEO-1 sex and
race/ethnicity (mapped from the study's group labels, unknown where no EEO-1 category fits),
its score and its value for each outcome (see ``ll144``'s docstring for the rules).

* Seniority study: one per (résumé, demographic name variant); its value is the mean over its
  valid runs, or the model's exact expectation where it gives a distribution.
* Fit audit: one per (résumé, name level of an axis that declares ``groups``), **counted once**
  however many job descriptions scored it: for each job description its value is the mean over
  its valid runs (or the exact expected score), and the individual's value is the mean of those
  per-job-description values over the job descriptions where it has one. A selection (each
  ``recommend`` answer) is likewise the mean over the job descriptions of the share of its
  answered runs. So a résumé with a name scored under 17 job descriptions is one individual,
  not 17.

``Individuals.note`` says this in words, with the numbers of job descriptions and runs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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
from resumebias_dagster.core.fairness.impact import (
    SENIORITY_GROUP_SOURCE,
)
from resumebias_dagster.core.jd_audit.impact import FIT_GROUP_SOURCE, name_groups, name_level_rows

GroupMap = Mapping[str, Mapping[str, Mapping[str, str | None]]]
STUDIES = ("seniority", "jd_audit")
SENIORITY_OUTCOMES = SENIORITY_LEVELS  # junior, mid, senior
FIT_OUTCOMES = ("recommend_yes", "recommend_maybe", "recommend_no")


# The project's group labels (probe_axes.yaml `groups`, the seniority study's demographics),
# lower-cased with spaces, hyphens and slashes as underscores, to EEO-1 categories. Not here,
# so of unknown category: labels that span two EEO-1 categories (the Census's
# "asian_pacific_islander") and Middle Eastern or North African (a category of OMB's 2024
# standard that EEO-1 folds into White; perceived names of it would say nothing about White).
RACE_ETHNICITY_TO_EEO1 = {
    "hispanic": "Hispanic or Latino",
    "latino": "Hispanic or Latino",
    "hispanic_latino": "Hispanic or Latino",
    "hispanic_or_latino": "Hispanic or Latino",
    "white": "White",
    "caucasian": "White",
    "black": "Black or African American",
    "african_american": "Black or African American",
    "black_or_african_american": "Black or African American",
    "native_hawaiian_or_other_pacific_islander": "Native Hawaiian or Other Pacific Islander",
    "native_hawaiian_pacific_islander": "Native Hawaiian or Other Pacific Islander",
    "pacific_islander": "Native Hawaiian or Other Pacific Islander",
    "asian": "Asian",
    "american_indian_or_alaska_native": "American Indian or Alaska Native",
    "american_indian_alaska_native": "American Indian or Alaska Native",
    "native_american": "American Indian or Alaska Native",
    "two_or_more_races": "Two or More Races",
    "two_or_more": "Two or More Races",
    "multiracial": "Two or More Races",
}


SEX_TO_EEO1 = {"male": "Male", "female": "Female"}


@dataclass(frozen=True)
class Individuals:
    """One model's individuals: ``frame`` has ``resume``, ``name``, ``sex``, ``race_ethnicity``
    (EEO-1 labels, None: unknown), ``score`` and one column per outcome (NaN: no value)."""

    model: str
    study: str
    frame: pd.DataFrame
    outcomes: tuple[str, ...]
    group_source: str
    unmapped_labels: tuple[str, ...] = ()
    note: str = ""  # who an individual is, and over how many job descriptions and runs its value is averaged


def _norm(label: object) -> str | None:
    if label is None or (isinstance(label, float) and np.isnan(label)) or label is pd.NA:
        return None
    return re.sub(r"[\s\-/]+", "_", str(label).strip().lower()) or None


def _eeo1(labels: Sequence[object], mapping: Mapping[str, str]) -> tuple[np.ndarray, list[str]]:
    """EEO-1 labels (None: unknown) of ``labels``, and the labels given that map to none."""
    eeo1 = set(mapping.values())
    out: list[str | None] = []
    unmapped: set[str] = set()
    for label in labels:
        key = _norm(label)
        if key is None:
            out.append(None)
        elif key in mapping:
            out.append(mapping[key])
        elif str(label).strip() in eeo1:
            out.append(str(label).strip())
        else:
            out.append(None)
            unmapped.add(str(label))
    return np.array(out, dtype=object), sorted(unmapped)


def _require(rows: pd.DataFrame, required: Sequence[str], what: str) -> None:
    missing = [c for c in required if c not in rows.columns]
    if missing:
        raise ValueError(f"LL144 tables, {what}: missing columns {missing}; expected {', '.join(required)}")


def _study_of(rows: pd.DataFrame, study: str | None) -> str:
    if study is not None:
        if study not in STUDIES:
            raise ValueError(f"LL144 tables: study {study!r} is not one of {', '.join(STUDIES)}")
        return study
    if "variant_kind" in rows.columns:
        return "seniority"
    if "axis" in rows.columns and "level" in rows.columns:
        return "jd_audit"
    raise ValueError(
        "LL144 tables: cannot tell the study from the columns: seniority predictions have `variant_kind`, "
        f"fit scores `axis` and `level`; got {list(rows.columns)} (or pass study=)"
    )


def _model_rows(rows: pd.DataFrame, model: str | None) -> tuple[str, pd.DataFrame]:
    _require(rows, ("model",), "rows")
    models = sorted(rows["model"].dropna().astype(str).unique())
    if model is None:
        if len(models) != 1:
            raise ValueError(
                f"LL144 tables are per model: the rows hold {len(models)} models "
                f"({', '.join(models) or 'none'}); pass model= to pick one"
            )
        model = models[0]
    elif model not in models:
        raise ValueError(f"LL144 tables: model {model!r} has no rows (models: {', '.join(models) or 'none'})")
    return model, rows[rows["model"].astype(str) == model]


def _count(counts: pd.Series | np.ndarray, what: str) -> str:
    """``counts`` (a count per individual with a value) as words: "3 valid runs", "2 to 3 valid runs"."""
    c = np.asarray(counts, dtype=int)
    low, high = (int(c.min()), int(c.max())) if len(c) else (0, 0)
    return f"{low} {what}" + ("" if high == 1 else "s") if low == high else f"{low} to {high} {what}s"


def _seniority_individuals(d: pd.DataFrame) -> pd.DataFrame:
    _require(d, ("variant_kind", "original_idx", "variant", "prediction"), "seniority predictions")
    d = d[d["variant_kind"] == "demographic"]
    for column, allowed in (("variant", DEMOGRAPHICS), ("prediction", PREDICTION_VALUES)):
        bad = ~d[column].isin(allowed)
        if bad.any():
            raise ValueError(
                f"LL144 tables, seniority predictions: {column} {d.loc[bad, column].iloc[0]!r} of a demographic "
                f"row is not one of {', '.join(allowed)}"
            )
    rank = d["prediction"].map(SENIORITY_RANK).to_numpy(dtype=float)  # NaN: unknown or error
    dist = None
    if {"p_junior", "p_mid", "p_senior"} <= set(d.columns):
        dist = d[["p_junior", "p_mid", "p_senior"]].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            dist = dist / dist.sum(axis=1, keepdims=True)
    # Exact when every row of the model carries a distribution (impact.py's rule).
    exact = dist is not None and len(d) > 0 and bool(np.isfinite(dist).all())
    values: dict[str, np.ndarray] = {}
    if exact and dist is not None:
        values["score"] = dist[:, 1] + 2 * dist[:, 2]
        for label in SENIORITY_LEVELS:
            values[label] = dist[:, SENIORITY_RANK[label]]
    else:
        values["score"] = rank
        for label in SENIORITY_LEVELS:
            values[label] = np.where(np.isnan(rank), np.nan, rank == SENIORITY_RANK[label])
    rows = pd.DataFrame(
        {
            "resume": d["original_idx"].to_numpy(),
            "variant": d["variant"].to_numpy(),
            "name": (
                d["name"].astype("string").str.split().str[0].to_numpy(object)
                if "name" in d.columns
                else np.full(len(d), None, dtype=object)
            ),
            **{k: v.astype(float) for k, v in values.items()},
        }
    )
    out = (
        rows.groupby(["resume", "variant"], sort=True, dropna=False)
        .agg(name=("name", "first"), runs=("score", "count"), **{k: (k, "mean") for k in values})
        .reset_index()
    )
    if out["name"].isna().any():
        out["name"] = None  # names not known for every individual: not a random effect
    out["sex"] = out["variant"].map(gender_of)
    out["race_ethnicity"] = out["variant"].map(race_of)
    runs = _count(out.loc[out["runs"] > 0, "runs"], "valid run")
    value = (
        f"its score the expected seniority rank (0 junior, 1 mid, 2 senior) and its selection rate per label the "
        f"label's probability, from the model's distribution (averaged over its {runs})"
        if exact
        else f"its score the mean seniority rank (0 junior, 1 mid, 2 senior) of its {runs}, and its selection rate "
        "per label the share of those runs given it"
    )
    out.attrs["note"] = f"an individual is one résumé with one name (a demographic name variant): {value}"
    return out


def _fit_individuals(all_rows: pd.DataFrame, groups: GroupMap) -> pd.DataFrame:
    from resumebias_dagster.core.jd_audit.fit_task import RECOMMENDATIONS

    _require(all_rows, ("axis", "level", "score"), "fit scores")
    named, lookup = name_level_rows(all_rows, groups)
    sampled = pd.to_numeric(named["score"], errors="coerce").to_numpy(dtype=float)
    score, exact = sampled, False
    if "expected_score" in all_rows.columns:
        # Exact when every row of the model carries its expectation (fit_stats' rule).
        expected_all = pd.to_numeric(all_rows["expected_score"], errors="coerce")
        if len(all_rows) and expected_all.notna().all():
            score = pd.to_numeric(named["expected_score"], errors="coerce").to_numpy(dtype=float)
            exact = True
    recommend: dict[str, np.ndarray] = {o: np.full(len(named), np.nan) for o in FIT_OUTCOMES}
    has_recommend = "recommend" in named.columns
    if has_recommend:
        text = named["recommend"].astype("string").str.strip().str.lower().fillna("")
        bad = ~text.isin([*RECOMMENDATIONS, ""])
        if bad.any():
            raise ValueError(
                f"LL144 tables, fit scores: recommend {named['recommend'][bad].iloc[0]!r} is not one of "
                f"{', '.join(RECOMMENDATIONS)}"
            )
        answered = (text != "").to_numpy()
        for answer in RECOMMENDATIONS:
            recommend[f"recommend_{answer}"] = np.where(answered, (text == answer).to_numpy(float), np.nan)
    rows = pd.DataFrame(
        {
            "jd": named["jd"].astype(str).to_numpy() if "jd" in named.columns else "",
            "resume": named["resume_id"].astype(str).to_numpy() if "resume_id" in named.columns else "0",
            "axis": named["axis"].to_numpy(),
            "level": named["level"].astype(str).to_numpy(),
            "name": named["name"].to_numpy(object) if "name" in named.columns else None,
            "score": score,
            "valid": ~np.isnan(sampled),
            **recommend,
        }
    )
    # Each job description's value (the mean over its runs), then the individual's: the mean
    # over the job descriptions where it has one (pandas' mean skips NaN).
    per_jd = (
        rows.groupby(["jd", "resume", "axis", "level"], sort=True, dropna=False)
        .agg(
            name=("name", "first"),
            score=("score", "mean"),
            runs=("valid", "sum"),
            **{o: (o, "mean") for o in FIT_OUTCOMES},
        )
        .reset_index()
    )
    per_jd["scored"] = per_jd["score"].notna()
    out = (
        per_jd.groupby(["resume", "axis", "level"], sort=True, dropna=False)
        .agg(
            name=("name", "first"),
            score=("score", "mean"),
            jds=("scored", "sum"),
            **{o: (o, "mean") for o in FIT_OUTCOMES},
        )
        .reset_index()
    )
    out["name"] = out["name"].where(out["name"].notna(), out["level"])  # one name per level: the level names it
    jds = _count(out.loc[out["jds"] > 0, "jds"], "job description")
    runs = _count(per_jd.loc[per_jd["scored"] & (per_jd["runs"] > 0), "runs"], "valid run")
    value = (
        f"its score averaged over {jds}, each job description's value the model's exact expected score (from its "
        f"score distribution; {runs} per job description)"
        if exact
        else f"its score averaged over {jds} and {runs} per job description (the mean of each job description's "
        "runs, then the mean of those)"
    )
    out.attrs["note"] = (
        "an individual is one résumé with one name (a name level), counted once however many job descriptions "
        f"scored it: {value}; its selection rate per recommend answer the mean over those job descriptions of the "
        "share of its answered runs"
    )
    out["sex"] = [lookup[(a, lv)].get("sex") for a, lv in zip(out["axis"], out["level"])]
    out["race_ethnicity"] = [lookup[(a, lv)].get("race_ethnicity") for a, lv in zip(out["axis"], out["level"])]
    out.attrs["has_recommend"] = has_recommend
    return out


def individuals(
    rows: pd.DataFrame, *, model: str | None = None, study: str | None = None, groups: GroupMap | None = None
) -> Individuals:
    """The individuals of one model (``model``: required when ``rows`` hold several) of
    ``study`` (``seniority`` or ``jd_audit``; default: told by the columns) with their score
    and outcome values and EEO-1 categories. ``groups`` (fit audit: axis -> level ->
    {sex, race_ethnicity}; default ``probe_axes.yaml``'s)."""
    study = _study_of(rows, study)
    model, m = _model_rows(rows, model)
    if study == "seniority":
        frame = _seniority_individuals(m)
        outcomes: tuple[str, ...] = SENIORITY_OUTCOMES
        source = SENIORITY_GROUP_SOURCE
        what = "seniority predictions of model {model!r}: no individual (variant_kind == 'demographic' rows)"
    else:
        if groups is None:
            groups = name_groups()
        frame = _fit_individuals(m, groups)
        outcomes = FIT_OUTCOMES if frame.attrs.get("has_recommend") else ()
        source = FIT_GROUP_SOURCE
        what = f"fit scores of model {{model!r}}: no individual (rows of the axes with groups: {sorted(groups)})"
    if not len(frame):
        raise ValueError("LL144 tables, " + what.format(model=model))
    note = str(frame.attrs.get("note", ""))
    sex, unmapped_sex = _eeo1(list(frame["sex"]), SEX_TO_EEO1)
    race, unmapped_race = _eeo1(list(frame["race_ethnicity"]), RACE_ETHNICITY_TO_EEO1)
    frame = pd.DataFrame(
        {
            "resume": frame["resume"].to_numpy(),
            "name": frame["name"].to_numpy(object),
            "sex": sex,
            "race_ethnicity": race,
            "score": frame["score"].to_numpy(float),
            **{o: frame[o].to_numpy(float) for o in outcomes},
        }
    )
    unmapped = tuple([f"sex:{x}" for x in unmapped_sex] + [f"race_ethnicity:{x}" for x in unmapped_race])
    return Individuals(model, study, frame, outcomes, source, unmapped, note)
