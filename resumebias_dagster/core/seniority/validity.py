"""Does the model read seniority at all? The seniority task's validity findings (issue 42):
notebook 001's accuracy and rank difference, with intervals and verdicts, the résumé as the unit.

Values. A text (one variant of one résumé: a wording or a name) is *right* with the probability
the model's label distribution gives its true level (exact, no sampling noise) when every
prediction of the model carries one, else with the share of its valid sampled runs labelled at
the true level; its *rank difference* is its expected (or mean sampled) rank minus the true rank
(junior 0, mid 1, senior 2), as in ``verdicts``.

Findings per model (study ``seniority``):

* ``validity:accuracy`` (kind ``seniority_accuracy``): the mean over résumés of each résumé's
  share of texts (every wording and name) labelled at its true level. Read like criterion
  validity (``core/inference/verdicts.validity_words``), from its 95% interval alone: ``valid``
  at or above the target of ``catalog/inference.yaml`` (0.8, the seniority study's "80% = good"),
  ``better than chance`` above 1/3, ``worse than chance`` below, else ``no better than chance``.
  Chance is 1/3: a label that ignores the résumé (whatever its own mix of labels) is right on a
  third of a design with as many résumés at each level, which the generator makes (40 a level).
  With unequal levels, a labeller that always gives the commonest level is right more often
  than that: the note says so and gives the levels' counts.
* ``validity:rank_difference`` (kind ``rank_difference``): the mean over résumés of each résumé's
  mean rank difference: does the model rate people above (positive) or below their level on
  average? Beyond noise, ruled out within its margin (0.1 levels) or undecided. A rank
  difference of 0 is no sign of validity (a labeller at random over three levels has it).
* ``validity:accuracy:group:<name variant>`` (kind ``seniority_accuracy``, one per name group,
  each at the Bonferroni level of their number) and ``validity:accuracy_gap:<name variant>``
  (kind ``validity_gap``, each group minus the first group of the data on the same résumé,
  names a random effect where they recur on several résumés, ``clustered.side_contrast``): does
  it read the level as often with every group's names?

Intervals: the t over résumés of the résumés' values with the tie rules of
``core/inference/clustered.paired`` (a deterministic classifier right on every text of every
résumé has no spread: the interval is the exact bound of the share of résumés the sample can
have missed; where at least half the résumés tie, ``SHARE_SPARSE``, the differing share's exact
bound). What it assumes: the résumés are a sample of those the claim is about, their values'
mean close enough to normal; the texts of one résumé are not independent, so they are averaged
into the résumé's value, never counted as units. One résumé: no interval (a claim about one
résumé's few texts is not one about the model). ``bench_inference_calibration.py --only
seniority_validity`` checks error rates and coverage by simulation through this code.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import CHANCE, InferenceSettings, findings, finish, paired, side_contrast
from resumebias_dagster.core.inference.estimate import Estimate
from resumebias_dagster.core.seniority.metrics.scoring import _score
from resumebias_dagster.core.tables.verdicts import QUALIFICATION_FINDINGS

PREFIX = "validity:"
ACCURACY = QUALIFICATION_FINDINGS["seniority"][0]  # "validity:accuracy"
RANK_DIFFERENCE = f"{PREFIX}rank_difference"
ACCURACY_CHANCE = CHANCE["seniority_accuracy"]
# As criterion validity's (core/jd_audit/validity_stats.SHARE_SPARSE): shares of a few texts
# tie by construction, so the sparse rule reads them as a bulk only where at least half tie.
SHARE_SPARSE = 0.5
RANK_RANGE, GAP_RANGE = (-2.0, 2.0), (-1.0, 1.0)
# Below this many résumés a share's standard error is at least a Bernoulli share's at the
# estimate (sqrt(m (1 - m) / n), the largest a mean of n values in [0, 1] can have): a
# deterministic classifier's shares pile up at 0 and 1, and the t on a few such skewed values
# called a labeller that ignores the résumé better than chance in 8.7% of 300 studies of 6
# résumés (4.0% of 400 with the floor). From 30 the t holds (4.0% at 120) and the floor would
# only cost power.
FEW_RESUMES = 30
LEVELS = ("junior", "mid", "senior")
# The name groups are contrasted with the seniority study's first group (notebook 001's order).
REFERENCE_GROUP = "caucasian_male"
NOTE_ONE_RESUME = "one résumé: no interval; the résumé is the unit, and one résumé's texts are not a sample"


def text_values(rows: pd.DataFrame, exact: bool) -> pd.DataFrame:
    """One row per text (variant_kind, original_idx, variant) of one model's scored rows
    (``metrics.scoring._Scored.rows``): ``right`` (its chance of the true label) and ``rank``
    (its rank difference), exact from the distributions or the mean of its valid runs."""
    right = rows["exp_correct"] if exact else rows["correct"]
    rank = rows["exp_rank_diff"] if exact else rows["rank_diff"]
    frame = pd.DataFrame(
        {
            "variant_kind": rows["variant_kind"].astype(str).to_numpy(),
            "original_idx": rows["original_idx"].to_numpy(),
            "variant": rows["variant"].astype(str).to_numpy(),
            "right": pd.to_numeric(right, errors="coerce").to_numpy(float),
            "rank": pd.to_numeric(rank, errors="coerce").to_numpy(float),
        }
    )
    keys = ["variant_kind", "original_idx", "variant"]
    return frame.groupby(keys, sort=True)[["right", "rank"]].mean().reset_index()


def _per_resume(texts: pd.DataFrame, column: str) -> np.ndarray:
    """Each résumé's mean of ``column`` over its texts that have one, as a (1 x résumés) grid."""
    values = texts.groupby("original_idx", sort=True)[column].mean().to_numpy(float)
    return values[np.isfinite(values)][None, :]


