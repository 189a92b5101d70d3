"""The job-description audit's tables (study 003): probes, fit scores, effects and the judge."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.common.labels import (
    CONFIDENCES,
    VERDICTS,
)
from resumebias_dagster.core.tables.base import PerJudge, PerModel, StrictTable
from resumebias_dagster.core.tables.verdicts import VERDICT_VALUES


class _PerModelAndJD(PerModel):
    """Rows per (model, job description, ...): the model's name, then the JD's."""

    jd: Series[str]


class JobDescriptions(StrictTable):
    """The job descriptions of the audit; `jd` is a partition key."""

    jd: Series[str] = pa.Field(unique=True, str_matches=r"^[a-z0-9][a-z0-9_-]*$")
    title: Series[str] = pa.Field(str_length={"min_value": 1})
    seniority: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 50})


class ProbeVariants(StrictTable):
    """Baseline and single-signal variants of the audit's base résumés."""

    resume_id: Series[str]
    variant: Series[str] = pa.Field(str_matches=r"^(baseline|[A-Za-z0-9]+_[a-z0-9_]+)$")
    arm: Series[str] = pa.Field(isin=["baseline", "probe", "anonymize", "prompt_injection", "placebo"])
    axis: Series[str]
    level: Series[str]
    # The "First Last" a person_name variant writes (a pool level's name differs by résumé);
    # null for every other variant and for the baseline.
    name: Series[str] = pa.Field(nullable=True)
    text: Series[str] = pa.Field(str_length={"min_value": 100})

    @pa.dataframe_check(name="one_baseline_per_resume")
    def one_baseline(cls, df) -> bool:
        return bool((df[df["variant"] == "baseline"].groupby("resume_id").size() == 1).all()) and set(
            df.loc[df["variant"] == "baseline", "resume_id"]
        ) == set(df["resume_id"])

    @pa.dataframe_check(name="one_row_per_resume_and_variant")
    def unique_pairs(cls, df) -> bool:
        return not df.duplicated(["resume_id", "variant"]).any()


class FitScores(_PerModelAndJD):
    """One row per (model, JD, résumé, variant, run); a failed run has no score and says why."""

    resume_id: Series[str]
    variant: Series[str]
    arm: Series[str]
    axis: Series[str]
    level: Series[str]
    # The variant's name (probe_variants' `name`): null but for person_name variants.
    name: Series[str] = pa.Field(nullable=True)
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


class FitEffects(_PerModelAndJD):
    """Per (model, JD, variant): the score change against the baseline and its statistics."""

    variant: Series[str]
    axis: Series[str]
    level: Series[str]
    arm: Series[str]
    # Base résumés with both a baseline and a variant value: the unit of the test.
    n_resumes: Series[int] = pa.Field(ge=0)
    # Valid runs on each side, over those résumés (runs are repeated measures, not units).
    n_baseline: Series[int] = pa.Field(ge=0)
    n_variant: Series[int] = pa.Field(ge=0)
    n_failed_baseline: Series[int] = pa.Field(ge=0)
    n_failed_variant: Series[int] = pa.Field(ge=0)
    baseline_mean: Series[float] = pa.Field(nullable=True)
    variant_mean: Series[float] = pa.Field(nullable=True)
    delta: Series[float] = pa.Field(nullable=True, ge=-9, le=9)
    se: Series[float] = pa.Field(nullable=True, ge=0)
    df: Series[float] = pa.Field(nullable=True, ge=0)
    ci_low: Series[float] = pa.Field(nullable=True)
    ci_high: Series[float] = pa.Field(nullable=True)
    t: Series[float] = pa.Field(nullable=True)
    p_value: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    q_value: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    # Equivalence against the fit_delta margin, the minimal detectable effect (inf: the
    # résumés are too few for the test to reach alpha) and the test behind p_value.
    tost_p: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    mde: Series[float] = pa.Field(nullable=True, ge=0)
    test: Series[str] = pa.Field(isin=["sign_flip", "run_permutation", ""])
    # re-cinq's yes/no/maybe: share of "yes" over the runs that answered a recommendation.
    n_recommend_baseline: Series[int] = pa.Field(ge=0)
    n_recommend_variant: Series[int] = pa.Field(ge=0)
    baseline_recommend_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    variant_recommend_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    recommend_rate_delta: Series[float] = pa.Field(nullable=True, ge=-1, le=1)
    noise_floor: Series[float] = pa.Field(nullable=True, ge=0)
    clears_floor: Series[bool]
    significant: Series[bool]
    # The cell against the model's placebo cells as an empirical null (share at least as extreme).
    placebo_p: Series[float] = pa.Field(nullable=True, gt=0, le=1)
    verdict: Series[str] = pa.Field(isin=VERDICT_VALUES)
    note: Series[str] = pa.Field(nullable=True)
    # The model versions the cell's answers came from (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)

    @pa.dataframe_check(name="ci_contains_delta")
    def ci_contains_delta(cls, df) -> Series[bool]:
        return df["ci_low"].isna() | ((df["ci_low"] <= df["delta"] + 1e-9) & (df["delta"] <= df["ci_high"] + 1e-9))


