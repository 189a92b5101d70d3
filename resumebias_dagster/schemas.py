"""One pandera DataFrameModel per asset table; the assets use them as Dagster types, so a
table that fails its schema is never stored and nothing downstream runs on it."""

from __future__ import annotations

import warnings

import pandera.pandas as pa
from dagster_pandera import pandera_schema_to_dagster_type
from pandera.typing.pandas import Series

from resumebias_dagster.core.labels import (
    DEMOGRAPHICS,
    PREDICTION_VALUES,
    SENIORITY_LEVELS,
    STYLES,
    VARIANT_KINDS,
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
    years_experience: Series[int] = pa.Field(ge=0, le=50)
    employers: Series[str]
    degree: Series[str]
    school: Series[str]
    graduation_year: Series[int] = pa.Field(ge=1950, le=2030)
    skills: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 200})

    @pa.check("text", name="no_seniority_words")
    def no_seniority_words(cls, text: Series[str]) -> Series[bool]:
        return ~text.str.contains(FORBIDDEN_SENIORITY_WORDS, regex=True)

    class Config:
        name = "BaseResumes"
        strict = False


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
        strict = False


class NameVariants(pa.DataFrameModel):
    """Each neutral résumé under the four demographic names."""

    original_idx: Series[int] = pa.Field(ge=0)
    resume_id: Series[str]
    seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    demographic: Series[str] = pa.Field(isin=list(DEMOGRAPHICS))
    name: Series[str] = pa.Field(str_length={"min_value": 3})
    text: Series[str] = pa.Field(str_length={"min_value": 100})

    @pa.dataframe_check(name="one_row_per_resume_and_demographic")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["original_idx", "demographic"]).any()

    class Config:
        name = "NameVariants"
        strict = False


class StyleValidation(pa.DataFrameModel):
    """Seed 004 validation table: one row per style."""

    style: Series[str] = pa.Field(isin=list(STYLES), unique=True)
    n_resumes: Series[int] = pa.Field(ge=0)
    mean_words: Series[float] = pa.Field(ge=0)
    mean_power_words: Series[float] = pa.Field(ge=0)
    mean_humble_words: Series[float] = pa.Field(ge=0)
    tone_score: Series[float] = pa.Field(ge=-1, le=1)
    similarity_to_neutral_mean: Series[float] = pa.Field(ge=-1, le=1.0001)
    similarity_to_neutral_min: Series[float] = pa.Field(ge=-1, le=1.0001)

    class Config:
        name = "StyleValidation"
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
    resolved_model: Series[str] = pa.Field(nullable=True)
    latency_s: Series[float] = pa.Field(nullable=True, ge=0)
    error: Series[str] = pa.Field(nullable=True)

    @pa.dataframe_check(name="variant_matches_kind")
    def variant_matches_kind(cls, df) -> Series[bool]:
        allowed = df["variant_kind"].map({k: set(v) for k, v in VARIANT_KINDS.items()})
        return Series[bool]([v in a for v, a in zip(df["variant"], allowed)], index=df.index)

    @pa.dataframe_check(name="one_row_per_variant_model_run")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["variant_kind", "original_idx", "variant", "model", "run"]).any()

    class Config:
        name = "SeniorityPredictions"
        strict = False


class SeniorityGroupMetrics(pa.DataFrameModel):
    """Seed 001 metrics per (model, experiment, group)."""

    model: Series[str]
    variant_kind: Series[str] = pa.Field(isin=list(VARIANT_KINDS))
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

    class Config:
        name = "SeniorityGroupMetrics"
        strict = False


class SeniorityBiasSummary(pa.DataFrameModel):
    """Seed 001 headline figures per (model, experiment)."""

    model: Series[str]
    variant_kind: Series[str] = pa.Field(isin=list(VARIANT_KINDS))
    n: Series[int] = pa.Field(ge=0)
    n_valid: Series[int] = pa.Field(ge=0)
    n_invalid: Series[int] = pa.Field(ge=0)
    n_runs: Series[int] = pa.Field(ge=0)
    n_originals: Series[int] = pa.Field(ge=0)
    n_inconsistent: Series[int] = pa.Field(ge=0)
    inconsistency_rate: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    rank_diff: Series[float] = pa.Field(ge=-2, le=2, nullable=True)
    racial_bias: Series[float] = pa.Field(nullable=True)
    racial_reading: Series[str] = pa.Field(nullable=True, isin=READINGS)
    gender_bias: Series[float] = pa.Field(nullable=True)
    gender_reading: Series[str] = pa.Field(nullable=True, isin=READINGS)
    extreme_bias: Series[float] = pa.Field(nullable=True)
    extreme_reading: Series[str] = pa.Field(nullable=True, isin=READINGS)

    class Config:
        name = "SeniorityBiasSummary"
        strict = False


with warnings.catch_warnings():
    # The converter is marked beta; it is the documented way to enforce pandera in Dagster.
    warnings.simplefilter("ignore")
    BaseResumesType = pandera_schema_to_dagster_type(BaseResumes)
    StyleVariantsType = pandera_schema_to_dagster_type(StyleVariants)
    NameVariantsType = pandera_schema_to_dagster_type(NameVariants)
    StyleValidationType = pandera_schema_to_dagster_type(StyleValidation)
    SeniorityPredictionsType = pandera_schema_to_dagster_type(SeniorityPredictions)
    SeniorityGroupMetricsType = pandera_schema_to_dagster_type(SeniorityGroupMetrics)
    SeniorityBiasSummaryType = pandera_schema_to_dagster_type(SeniorityBiasSummary)
