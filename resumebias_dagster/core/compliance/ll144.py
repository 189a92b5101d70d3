"""New York City Local Law 144 bias-audit tables (DCWP rules, 6 RCNY §5-300 to §5-304), for
one model at a time, from the rows of either study (``seniority_predictions`` or
``fit_scores``).

What the rules define (§5-300, §5-301), and how it is computed here:

* **Individuals.** One résumé with one name, counted once (``individuals.py``): in the
  seniority study one per résumé and demographic name variant (``variant_kind ==
  "demographic"`` rows); in the fit audit one per résumé and level of the axes that declare
  ``groups`` (the firstName levels), **whatever the number of job descriptions that scored
  it**. The runs of one prompt are repeated measures, never individuals: an individual's score
  or selection under one prompt is the mean over its valid runs, or the model's exact
  expectation where it gives a distribution for every one of its rows (as
  ``core/fairness/impact.py`` and ``core/jd_audit/fit_stats.py``); in the fit audit its value
  is then the mean of those per-job-description values over the job descriptions where it has
  one (a selection: the mean share of its answered runs). ``individuals_note`` says so, with
  how many job descriptions and runs. An individual with no valid run at all has no value: it
  is out of the sample, counted as ``n_missing`` in its category (and
  ``SummaryCounts.n_missing``).
* **Scoring rate** (a tool that outputs a score: the fit audit's 1-10 fit score, the seniority
  study's expected seniority rank, junior 0 / mid 1 / senior 2): the share of a category's
  individuals whose score is *above* the sample's median score, the median taken over every
  individual of the model with a score (unknown categories included). **Ties**: an individual
  exactly at the median (within 1e-9, for means of runs and expectations computed in floating
  point) is NOT above it; ``n_at_median`` reports how many there are, since with integer
  scores they can be a large part of the sample.
* **Selection rate** (a tool that selects or classifies): per outcome, the share of a
  category's individuals assigned that outcome: each seniority label (``junior``, ``mid``,
  ``senior``), each ``recommend`` answer of the fit audit (``recommend_yes``,
  ``recommend_maybe``, ``recommend_no``, over the runs that answered). An individual's value
  is a share of its runs (averaged over job descriptions in the fit audit) or a probability,
  so ``n_selected``, the sum of the values, is an **expected count**, not a head count, kept
  unrounded (``SELECTION_COUNTS_NOTE``, which the summary publishes). A scoring rate's
  ``n_selected`` counts individuals above the median: a whole number.
* **Impact ratio** = the category's rate / the rate of the category with the highest rate
  (``reference_category``; ties: the first alphabetically, as in impact.py).
* **Categories**: sex (Male, Female), race/ethnicity in the EEO-1 categories (``EEO1_RACES``)
  and every race/ethnicity × sex intersection (``"<race/ethnicity> <sex>"``). Every category is
  a row, even with no individuals. The project's group labels map to these in one place,
  ``RACE_ETHNICITY_TO_EEO1`` and ``SEX_TO_EEO1``. An individual whose label is missing (a name
  level with ``sex: null``) or maps to no EEO-1 category (``unmapped_labels``) is of
  *unknown* category in that dimension (and in the intersection): counted in ``n_unknown``,
  in ``n_total`` and in the median's sample, never silently dropped, but in no category row.
* **Small categories** (§5-301(d)): the rule lets an independent auditor *choose* to leave out
  of the impact ratios a category under 2% of the data, and then the summary must give the
  justification and the category's number of applicants and rate. So it is off by default
  (``min_share=0``: every non-empty category is in the ratios). With ``min_share`` in
  (0, 0.02] (``MAX_MIN_SHARE``; more is refused) and an ``exclusion_justification`` (required
  then, refused without), a category making up under ``min_share`` of the individuals with a
  value (``share = n / n_total``, unknowns in the denominator) is left out of the impact-ratio
  calculation, and so cannot be the reference: its counts and rate are reported, its
  ``impact_ratio`` is NaN and ``excluded_reason`` says why; every row carries ``min_share``
  and ``exclusion_justification``, and the summary publishes them with the excluded
  categories' counts and rates. A category with no individuals has no rate and says so too.
* **Per job description** (fit audit): beside the pooled table (``job_description ==
  ALL_JOB_DESCRIPTIONS``, each individual counted once over the job descriptions), the same
  table over one job description's rows (``job_description=``): its individuals are the
  résumé × name pairs that job description scored, its median theirs. A penalty that one job
  description carries is averaged with the others in the pooled table; here it is not.
* **Four-fifths** (``below_four_fifths``): the ratio under 0.8, the EEOC's rule of thumb
  (29 CFR 1607.4(D)), NOT part of LL144, which sets no threshold (``FOUR_FIFTHS_NOTE``).
  ``ci_low``/``ci_high``/``p_value`` are impact.py's interval and test of the ratio (the
  résumé as the unit, names as a random effect, the reference chosen from noisy rates:
  Bonferroni over the other categories), computed over the categories that enter the ratios;
  ``ci_below_four_fifths``: the whole interval under 0.8, a shortfall beyond sampling noise.

Groups come from names, a proxy for the perceived group, never a person's identity: every row
says so in ``group_source``. The data are test data (§5-302(b)): résumés whose names were
swapped, not historical applicants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.compliance.individuals import (
    FIT_OUTCOMES,
    SENIORITY_OUTCOMES,
    GroupMap,
    Individuals,
    individuals,
)
from resumebias_dagster.core.fairness.impact import (
    CONFIDENCE,
    NOTE_NONE_SELECTED,
    NOTE_REFERENCE,
    NOTE_ZERO,
    _impact_rows,
)
from resumebias_dagster.core.tables import BiasAuditRates, columns, empty_table
from resumebias_dagster.core.tables.compliance import ALL_JOB_DESCRIPTIONS, EEO1_RACES, EEO1_SEXES, MAX_MIN_SHARE

MEASURES = ("scoring_rate", "selection_rate")
DIMENSIONS = ("sex", "race_ethnicity", "intersection")
FOUR_FIFTHS = 0.8
SCORE_OUTCOME = "above_median"
TIE_TOLERANCE = 1e-9  # a score this close to the median (relative, at least absolute) is at it


FOUR_FIFTHS_NOTE = (
    "below_four_fifths: impact ratio under 0.8, the EEOC's four-fifths rule of thumb (29 CFR 1607.4(D)), "
    "not part of Local Law 144 (which sets no threshold); ci_below_four_fifths: the whole interval under 0.8"
)
SELECTION_COUNTS_NOTE = (
    "selection rates: n_selected is an expected count, the sum over a category's individuals of each one's share "
    "of its runs given the outcome (averaged over job descriptions in the job-description audit) or of the "
    "model's probability of it, not a head count of people selected; it is not rounded, so it need not be a whole "
    "number, and rate = n_selected / n. Scoring rates: n_selected counts the individuals above the median"
)
EXCLUDED_EMPTY = "no individuals in this category: no rate, no impact ratio"
EXCLUDED_SMALL = (
    "under {min_share_pct:g}% of the data ({n} of {n_total} individuals, {share:.2%}): left out of the "
    "impact-ratio calculation by the auditor's choice under 6 RCNY §5-301(d), for the reason in "
    "exclusion_justification; its count and rate are reported"
)

# The table's columns: declared once, by its pandera model.
COLUMN_NAMES = tuple(columns(BiasAuditRates))


@dataclass(frozen=True)
class SummaryCounts:
    """The numbers a published LL144 summary (§5-303) gives for one model, over the individuals
    with a score (the scoring-rate sample): ``counts`` dimension -> category -> individuals
    (every EEO-1 category, 0 included), ``n_unknown`` dimension -> individuals of unknown
    category, the median score and the individuals exactly at it (not above)."""

    model: str
    study: str
    n_total: int
    n_missing: int  # individuals without a valid score (every run failed): not in n_total
    n_unknown: dict[str, int]
    counts: dict[str, dict[str, int]]
    median_score: float
    n_at_median: int
    n_above_median: int
    unmapped_labels: tuple[str, ...] = field(default=())
    group_source: str = ""


def _categories(frame: pd.DataFrame, dimension: str) -> tuple[np.ndarray, list[tuple[str, str | None, str | None]]]:
    """Each individual's category in ``dimension`` (None: unknown), and every category as
    (label, sex, race/ethnicity) in EEO-1 order."""
    sex, race = frame["sex"].to_numpy(object), frame["race_ethnicity"].to_numpy(object)
    if dimension == "sex":
        return sex, [(s, s, None) for s in EEO1_SEXES]
    if dimension == "race_ethnicity":
        return race, [(r, None, r) for r in EEO1_RACES]
    both = np.array([None if s is None or r is None else f"{r} {s}" for s, r in zip(sex, race)], dtype=object)
    return both, [(f"{r} {s}", s, r) for r in EEO1_RACES for s in EEO1_SEXES]


def _dimension_rows(
    ind: Individuals, value: np.ndarray, dimension: str, *, min_share: float, confidence: float
) -> list[dict[str, Any]]:
    frame = ind.frame
    category, order = _categories(frame, dimension)
    defined = ~np.isnan(value)
    n_total = int(defined.sum())
    known = np.array([c is not None for c in category])
    n_unknown = int((defined & ~known).sum())
    out: list[dict[str, Any]] = []
    included: list[str] = []
    for label, sex, race in order:
        mine = known & (category == label)
        n = int((mine & defined).sum())
        selected = float(value[mine & defined].sum())
        share = n / n_total if n_total else np.nan
        reason = ""
        if n == 0:
            reason = EXCLUDED_EMPTY
        elif share < min_share:
            reason = EXCLUDED_SMALL.format(min_share_pct=100 * min_share, n=n, n_total=n_total, share=share)
        else:
            included.append(label)
        out.append(
            {
                "dimension": dimension,
                "category": label,
                "sex": sex,
                "race_ethnicity": race,
                "n": n,
                "n_missing": int((mine & ~defined).sum()),
                "share": share,
                "n_selected": selected,
                "rate": selected / n if n else np.nan,
                "excluded_reason": reason,
                "n_total": n_total,
                "n_unknown": n_unknown,
            }
        )
    stats = _ratio_stats(
        ind, value, category, defined & np.isin(category, np.array(included, dtype=object)), confidence
    )
    for row in out:
        s = stats.get(row["category"])
        ratio = np.nan if s is None else float(s["impact_ratio"])
        row["reference_category"] = None if s is None or not np.isfinite(ratio) else s["reference_group"]
        row["impact_ratio"] = ratio
        row["ci_low"] = np.nan if s is None else float(s["ci_low"])
        row["ci_high"] = np.nan if s is None else float(s["ci_high"])
        row["p_value"] = np.nan if s is None else float(s["p_value"])
        below = bool(np.isfinite(ratio) and ratio < FOUR_FIFTHS - 1e-12)
        row["below_four_fifths"] = below
        row["ci_below_four_fifths"] = bool(below and row["ci_high"] < FOUR_FIFTHS)
        note = ""
        if s is not None:
            if s["reference_rate"] == 0:
                note = NOTE_NONE_SELECTED
            elif row["category"] == s["reference_group"]:
                note = NOTE_REFERENCE
            elif row["n_selected"] == 0:
                note = NOTE_ZERO
        row["note"] = note
    return out


def _ratio_stats(
    ind: Individuals, value: np.ndarray, category: np.ndarray, keep: np.ndarray, confidence: float
) -> dict[str, dict[str, Any]]:
    """impact.py's ratio, interval and test over the individuals ``keep`` selects (the
    categories that enter the ratios): each category as a "race_ethnicity" group of its own
    (the other column None). Category -> its row of impact.py's table."""
    if not keep.any():
        return {}
    frame = ind.frame
    t = _impact_rows(
        pd.DataFrame(
            {
                "model": ind.model,
                "resume": frame["resume"].to_numpy()[keep],
                "name": frame["name"].to_numpy(object)[keep],
                "sex": None,
                "race_ethnicity": category[keep],
                "value": value[keep],
            }
        ),
        ("value",),
        confidence,
    )
    t = t[t["dimension"] == "race_ethnicity"]
    return {str(r["group"]): r for r in t.to_dict("records", into=dict)}


