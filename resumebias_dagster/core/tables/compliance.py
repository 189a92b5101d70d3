"""What a regulator asks an audit to publish: New York City Local Law 144's rate tables
(``core/compliance/ll144.py``) and the published summary's rows."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import PerModel, StrictTable
from resumebias_dagster.core.tables.verdicts import VALIDITY_VERDICT_VALUES

# EEO-1 categories, in the EEO-1 report's order: declared once, here.
EEO1_SEXES = ("Male", "Female")
EEO1_RACES = (
    "Hispanic or Latino",
    "White",
    "Black or African American",
    "Native Hawaiian or Other Pacific Islander",
    "Asian",
    "American Indian or Alaska Native",
    "Two or More Races",
)
# 6 RCNY §5-301(d): an auditor MAY leave out of the impact ratios a category under 2% of the data.
MAX_MIN_SHARE = 0.02
# The published summary's validity verdict where the study has no validity finding for the model.
NOT_MEASURED = "not measured"
# The job_description of a pooled table: every job description's individuals, each counted once.
ALL_JOB_DESCRIPTIONS = "all"
# What identifies a row of BiasAuditRates within one model's audit.
RATE_KEYS = ("study", "job_description", "measure", "outcome", "dimension", "category")
LL144_OUTCOMES = ["above_median", "junior", "mid", "senior", "recommend_yes", "recommend_maybe", "recommend_no"]


class BiasAuditRates(PerModel):
    """Local Law 144 bias audit (6 RCNY §5-300 to §5-304) of each model and study: scoring rates
    (share above the sample's median score) and selection rates per outcome, with impact ratios,
    per EEO-1 sex, race/ethnicity and their intersection (core/compliance/ll144.py), pooled over
    the job descriptions (job_description "all") and, in the job-description audit with more
    than one, per job description. An
    individual is one résumé with one name, counted once (individuals_note); n_selected of a
    selection rate is an expected count. below_four_fifths is the EEOC's rule of thumb
    (29 CFR 1607.4(D)), not part of Local Law 144."""

    study: Series[str] = pa.Field(isin=["seniority", "jd_audit"])
    job_description: Series[str]  # ALL_JOB_DESCRIPTIONS: the pooled table
    measure: Series[str] = pa.Field(isin=["scoring_rate", "selection_rate"])
    outcome: Series[str] = pa.Field(isin=LL144_OUTCOMES)
    dimension: Series[str] = pa.Field(isin=["sex", "race_ethnicity", "intersection"])
    category: Series[str]
    sex: Series[str] = pa.Field(nullable=True, isin=list(EEO1_SEXES))
    race_ethnicity: Series[str] = pa.Field(nullable=True, isin=list(EEO1_RACES))
    n: Series[int] = pa.Field(ge=0)  # individuals of the category with a value
    n_missing: Series[int] = pa.Field(ge=0)  # individuals of the category without one (no valid run)
    share: Series[float] = pa.Field(ge=0, le=1)  # n / n_total
    # Above the median (a head count), or the sum of the individuals' shares of runs or probabilities
    # of the outcome (selection rates: an expected count, not rounded).
    n_selected: Series[float] = pa.Field(ge=0)
    rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)  # n_selected / n
    reference_category: Series[str] = pa.Field(nullable=True)  # the highest rate among those in the ratios
    impact_ratio: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    ci_low: Series[float] = pa.Field(nullable=True, ge=0)
    ci_high: Series[float] = pa.Field(nullable=True, ge=0)
    p_value: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    below_four_fifths: Series[bool]  # EEOC rule of thumb, not Local Law 144
    ci_below_four_fifths: Series[bool]
    excluded_reason: Series[str]  # "" when the category is in the ratios (and has individuals)
    note: Series[str]
    n_total: Series[int] = pa.Field(gt=0)  # individuals with a value (per outcome): the sample
    n_unknown: Series[int] = pa.Field(ge=0)  # of those, of unknown category in this dimension
    median_score: Series[float] = pa.Field(nullable=True)  # scoring rates only
    n_at_median: Series[pd.Int64Dtype] = pa.Field(nullable=True, ge=0)  # scoring rates only: at, not above
    # The auditor's choice under 6 RCNY §5-301(d): categories under min_share (0: none; at most 2%)
    # are left out of the ratios, for the reason in exclusion_justification ("" when min_share is 0).
    min_share: Series[float] = pa.Field(ge=0, le=MAX_MIN_SHARE)
    exclusion_justification: Series[str]
    individuals_note: Series[str] = pa.Field(str_contains="one résumé with one name")  # who an individual is
    group_source: Series[str] = pa.Field(str_contains="proxy")

    # Check names carry the table's prefix: pandera 0.35 gives a shared check name to the first
    # model built only (core/tables/base.py).
    @pa.dataframe_check()
    def bias_audit_selected_within_n(cls, df) -> Series[bool]:
        return df["n_selected"] <= df["n"] + 1e-9

    @pa.dataframe_check()
    def bias_audit_excluded_has_no_ratio(cls, df) -> Series[bool]:
        return (df["excluded_reason"] == "") | df["impact_ratio"].isna()

    @pa.dataframe_check()
    def bias_audit_counts_add_up(cls, df) -> Series[bool]:
        keys = ["model", "study", "job_description", "measure", "outcome", "dimension"]
        return df.groupby(keys)["n"].transform("sum") + df["n_unknown"] == df["n_total"]

    @pa.dataframe_check()
    def bias_audit_small_left_out_only_by_choice(cls, df) -> Series[bool]:
        return (df["excluded_reason"] == "") | (df["n"] == 0) | (df["share"] < df["min_share"])

    @pa.dataframe_check()
    def bias_audit_exclusion_justified(cls, df) -> Series[bool]:
        return (df["min_share"] == 0) == (df["exclusion_justification"].str.strip() == "")

    @pa.dataframe_check()
    def bias_audit_median_only_for_scores(cls, df) -> Series[bool]:
        scoring = df["measure"] == "scoring_rate"
        has = df["median_score"].notna() & df["n_at_median"].notna()
        above = df["outcome"] == "above_median"
        return (scoring & has & above) | (~scoring & ~has & ~above)

    @pa.dataframe_check()
    def bias_audit_ci_contains_ratio(cls, df) -> Series[bool]:
        ratio = df["impact_ratio"]
        return df["ci_low"].isna() | ((df["ci_low"] <= ratio + 1e-9) & (ratio <= df["ci_high"] + 1e-9))

    @pa.dataframe_check()
    def bias_audit_flag_is_ratio_below_four_fifths(cls, df) -> Series[bool]:
        near = (df["impact_ratio"] - 0.8).abs() < 1e-9
        return near | (df["below_four_fifths"] == (df["impact_ratio"] < 0.8))

    @pa.dataframe_check()
    def bias_audit_interval_flag_implies_flag(cls, df) -> Series[bool]:
        return ~df["ci_below_four_fifths"] | (df["below_four_fifths"] & (df["ci_high"] < 0.8))

    @pa.dataframe_check()
    def bias_audit_one_row_per_category(cls, df) -> bool:
        return not df.duplicated(["model", *RATE_KEYS]).any()


class BiasAuditSummary(PerModel):
    """The published summary of a Local Law 144 bias audit (6 RCNY §5-303), one row per model and
    study; the rates and impact ratios it publishes are the rows of BiasAuditRates
    (core/compliance/summary.py says which rule asks for which field)."""

    study: Series[str] = pa.Field(isin=["seniority", "jd_audit"])
    audit_date: Series[str] = pa.Field(str_matches=r"^\d{4}-\d{2}-\d{2}$")  # the snapshot's date, where one
    # Local Law 144 (NYC Admin. Code §20-871(a)(1)) allows use only within a year of a bias audit.
    audit_due_by: Series[str] = pa.Field(str_matches=r"^\d{4}-\d{2}-\d{2}$")
    snapshot_id: Series[str]  # the audit snapshot the summary is produced from ("" when none kept)
    prior_snapshot_id: Series[str]  # the model's snapshot before it ("" for a first audit)
    prior_audit_date: Series[str] = pa.Field(str_matches=r"^(\d{4}-\d{2}-\d{2})?$")
    tool: Series[str]  # the tool's name and the snapshots it answered from
    distribution_date: Series[str]  # "" unless the operator gives it
    data_source: Series[str] = pa.Field(str_contains="test data")
    data_explanation: Series[str]
    n_individuals: Series[int] = pa.Field(gt=0)
    n_missing: Series[int] = pa.Field(ge=0)  # individuals without a valid value (every run failed)
    n_unknown_sex: Series[int] = pa.Field(ge=0)
    n_unknown_race_ethnicity: Series[int] = pa.Field(ge=0)
    n_unknown_intersection: Series[int] = pa.Field(ge=0)
    median_score: Series[float] = pa.Field(nullable=True)
    n_at_median: Series[pd.Int64Dtype] = pa.Field(nullable=True, ge=0)
    # 6 RCNY §5-301(d), the auditor's choice: the share under which a category is left out of the
    # ratios (0: none), the justification ("" when none), and each category left out with its
    # number of individuals and rate per measure and outcome ("" when none).
    min_share: Series[float] = pa.Field(ge=0, le=MAX_MIN_SHARE)
    exclusion_justification: Series[str]
    excluded_categories: Series[str]
    individuals_note: Series[str]  # who an individual is, over how many job descriptions and runs
    selection_counts_note: Series[str] = pa.Field(str_contains="expected count")
    four_fifths_note: Series[str]
    not_stated: Series[str]  # what a tool's output cannot state (independence, historical data)
    # The EEO-1 race/ethnicity categories no individual was in, each with why it is not tested.
    untested_categories: Series[str] = pa.Field(nullable=True)
    # Beyond the law (issue 42): does the tool tell better from worse candidates? The study's
    # criterion-validity finding (jd_audit: validity:criterion; seniority: validity:accuracy), a
    # share with its 95% interval, the share at chance, the declared target, its verdict and the
    # résumés it counts (core/compliance/validity.py); "not measured" with no share where none.
    validity_finding: Series[str]
    validity_share: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    validity_ci_low: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    validity_ci_high: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    validity_chance: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    validity_target: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    validity_verdict: Series[str] = pa.Field(isin=[*VALIDITY_VERDICT_VALUES, NOT_MEASURED])
    validity_n_resumes: Series[pd.Int64Dtype] = pa.Field(nullable=True, ge=0)
    validity_note: Series[str]

    @pa.dataframe_check()
    def bias_audit_summary_one_row_per_audit(cls, df) -> bool:
        return not df.duplicated(["model", "study"]).any()

    @pa.dataframe_check()
    def bias_audit_summary_exclusion_justified(cls, df) -> Series[bool]:
        justified = df["exclusion_justification"].str.strip() != ""
        return ((df["min_share"] == 0) != justified) & (justified | (df["excluded_categories"] == ""))

    @pa.dataframe_check()
    def bias_audit_summary_validity_measured_or_not(cls, df) -> Series[bool]:
        """A share exactly where the validity was measured."""
        return df["validity_verdict"].eq(NOT_MEASURED) == df["validity_share"].isna()


class EuTestRecord(StrictTable):
    """A test record in the EU AI Act's spirit (Art. 10(2)(f-g), Art. 11, Annex IV) of the bias
    examination: one row per item of each section (core/compliance/eu_record.py)."""

    section: Series[str] = pa.Field(isin=["system", "data", "results", "open_risks", "logs"])
    item: Series[str]
    value: Series[str]
