"""The seniority study's tables (notebooks 000, 001, 004)."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.common.labels import (
    DEMOGRAPHICS,
    NAME_SCOPES,
    PREDICTION_VALUES,
    SENIORITY_LEVELS,
    SIMILARITY_MEASURES,
    STYLES,
    VARIANT_KINDS,
)
from resumebias_dagster.core.tables.base import PerModel, StrictTable

FORBIDDEN_SENIORITY_WORDS = r"(?i)\b(?:junior|senior|mid|mid-level|entry[- ]level)\b"
READINGS = [
    "within_threshold",
    "favors_caucasian",
    "favors_african_american",
    "favors_male",
    "favors_female",
    "favors_caucasian_male",
    "favors_african_american_female",
]


class _ResumeTexts(StrictTable):
    """Tables of résumé texts (a `text` column): seniority is carried by facts, never by the level words."""

    @pa.check("text", name="no_seniority_words")
    def no_seniority_words(cls, text: Series[str]) -> pd.Series[bool]:
        return ~text.str.contains(FORBIDDEN_SENIORITY_WORDS, regex=True)


class _PerExperiment(PerModel):
    """Rows per (model, experiment): the experiment is the variant kind, with the name scope
    of the demographic experiment."""

    variant_kind: Series[str] = pa.Field(isin=list(VARIANT_KINDS))
    # How much of the text the name swap changed; demographic rows only, null where not recorded.
    name_scope: Series[str] = pa.Field(nullable=True, isin=list(NAME_SCOPES))


class BaseResumes(_ResumeTexts):
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


class StyleVariants(_ResumeTexts):
    """Each base résumé in the three styles; facts identical, wording different."""

    resume_id: Series[str]
    original_idx: Series[int] = pa.Field(ge=0)
    seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    style: Series[str] = pa.Field(isin=list(STYLES))
    text: Series[str] = pa.Field(str_length={"min_value": 100})

    @pa.dataframe_check(name="one_row_per_resume_and_style")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["original_idx", "style"]).any()


class NameVariants(StrictTable):
    """Each neutral résumé under the four demographic names."""

    original_idx: Series[int] = pa.Field(ge=0)
    resume_id: Series[str]
    seniority: Series[str] = pa.Field(isin=list(SENIORITY_LEVELS))
    demographic: Series[str] = pa.Field(isin=list(DEMOGRAPHICS))
    name: Series[str] = pa.Field(str_length={"min_value": 3})
    first_name: Series[str]
    last_name: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 100})
    # everywhere: the name replaced in the whole text; first_line: notebook 004, the name line only.
    name_scope: Series[str] = pa.Field(isin=list(NAME_SCOPES))

    @pa.dataframe_check(name="one_row_per_resume_and_demographic")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["original_idx", "demographic"]).any()

    @pa.dataframe_check(name="one_name_scope_per_table")
    def one_scope(cls, df) -> bool:
        return df["name_scope"].nunique() <= 1


class StyleValidation(StrictTable):
    """Notebook 004 validation table: one row per style."""

    style: Series[str] = pa.Field(isin=list(STYLES), unique=True)
    n_resumes: Series[int] = pa.Field(ge=0)
    mean_words: Series[float] = pa.Field(ge=0)
    mean_power_words: Series[float] = pa.Field(ge=0)
    mean_humble_words: Series[float] = pa.Field(ge=0)
    tone_score: Series[float] = pa.Field(ge=-1, le=1)


class StyleSimilarity(StrictTable):
    """Notebook 004 similarity between the versions of a résumé: one row per pair of styles and measure."""

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


class SeniorityPredictions(StrictTable):
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


class FineTunedClassifiers(StrictTable):
    """One row per fine-tuned classifier: where its weights are and how training went."""

    model: Series[str] = pa.Field(unique=True)
    base_model: Series[str]
    path: Series[str]
    fingerprint: Series[str] = pa.Field(str_length={"min_value": 8})
    # SHA-256 of the folder's files: another machine fetches the folder from the shared files by it.
    content_sha256: Series[str] = pa.Field(str_length={"min_value": 64, "max_value": 64})
    heldout_accuracy: Series[float] = pa.Field(ge=0, le=1, nullable=True)
    n_train: Series[int] = pa.Field(ge=1)
    n_heldout: Series[int] = pa.Field(ge=0)
    steps: Series[int] = pa.Field(ge=1)
    final_loss: Series[float] = pa.Field(nullable=True)
    train_seconds: Series[float] = pa.Field(ge=0)
    retrained: Series[bool]


class SeniorityGroupMetrics(_PerExperiment):
    """Notebook 001 metrics per (model, experiment, group)."""

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


class SeniorityBiasSummary(_PerExperiment):
    """Notebook 001 headline figures per (model, experiment), each next to its test-retest floor
    (the same figure for identical texts: sampling noise alone; null = not measurable)."""

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