def _table(
    ind: Individuals,
    measure: str,
    values: Mapping[str, np.ndarray],
    extra: Mapping,
    *,
    min_share: float,
    exclusion_justification: str,
    confidence: float,
    job_description: str | None,
) -> pd.DataFrame:
    records = []
    for outcome, value in values.items():
        if not (~np.isnan(value)).any():
            raise ValueError(
                f"LL144 tables, model {ind.model!r}: no individual has a valid {outcome!r} value "
                "(every run failed or gave no answer): no rate can be computed"
            )
        for dimension in DIMENSIONS:
            for row in _dimension_rows(ind, value, dimension, min_share=min_share, confidence=confidence):
                records.append({**row, "outcome": outcome, **extra})
    t = pd.DataFrame.from_records(records)
    t["model"], t["study"], t["measure"], t["group_source"] = ind.model, ind.study, measure, ind.group_source
    t["job_description"] = ALL_JOB_DESCRIPTIONS if job_description is None else job_description
    t["min_share"], t["exclusion_justification"] = float(min_share), exclusion_justification
    t["individuals_note"] = ind.note
    for column in ("median_score", "n_at_median"):
        if column not in t.columns:
            t[column] = np.nan
    t = t[list(COLUMN_NAMES)]
    for column in ("sex", "race_ethnicity", "reference_category"):
        t[column] = t[column].astype(object)
        t.loc[t[column].isna(), column] = None
    # Text columns stay object (None where absent); the others take the model's dtype.
    dtypes = empty_table(BiasAuditRates).dtypes
    return t.astype({c: d for c, d in dtypes.items() if d != "object"}).reset_index(drop=True)


