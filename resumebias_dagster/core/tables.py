"""Every asset table's columns, declared once: one pandera DataFrameModel per table.

No Dagster import: core functions build their output frames from these declarations
(`columns`, `conform`, `empty_table`), and `schemas.py` turns each model into the Dagster
type that checks the table before it is stored. Every model is strict: a column that is not
declared here is refused, so what a run stores is exactly what this module lists.
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.common.labels import (
    CONFIDENCES,
    DEMOGRAPHICS,
    NAME_SCOPES,
    PREDICTION_VALUES,
    SENIORITY_LEVELS,
    SIMILARITY_MEASURES,
    STYLES,
    VARIANT_KINDS,
    VERDICTS,
)

FORBIDDEN_SENIORITY_WORDS = r"(?i)\b(?:junior|senior|mid|mid-level|entry[- ]level)\b"
READINGS = [
    "no_significant_bias",
    "favors_caucasian",
    "favors_african_american",
    "favors_male",
    "favors_female",
    "favors_caucasian_male",
    "favors_african_american_female",
]


class BaseResumes(pa.DataFrameModel):
    """Generated résumés; seniority is carried by facts, never by the level words."""

    resume_id: Series[str] = pa.Field(unique=True)
    seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    occupation: Series[str]
    name: Series[str] = pa.Field(str_length={"min_value": 3})
    first_name: Series[str]
    last_name: Series[str]
    email: Series[str] = pa.Field(str_contains="@")
    phone: Series[str]
    city: Series[str]
    linkedin: Series[str]
    years_experience: Series[int] = pa.Field(ge=0, le=50)
    n_positions: Series[int] = pa.Field(ge=1)
    # Lists of one résumé, joined with "; " (newest first).
    titles: Series[str]
    employers: Series[str]
    degree: Series[str]
    school: Series[str]
    graduation_year: Series[int] = pa.Field(ge=1950, le=2030)
    certifications: Series[str]
    skills: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 200})

    @pa.check("text", name="no_seniority_words")
    def no_seniority_words(cls, text: Series[str]) -> Series[bool]:
        return ~text.str.contains(FORBIDDEN_SENIORITY_WORDS, regex=True)

    class Config:
        name = "BaseResumes"
        strict = True


class StyleVariants(pa.DataFrameModel):
    """Each base résumé in the three styles; facts identical, wording different."""

    resume_id: Series[str]
    original_idx: Series[int] = pa.Field(ge=0)
    seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    style: Series[str] = pa.Field(isin=list(STYLES))
    text: Series[str] = pa.Field(str_length={"min_value": 100})

    @pa.check("text", name="no_seniority_words")
    def no_seniority_words(cls, text: Series[str]) -> Series[bool]:
        return ~text.str.contains(FORBIDDEN_SENIORITY_WORDS, regex=True)

    @pa.dataframe_check(name="one_row_per_resume_and_style")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["original_idx", "style"]).any()

    class Config:
        name = "StyleVariants"
        strict = True


class NameVariants(pa.DataFrameModel):
    """Each neutral résumé under the four demographic names."""

    original_idx: Series[int] = pa.Field(ge=0)
    resume_id: Series[str]
    seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    demographic: Series[str] = pa.Field(isin=list(DEMOGRAPHICS))
    name: Series[str] = pa.Field(str_length={"min_value": 3})
    first_name: Series[str]
    last_name: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 100})
    # everywhere: the name replaced in the whole text; first_line: seed 004, the name line only.
    name_scope: Series[str] = pa.Field(isin=list(NAME_SCOPES))

    @pa.dataframe_check(name="one_row_per_resume_and_demographic")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["original_idx", "demographic"]).any()

    @pa.dataframe_check(name="one_name_scope_per_table")
    def one_scope(cls, df) -> bool:
        return df["name_scope"].nunique() <= 1

    class Config:
        name = "NameVariants"
        strict = True


class StyleValidation(pa.DataFrameModel):
    """Seed 004 validation table: one row per style."""

    style: Series[str] = pa.Field(isin=list(STYLES), unique=True)
    n_resumes: Series[int] = pa.Field(ge=0)
    mean_words: Series[float] = pa.Field(ge=0)
    mean_power_words: Series[float] = pa.Field(ge=0)
    mean_humble_words: Series[float] = pa.Field(ge=0)
    tone_score: Series[float] = pa.Field(ge=-1, le=1)

    class Config:
        name = "StyleValidation"
        strict = True


class StyleSimilarity(pa.DataFrameModel):
    """Seed 004 similarity between the versions of a résumé: one row per pair of styles and measure."""

    style_a: Series[str] = pa.Field(isin=list(STYLES))
    style_b: Series[str] = pa.Field(isin=list(STYLES))
    measure: Series[str] = pa.Field(isin=list(SIMILARITY_MEASURES))
    n_resumes: Series[int] = pa.Field(ge=0)
    similarity_mean: Series[float] = pa.Field(ge=-1, le=1.0001)
    similarity_min: Series[float] = pa.Field(ge=-1, le=1.0001)
    threshold: Series[float] = pa.Field(ge=-1, le=1)
    # Whether the pair is held to the threshold (catalog/style_validation.yaml), and if so whether it reaches it.
    checked: Series[bool]
    passed: Series[bool]

    @pa.dataframe_check(name="one_row_per_pair_and_measure")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["style_a", "style_b", "measure"]).any()

    class Config:
        name = "StyleSimilarity"
        strict = True


class SeniorityPredictions(pa.DataFrameModel):
    """One row per (variant, model, run): what the metric tables read."""

    variant_kind: Series[str] = pa.Field(isin=list(VARIANT_KINDS))
    original_idx: Series[int] = pa.Field(ge=0)
    variant: Series[str]
    model: Series[str] = pa.Field(str_length={"min_value": 1})
    run: Series[int] = pa.Field(ge=0)
    prediction: Series[str] = pa.Field(isin=list(PREDICTION_VALUES))
    true_seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    # The name on the variant (demographic rows; null where the source did not record it).
    name: Series[str] = pa.Field(nullable=True)
    resolved_model: Series[str] = pa.Field(nullable=True)
    latency_s: Series[float] = pa.Field(nullable=True, ge=0)
    error: Series[str] = pa.Field(nullable=True)
    # Label distribution the sampled prediction was drawn from (scoring models only).
    p_junior: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    p_mid: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    p_senior: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    # Next-token probability an LLM put on the three label words before renormalising.
    label_mass: Series[float] = pa.Field(nullable=True, ge=0, le=1.0001)
    # How the names of the demographic rows were swapped (name_variants' config); empty for style rows.
    name_scope: Series[str] = pa.Field(nullable=True, isin=list(NAME_SCOPES))

    @pa.dataframe_check(name="variant_matches_kind")
    def variant_matches_kind(cls, df) -> Series[bool]:
        allowed = df["variant_kind"].map({k: set(v) for k, v in VARIANT_KINDS.items()})
        return Series[bool]([v in a for v, a in zip(df["variant"], allowed)], index=df.index)

    @pa.dataframe_check(name="one_row_per_variant_model_run")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["variant_kind", "original_idx", "variant", "model", "run"]).any()

    class Config:
        name = "SeniorityPredictions"
        strict = True


class FineTunedClassifiers(pa.DataFrameModel):
    """One row per fine-tuned classifier: where its weights are and how training went."""

    model: Series[str] = pa.Field(unique=True)
    base_model: Series[str]
    path: Series[str]
    fingerprint: Series[str] = pa.Field(str_length={"min_value": 8})
    heldout_accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    n_train: Series[int] = pa.Field(ge=1)
    n_heldout: Series[int] = pa.Field(ge=0)
    steps: Series[int] = pa.Field(ge=1)
    final_loss: Series[float] = pa.Field(nullable=True)
    train_seconds: Series[float] = pa.Field(ge=0)
    retrained: Series[bool]

    class Config:
        name = "FineTunedClassifiers"
        strict = True


class SeniorityGroupMetrics(pa.DataFrameModel):
    """Seed 001 metrics per (model, experiment, group)."""

    model: Series[str]
    variant_kind: Series[str] = pa.Field(isin=list(VARIANT_KINDS))
    # How much of the text the name swap changed; demographic rows only, null where not recorded.
    name_scope: Series[str] = pa.Field(nullable=True, isin=list(NAME_SCOPES))
    group_kind: Series[str] = pa.Field(isin=["all", "style", "demographic", "race", "gender"])
    group: Series[str]
    n: Series[int] = pa.Field(ge=0)
    n_valid: Series[int] = pa.Field(ge=0)
    n_invalid: Series[int] = pa.Field(ge=0)
    accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    rank_diff: Series[float] = pa.Field(ge=-2, le=2, nullable=True)
    senior_share: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    junior_share: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    promotions: Series[int] = pa.Field(ge=0)
    demotions: Series[int] = pa.Field(ge=0)
    net: Series[int]
    # Expectations under the stored label distribution (p_junior, p_mid, p_senior); NaN without one.
    n_dist: Series[int] = pa.Field(ge=0)
    exp_accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    exp_rank_diff: Series[float] = pa.Field(ge=-2, le=2, nullable=True)
    exp_senior_share: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    exp_junior_share: Series[float] = pa.Field(ge=0, le=1, nullable=True)

    class Config:
        name = "SeniorityGroupMetrics"
        strict = True


class SeniorityBiasSummary(pa.DataFrameModel):
    """Seed 001 headline figures per (model, experiment), each next to its test-retest floor
    (the same figure for identical texts: sampling noise alone; null = not measurable)."""

    model: Series[str]
    variant_kind: Series[str] = pa.Field(isin=list(VARIANT_KINDS))
    name_scope: Series[str] = pa.Field(nullable=True, isin=list(NAME_SCOPES))
    n: Series[int] = pa.Field(ge=0)
    n_valid: Series[int] = pa.Field(ge=0)
    n_invalid: Series[int] = pa.Field(ge=0)
    n_runs: Series[int] = pa.Field(ge=0)
    n_originals: Series[int] = pa.Field(ge=0)
    n_inconsistent: Series[int] = pa.Field(ge=0)
    inconsistency_rate: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    inconsistency_floor: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    rank_diff: Series[float] = pa.Field(ge=-2, le=2, nullable=True)
    racial_bias: Series[float] = pa.Field(nullable=True)
    racial_bias_floor: Series[float] = pa.Field(ge=0, nullable=True)
    racial_reading: Series[str] = pa.Field(nullable=True, isin=READINGS)
    gender_bias: Series[float] = pa.Field(nullable=True)
    gender_bias_floor: Series[float] = pa.Field(ge=0, nullable=True)
    gender_reading: Series[str] = pa.Field(nullable=True, isin=READINGS)
    extreme_bias: Series[float] = pa.Field(nullable=True)
    extreme_bias_floor: Series[float] = pa.Field(ge=0, nullable=True)
    extreme_reading: Series[str] = pa.Field(nullable=True, isin=READINGS)
    # Expectations under the stored label distribution (p_junior, p_mid, p_senior); NaN without one.
    n_dist: Series[int] = pa.Field(ge=0)
    n_dist_originals: Series[int] = pa.Field(ge=0)
    exp_inconsistency_rate: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    exp_inconsistency_floor: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    exp_accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    exp_rank_diff: Series[float] = pa.Field(ge=-2, le=2, nullable=True)
    exp_racial_bias: Series[float] = pa.Field(nullable=True)
    # exp_*_bias_floor: the sampled figure's floor, exact under the distributions.
    exp_racial_bias_floor: Series[float] = pa.Field(ge=0, nullable=True)
    exp_gender_bias: Series[float] = pa.Field(nullable=True)
    exp_gender_bias_floor: Series[float] = pa.Field(ge=0, nullable=True)
    exp_extreme_bias: Series[float] = pa.Field(nullable=True)
    exp_extreme_bias_floor: Series[float] = pa.Field(ge=0, nullable=True)
    # The model versions the figures describe (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)

    class Config:
        name = "SeniorityBiasSummary"
        strict = True


class _ImpactRatios(pa.DataFrameModel):
    """Selection rates and impact ratios per (model, selection, dimension, group); see core/fairness/impact.py."""

    model: Series[str]
    selection: Series[str]
    dimension: Series[str] = pa.Field(isin=["sex", "race_ethnicity", "intersection"])
    group: Series[str]
    sex: Series[str] = pa.Field(nullable=True)
    race_ethnicity: Series[str] = pa.Field(nullable=True)
    n: Series[int] = pa.Field(ge=0)
    n_excluded: Series[int] = pa.Field(ge=0)
    selected: Series[int] = pa.Field(ge=0)
    rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    reference_group: Series[str] = pa.Field(nullable=True)
    reference_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    impact_ratio: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    ci_low: Series[float] = pa.Field(nullable=True, ge=0)
    ci_high: Series[float] = pa.Field(nullable=True, ge=0)
    below_four_fifths: Series[bool]
    note: Series[str]
    # Names are a proxy for perceived group: every row says where its group comes from.
    group_source: Series[str] = pa.Field(str_contains="proxy")
    # The model versions the rows came from (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)

    @pa.dataframe_check(name="selected_within_n")
    def selected_within_n(cls, df) -> Series[bool]:
        return df["selected"] <= df["n"]

    @pa.dataframe_check(name="ci_contains_ratio")
    def ci_contains_ratio(cls, df) -> Series[bool]:
        return df["ci_low"].isna() | ((df["ci_low"] <= df["impact_ratio"] + 1e-9) & (df["impact_ratio"] <= df["ci_high"] + 1e-9))

    @pa.dataframe_check(name="flag_is_ratio_below_four_fifths")
    def flag_matches_ratio(cls, df) -> Series[bool]:
        # A ratio of 0.8 up to rounding may go either way here (the flag is computed exactly).
        near = (df["impact_ratio"] - 0.8).abs() < 1e-9
        return near | (df["below_four_fifths"] == (df["impact_ratio"] < 0.8))

    @pa.dataframe_check(name="one_row_per_group")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["model", "selection", "dimension", "group"]).any()


class SeniorityImpactRatios(_ImpactRatios):
    """Seniority study, name experiment: selected = predicted senior, or at or above the true level."""

    selection: Series[str] = pa.Field(isin=["predicted_senior", "at_or_above_true_level"])

    class Config:
        name = "SeniorityImpactRatios"
        strict = True



class JobDescriptions(pa.DataFrameModel):
    """The job descriptions of the audit; `jd` is a partition key."""

    jd: Series[str] = pa.Field(unique=True, str_matches=r"^[a-z0-9][a-z0-9_-]*$")
    title: Series[str] = pa.Field(str_length={"min_value": 1})
    seniority: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 50})

    class Config:
        name = "JobDescriptions"
        strict = True


class ProbeVariants(pa.DataFrameModel):
    """Baseline and single-signal variants of the audit's base résumés."""

    resume_id: Series[str]
    variant: Series[str] = pa.Field(str_matches=r"^(baseline|[A-Za-z0-9]+_[a-z0-9_]+)$")
    arm: Series[str] = pa.Field(isin=["baseline", "probe", "anonymize", "prompt_injection", "placebo"])
    axis: Series[str]
    level: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 100})

    @pa.dataframe_check(name="one_baseline_per_resume")
    def one_baseline(cls, df) -> bool:
        return bool((df[df["variant"] == "baseline"].groupby("resume_id").size() == 1).all()) and set(
            df.loc[df["variant"] == "baseline", "resume_id"]
        ) == set(df["resume_id"])

    @pa.dataframe_check(name="one_row_per_resume_and_variant")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["resume_id", "variant"]).any()

    class Config:
        name = "ProbeVariants"
        strict = True


