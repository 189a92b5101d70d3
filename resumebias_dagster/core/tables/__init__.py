"""Every asset table's columns, declared once: one pandera DataFrameModel per table.

No Dagster import: core functions build their output frames from these declarations
(`columns`, `conform`, `empty_table`), and `schemas.py` turns each model into the Dagster
type that checks the table before it is stored. Every model is strict: a column that is not
declared here is refused, so what a run stores is exactly what this package lists. One module
per study (`seniority`, `jd_audit`), the ranking task's (`ranking`), the impact-ratio tables
of both (`impact`), and `base`.
"""

from resumebias_dagster.core.tables.base import (
    ReportFiles,
    columns,
    conform,
    empty_table,
)
from resumebias_dagster.core.tables.compliance import BiasAuditRates, BiasAuditSummary, EuTestRecord
from resumebias_dagster.core.tables.history import AuditChanges, AuditSnapshots, FindingUnits
from resumebias_dagster.core.tables.impact import (
    FitImpactRatios,
    SeniorityImpactRatios,
)
from resumebias_dagster.core.tables.jd_audit import (
    CrossJudgeAgreement,
    FitAxisSummary,
    FitEffects,
    FitModelSummary,
    FitScores,
    JobDescriptions,
    JudgeStability,
    JudgeStabilityMatrix,
    JudgeVerdicts,
    JudgeVsEffects,
    ProbeVariants,
)
from resumebias_dagster.core.tables.pairwise import PairwiseChoices
from resumebias_dagster.core.tables.ranking import RankingPositions, Rankings, RankingSelection
from resumebias_dagster.core.tables.seniority import (
    FORBIDDEN_SENIORITY_WORDS,
    READINGS,
    BaseResumes,
    FineTunedClassifiers,
    NameVariants,
    SeniorityBiasSummary,
    SeniorityGroupMetrics,
    SeniorityPredictions,
    StyleSimilarity,
    StyleValidation,
    StyleVariants,
)
from resumebias_dagster.core.tables.user_resumes import ProbeApplicability, UserResumes
from resumebias_dagster.core.tables.validity import ValidityPairs
from resumebias_dagster.core.tables.verdicts import VERDICT_VALUES, Verdicts

__all__ = [
    "AuditChanges",
    "AuditSnapshots",
    "BaseResumes",
    "BiasAuditRates",
    "BiasAuditSummary",
    "CrossJudgeAgreement",
    "EuTestRecord",
    "FORBIDDEN_SENIORITY_WORDS",
    "FineTunedClassifiers",
    "FindingUnits",
    "FitAxisSummary",
    "FitEffects",
    "FitImpactRatios",
    "FitModelSummary",
    "FitScores",
    "JobDescriptions",
    "JudgeStability",
    "JudgeStabilityMatrix",
    "JudgeVerdicts",
    "JudgeVsEffects",
    "NameVariants",
    "PairwiseChoices",
    "ProbeApplicability",
    "ProbeVariants",
    "READINGS",
    "RankingPositions",
    "RankingSelection",
    "Rankings",
    "ReportFiles",
    "SeniorityBiasSummary",
    "SeniorityGroupMetrics",
    "SeniorityImpactRatios",
    "SeniorityPredictions",
    "StyleSimilarity",
    "StyleValidation",
    "StyleVariants",
    "UserResumes",
    "ValidityPairs",
    "VERDICT_VALUES",
    "Verdicts",
    "columns",
    "conform",
    "empty_table",
]
