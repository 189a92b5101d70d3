"""The judge's vocabulary and the columns of its tables."""

from __future__ import annotations

from resumebias_dagster.core.tables import (
    CrossJudgeAgreement,
    JudgeStability,
    JudgeStabilityMatrix,
    JudgeVerdicts,
    JudgeVsEffects,
    columns,
)

SAMPLES = ("first", "typical")
NO_TEXT = "no written evaluation"
JUDGE_TAG = "audit-judge"
# Template of each arm: the placebo arm asks the probe question (its edit cannot matter).
TEMPLATES = {"probe": "judge_probe", "prompt_injection": "judge_prompt_injection", "redaction": "judge_redaction"}
ARM_TEMPLATE = {"probe": "probe", "placebo": "probe", "prompt_injection": "prompt_injection", "anonymize": "redaction"}
JUDGE_FIELDS = frozenset(
    {
        "job_title",
        "change",
        "n_runs",
        "baseline_mean",
        "variant_mean",
        "mean_delta",
        "baseline_evaluation",
        "variant_evaluation",
    }
)
# The fields that carry the screener's (untrusted) text, and the marker lines around each.
EVALUATION_FIELDS = ("baseline_evaluation", "variant_evaluation")
DATA_BEGIN, DATA_END = "<<<BEGIN DATA>>>", "<<<END DATA>>>"
EVALUATION_KEYS = ("score", "recommendation", "justification", "strengths", "concerns")
# The stored tables' columns come from their declarations in core/tables/.
CELL_KEY = ("model", "jd", "resume_id", "variant")
CELL_COLUMNS = (
    *CELL_KEY,
    "arm",
    "axis",
    "level",
    "n_runs",
    "baseline_mean",
    "variant_mean",
    "mean_delta",
    "first_baseline_run",
    "first_variant_run",
    "typical_baseline_run",
    "typical_variant_run",
    "first_baseline_score",
    "first_variant_score",
    "typical_baseline_score",
    "typical_variant_score",
    "samples_coincide",
)
SKIPPED_COLUMNS = (*CELL_KEY, "arm", "axis", "level", "n_baseline", "n_variant", "runs_required", "reason")
_SAMPLE_COLUMNS = (
    "verdict",
    "confidence",
    "rationale",
    "bias_signals",
    "non_verbatim",
    "n_signals",
    "n_non_verbatim",
    "error",
)
VERDICT_COLUMNS = tuple(columns(JudgeVerdicts))
STABILITY_MATRIX_COLUMNS = tuple(columns(JudgeStabilityMatrix))
STABILITY_COLUMNS = tuple(columns(JudgeStability))
CROSS_JUDGE_COLUMNS = tuple(columns(CrossJudgeAgreement))
EFFECT_CELL_COLUMNS = (
    "judge",
    "model",
    "jd",
    "variant",
    "arm",
    "n_resumes",
    "n_judged",
    "verdict",
    "delta",
    "q_value",
    "clears_floor",
    "significant",
    "finding",
)
JUDGE_EFFECT_COLUMNS = tuple(columns(JudgeVsEffects))
JUDGE_SUMMARY_COLUMNS = (
    "judge",
    "judge_family",
    "n_cells",
    "n_judge_calls_needed",
    "n_self_judging",
    "n_errors",
    "n_signals",
    "n_non_verbatim",
    "non_verbatim_rate",
    "n_bias_without_quote",
)
ALL = "(all)"
