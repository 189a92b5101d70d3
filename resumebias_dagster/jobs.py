"""Jobs: unpartitioned and partitioned assets cannot share one, so the study runs as four; the
ranking task and the pairwise task have one each, run on request."""

import dagster as dg

from resumebias_dagster.partitions import (
    model_jd_partitions,
    model_partitions,
    pairwise_model_jd_partitions,
    rank_model_jd_partitions,
)

PREDICTIONS = dg.AssetSelection.assets("seniority_predictions")
# The validity pairs are scored beside the probes, partition by partition (issue 42).
FIT_SCORES = dg.AssetSelection.assets("fit_scores", "validity_scores")
PARTITIONED = PREDICTIONS | FIT_SCORES
# The ranking task: run on request (rankings_job), never by `resumebias run`, so neither it nor
# its tables are in the study's jobs.
RANKINGS = dg.AssetSelection.assets("rankings")
# The pairwise task (issue 42): on request too (pairwise_job); pairwise_verdicts follows it.
PAIRWISE = dg.AssetSelection.assets("pairwise_choices")
# Filled only on request (import paths in its config); a job re-running it would drop an import.
IMPORTED = dg.AssetSelection.assets("imported_predictions")
# The user's own résumés are read on request (their folder is run config), never by a study job.
USER_RESUMES = dg.AssetSelection.groups("user_resumes")


study_inputs_job = dg.define_asset_job(
    "study_inputs",
    selection=dg.AssetSelection.all()
    - PARTITIONED.downstream()
    - RANKINGS.downstream()
    - PAIRWISE.downstream()
    - IMPORTED
    - USER_RESUMES,
    description="Résumés, variants, validation, training set, fine-tuned classifiers, job descriptions, probes.",
)
seniority_predictions_job = dg.define_asset_job(
    "seniority_predictions_job",
    selection=PREDICTIONS,
    partitions_def=model_partitions,
    description="Every variant through one model (one partition per model of the models config).",
)
fit_scores_job = dg.define_asset_job(
    "fit_scores_job",
    selection=FIT_SCORES,
    partitions_def=model_jd_partitions,
    description="Every probe variant and validity pair through one model for one job description.",
)
rankings_job = dg.define_asset_job(
    "rankings_job",
    selection=RANKINGS,
    partitions_def=rank_model_jd_partitions,
    description="The ranking task through one model for one job description (ranking_selection and "
    "ranking_positions follow under automation).",
)
pairwise_job = dg.define_asset_job(
    "pairwise_job",
    selection=PAIRWISE,
    partitions_def=pairwise_model_jd_partitions,
    description="The pairwise task (two résumés of a validity set: which is more qualified, or equal?) through "
    "one model for one job description (pairwise_verdicts follows under automation).",
)
study_tables_job = dg.define_asset_job(
    "study_tables",
    selection=PARTITIONED.downstream() - PARTITIONED,
    description="Metric tables, effects, summaries and plots over every partition.",
)

user_resumes_job = dg.define_asset_job(
    "user_resumes_job",
    selection=USER_RESUMES,
    description="Your own résumé files read (user_resumes: give its folder or csv in run config) and the probes "
    "each admits; `resumebias run --config` runs it first when its audit file configures user_resumes.",
)

ALL_JOBS = [
    study_inputs_job,
    seniority_predictions_job,
    fit_scores_job,
    rankings_job,
    pairwise_job,
    study_tables_job,
    user_resumes_job,
]