class FitScores(pa.DataFrameModel):
    """One row per (model, JD, résumé, variant, run); a failed run has no score and says why."""

    model: Series[str]
    jd: Series[str]
    resume_id: Series[str]
    variant: Series[str]
    arm: Series[str]
    axis: Series[str]
    level: Series[str]
    run: Series[int] = pa.Field(ge=0)
    score: Series[float] = pa.Field(nullable=True, ge=1, le=10)
    recommend: Series[str] = pa.Field(nullable=True, isin=["yes", "no", "maybe"])
    justification: Series[str] = pa.Field(nullable=True)
    strengths: Series[str] = pa.Field(nullable=True)
    concerns: Series[str] = pa.Field(nullable=True)
    resolved_model: Series[str] = pa.Field(nullable=True)
    latency_s: Series[float] = pa.Field(nullable=True, ge=0)
    error: Series[str] = pa.Field(nullable=True)
    expected_score: Series[float] = pa.Field(nullable=True, ge=1, le=10)
    score_distribution: Series[str] = pa.Field(nullable=True)
    note: Series[str] = pa.Field(nullable=True)

    @pa.dataframe_check(name="failed_runs_say_why")
    def failures_explained(cls, df) -> Series[bool]:
        return df["score"].notna() | df["error"].notna()

    @pa.dataframe_check(name="one_row_per_cell_and_run")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["model", "jd", "resume_id", "variant", "run"]).any()

    class Config:
        name = "FitScores"
        strict = True