def check_exclusion(min_share: float, exclusion_justification: str) -> str:
    """The auditor's justification (stripped) for ``min_share``, or an error naming the setting:
    0 leaves no category out (and needs no justification, nor takes one); up to
    ``MAX_MIN_SHARE`` needs one (§5-301(d)); more is refused."""
    justification = (exclusion_justification or "").strip()
    if isinstance(min_share, bool) or not isinstance(min_share, Real) or np.isnan(min_share):
        raise ValueError(
            f"LL144 tables: min_share {min_share!r} is not a number (0, the default, leaves no category out)"
        )
    if min_share < 0:
        raise ValueError(f"LL144 tables: min_share {min_share!r} is negative (0, the default, leaves no category out)")
    if min_share > MAX_MIN_SHARE:
        raise ValueError(
            f"LL144 tables: min_share {min_share:g} is over {MAX_MIN_SHARE:g}: 6 RCNY §5-301(d) lets an auditor leave "
            "out of the impact ratios only a category under 2% of the data"
        )
    if min_share > 0 and not justification:
        raise ValueError(
            f"LL144 tables: min_share {min_share:g} > 0 needs exclusion_justification: leaving a category under "
            f"{100 * min_share:g}% out of the impact ratios is the auditor's choice under 6 RCNY §5-301(d), and the "
            "published summary must give its justification"
        )
    if min_share == 0 and justification:
        raise ValueError(
            "LL144 tables: exclusion_justification is given but min_share is 0, so no category is left out: "
            f"set min_share (at most {MAX_MIN_SHARE:g}) or drop the justification"
        )
    return justification


