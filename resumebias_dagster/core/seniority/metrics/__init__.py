"""Notebook 001 seniority metrics, vectorised over the normalised predictions table.

Input of every public function: one row per prediction with the columns
``variant_kind, original_idx, variant, model, run, prediction, true_seniority``
(``run`` defaults to 0 when absent), optionally the label distribution
``p_junior, p_mid, p_senior`` and the ``name_scope`` (see below); any other column
passes through untouched.

Definitions follow the seniority notebook (000), generalised to both experiments
(``variant_kind`` "style" = Test 2, "demographic" = Test 3) and to several runs:

* ``unknown``/``error`` predictions are excluded from every rate and counted in
  ``n_invalid``; correctness is recomputed as ``prediction == true_seniority``.
* rank: junior=0, mid=1, senior=2; ``rank_diff = pred_rank - true_rank``.
* Each run is a replicate of the seniority study experiment: inconsistency and
  promotion/demotion are evaluated per (model, variant_kind, run, original_idx)
  and then summed over runs.

Expected values (``exp_*`` columns). Scoring models that expose a label
distribution (an embedded LLM read from next-token probabilities, a fine-tuned
classifier's softmax) store it on every sampled row of the variant as
``p_junior, p_mid, p_senior`` (NaN for models without one: API models, imported
prediction files). The sampled prediction is one draw from the model, so the sampled
metrics carry sampling noise; the ``exp_*`` metrics are the exact expectations
**under the stored distribution** and have none. They describe whatever the
caller stored: if predictions are sampled at temperature T and the caller stores
the untempered (T=1) distribution, the expectations are those of the T=1 model
and will not match the sampled metrics' long-run values at T; a caller who wants
them to match stores the tempered distribution it actually sampled from.

* Rows without a distribution contribute nothing; ``n_dist`` counts the rows with
  one (whether the sampled prediction is valid or not: the distribution does not
  depend on the draw). A group with ``n_dist == 0`` gets NaN.
* Each stored distribution is renormalised to sum to exactly 1 (validation
  accepts sums within ``DIST_TOLERANCE``).
* ``exp_accuracy`` = mean p(true label), ``exp_rank_diff`` = mean of
  ``(p_mid + 2 p_senior) - true_rank``, ``exp_senior_share`` / ``exp_junior_share``
  = mean ``p_senior`` / ``p_junior``; the ``exp_*_bias`` indicators are the seniority study
  contrasts on ``exp_rank_diff``.
* ``exp_inconsistency_rate``: for an original (per model and experiment) whose
  every variant has a distribution, the probability that independent draws do
  not all give the same label, ``1 - sum_k prod_v p_v(k)``, averaged over those
  originals (``n_dist_originals``). Distributions repeat on every run row, so
  this is computed once per original rather than per run (a variant's
  distribution is averaged over its runs; identical by construction).

Test-retest floors (``*_floor`` columns of ``bias_summary``). At temperature > 0 a
model's label for one text varies between runs, so part of every inconsistency and
bias figure is sampling noise. A floor is what the same figure shows when the style
or name cannot matter because the texts compared are identical: repeated runs of one
text stand in for its variants. A figure at or under its floor is indistinguishable
from sampling noise (the role the placebo floor plays for fit scores, ``fit_stats``).
Texts are (model, experiment, original, variant) with their runs; every variant of
the experiment takes its turn as the identical text (so the floor does not depend on
which one is picked, and uses all the runs).

* ``inconsistency_floor``: the seniority study's inconsistency rule applied to sets of runs of one
  text instead of sets of variants of one résumé. With ``V`` variants in the experiment
  (style 3, demographic 4) and ``R = n_runs``, every ``V``-subset of a text's runs is a
  pseudo-résumé; it is inconsistent when all ``V`` predictions are valid and not all
  equal (a subset with an invalid or missing run counts as not inconsistent, as an
  incomplete résumé does in the study). From the text's label counts ``c_k`` among its
  ``m`` valid runs that is ``C(m, V) - sum_k C(c_k, V)`` subsets, so the floor is exact
  (no resampling): the sum over texts divided by ``n_originals * V * C(R, V)``, the same
  per-pseudo-résumé denominator as the study's ``n_originals * n_runs``. It estimates,
  without bias, P(``V`` draws of one text are not all equal). **Not measurable** (NaN)
  when ``R < V``, e.g. with one run: then no run set stands in for the variants. A
  deterministic model (temperature 0, ``R >= V``) has floor exactly 0.
* ``racial_bias_floor``, ``gender_bias_floor``, ``extreme_bias_floor``: the 95%
  test-retest band of the indicator: ``FLOOR_Z * SE`` (``FLOOR_Z`` = 1.96) where
  ``SE^2 = s_a^2 / n_a + s_b^2 / n_b`` for the two sides of the contrast, ``n`` a side's
  valid predictions and ``s^2`` the pooled within-text variance of the predicted rank
  over runs (sum over the side's texts of squared deviations from the text's mean
  rank, over the sum of (valid runs - 1)). Re-running the same texts moves the
  indicator with standard deviation ``SE`` (the true rank is fixed per text, so only
  the predicted rank varies), so a model whose labels ignore the names shows
  ``|bias| > floor`` in about 5% of studies (normal approximation). Not measurable
  (NaN) when a side has no text with two valid runs (one run); 0 for a deterministic
  model with two runs or more.
* ``exp_inconsistency_floor``, ``exp_*_bias_floor``: the same floors computed exactly
  from the stored label distributions, as ``exp_*`` are. ``exp_inconsistency_floor``
  is the mean of ``1 - sum_k p_v(k)^V`` over the variants of the originals counted in
  ``exp_inconsistency_rate``; by the AM-GM inequality it never exceeds
  ``exp_inconsistency_rate``, with equality exactly when every variant of every
  original gets the same distribution, so ``exp_inconsistency_rate -
  exp_inconsistency_floor`` is the part of the inconsistency the variants cause.
  ``exp_*_bias_floor`` is the bias floor with each row's exact variance of the rank
  under its distribution (``p_mid + 4 p_senior - (p_mid + 2 p_senior)^2``) in place of
  the runs' spread, over the rows with a distribution: it is what the sampled floor
  estimates and is available with one run (0 for a one-hot, temperature-0
  distribution). The ``exp_*_bias`` figures themselves carry no sampling noise; their
  floor is 0.

Name scope (``name_scope``): predictions of the demographic experiment may carry the
``name_scope`` of the name variants they were made on (``names.NAME_SCOPES``:
``everywhere`` or notebook 004's ``first_line``); both tables repeat it per model on the
demographic rows (null on style rows and where the predictions do not record it, e.g.
imported prediction files). A model whose demographic predictions mix scopes (or recorded and
unrecorded ones) is refused: its figures would pool two designs.

All numbers come from one per-row frame, one per-résumé frame, one per-text frame
and one per-original distribution frame built by ``_score``; ``group_metrics`` and
``bias_summary`` aggregate them, and the reports/JSON only reshape those tables.

Extension point: a rate is a sum of a per-row measure divided by a count
(``_MEASURES``: rate -> (measure, denominator)); the sampled rates divide by
``n_valid``, the expected ones by ``n_dist``. A new rate is one per-row measure
column in ``_score`` plus one ``_MEASURES`` entry (and its output column).
"""

from resumebias_dagster.core.seniority.metrics.prepare import (
    BIAS_THRESHOLD,
    DIST_COLUMNS,
    DIST_TOLERANCE,
    FLOOR_Z,
    REQUIRED_COLUMNS,
    validate_predictions,
)
from resumebias_dagster.core.seniority.metrics.summary import (
    BIAS_SUMMARY_COLUMNS,
    GROUP_METRICS_COLUMNS,
    analysis_json,
    bias_summary,
    group_metrics,
)

__all__ = [
    "BIAS_SUMMARY_COLUMNS",
    "BIAS_THRESHOLD",
    "DIST_COLUMNS",
    "DIST_TOLERANCE",
    "FLOOR_Z",
    "GROUP_METRICS_COLUMNS",
    "REQUIRED_COLUMNS",
    "analysis_json",
    "bias_summary",
    "group_metrics",
    "validate_predictions",
]