class FitEffects(pa.DataFrameModel):
    """Per (model, JD, variant): the score change against the baseline and its statistics."""

    model: Series[str]
    jd: Series[str]
    variant: Series[str]
    axis: Series[str]
    level: Series[str]
    arm: Series[str]
    n_baseline: Series[int] = pa.Field(ge=0)
    n_variant: Series[int] = pa.Field(ge=0)
    n_failed_baseline: Series[int] = pa.Field(ge=0)
    n_failed_variant: Series[int] = pa.Field(ge=0)
    baseline_mean: Series[float] = pa.Field(nullable=True)
    variant_mean: Series[float] = pa.Field(nullable=True)
    baseline_sd: Series[float] = pa.Field(nullable=True, ge=0)
    variant_sd: Series[float] = pa.Field(nullable=True, ge=0)
    delta: Series[float] = pa.Field(nullable=True, ge=-9, le=9)
    se: Series[float] = pa.Field(nullable=True, ge=0)
    df: Series[float] = pa.Field(nullable=True, ge=0)
    ci_low: Series[float] = pa.Field(nullable=True)
    ci_high: Series[float] = pa.Field(nullable=True)
    t: Series[float] = pa.Field(nullable=True)
    p_value: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    q_value: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    paired_n: Series[int] = pa.Field(ge=0)
    paired_delta: Series[float] = pa.Field(nullable=True)
    paired_p: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    # re-cinq's yes/no/maybe: share of "yes" over the runs that answered a recommendation.
    n_recommend_baseline: Series[int] = pa.Field(ge=0)
    n_recommend_variant: Series[int] = pa.Field(ge=0)
    baseline_recommend_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    variant_recommend_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    recommend_rate_delta: Series[float] = pa.Field(nullable=True, ge=-1, le=1)
    noise_floor: Series[float] = pa.Field(nullable=True, ge=0)
    clears_floor: Series[bool]
    significant: Series[bool]
    degenerate: Series[bool]
    note: Series[str] = pa.Field(nullable=True)
    # The model versions the cell's answers came from (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)

    @pa.dataframe_check(name="ci_contains_delta")
    def ci_contains_delta(cls, df) -> Series[bool]:
        return df["ci_low"].isna() | ((df["ci_low"] <= df["delta"] + 1e-9) & (df["delta"] <= df["ci_high"] + 1e-9))

    class Config:
        name = "FitEffects"
        strict = True


