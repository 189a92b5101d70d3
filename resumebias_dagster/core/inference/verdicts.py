"""From estimates to verdicts: one row per finding, with its interval, p, adjusted p,
equivalence test, minimal detectable effect, power and verdict (``catalog/inference.yaml``
says what each verdict means and declares the margins).

A study module builds ``findings(...)`` frames (what was estimated, how, and the p of its
test), concatenates them and calls ``finish``: multiplicity control over the declared
families of each model (``multiplicity.family_adjusted``), then the verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from resumebias_dagster.core.inference.estimate import Estimate
from resumebias_dagster.core.inference.multiplicity import family_adjusted
from resumebias_dagster.core.inference.randomization import smallest_p
from resumebias_dagster.core.inference.settings import UNITS, InferenceSettings
from resumebias_dagster.core.tables import Verdicts, columns, conform, empty_table

VERDICTS = ("beyond_noise", "equivalent", "within_noise", "inconclusive")
VERDICT_COLUMNS = tuple(columns(Verdicts))
# What each test column value means, written once for every table that names its test.
TESTS = {
    "t_resume": "t over résumés (paired, résumé-level means)",
    "t_resume_name": "t over résumés with the names' own variance added where names recur on several résumés",
    "sign_flip": "studentised sign-flip randomisation over résumés",
    "t_jd": "t over job descriptions, conditional on one résumé",
    "run_permutation": "exact permutation of runs, conditional on one résumé",
    "log_ratio_t": "t of the log ratio of rates (delta method) over résumés and names, against every other group",
}


def classify(adjusted_p, tost_p, estimate, margin, alpha: float, *, ratio: bool = False) -> np.ndarray:
    """The verdict of each finding (module docstring of catalog/inference.yaml)."""
    adjusted_p, tost_p, estimate = (np.asarray(x, dtype=float) for x in (adjusted_p, tost_p, estimate))
    margin = np.broadcast_to(np.asarray(margin, dtype=float), estimate.shape)
    inside = estimate >= margin if ratio else np.abs(estimate) < margin
    out = np.where(inside, "within_noise", "inconclusive").astype(object)
    out[tost_p < alpha] = "equivalent"
    out[adjusted_p <= alpha] = "beyond_noise"
    out[np.isnan(estimate)] = "inconclusive"
    return out


def findings(
    meta: Mapping[str, object],
    est: Estimate,
    p: np.ndarray,
    kind: str,
    test,
    *,
    settings: InferenceSettings,
    ratio: bool = False,
    interval: tuple[np.ndarray, np.ndarray] | None = None,
    tost: np.ndarray | None = None,
) -> pd.DataFrame:
    """Rows of findings of one kind: ``meta`` gives the model, study, finding, family,
    description and note columns (scalars or arrays); ``est`` the estimates; ``p`` their
    tests' p-values; ``test`` a ``TESTS`` key (one, or one per row). For ``ratio`` findings
    the estimate is on the log scale and is shown as a ratio (equivalence: the lower 90% bound at or above the margin). ``interval`` (95%, on
    the estimate's shown scale) and ``tost`` replace the t-based ones where a study computes
    them its own way (impact ratios: against a reference chosen from the data)."""
    tests = np.broadcast_to(np.asarray(test, dtype=object), (len(est),))
    unknown = sorted(set(tests) - set(TESTS))
    if unknown:
        raise ValueError(f"unknown test {unknown[0]!r}; one of {sorted(TESTS)}")
    margin = settings.margins[kind]
    given_interval, given_tost = interval, tost
    low, high = est.interval(0.95)
    if ratio:
        with np.errstate(invalid="ignore", divide="ignore"):
            tost = stats.t.sf((est.estimate - np.log(margin)) / est.se, est.df)
        tost = np.where(est.se == 0, np.where(est.estimate >= np.log(margin), 0.0, 1.0), tost)
        tost = np.where(est.df >= 1, tost, np.nan)
        value, low, high = np.exp(est.estimate), np.exp(low), np.exp(high)
        mde = np.exp(-est.mde(settings.alpha, settings.power))  # the smallest detectable drop, as a ratio
        power = est.power_at(np.log(settings.detect[kind]), settings.alpha)
    else:
        tost = est.tost_p(margin)
        value = est.estimate
        mde = est.mde(settings.alpha, settings.power)
        power = est.power_at(settings.detect[kind], settings.alpha)
    if given_interval is not None:
        low, high = (np.asarray(x, dtype=float) for x in given_interval)
    if given_tost is not None:
        tost = np.asarray(given_tost, dtype=float)
    p = np.asarray(p, dtype=float)
    flips = tests == "sign_flip"
    if flips.any():
        # No flip test over G résumés reaches p below 2 / 2**G: what it can detect is limited by that too.
        blocked = flips & (smallest_p(est.n_resumes) > settings.alpha)
        mde = np.where(blocked, np.inf, mde)
        power = np.where(blocked, 0.0, power)
    k = len(est)
    frame = pd.DataFrame({c: np.broadcast_to(np.asarray(v, dtype=object), (k,)) for c, v in meta.items()})
    frame["kind"] = kind
    frame["unit"] = UNITS[kind]
    frame["estimate"] = value
    frame["ci_low"], frame["ci_high"] = low, high
    frame["se"] = est.se
    frame["df"] = est.df
    frame["p"] = p
    frame["tost_p"] = tost
    frame["margin"] = margin
    frame["mde"] = mde
    frame["effect_to_detect"] = settings.detect[kind]
    frame["power"] = power
    frame["n_resumes"] = est.n_resumes.astype(np.int64)
    frame["n_names"] = (np.zeros(k) if est.n_names is None else np.broadcast_to(est.n_names, (k,))).astype(np.int64)
    frame["test"] = tests
    frame["ratio"] = ratio
    return frame


def finish(frames: list[pd.DataFrame], settings: InferenceSettings) -> pd.DataFrame:
    """All findings with their adjusted p (families within each model) and verdicts: the
    ``Verdicts`` table."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_table(Verdicts)
    t = pd.concat(frames, ignore_index=True)
    # Families are ranked within a model, or within a model's scope where the rows name one
    # (the fit audit keeps each arm apart: prompt injection never loosens the probes).
    scope_name = t["model"].astype(str) + ("\x1f" + t["scope"].astype(str) if "scope" in t.columns else "")
    family = pd.factorize(scope_name + "\x1f" + t["family"].astype(str))[0]
    scope = pd.factorize(scope_name)[0]
    gate = pd.factorize(t["model"].astype(str))[0]
    t["q"] = family_adjusted(t["p"].to_numpy(float), family, scope, settings.alpha, gate)
    ratio = t["ratio"].to_numpy(bool)
    verdict = np.empty(len(t), dtype=object)
    for flag in (False, True):
        at = ratio == flag
        if at.any():
            # A ratio's equivalence and "inside" compare the ratio itself with its margin.
            verdict[at] = classify(
                t.loc[at, "q"],
                t.loc[at, "tost_p"],
                t.loc[at, "estimate"],
                t.loc[at, "margin"],
                settings.alpha,
                ratio=flag,
            )
    t["verdict"] = verdict
    if "note" not in t.columns:
        t["note"] = ""
    t["note"] = t["note"].fillna("").astype(str)
    return conform(t.drop(columns=[c for c in ("ratio", "scope") if c in t.columns]), Verdicts)


def verdict_records(verdicts: pd.DataFrame) -> list[dict]:
    """The verdicts as JSON-able objects, one per finding (NaN and infinities become null)."""
    records = []
    for row in verdicts.to_dict("records"):
        out = {}
        for key, value in row.items():
            if isinstance(value, (float, np.floating)):
                value = float(value) if np.isfinite(value) else None
            elif isinstance(value, np.integer):
                value = int(value)
            out[key] = value
        records.append(out)
    return records
