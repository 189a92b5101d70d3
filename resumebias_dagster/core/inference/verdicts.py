"""From estimates to verdicts: one row per finding, with its interval, p, adjusted p,
equivalence test, minimal detectable effect, power and verdict (``catalog/inference.yaml``
says what each verdict means and declares the margins).

A study module builds ``findings(...)`` frames (what was estimated, how, and the p of its
test), concatenates them and calls ``finish``: multiplicity control over the declared
families of each model (``multiplicity.family_adjusted``), then the verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference.estimate import Estimate
from resumebias_dagster.core.inference.multiplicity import family_adjusted
from resumebias_dagster.core.inference.power import power_columns
from resumebias_dagster.core.inference.settings import CHANCE, UNITS, InferenceSettings
from resumebias_dagster.core.tables import Verdicts, columns, conform, empty_table
from resumebias_dagster.core.tables.verdicts import VALIDITY_VERDICT_VALUES

VERDICTS = ("beyond_noise", "equivalent", "within_noise", "inconclusive")
# The verdicts of a share read against chance and a target (``CHANCE`` kinds: criterion validity).
VALIDITY_VERDICTS = tuple(VALIDITY_VERDICT_VALUES)
VERDICT_COLUMNS = tuple(columns(Verdicts))
# What each test column value means, written once for every table that names its test.
TESTS = {
    "t_resume": "t over résumés (paired, résumé-level means)",
    "t_resume_name": "t over résumés with the names' own variance added where names recur on several résumés",
    "sign_flip": "studentised sign-flip randomisation over résumés",
    "t_jd": "t over job descriptions, conditional on one résumé",
    "run_permutation": "exact permutation of runs, conditional on one résumé",
    "log_ratio_t": "t of the log ratio of rates (delta method) over résumés and names, against every other group",
    "t_comparisons": "t over one résumé's comparisons (job description x edit), conditional on that résumé",
    "welch_t": "Welch t of two audits' estimates, each audit's 95% interval read as a t's (unpaired)",
}


def classify(adjusted_p, tost_p, estimate, margin, alpha: float, *, ratio: bool = False) -> np.ndarray:
    """The verdict of each finding (module docstring of catalog/inference.yaml)."""
    adjusted_p, tost_p, estimate = (np.asarray(x, dtype=float) for x in (adjusted_p, tost_p, estimate))
    margin = np.broadcast_to(np.asarray(margin, dtype=float), estimate.shape)
    # A ratio inside its margin on both sides (an audit's impact ratio is at most 1; a change
    # between two audits, the later over the earlier, can be either side of 1).
    inside = ((estimate >= margin) & (estimate <= 1.0 / margin)) if ratio else np.abs(estimate) < margin
    out = np.where(inside, "within_noise", "inconclusive").astype(object)
    out[tost_p < alpha] = "equivalent"
    out[adjusted_p <= alpha] = "beyond_noise"
    out[np.isnan(estimate)] = "inconclusive"
    return out


def validity_words(low, high, chance, target) -> np.ndarray:
    """The verdict of a share read against chance and a target, from its 95% interval alone
    (so it can never disagree with it): ``valid`` with the whole interval at or above the
    target, ``better than chance`` above chance but not that, ``worse than chance`` below
    chance, else (the interval contains chance, or there is none) ``no better than chance``."""
    low, high = (np.asarray(x, dtype=float) for x in (low, high))
    target = np.broadcast_to(np.asarray(target, dtype=float), low.shape)
    out = np.full(low.shape, "no better than chance", dtype=object)
    out[high < chance] = "worse than chance"
    out[low > chance] = "better than chance"
    out[(low >= target) & (low > chance)] = "valid"
    return out


def qualification_word(verdict: str, ci_low: float) -> str:
    """A share's verdict against chance and its target as the report says it of a model:
    ``valid``, ``no better than chance`` (its interval contains chance or lies below it) or
    ``not shown valid`` (better than chance but short of the target, or no interval to tell)."""
    if verdict == "valid":
        return "valid"
    if verdict in ("no better than chance", "worse than chance") and np.isfinite(ci_low):
        return "no better than chance"
    return "not shown valid"


def findings(
    meta: Mapping[str, object],
    est: Estimate,
    p: np.ndarray | None,
    kind: str,
    test,
    *,
    settings: InferenceSettings,
    ratio: bool = False,
    interval: tuple[np.ndarray, np.ndarray] | None = None,
    tost: np.ndarray | None = None,
    floor_p: np.ndarray | None = None,
    split: np.ndarray | None = None,
) -> pd.DataFrame:
    """Rows of findings of one kind: ``meta`` gives the model, study, finding, family,
    description and note columns (scalars or arrays); ``est`` the estimates; ``p`` their own
    tests' p-values (None: the estimate's own); ``test`` a ``TESTS`` key (one, or one per row).
    Equivalence ("ruled out") is the printed 95% interval inside the margin.

    The p printed is the larger of the test's and the interval's own (``Estimate.p_value``,
    the smallest level at which the interval excludes no effect), so a verdict never
    disagrees with its interval. For ``ratio`` findings the estimate is on the log scale and
    is shown as a ratio (equivalence: the lower 95% bound at or above the margin); there
    ``interval`` (95%, on the shown scale) and ``tost`` are the study's own, which must be
    dual to ``p`` (impact ratios: against a reference chosen from the data). ``floor_p``:
    the smallest p the test can give (a sign-flip test's ``2 / 2**G``), which the power
    respects. Power and the minimal detectable effect are computed by ``finish``, through the
    multiplicity procedure the verdicts use.

    A ``CHANCE`` kind (criterion validity) gives ``est`` as the excess over chance; the rows
    show the share, ``tost_p`` is the p of "below the target" (its margin) and the verdict is
    ``validity_words``; ``split``: each finding's level split over that many (Bonferroni)."""
    tests = np.broadcast_to(np.asarray(test, dtype=object), (len(est),))
    unknown = sorted(set(tests) - set(TESTS))
    if unknown:
        raise ValueError(f"unknown test {unknown[0]!r}; one of {sorted(TESTS)}")
    margin = settings.margins[kind]
    if p is None:
        p = est.p_value()
    elif not ratio:  # a ratio's p is its study's own, dual to the interval it gives
        p = np.fmax(np.asarray(p, dtype=float), est.p_value())
    if ratio:
        if interval is None or tost is None:
            raise ValueError("ratio findings give their own interval and equivalence test")
        value = np.exp(est.estimate)
        low, high = (np.asarray(x, dtype=float) for x in interval)
        effect = np.log(settings.detect[kind])
    elif kind in CHANCE:
        value, (low, high), p, tost, effect = _against_chance(est, p, kind, settings, split)
    else:
        value = est.estimate
        low, high = est.interval(0.95) if interval is None else interval
        if tost is None:
            tost, floor = est.tost_p(margin), est.unseen_floor(margin)
            meta = _with_floor_notes(meta, (tost < settings.alpha) & (floor >= settings.alpha), est, margin, settings)
            tost = np.fmax(tost, floor)
        effect = settings.detect[kind]
    k = len(est)
    columns: dict[str, object] = {c: np.broadcast_to(np.asarray(v, dtype=object), (k,)) for c, v in meta.items()}
    names = np.zeros(k) if est.n_names is None else np.broadcast_to(est.n_names, (k,))
    columns |= {
        "kind": kind,
        "unit": UNITS[kind],
        "estimate": value,
        "ci_low": low,
        "ci_high": high,
        "se": est.se_eff,
        "df": est.df,
        "p": p,
        "tost_p": np.asarray(tost, dtype=float),
        "margin": margin,
        "effect_to_detect": settings.detect[kind],
        "n_resumes": est.n_resumes.astype(np.int64),
        "n_units": est.n_units.astype(np.int64),
        "n_names": names.astype(np.int64),
        "test": tests,
        **_unit_range(est),
        "ratio": ratio,
    }
    return pd.DataFrame(columns | _hidden(est, floor_p, effect, kind, split), index=pd.RangeIndex(k))


def _unit_range(est: Estimate) -> dict[str, np.ndarray]:
    """The range one unit can take, where it is finite (``Verdicts.unit_low``, ``unit_high``)."""
    return {f"unit_{side}": np.where(np.isfinite(v), v, np.nan) for side, v in (("low", est.low), ("high", est.high))}


def _hidden(est: Estimate, floor_p, effect: float, kind: str, split) -> dict[str, np.ndarray]:
    """What ``finish`` needs for power: the spread, the test's floor, the effect in the
    estimate's own unit, the kind's chance level and the level's split (dropped from the table)."""
    k = len(est)
    hidden = {"_se": est.se, "_tie": est.tie, "_low": est.low, "_high": est.high}
    hidden |= {"_floor_p": np.zeros(k) if floor_p is None else floor_p, "_effect": np.full(k, effect)}
    hidden["_chance"] = np.full(k, CHANCE.get(kind, 0.0))
    hidden["_split"] = np.ones(k) if split is None else np.broadcast_to(np.asarray(split, dtype=float), (k,))
    return {c: np.asarray(v, dtype=float) for c, v in hidden.items()}


def _against_chance(est: Estimate, p: np.ndarray, kind: str, settings: InferenceSettings, split):
    """A ``CHANCE`` kind's shown value and interval (``est`` is the excess over chance; 95%,
    or 1 - 0.05 / split), its p of chance and of "below the target" (where the estimate lies
    above it; else 1), both times split, and the effect to detect as an excess over chance."""
    split = np.ones(len(est)) if split is None else np.broadcast_to(np.asarray(split, dtype=float), (len(est),))
    chance, target = CHANCE[kind], settings.margins[kind]
    low, high = np.full(len(est), np.nan), np.full(len(est), np.nan)
    for k in np.unique(split):
        at = split == k
        low[at], high[at] = (x[at] for x in est.interval(1 - 0.05 / k))
    excess = target - chance
    tost = np.minimum(1.0, split * np.where(est.estimate > excess, est.against(excess).p_value(), 1.0))
    value, p = est.estimate + chance, np.minimum(1.0, split * p)
    return value, (low + chance, high + chance), p, tost, settings.detect[kind] - chance


def needed_to_rule_out(margin: float, reach: float, alpha: float) -> int:
    """Units from which an effect of ``margin`` carried by the fewest résumés a unit's ``reach``
    allows would show in at least one of them with chance 1 - alpha."""
    share = min(1.0, margin / reach)
    return 1 if share >= 1 else math.ceil(math.log(alpha / 2) / math.log(1.0 - share))


def _with_floor_notes(meta: Mapping[str, object], blocked: np.ndarray, est: Estimate, margin: float, settings) -> dict:
    """``meta`` with, on the findings whose interval lies inside the margin but whose units are
    too few to rule it out, a note saying how many it takes."""
    if not blocked.any():
        return dict(meta)
    k = len(est)
    notes = np.array(np.broadcast_to(np.asarray(meta.get("note", ""), dtype=object), (k,)), dtype=object)
    reach = np.maximum(est.high, -est.low)
    for i in np.flatnonzero(blocked):
        n = needed_to_rule_out(margin, float(reach[i]), settings.alpha)
        text = (
            f"inside the margin, but ruling out ±{margin:g} takes {n} résumés: an effect carried by a few "
            f"résumés moved to the end of the scale could be in none of these {int(est.n_units[i])}"
        )
        notes[i] = f"{notes[i]}; {text}" if notes[i] else text
    return {**meta, "note": notes}


def _power(t: pd.DataFrame, family: np.ndarray, gate: np.ndarray, settings: InferenceSettings):
    """The minimal detectable effect and the power of every finding's printed verdict."""
    se, se_eff = t["_se"].to_numpy(float), t["se"].to_numpy(float)
    est = Estimate(
        np.zeros(len(t)),
        np.where(np.isfinite(se), se, se_eff),
        t["df"].to_numpy(float),
        t["n_resumes"].to_numpy(float),
        n_units=t["n_units"].to_numpy(float),
        extra_var=np.where(np.isfinite(se), np.maximum(se_eff**2 - se**2, 0.0), 0.0),
        tie=t["_tie"].to_numpy(float),
        low=t["_low"].to_numpy(float),
        high=t["_high"].to_numpy(float),
    )
    mde, power = power_columns(
        est,
        family,
        gate,
        np.isfinite(t["p"].to_numpy(float)),
        effect=t["_effect"].to_numpy(float),
        alpha=settings.alpha,
        power=settings.power,
        floor_p=t["_floor_p"].to_numpy(float),
        seed=settings.seed,
        scale=1.0 / t["_split"].fillna(1.0).to_numpy(float),
    )
    ratio = t["ratio"].to_numpy(bool)
    return np.where(ratio, np.exp(-mde), mde), power  # a ratio's mde: the smallest detectable drop, as a ratio


def finish(frames: list[pd.DataFrame], settings: InferenceSettings) -> pd.DataFrame:
    """All findings with their adjusted p (families within each model), power and verdicts:
    the ``Verdicts`` table. A ``CHANCE`` kind's finding (criterion validity) is read from its
    own 95% interval, one at a time: it stands alone (its adjusted p is its p, its power that of
    its own test at alpha) and takes no part in the other families' control."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_table(Verdicts)
    t = pd.concat(frames, ignore_index=True)
    alone = t["kind"].isin(list(CHANCE)).to_numpy()
    own = pd.Series(np.arange(len(t)).astype(str), index=t.index)
    family_key = (t["model"].astype(str) + "\x1f" + t["family"].astype(str)).where(~alone, "\x1e" + own)
    family = pd.factorize(family_key)[0]
    gate = pd.factorize(t["model"].astype(str).where(~alone, "\x1e" + own))[0]
    t["q"] = family_adjusted(t["p"].to_numpy(float), family, gate, settings.alpha)
    t["mde"], t["power"] = _power(t, family, gate, settings)
    chance = t["_chance"].fillna(0.0).to_numpy(float)
    # A share's detectable value on the estimate's scale (chance added back); past 1: none. Only
    # shares: any other kind's effect may exceed 1 (1.2 levels, 2 points).
    share_mde = np.where(t["mde"] + chance > 1.0, np.inf, t["mde"] + chance)
    t["mde"] = np.where(alone, share_mde, t["mde"])
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
    if alone.any():
        verdict[alone] = validity_words(
            t.loc[alone, "ci_low"], t.loc[alone, "ci_high"], chance[alone], t.loc[alone, "margin"]
        )
    t["verdict"] = verdict
    if "note" not in t.columns:
        t["note"] = ""
    t["note"] = t["note"].fillna("").astype(str)
    hidden = [c for c in t.columns if c.startswith("_") or c == "ratio"]
    return conform(t.drop(columns=hidden), Verdicts)


NO_REASON = "no interval could be computed (the note of its table row says no more)"


def missing_interval_lines(verdicts: pd.DataFrame) -> list[str]:
    """One line per finding printed without an interval: the finding and why (its note), so
    a table never shows "n/a to n/a" silently (issue 41). Findings of one model that share a
    reason are said once."""
    if not len(verdicts) or "ci_low" not in verdicts:
        return []
    missing = verdicts[~np.isfinite(pd.to_numeric(verdicts["ci_low"], errors="coerce").to_numpy(float))]
    by_reason: dict[tuple[str, str], list[str]] = {}
    for row in missing.to_dict("records"):
        note = str(row.get("note") or "").strip()
        by_reason.setdefault((str(row["model"]), note or NO_REASON), []).append(str(row["finding"]))
    return [f"no interval for {model}: {', '.join(found)}: {why}" for (model, why), found in by_reason.items()]


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