def _check(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"LL144 tables: confidence must lie in (0, 1), got {confidence!r}")


def _individuals(
    rows: pd.DataFrame,
    *,
    model: str | None,
    study: str | None,
    groups: GroupMap | None,
    job_description: str | None,
) -> Individuals:
    """The individuals of ``rows`` (of one job description's rows when it is given)."""
    if job_description is None:
        return individuals(rows, model=model, study=study, groups=groups)
    if study == "seniority" or "jd" not in rows.columns:
        raise ValueError(
            f"LL144 tables: job description {job_description!r} asked for, but these rows have none (no `jd` "
            "column): the seniority study has no job descriptions, so its only table is the pooled one"
        )
    if job_description == ALL_JOB_DESCRIPTIONS:
        raise ValueError(
            f"LL144 tables: job description {job_description!r} is the pooled table's name (its job_description): "
            "rename that job description to have a table of its own"
        )
    mine = rows if model is None else rows[rows["model"].astype(str) == model]
    jd = mine["jd"].astype(str)
    if not (jd == job_description).any():
        named = model or ", ".join(sorted(set(mine["model"].astype(str))))
        raise ValueError(
            f"LL144 tables: model {named!r} has no rows for job description {job_description!r} "
            f"(job descriptions: {', '.join(sorted(set(jd))) or 'none'})"
        )
    return individuals(mine[jd == job_description], model=model, study=study, groups=groups)


def _median(ind: Individuals) -> tuple[np.ndarray, float, np.ndarray]:
    """(score, median over the individuals with one, at-the-median mask)."""
    score = ind.frame["score"].to_numpy(float)
    valid = ~np.isnan(score)
    if not valid.any():
        raise ValueError(
            f"LL144 tables, model {ind.model!r}: no individual has a valid score (every run failed): "
            "the sample's median, and so every scoring rate, is undefined"
        )
    median = float(np.median(score[valid]))
    at = valid & (np.abs(score - median) <= TIE_TOLERANCE * max(1.0, abs(median)))
    return score, median, at