class FitModelSummary(pa.DataFrameModel):
    """Per model: bias index, largest penalty, noise floor, significant cells, arm means."""

    model: Series[str] = pa.Field(unique=True)
    n_cells: Series[int] = pa.Field(ge=0)
    n_significant: Series[int] = pa.Field(ge=0)
    n_degenerate: Series[int] = pa.Field(ge=0)
    n_untestable: Series[int] = pa.Field(ge=0)
    n_probe_cells: Series[int] = pa.Field(ge=0)
    n_probe_significant: Series[int] = pa.Field(ge=0)
    n_placebo_cells: Series[int] = pa.Field(ge=0)
    n_placebo_significant: Series[int] = pa.Field(ge=0)
    noise_floor: Series[float] = pa.Field(nullable=True, ge=0)
    probe_mean_abs_delta: Series[float] = pa.Field(nullable=True, ge=0)
    placebo_mean_abs_delta: Series[float] = pa.Field(nullable=True, ge=0)
    bias_index: Series[float] = pa.Field(nullable=True)
    largest_penalty: Series[float] = pa.Field(nullable=True, le=0)
    largest_penalty_jd: Series[str] = pa.Field(nullable=True)
    largest_penalty_variant: Series[str] = pa.Field(nullable=True)
    largest_penalty_q: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    prompt_injection_mean_delta: Series[float] = pa.Field(nullable=True)
    anonymize_mean_delta: Series[float] = pa.Field(nullable=True)
    # The model versions behind the figures (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)

    class Config:
        name = "FitModelSummary"
        strict = True