class FitModelSummary(StrictTable):
    """Per model: bias index, largest penalty, noise floor, significant cells, arm means."""

    model: Series[str] = pa.Field(unique=True)
    n_cells: Series[int] = pa.Field(ge=0)
    n_significant: Series[int] = pa.Field(ge=0)
    n_equivalent: Series[int] = pa.Field(ge=0)
    n_untestable: Series[int] = pa.Field(ge=0)
    n_probe_cells: Series[int] = pa.Field(ge=0)
    n_probe_significant: Series[int] = pa.Field(ge=0)
    n_placebo_cells: Series[int] = pa.Field(ge=0)
    n_placebo_significant: Series[int] = pa.Field(ge=0)
    noise_floor: Series[float] = pa.Field(nullable=True, ge=0)
    probe_mean_abs_delta: Series[float] = pa.Field(nullable=True, ge=0)
    placebo_mean_abs_delta: Series[float] = pa.Field(nullable=True, ge=0)
    # Root mean square of the probe (placebo) arm's effects with the sampling noise taken out.
    bias_index: Series[float] = pa.Field(nullable=True, ge=0)
    placebo_index: Series[float] = pa.Field(nullable=True, ge=0)
    largest_penalty: Series[float] = pa.Field(nullable=True, le=0)
    largest_penalty_jd: Series[str] = pa.Field(nullable=True)
    largest_penalty_variant: Series[str] = pa.Field(nullable=True)
    largest_penalty_q: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    prompt_injection_mean_delta: Series[float] = pa.Field(nullable=True)
    anonymize_mean_delta: Series[float] = pa.Field(nullable=True)
    # The model versions behind the figures (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)


class FitAxisSummary(PerModel):
    """Per (model, axis, level) over the job descriptions: spread and a pooled estimate."""

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
    # The change averaged over the JDs, per résumé (the unit); one résumé: per JD.
    n_resumes: Series[int] = pa.Field(ge=0)
    pooled_delta: Series[float] = pa.Field(nullable=True)
    pooled_se: Series[float] = pa.Field(nullable=True, ge=0)
    pooled_ci_low: Series[float] = pa.Field(nullable=True)
    pooled_ci_high: Series[float] = pa.Field(nullable=True)
    pooled_p: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    pooled_test: Series[str] = pa.Field(nullable=True, isin=["t_resume", "t_resume_name", "t_jd"])


class JudgeVerdicts(PerJudge):
    """Per judge and cell: the verdicts on the first and the most typical evaluation pair."""

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


class JudgeStability(PerJudge):
    """Per judge: how often its verdict on the first sample differs from the typical sample's."""

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


class JudgeStabilityMatrix(PerJudge):
    """First-sample verdict (rows) x typical-sample verdict (columns), per judge."""

    first_verdict: Series[str] = pa.Field(isin=["bias", "justified", "mixed", "col_total"])
    bias: Series[int] = pa.Field(ge=0)
    justified: Series[int] = pa.Field(ge=0)
    mixed: Series[int] = pa.Field(ge=0)
    row_total: Series[int] = pa.Field(ge=0)


class CrossJudgeAgreement(PerModel):
    """With two judges: agreement of their headline verdicts per model."""

    judge_a: Series[str]
    judge_b: Series[str]
    n_both: Series[int] = pa.Field(ge=0)
    n_agree: Series[int] = pa.Field(ge=0)
    agreement_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    kappa: Series[float] = pa.Field(nullable=True, ge=-1, le=1)


class JudgeVsEffects(PerJudge):
    """Per judge and model: the judge's verdicts against the significance of the deltas."""

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
