"""The Dagster types of the asset tables: each pandera model of `core/tables/` checked
before its table is stored, so a table that fails its schema is never stored and nothing
downstream runs on it."""

from __future__ import annotations

import warnings

from dagster_pandera import pandera_schema_to_dagster_type

from resumebias_dagster.core.tables import (  # noqa: F401  (the models, for the assets)
    AuditorStability,
    AuditorStabilityMatrix,
    AuditVerdicts,
    BaseResumes,
    CrossJudgeAgreement,
    FineTunedClassifiers,
    FitAxisSummary,
    FitEffects,
    FitImpactRatios,
    FitModelSummary,
    FitScores,
    JobDescriptions,
    JudgeVsEffects,
    NameVariants,
    ProbeVariants,
    ReportFiles,
    SeniorityBiasSummary,
    SeniorityGroupMetrics,
    SeniorityImpactRatios,
    SeniorityPredictions,
    StyleSimilarity,
    StyleValidation,
    StyleVariants,
    Verdicts,
    empty_table,
)

with warnings.catch_warnings():
    # The converter is marked beta; it is the documented way to enforce pandera in Dagster.
    warnings.simplefilter("ignore")
    BaseResumesType = pandera_schema_to_dagster_type(BaseResumes)
    StyleVariantsType = pandera_schema_to_dagster_type(StyleVariants)
    NameVariantsType = pandera_schema_to_dagster_type(NameVariants)
    StyleValidationType = pandera_schema_to_dagster_type(StyleValidation)
    StyleSimilarityType = pandera_schema_to_dagster_type(StyleSimilarity)
    SeniorityPredictionsType = pandera_schema_to_dagster_type(SeniorityPredictions)
    FineTunedClassifiersType = pandera_schema_to_dagster_type(FineTunedClassifiers)
    SeniorityGroupMetricsType = pandera_schema_to_dagster_type(SeniorityGroupMetrics)
    SeniorityBiasSummaryType = pandera_schema_to_dagster_type(SeniorityBiasSummary)
    JobDescriptionsType = pandera_schema_to_dagster_type(JobDescriptions)
    ProbeVariantsType = pandera_schema_to_dagster_type(ProbeVariants)
    FitScoresType = pandera_schema_to_dagster_type(FitScores)
    FitEffectsType = pandera_schema_to_dagster_type(FitEffects)
    FitModelSummaryType = pandera_schema_to_dagster_type(FitModelSummary)
    FitAxisSummaryType = pandera_schema_to_dagster_type(FitAxisSummary)
    SeniorityImpactRatiosType = pandera_schema_to_dagster_type(SeniorityImpactRatios)
    FitImpactRatiosType = pandera_schema_to_dagster_type(FitImpactRatios)
    ReportFilesType = pandera_schema_to_dagster_type(ReportFiles)
    AuditVerdictsType = pandera_schema_to_dagster_type(AuditVerdicts)
    AuditorStabilityType = pandera_schema_to_dagster_type(AuditorStability)
    AuditorStabilityMatrixType = pandera_schema_to_dagster_type(AuditorStabilityMatrix)
    CrossJudgeAgreementType = pandera_schema_to_dagster_type(CrossJudgeAgreement)
    JudgeVsEffectsType = pandera_schema_to_dagster_type(JudgeVsEffects)
    VerdictsType = pandera_schema_to_dagster_type(Verdicts)