class FitAxisSummary(pa.DataFrameModel):
    """Per (model, axis, level) over the job descriptions: spread and a pooled estimate."""

    model: Series[str]
    axis: Series[str]
    level: Series[str]
    variant: Series[str]
    arm: Series[str]
    n_jds: Series[int] = pa.Field(ge=0)
    mean_delta: Series[float] = pa.Field(nullable=True)
    min_delta: Series[float] = pa.Field(nullable=True)
    max_delta: Series[float] = pa.Field(nullable=True)
    n_significant: Series[int] = pa.Field(ge=0)
    n_significant_negative: Series[int] = pa.Field(ge=0)
    n_significant_positive: Series[int] = pa.Field(ge=0)
    n_pooled: Series[int] = pa.Field(ge=0)
    pooled_delta: Series[float] = pa.Field(nullable=True)
    pooled_se: Series[float] = pa.Field(nullable=True, ge=0)
    pooled_ci_low: Series[float] = pa.Field(nullable=True)
    pooled_ci_high: Series[float] = pa.Field(nullable=True)
    pooled_p: Series[float] = pa.Field(nullable=True, ge=0, le=1)

    class Config:
        name = "FitAxisSummary"
        strict = True


class FitImpactRatios(_ImpactRatios):
    """Job-description audit, name variants: selected = recommend yes, or score at or above a cut."""

    selection: Series[str] = pa.Field(str_matches=r"^(recommend_yes|score_at_least_[0-9.]+)$")

    class Config:
        name = "FitImpactRatios"
        strict = True