def _meta(model: str, finding: str, family: str, description: str, note: str) -> dict[str, str]:
    return {
        "model": model,
        "study": "seniority",
        "finding": finding,
        "family": family,
        "description": description,
        "note": note,
    }


def _one_resume_note(est: Estimate, note: str) -> str:
    if est.n_resumes[0] == 1:
        return f"{note}; {NOTE_ONE_RESUME}" if note else NOTE_ONE_RESUME
    return note


def _balance_note(levels: pd.Series) -> str:
    """Unequal levels make 1/3 a low bar: a labeller giving the commonest level beats it."""
    counts = levels.value_counts()
    if len(counts) == len(LEVELS) and counts.nunique() == 1:
        return ""
    shown = ", ".join(f"{k} {int(counts.get(k, 0))}" for k in LEVELS)
    return (
        f"levels unequal ({shown} résumés): chance is 1/3 only with as many résumés at each level; a label "
        f"that ignores the résumé but always gives the commonest level is right on {counts.max() / counts.sum():.0%}"
    )


def _share_estimate(grid: np.ndarray) -> Estimate:
    """A share's excess over chance, t over résumés with the tie rules, and below
    ``FEW_RESUMES`` résumés a standard error no smaller than a Bernoulli share's at the estimate
    (``FEW_RESUMES`` docstring)."""
    est = paired(grid - ACCURACY_CHANCE, -ACCURACY_CHANCE, 1 - ACCURACY_CHANCE, sparse_share=SHARE_SPARSE)
    n = est.n_units.astype(float)
    share = np.clip(est.estimate + ACCURACY_CHANCE, 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        floor = np.where(n < FEW_RESUMES, share * (1.0 - share) / n, 0.0)
    extra = np.fmax(est.extra_var, np.nan_to_num(floor - est.se**2, nan=0.0))
    return replace(est, extra_var=np.where(np.isfinite(est.se), extra, est.extra_var))


def _accuracy(model: str, texts: pd.DataFrame, how: str, balance: str, settings) -> list[pd.DataFrame]:
    grid = _per_resume(texts, "right")
    if not grid.size:
        return []
    est = _share_estimate(grid)
    note = "; ".join(n for n in (how, balance) if n)
    description = "texts labelled at the résumé's true level (every wording and name), each résumé's share"
    accuracy = findings(
        _meta(model, ACCURACY, ACCURACY, description, _one_resume_note(est, note)),
        est,
        None,
        "seniority_accuracy",
        "t_resume",
        settings=settings,
    )
    rank = paired(_per_resume(texts, "rank"), *RANK_RANGE)
    description = "predicted minus true level (above 0: rated above their level), each résumé's mean"
    difference = findings(
        _meta(model, RANK_DIFFERENCE, RANK_DIFFERENCE, description, _one_resume_note(rank, how)),
        rank,
        None,
        "rank_difference",
        "t_resume",
        settings=settings,
    )
    return [accuracy, difference]


def _by_group(model: str, demo: pd.DataFrame, named: bool, how: str, settings) -> list[pd.DataFrame]:
    """Accuracy per name group (the name experiment's variants) and each against the first."""
    groups = sorted(pd.unique(demo["variant"]), key=lambda g: (g != REFERENCE_GROUP, g))
    if len(groups) < 2:
        return []
    k = len(groups)
    frames = []
    for group in groups:
        mine = demo[demo["variant"] == group]
        est = _share_estimate(_per_resume(mine, "right"))
        note = f"interval at {1 - 0.05 / k:.2%}: simultaneous over the model's {k} findings by group"
        frames.append(
            findings(
                _meta(
                    model,
                    f"{ACCURACY}:group:{group}",
                    f"{ACCURACY}_by_group",
                    f"texts with {group} names labelled at their true level, each résumé's share",
                    _one_resume_note(est, f"{how}; {note}"),
                ),
                est,
                None,
                "seniority_accuracy",
                "t_resume",
                settings=settings,
                split=np.full(1, float(k)),
            )
        )
    frames += _gaps(model, demo, named, groups, how=how, settings=settings)
    return frames


def _gaps(model: str, demo: pd.DataFrame, named: bool, groups: list[str], *, how: str, settings) -> list[pd.DataFrame]:
    """Each group's accuracy minus the reference group's on the same résumé (names a random
    effect where recorded and recurring)."""
    reference = groups[0]
    y = demo["right"].to_numpy(float)
    ok = np.isfinite(y)
    demo, y = demo[ok], y[ok]
    resume = pd.factorize(demo["original_idx"])[0]
    level = pd.factorize(demo["variant"])[0]
    name = pd.factorize(demo["first_name"].astype(str))[0] if named else None
    frames = []
    for group in groups[1:]:
        side = np.where(demo["variant"] == group, 1, np.where(demo["variant"] == reference, -1, 0))
        est = side_contrast(
            y, resume, side, name, level, low=GAP_RANGE[0], high=GAP_RANGE[1], sparse_share=SHARE_SPARSE
        )
        test, note = ("t_resume_name" if name is not None else "t_resume"), how
        if not np.isfinite(est.se[0]) and est.n_resumes[0] >= 2:
            est = side_contrast(y, resume, side, low=GAP_RANGE[0], high=GAP_RANGE[1], sparse_share=SHARE_SPARSE)
            test, note = "t_resume", f"{how}; one name per group: this contrasts those names, not the groups"
        if est.n_resumes[0] < 2:
            test, note = "t_resume", f"{how}; a group contrast needs two résumés or more: no interval"
        frames.append(
            findings(
                _meta(
                    model,
                    f"{PREFIX}accuracy_gap:{group}",
                    f"{PREFIX}accuracy_gap",
                    f"accuracy: {group} minus {reference} names on the same résumé",
                    note,
                ),
                est,
                None,
                "validity_gap",
                test,
                settings=settings,
            )
        )
    return frames


def seniority_validity(
    rows: pd.DataFrame, predictions: pd.DataFrame, settings: InferenceSettings
) -> list[pd.DataFrame]:
    """The validity findings of every model: frames for ``inference.finish``. ``rows``: the
    scored rows (``metrics.scoring._Scored.rows``), in the order of ``predictions`` (the metrics'
    input table), whose true levels and names (where recorded) they take."""
    first = (
        predictions["name"].astype("string").str.split().str[0].to_numpy(object)
        if "name" in predictions.columns
        else np.full(len(rows), None, dtype=object)
    )
    rows = rows.assign(true_level=predictions["true_seniority"].astype(str).to_numpy(), first_name=first)
    frames: list[pd.DataFrame] = []
    for model, mine in rows.groupby("model", sort=True, observed=True):
        exact = bool(mine["has_dist"].all())
        how = "exact, from label distributions" if exact else "sampled: share of valid runs"
        texts = text_values(mine, exact)
        balance = _balance_note(mine.drop_duplicates("original_idx")["true_level"])
        frames += _accuracy(str(model), texts, how, balance, settings)
        demo = texts[texts["variant_kind"] == "demographic"]
        if len(demo):
            firsts = mine[mine["variant_kind"].astype(str) == "demographic"]
            firsts = firsts.assign(variant=firsts["variant"].astype(str)).drop_duplicates(["original_idx", "variant"])
            demo = demo.merge(firsts[["original_idx", "variant", "first_name"]], on=["original_idx", "variant"])
            named = bool(demo["first_name"].notna().all())
            frames += _by_group(str(model), demo, named, how, settings)
    return [f for f in frames if len(f)]


def seniority_validity_verdicts(
    predictions: pd.DataFrame, settings: InferenceSettings, rows: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The ``Verdicts`` rows of the validity findings alone, under their own multiplicity control
    (``rows``: the predictions' scored rows where the caller has them already)."""
    if not len(predictions):
        return finish([], settings)
    rows = _score(predictions).rows if rows is None else rows
    return finish(seniority_validity(rows, predictions, settings), settings)