def scoring_rate_table(
    rows: pd.DataFrame,
    *,
    model: str | None = None,
    study: str | None = None,
    groups: GroupMap | None = None,
    min_share: float = 0.0,
    exclusion_justification: str = "",
    confidence: float = CONFIDENCE,
    job_description: str | None = None,
) -> pd.DataFrame:
    """LL144 scoring rates and impact ratios (``COLUMN_NAMES``; ``measure == "scoring_rate"``,
    ``outcome == "above_median"``) of one model: the share of each category's individuals
    whose score (fit score; expected seniority rank) is above the median of every individual
    of the model with a score. At the median is not above (``n_at_median`` per table).
    ``min_share`` (at most 0.02) with ``exclusion_justification``: categories under it are
    left out of the ratios (§5-301(d)); default none. ``job_description``: the table of that
    job description's rows only (``jd``); default the pooled table (``ALL_JOB_DESCRIPTIONS``)."""
    justification = check_exclusion(min_share, exclusion_justification)
    _check(confidence)
    ind = _individuals(rows, model=model, study=study, groups=groups, job_description=job_description)
    score, median, at = _median(ind)
    above = np.where(np.isnan(score), np.nan, (score > median) & ~at).astype(float)
    extra = {"median_score": median, "n_at_median": int(at.sum())}
    return _table(
        ind,
        "scoring_rate",
        {SCORE_OUTCOME: above},
        extra,
        min_share=min_share,
        exclusion_justification=justification,
        confidence=confidence,
        job_description=job_description,
    )


def selection_rate_table(
    rows: pd.DataFrame,
    *,
    model: str | None = None,
    study: str | None = None,
    groups: GroupMap | None = None,
    outcomes: Sequence[str] | None = None,
    min_share: float = 0.0,
    exclusion_justification: str = "",
    confidence: float = CONFIDENCE,
    job_description: str | None = None,
) -> pd.DataFrame:
    """LL144 selection rates and impact ratios (``COLUMN_NAMES``; ``measure ==
    "selection_rate"``) of one model, per outcome (default: every outcome of the study:
    ``junior``, ``mid``, ``senior``; ``recommend_yes``, ``recommend_maybe``, ``recommend_no``):
    the share of each category's individuals assigned it (a probability or a share of valid
    runs per individual, so ``n_selected`` is an expected count, unrounded:
    ``SELECTION_COUNTS_NOTE``). ``min_share``, ``exclusion_justification``,
    ``job_description``: as ``scoring_rate_table``."""
    justification = check_exclusion(min_share, exclusion_justification)
    _check(confidence)
    ind = _individuals(rows, model=model, study=study, groups=groups, job_description=job_description)
    allowed = SENIORITY_OUTCOMES if ind.study == "seniority" else FIT_OUTCOMES
    if not ind.outcomes:
        raise ValueError(
            f"LL144 tables, fit scores of model {ind.model!r}: no `recommend` column, so no selection or "
            "classification to rate (the scores have scoring_rate_table)"
        )
    chosen = tuple(allowed if outcomes is None else outcomes)
    wrong = [o for o in chosen if o not in allowed]
    if wrong or not chosen:
        raise ValueError(
            f"LL144 tables: outcomes {wrong or list(chosen)} are not outcomes of the {ind.study} study "
            f"({', '.join(allowed)})"
        )
    values = {o: ind.frame[o].to_numpy(float) for o in chosen}
    return _table(
        ind,
        "selection_rate",
        values,
        {},
        min_share=min_share,
        exclusion_justification=justification,
        confidence=confidence,
        job_description=job_description,
    )


def summary_counts(
    rows: pd.DataFrame, *, model: str | None = None, study: str | None = None, groups: GroupMap | None = None
) -> SummaryCounts:
    """The published-summary numbers of one model (§5-303): individuals with a score, those
    without, the unknown count and the individuals of every category per dimension, the median
    score and how many are exactly at it."""
    ind = individuals(rows, model=model, study=study, groups=groups)
    score, median, at = _median(ind)
    valid = ~np.isnan(score)
    counts: dict[str, dict[str, int]] = {}
    unknown: dict[str, int] = {}
    for dimension in DIMENSIONS:
        category, order = _categories(ind.frame, dimension)
        known = np.array([c is not None for c in category])
        counts[dimension] = {label: int((valid & known & (category == label)).sum()) for label, _, _ in order}
        unknown[dimension] = int((valid & ~known).sum())
    return SummaryCounts(
        model=ind.model,
        study=ind.study,
        n_total=int(valid.sum()),
        n_missing=int((~valid).sum()),
        n_unknown=unknown,
        counts=counts,
        median_score=median,
        n_at_median=int(at.sum()),
        n_above_median=int((valid & (score > median) & ~at).sum()),
        unmapped_labels=ind.unmapped_labels,
        group_source=ind.group_source,
    )