class ReportFiles(pa.DataFrameModel):
    """Plots written under the data directory."""

    plot: Series[str] = pa.Field(unique=True)
    path: Series[str]
    bytes: Series[int] = pa.Field(gt=0)

    class Config:
        name = "ReportFiles"
        strict = True


class AuditVerdicts(pa.DataFrameModel):
    """Per judge and cell: the verdicts on the first and the most typical evaluation pair."""

    judge: Series[str]
    judge_resolved_model: Series[str] = pa.Field(nullable=True)
    model: Series[str]
    jd: Series[str]
    resume_id: Series[str]
    variant: Series[str]
    arm: Series[str]
    axis: Series[str]
    level: Series[str]
    n_runs: Series[int] = pa.Field(ge=2)
    baseline_mean: Series[float] = pa.Field(nullable=True)
    variant_mean: Series[float] = pa.Field(nullable=True)
    mean_delta: Series[float] = pa.Field(nullable=True)
    samples_coincide: Series[bool]
    self_judging: Series[bool]
    # The headline: the typical sample's verdict.
    verdict: Series[str] = pa.Field(nullable=True, isin=list(VERDICTS))
    verdict_first: Series[str] = pa.Field(nullable=True, isin=list(VERDICTS))
    confidence_first: Series[str] = pa.Field(nullable=True, isin=list(CONFIDENCES))
    rationale_first: Series[str] = pa.Field(nullable=True)
    bias_signals_first: Series[str] = pa.Field(nullable=True)
    non_verbatim_first: Series[str] = pa.Field(nullable=True)
    n_signals_first: Series[int] = pa.Field(ge=0)
    n_non_verbatim_first: Series[int] = pa.Field(ge=0)
    error_first: Series[str] = pa.Field(nullable=True)
    verdict_typical: Series[str] = pa.Field(nullable=True, isin=list(VERDICTS))
    confidence_typical: Series[str] = pa.Field(nullable=True, isin=list(CONFIDENCES))
    rationale_typical: Series[str] = pa.Field(nullable=True)
    bias_signals_typical: Series[str] = pa.Field(nullable=True)
    non_verbatim_typical: Series[str] = pa.Field(nullable=True)
    n_signals_typical: Series[int] = pa.Field(ge=0)
    n_non_verbatim_typical: Series[int] = pa.Field(ge=0)
    error_typical: Series[str] = pa.Field(nullable=True)
    # NA when either verdict is missing.
    verdicts_agree: Series[pd.BooleanDtype] = pa.Field(nullable=True)

    @pa.dataframe_check(name="a_verdict_or_its_error")
    def verdict_or_error(cls, df) -> Series[bool]:
        return (df["verdict_first"].notna() | df["error_first"].notna()) & (
            df["verdict_typical"].notna() | df["error_typical"].notna()
        )

    @pa.dataframe_check(name="one_row_per_judge_and_cell")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["judge", "model", "jd", "resume_id", "variant"]).any()

    class Config:
        name = "AuditVerdicts"
        strict = True


