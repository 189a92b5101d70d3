"""Statistics of the job-description audit (study 003): score changes against the baseline,
with the résumé as the unit.

Input of ``fit_effects``: one row per scored run with ``model, jd, variant, run, score``
(``variant == "baseline"`` marks the baseline résumé); optionally ``resume_id`` (the base
résumé; one résumé when absent), ``expected_score`` (the mean of the model's 1-10
distribution, for models that give one), ``axis``, ``arm``, ``recommend``. A NaN score is a
failed run: excluded and counted (``n_failed_*``).

Values. A text is one (model, jd, résumé, variant). Its value is the model's exact expected
score when every row of the model carries one (an embedded LLM: no sampling noise at all),
else the mean of its valid runs. Runs of one prompt are repeated measures of that prompt,
never units: they only make its value more precise.

Cells. One output row per (model, jd, variant != baseline):

* ``delta``: the mean over the cell's résumés of (variant value - baseline value); the
  résumés with both values are ``n_resumes``.
* Two or more résumés (``test`` = ``sign_flip``): the studentised sign-flip randomisation
  test over résumés (``core/inference/randomization.py``, exact up to 2**14 flips), and the
  95% interval of ``core/inference/estimate.py`` (the t over résumés, widened where résumés
  tie or all agree, clipped to -9..9). No sign-flip p below ``2 / 2**G`` is possible: five
  résumés can never reach 0.05, and the minimal detectable effect (``mde``) says so
  (infinite). The p shown is the larger of the test's and the interval's own.
* One résumé (study 003's own design): the claim can only be about that résumé. Sampled
  runs (``run_permutation``): the exact permutation test of its variant runs against its
  baseline runs, with Welch's interval; both sides' runs all alike: the no-spread bound
  with the runs as the units, each side at half the level; exact expectations: the change is
  known exactly for that résumé and there is nothing to test (p NaN, ``note`` says so).
* ``q_value``: the adjusted p of ``core/inference/multiplicity.py``: Holm over the model's
  families (arm, axis), Benjamini–Hochberg within. ``significant`` = ``q_value <= alpha`` =
  ``verdict == "beyond_noise"``; ``tost_p``, ``mde`` and ``verdict`` as in
  ``catalog/inference.yaml`` (margin ``fit_delta``); ``mde`` through the multiplicity control.
* ``placebo_p``: the probe cell against the placebo arm as an empirical null: the share of
  the model's placebo cells whose |t| is at least the cell's, (1 + hits) / (1 + placebo
  cells). Edits that cannot matter show what a model's noise (and the test's own
  miscalibration, if any) does; a cell beyond most of them is unusual for this model.
* ``noise_floor`` (per model, descriptive): the 95th percentile of |delta| over the model's
  placebo cells; ``clears_floor = |delta| > noise_floor``.
* Recommend rate (re-cinq's yes/no/maybe): with a ``recommend`` column, each side's share of
  "yes" over its runs that answered one (``n_recommend_*``), and their difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import (
    Estimate,
    InferenceSettings,
    classify,
    family_adjusted,
    paired,
    run_permutation_p,
    sign_flip_p,
    smallest_p,
)
from resumebias_dagster.core.inference.power import power_columns
from resumebias_dagster.core.jd_audit.fit_task import RECOMMENDATIONS
from resumebias_dagster.core.tables import FitEffects, FitModelSummary, columns, empty_table

REQUIRED_COLUMNS = ("model", "jd", "variant", "run", "score")
BASELINE = "baseline"
FLOOR_QUANTILE = 0.95
# A difference of two 1-10 scores lies in [-9, 9]; one score in [1, 10].
SCORE_RANGE = (-9.0, 9.0)
SCORE_LOW, SCORE_HIGH = 1.0, 10.0

# The tables' columns, in order, as core/tables/ declares them.
EFFECT_COLUMNS = tuple(columns(FitEffects))
MODEL_SUMMARY_COLUMNS = tuple(columns(FitModelSummary))


def split_variant(variant: str) -> tuple[str, str]:
    """(axis, level) of a variant name: the axis is the text before the first underscore."""
    axis, _, level = variant.partition("_")
    return axis, level


def recommend_yes(scores: pd.DataFrame) -> np.ndarray:
    """Per row: 1.0 for "yes", 0.0 for "no"/"maybe", NaN without a recommendation."""
    if "recommend" not in scores.columns:
        return np.full(len(scores), np.nan)
    raw = scores["recommend"]
    # A handful of distinct answers: normalise those, not a million rows.
    codes, uniques = pd.factorize(raw)
    text = pd.Series(uniques, dtype=object).astype(str).str.strip().str.lower()
    bad = ~text.isin([*RECOMMENDATIONS, ""]).to_numpy()  # "": none (an imported file's empty cell)
    if bad.any():
        i = int(np.flatnonzero(np.isin(codes, np.flatnonzero(bad)))[0])
        raise ValueError(f"fit scores: recommend {raw.iloc[i]!r} (row {i}) is not one of {', '.join(RECOMMENDATIONS)}")
    value = np.append(np.where(text == "", np.nan, (text == "yes").to_numpy(dtype=float)), np.nan)
    return value[codes]  # code -1 (missing) picks the appended NaN


def _codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    codes, uniques = pd.factorize(values, sort=True)
    if (codes < 0).any():
        raise ValueError(f"fit scores: column {values.name!r} has missing values")
    return codes.astype(np.int64), pd.Index(uniques)


def _checked_scores(scores: pd.DataFrame) -> np.ndarray:
    """The score column as floats (NaN: a failed run); refuses missing columns and non-numbers."""
    missing = [c for c in REQUIRED_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"fit scores: missing columns {missing}; expected {', '.join(REQUIRED_COLUMNS)}")
    score = pd.to_numeric(scores["score"], errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(score) & scores["score"].notna().to_numpy()
    if bad.any():
        raise ValueError(f"fit scores: score {scores['score'].iloc[np.argmax(bad)]!r} is not a number")
    return score


class _Texts:
    """The score rows coded and reduced to one value per text (model, jd, résumé, variant)."""

    def __init__(self, scores: pd.DataFrame, score: np.ndarray):
        self.m, self.models = _codes(scores["model"])
        self.j, self.jds = _codes(scores["jd"])
        self.v, self.variants = _codes(scores["variant"].astype(str))
        if BASELINE not in self.variants:
            raise ValueError(f"fit scores: no {BASELINE!r} rows; every (model, jd) needs its baseline runs")
        base = self.variants.get_loc(BASELINE)
        assert isinstance(base, int)  # factorized values are distinct: one position
        self.base = base
        resumes = (
            scores["resume_id"].astype(str) if "resume_id" in scores.columns else pd.Series("0", index=scores.index)
        )
        self.r, self.resumes = _codes(resumes.rename("resume_id"))
        run, runs = _codes(scores["run"])
        self.shape = (len(self.models), len(self.jds), len(self.variants), len(self.resumes))
        self.text = np.ravel_multi_index((self.m, self.j, self.v, self.r), self.shape)
        row_key = self.text * len(runs) + run
        if len(np.unique(row_key)) < len(row_key):
            first = scores.iloc[int(np.argmax(pd.Series(row_key).duplicated().to_numpy()))]
            where = ", ".join(f"{c}={first[c]!r}" for c in ("model", "jd", "variant", "run"))
            raise ValueError(
                f"fit scores: the same run occurs twice ({where}"
                f"{', resume_id=' + repr(first['resume_id']) if 'resume_id' in scores.columns else ''})"
            )
        size = int(np.prod(self.shape))
        self.score = score
        valid = ~np.isnan(score)
        self.rows = np.bincount(self.text, minlength=size)
        self.n_valid = np.bincount(self.text[valid], minlength=size)
        self.present = self.rows > 0
        expected = (
            pd.to_numeric(scores["expected_score"], errors="coerce").to_numpy(float)
            if "expected_score" in scores.columns
            else np.full(len(scores), np.nan)
        )
        # A model is scored exactly when every one of its rows carries its expectation.
        has = np.bincount(self.m, weights=~np.isnan(expected), minlength=len(self.models))
        self.exact = has == np.bincount(self.m, minlength=len(self.models))
        use_exact = self.exact[self.m]
        with np.errstate(invalid="ignore", divide="ignore"):
            sampled = np.bincount(self.text[valid], weights=score[valid], minlength=size) / self.n_valid
            exact = np.bincount(self.text, weights=np.where(use_exact, expected, 0.0), minlength=size) / self.rows
        self.value = np.where(self.exact[np.unravel_index(np.arange(size), self.shape)[0]], exact, sampled)
        self.value[~self.present] = np.nan
        self.yes = recommend_yes(scores)
        answered = ~np.isnan(self.yes)
        self.n_rec = np.bincount(self.text[answered], minlength=size)
        self.rec_yes = np.bincount(self.text[answered], weights=self.yes[answered], minlength=size)

    def grid(self, x: np.ndarray) -> np.ndarray:
        return x.reshape(self.shape)

    def runs(self, texts: np.ndarray) -> np.ndarray:
        """The valid runs of each of ``texts`` (rows padded with NaN)."""
        valid = ~np.isnan(self.score)
        pick = np.isin(self.text, texts) & valid
        order = np.argsort(self.text[pick], kind="stable")
        keys, scores = self.text[pick][order], self.score[pick][order]
        width = int(max(1, self.n_valid.max()))
        out = np.full((len(texts), width), np.nan)
        at = np.searchsorted(texts, keys)
        slot = np.arange(len(keys)) - np.searchsorted(keys, keys)
        out[at, slot] = scores
        return out


def _labels(scores: pd.DataFrame, variants: pd.Index, arms: Mapping[str, str] | None) -> pd.DataFrame:
    """(axis, level, arm) per variant: from the table's columns where it has them, else the
    axis from the name and the arm from ``arms`` (default: the catalog's probe axes)."""
    given = [c for c in ("axis", "arm") if c in scores.columns]
    first = scores[given].groupby(scores["variant"].astype(str)).first() if given else pd.DataFrame()
    out = pd.DataFrame(index=variants)
    axis_level = [split_variant(v) for v in variants]
    out["axis"] = [a for a, _ in axis_level]
    out["level"] = [lv for _, lv in axis_level]
    if "axis" in given:
        out["axis"] = first["axis"].astype(str).reindex(variants).to_numpy()
        out["level"] = [v[len(a) + 1 :] if v.startswith(f"{a}_") else v for v, a in zip(variants, out["axis"])]
    if "arm" in given:
        out["arm"] = first["arm"].astype(str).reindex(variants).to_numpy()
    else:
        if arms is None:
            from resumebias_dagster.core.jd_audit.probes import axis_arms

            arms = axis_arms()
        out["arm"] = [arms.get(a, "probe") for a in out["axis"]]
    return out


def _one_resume(t: _Texts, v_text: np.ndarray, b_text: np.ndarray, settings: InferenceSettings):
    """Cells with one résumé and sampled runs: the runs are the units (a claim about that
    résumé). The permutation p of its variant runs against its baseline runs, Welch's
    standard error and degrees of freedom, the runs on the smaller side (the units the
    no-spread bound counts) and, where both sides' runs are all alike, the shared change with
    how far unseen runs could move it (each side's mean anywhere in 1..10 for the share of
    runs the sample can have missed)."""
    vr, br = t.runs(np.sort(v_text)), t.runs(np.sort(b_text))
    vr, br = vr[np.searchsorted(np.sort(v_text), v_text)], br[np.searchsorted(np.sort(b_text), b_text)]
    p = run_permutation_p(br, vr, seed=settings.seed)
    nv, nb = (~np.isnan(vr)).sum(axis=1), (~np.isnan(br)).sum(axis=1)

    def variance(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.nansum(x, axis=1) / n
            return np.nansum((x - mean[:, None]) ** 2, axis=1) / (n - 1)

    with np.errstate(invalid="ignore", divide="ignore"):
        a1, a2 = variance(vr, nv) / nv, variance(br, nb) / nb
        se = np.sqrt(a1 + a2)
        df = (a1 + a2) ** 2 / (a1**2 / (nv - 1) + a2**2 / (nb - 1))
        v_mean, b_mean = np.nanmean(vr, axis=1), np.nanmean(br, axis=1)
    df = np.where((a1 + a2) > 0, df, nv + nb - 2.0)
    constant = (np.nanmax(vr, axis=1) == np.nanmin(vr, axis=1)) & (np.nanmax(br, axis=1) == np.nanmin(br, axis=1))
    tie = np.where(constant & (nv >= 1) & (nb >= 1), v_mean - b_mean, np.nan)
    # The change can fall by (v - 1) + (10 - b) and rise by (10 - v) + (b - 1) at most.
    low = tie - (v_mean - SCORE_LOW) - (SCORE_HIGH - b_mean)
    high = tie + (SCORE_HIGH - v_mean) + (b_mean - SCORE_LOW)
    return p, se, df, np.minimum(nv, nb), tie, low, high


def _mean_where(mask: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Row means of ``x`` over ``mask`` (NaN for an empty row)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mask, x, 0.0).sum(axis=1) / mask.sum(axis=1)


class _Cells(NamedTuple):
    """The (model, jd, variant) cells with any variant text, as coordinates of the text grid."""

    m: np.ndarray
    j: np.ndarray
    v: np.ndarray
    diffs: np.ndarray  # (cells, résumés): variant value - baseline value; NaN where a side is missing

    def side_sum(self, t: _Texts, x: np.ndarray, variant: np.ndarray) -> np.ndarray:
        """Per cell: ``x`` of one side's texts (``variant``) summed over the cell's résumés."""
        both = ~np.isnan(self.diffs)  # résumés in the cell
        return np.where(both, t.grid(x)[self.m, self.j, variant], 0).sum(axis=1)


def _cells(t: _Texts) -> _Cells:
    """Every (model, jd, variant) with a variant text; the baseline is no cell of its own."""
    value = t.grid(t.value)
    d = value - value[:, :, t.base : t.base + 1, :]  # (model, jd, variant, résumé)
    cell_present = np.any(t.grid(t.present), axis=3)
    cell_present[:, :, t.base] = False
    cm, cj, cv = np.nonzero(cell_present)
    return _Cells(cm, cj, cv, d[cm, cj, cv])


def _cell_tests(t: _Texts, c: _Cells, settings: InferenceSettings) -> tuple[Estimate, np.ndarray, np.ndarray]:
    """Each cell's change with its p and test: the sign-flip test over two or more résumés,
    the permutation test of the runs of one résumé with sampled runs, none otherwise. The p
    is the larger of the test's and the interval's own (a verdict never disagrees with it)."""
    est = paired(c.diffs, *SCORE_RANGE)
    g = est.n_resumes
    p = np.full(len(c.m), np.nan)
    many = g >= 2
    p[many] = sign_flip_p(c.diffs[many], settings.exact_max, settings.draws, settings.seed)
    test = np.where(many, "sign_flip", "").astype(object)
    single = (g == 1) & ~t.exact[c.m]
    se, df, n_units = est.se.copy(), est.df.copy(), est.n_units.copy()
    extra, tie, low, high = est.extra_var.copy(), est.tie.copy(), est.low.copy(), est.high.copy()
    arms = np.ones(len(c.m))
    exact_one = (g == 1) & t.exact[c.m]
    tie[exact_one] = np.nan  # one résumé scored exactly: its change is known, nothing to bound or test
    if single.any():
        r_only = np.nanargmax(~np.isnan(c.diffs[single]), axis=1)
        v_text = np.ravel_multi_index((c.m[single], c.j[single], c.v[single], r_only), t.shape)
        b_text = np.ravel_multi_index((c.m[single], c.j[single], np.full(single.sum(), t.base), r_only), t.shape)
        p[single], se[single], df[single], n_units[single], tie[single], low[single], high[single] = _one_resume(
            t, v_text, b_text, settings
        )
        extra[single], arms[single] = 0.0, 2.0  # two samples of runs: the bound splits its level over both
        test[single] = "run_permutation"
    out = Estimate(
        est.estimate,
        se,
        df,
        g,
        n_units=n_units,
        extra_var=extra,
        tie=tie,
        low=low,
        high=high,
        arms=arms,
        clip=SCORE_RANGE,
    )
    return out, np.fmax(p, out.p_value()), test


def _cell_verdicts(
    c: _Cells, est: Estimate, p: np.ndarray, test: np.ndarray, *, labels: pd.DataFrame, settings: InferenceSettings
) -> dict[str, np.ndarray]:
    """The q, TOST p, minimal detectable effect and verdict of each cell, its labels added."""
    arm = labels["arm"].to_numpy()[c.v]
    axis = labels["axis"].to_numpy()[c.v]
    family = pd.factorize(pd.Series(c.m).astype(str) + "|" + arm + "|" + axis)[0]
    q = family_adjusted(p, family, c.m, settings.alpha)
    margin = settings.margins["fit_delta"]
    tost = np.fmax(est.tost_p(margin), est.unseen_floor(margin))
    # No sign-flip test over G résumés goes below 2 / 2**G: the power respects that floor.
    floor = np.where(test == "sign_flip", smallest_p(est.n_resumes), 0.0)
    mde, _ = power_columns(
        est,
        family,
        c.m,
        np.isfinite(p),
        effect=settings.detect["fit_delta"],
        alpha=settings.alpha,
        power=settings.power,
        floor_p=floor,
        seed=settings.seed,
    )
    return {
        "axis": axis,
        "level": labels["level"].to_numpy()[c.v],
        "arm": arm,
        "q_value": q,
        "tost_p": tost,
        "mde": np.where(test == "", np.nan, mde),
        "verdict": classify(q, tost, est.estimate, margin, settings.alpha),
    }


def _recommend_rates(t: _Texts, c: _Cells) -> dict[str, np.ndarray]:
    """Each side's count of runs that answered yes/no/maybe, its share of "yes", and the change."""
    base_v = np.full(len(c.m), t.base)
    n_rec_b, n_rec_v = c.side_sum(t, t.n_rec, base_v), c.side_sum(t, t.n_rec, c.v)
    with np.errstate(invalid="ignore", divide="ignore"):
        rec_b, rec_v = c.side_sum(t, t.rec_yes, base_v) / n_rec_b, c.side_sum(t, t.rec_yes, c.v) / n_rec_v
    return {
        "n_recommend_baseline": n_rec_b.astype(np.int64),
        "n_recommend_variant": n_rec_v.astype(np.int64),
        "baseline_recommend_rate": rec_b,
        "variant_recommend_rate": rec_v,
        "recommend_rate_delta": rec_v - rec_b,
    }


def _notes(t: _Texts, c: _Cells, g: np.ndarray) -> np.ndarray:
    """Why a cell has no test, or what its test can claim ("" for a test over résumés)."""
    exact = t.exact[c.m]
    note = np.full(len(c.m), "", dtype=object)
    note[g == 0] = "no résumé with both a baseline and a variant value"
    note[~t.grid(t.present)[c.m, c.j, t.base].any(axis=1)] = "no baseline runs for this model and jd"
    note[(g == 1) & exact] = (
        "one résumé scored exactly: the change on that résumé is exact, with no population of résumés to generalise to"
    )
    note[(g == 1) & ~exact] = "one résumé: a claim about that résumé only (its runs permuted)"
    return note


def _add_floor_columns(effects: pd.DataFrame, snapshots: Mapping[str, str] | None) -> None:
    """Significance, the model's noise floor and placebo p, and its resolved models."""
    effects["significant"] = effects["verdict"] == "beyond_noise"
    effects["noise_floor"] = effects["model"].map(noise_floors(effects)).astype(float).to_numpy()
    absd = effects["delta"].abs()
    effects["clears_floor"] = (absd > effects["noise_floor"]) | (effects["noise_floor"].isna() & absd.notna())
    effects["placebo_p"] = placebo_p(effects)
    effects["resolved_models"] = effects["model"].map({} if snapshots is None else snapshots).astype(object)


def fit_effects(
    scores: pd.DataFrame,
    arms: Mapping[str, str] | None = None,
    settings: InferenceSettings | None = None,
    snapshots: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Effect of every variant against its baseline, per (model, jd); see the module docstring.

    ``arms`` maps axis -> arm where ``scores`` has no ``arm`` column (default: the catalog's
    ``probe_axes.yaml``). ``snapshots`` gives each model's ``resolved_models``. A
    ``FitEffects`` table, typed and empty for no scores.
    """
    settings = settings or InferenceSettings()
    if not len(scores):
        return empty_table(FitEffects)
    t = _Texts(scores, _checked_scores(scores))
    c = _cells(t)
    est, p, test = _cell_tests(t, c, settings)
    low, high = est.interval(0.95)
    value = t.grid(t.value)
    base_v = np.full(len(c.m), t.base)
    effects = pd.DataFrame(
        {
            "model": t.models[c.m],
            "jd": t.jds[c.j],
            "variant": t.variants[c.v],
            "n_resumes": est.n_resumes.astype(np.int64),
            "n_baseline": c.side_sum(t, t.n_valid, base_v).astype(np.int64),
            "n_variant": c.side_sum(t, t.n_valid, c.v).astype(np.int64),
            "n_failed_baseline": c.side_sum(t, t.rows - t.n_valid, base_v).astype(np.int64),
            "n_failed_variant": c.side_sum(t, t.rows - t.n_valid, c.v).astype(np.int64),
            "baseline_mean": _mean_where(~np.isnan(c.diffs), value[c.m, c.j, t.base]),
            "variant_mean": _mean_where(~np.isnan(c.diffs), value[c.m, c.j, c.v]),
            "delta": est.estimate,
            "se": est.se_eff,
            "df": est.df,
            "ci_low": low,
            "ci_high": high,
            "t": est.t(),
            "p_value": p,
            "test": test,
            **_cell_verdicts(c, est, p, test, labels=_labels(scores, t.variants, arms), settings=settings),
            **_recommend_rates(t, c),
            "note": _notes(t, c, est.n_resumes),
        }
    )
    _add_floor_columns(effects, snapshots)
    return effects[list(EFFECT_COLUMNS)]


def noise_floors(effects: pd.DataFrame, quantile: float = FLOOR_QUANTILE) -> pd.Series:
    """Per model: the ``quantile`` of ``|delta|`` over its placebo cells (models without: absent)."""
    placebo = effects.loc[(effects["arm"] == "placebo") & effects["delta"].notna(), ["model", "delta"]]
    return placebo["delta"].abs().groupby(placebo["model"]).quantile(quantile)


def placebo_p(effects: pd.DataFrame) -> np.ndarray:
    """Each cell's |t| against its model's placebo cells' |t| (the empirical null): (1 + the
    placebo cells at least as extreme) / (1 + placebo cells); NaN without placebo cells or t."""
    out = np.full(len(effects), np.nan)
    abs_t = effects["t"].abs().to_numpy(float)
    placebo = (effects["arm"] == "placebo").to_numpy() & np.isfinite(abs_t)
    for model in effects["model"].unique():
        mine = (effects["model"] == model).to_numpy()
        null = np.sort(abs_t[mine & placebo])
        if not len(null):
            continue
        at = mine & ~np.isnan(abs_t)
        hits = len(null) - np.searchsorted(null, abs_t[at] * (1 - 1e-9), side="left")
        out[at] = (1.0 + hits) / (1.0 + len(null))
    return out


def model_summary(effects: pd.DataFrame) -> pd.DataFrame:
    """One row per model.

    ``bias_index``: the root mean square of the probe arm's true effects, in score points,
    estimated without the noise: ``sqrt(max(0, mean(delta**2 - se**2)))`` over the probe cells
    (``E[delta**2] = effect**2 + se**2``), so a model's index does not shrink or grow with its
    run count, temperature or sampling noise (the mean |delta| difference it replaced read a
    0.5-point effect on every cell as 0.27 at se 0.3 and as 0.05 at se 1.8). A cell without a
    standard error (one résumé scored exactly) has no noise: se 0. ``placebo_index`` is the
    same over the placebo cells: about 0 when the tests are calibrated.
    ``n_significant``: cells beyond noise; ``largest_penalty``: the most negative beyond-noise
    delta of the probe arm, with its jd, variant and q; ``prompt_injection_mean_delta`` /
    ``anonymize_mean_delta``: mean delta of those arms' cells.
    """
    if not len(effects):
        return empty_table(FitModelSummary)
    e = effects
    models = pd.Index(sorted(e["model"].unique()))
    by = e.groupby("model", sort=True)
    probe, placebo = e["arm"] == "probe", e["arm"] == "placebo"
    absd = e["delta"].abs()
    se = e["se"].where(e["se"].notna() | e["delta"].isna(), 0.0)
    excess = e["delta"] ** 2 - se**2

    def count(mask: pd.Series) -> pd.Series:
        return mask.groupby(e["model"]).sum().reindex(models, fill_value=0).astype(np.int64)

    def mean_of(x: pd.Series, mask: pd.Series) -> pd.Series:
        return x[mask].groupby(e["model"][mask]).mean().reindex(models)

    sig = e["significant"].astype(bool)
    penalties = e[probe & sig & (e["delta"] < 0)].sort_values(["model", "delta"]).drop_duplicates("model")
    penalties = penalties.set_index("model").reindex(models)
    summary = pd.DataFrame(
        {
            "model": models,
            "n_cells": by.size().reindex(models).to_numpy(),
            "n_significant": count(sig).to_numpy(),
            "n_equivalent": count(e["verdict"] == "equivalent").to_numpy(),
            "n_untestable": count(e["p_value"].isna()).to_numpy(),
            "n_probe_cells": count(probe).to_numpy(),
            "n_probe_significant": count(probe & sig).to_numpy(),
            "n_placebo_cells": count(placebo).to_numpy(),
            "n_placebo_significant": count(placebo & sig).to_numpy(),
            "noise_floor": by["noise_floor"].first().reindex(models).to_numpy(),
            "probe_mean_abs_delta": mean_of(absd, probe).to_numpy(),
            "placebo_mean_abs_delta": mean_of(absd, placebo).to_numpy(),
            "bias_index": np.sqrt(np.maximum(0.0, mean_of(excess, probe).to_numpy())),
            "placebo_index": np.sqrt(np.maximum(0.0, mean_of(excess, placebo).to_numpy())),
            "largest_penalty": penalties["delta"].to_numpy(),
            "largest_penalty_jd": penalties["jd"].fillna("").to_numpy(),
            "largest_penalty_variant": penalties["variant"].fillna("").to_numpy(),
            "largest_penalty_q": penalties["q_value"].to_numpy(),
            "prompt_injection_mean_delta": mean_of(e["delta"], e["arm"] == "prompt_injection").to_numpy(),
            "anonymize_mean_delta": mean_of(e["delta"], e["arm"] == "anonymize").to_numpy(),
        }
    )
    for name in ("bias_index", "placebo_index"):
        summary[name] = summary[name].where(
            mean_of(excess, probe if name == "bias_index" else placebo).notna().to_numpy()
        )
    resolved = by["resolved_models"].first() if "resolved_models" in e.columns else pd.Series(dtype=object)
    summary["resolved_models"] = resolved.reindex(models).astype(object).to_numpy()
    return summary[list(MODEL_SUMMARY_COLUMNS)]


def text_values(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per text (model, jd, resume_id, variant) with its value (exact expectation or
    mean of valid runs, as the effects use) and, where the rows carry one, its ``name``."""
    t = _Texts(scores, _checked_scores(scores))
    at = np.flatnonzero(t.present)
    m, j, v, r = np.unravel_index(at, t.shape)
    out = pd.DataFrame(
        {
            "model": t.models[m],
            "jd": t.jds[j],
            "resume_id": t.resumes[r],
            "variant": t.variants[v],
            "value": t.value[at],
            "exact": t.exact[m],
        }
    )
    if "name" in scores.columns:
        names = pd.Series(scores["name"].to_numpy(object)).groupby(t.text).first()
        out["name"] = names.reindex(at).to_numpy(object)
    return out