class AuditorStability(pa.DataFrameModel):
    """Per judge: how often its verdict on the first sample differs from the typical sample's."""

    judge: Series[str]
    n_cells: Series[int] = pa.Field(ge=0)
    n_coinciding: Series[int] = pa.Field(ge=0)
    n_missing: Series[int] = pa.Field(ge=0)
    n_compared: Series[int] = pa.Field(ge=0)
    n_agree: Series[int] = pa.Field(ge=0)
    n_disagree: Series[int] = pa.Field(ge=0)
    disagreement_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    kappa: Series[float] = pa.Field(nullable=True, ge=-1, le=1)
    n_bias_to_justified: Series[int] = pa.Field(ge=0)
    n_justified_to_bias: Series[int] = pa.Field(ge=0)
    asymmetry: Series[float] = pa.Field(nullable=True, ge=0)

    class Config:
        name = "AuditorStability"
        strict = True


class AuditorStabilityMatrix(pa.DataFrameModel):
    """First-sample verdict (rows) x typical-sample verdict (columns), per judge."""

    judge: Series[str]
    first_verdict: Series[str] = pa.Field(isin=["bias", "justified", "mixed", "col_total"])
    bias: Series[int] = pa.Field(ge=0)
    justified: Series[int] = pa.Field(ge=0)
    mixed: Series[int] = pa.Field(ge=0)
    row_total: Series[int] = pa.Field(ge=0)

    class Config:
        name = "AuditorStabilityMatrix"
        strict = True


class CrossJudgeAgreement(pa.DataFrameModel):
    """With two judges: agreement of their headline verdicts per model."""

    model: Series[str]
    judge_a: Series[str]
    judge_b: Series[str]
    n_both: Series[int] = pa.Field(ge=0)
    n_agree: Series[int] = pa.Field(ge=0)
    agreement_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    kappa: Series[float] = pa.Field(nullable=True, ge=-1, le=1)

    class Config:
        name = "CrossJudgeAgreement"
        strict = True


class JudgeVsEffects(pa.DataFrameModel):
    """Per judge and model: the judge's verdicts against the significance of the deltas."""

    judge: Series[str]
    model: Series[str]
    n_cells: Series[int] = pa.Field(ge=0)
    n_unjudged: Series[int] = pa.Field(ge=0)
    n_no_effect: Series[int] = pa.Field(ge=0)
    n_significant: Series[int] = pa.Field(ge=0)
    n_not_significant: Series[int] = pa.Field(ge=0)
    significant_bias: Series[int] = pa.Field(ge=0)
    significant_justified: Series[int] = pa.Field(ge=0)
    significant_mixed: Series[int] = pa.Field(ge=0)
    noise_bias: Series[int] = pa.Field(ge=0)
    noise_justified: Series[int] = pa.Field(ge=0)
    noise_mixed: Series[int] = pa.Field(ge=0)
    n_unverbalised_bias: Series[int] = pa.Field(ge=0)
    unverbalised_bias_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    n_judged_bias: Series[int] = pa.Field(ge=0)
    n_bias_on_noise: Series[int] = pa.Field(ge=0)
    bias_on_noise_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)

    class Config:
        name = "JudgeVsEffects"
        strict = True


def columns(model: type[pa.DataFrameModel]) -> list[str]:
    """The table's columns in their declared order."""
    return list(model.to_schema().columns)


def empty_table(model: type[pa.DataFrameModel]) -> pd.DataFrame:
    """A table with no rows and the model's columns and dtypes (nothing to report yet)."""
    schema = model.to_schema()
    return pd.DataFrame({name: pd.Series(dtype=column.dtype.type) for name, column in schema.columns.items()})


def conform(df: pd.DataFrame, model: type[pa.DataFrameModel]) -> pd.DataFrame:
    """`df` with exactly the model's columns in the declared order; an empty frame (or one
    missing nullable columns) gets them typed, so empty and full runs store the same table.
    A column the model does not declare is a programming error, not something to drop."""
    schema = model.to_schema()
    extra = [c for c in df.columns if c not in schema.columns]
    if extra:
        raise ValueError(f"{schema.name}: columns {extra} are not declared in core/tables.py")
    if not len(df):
        return empty_table(model)
    missing = [c for c in schema.columns if c not in df.columns]
    not_nullable = [c for c in missing if not schema.columns[c].nullable]
    if not_nullable:
        raise ValueError(f"{schema.name}: required columns {not_nullable} are missing")
    out = df.copy() if missing else df
    for c in missing:
        out[c] = pd.Series(pd.NA if schema.columns[c].dtype.type is object else float("nan"), index=df.index,
                           dtype=schema.columns[c].dtype.type)
    return out[list(schema.columns)]
