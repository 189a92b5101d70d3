"""What changed between two audits of one model: per finding both audits have, the later
estimate minus the earlier with its 95% interval and verdict, through the verdicts' own code
(``core/inference``: one multiplicity control per model over the findings' families, the
equivalence test against the kind's margin, the power of the verdict printed).

Assumptions. The two audits are independent samples (unpaired): each finding's uncertainty is
read off its own printed 95% interval, as the standard error of a t with that interval's width
(``se = (high - low) / (2 t)``, at least the stored standard error), so the rules that widen an
interval beyond its t (no spread, a few résumés far off, unseen résumés) carry into the
difference; the difference's degrees of freedom are Welch–Satterthwaite's.

Paired. Where both audits give a finding's units (``FindingUnits``: a level's change to each
résumé's text under each job description, or a name group contrast on it) on two or more of
the same résumés, the finding is compared résumé by résumé instead: each résumé's change
between the audits, on the (job description, name) texts both scored, averaged over its job
descriptions, is the unit of a paired t over those résumés (``core/inference/clustered.paired``,
whose no-spread and sparse rules apply: a deterministic tool unchanged on every résumé still
needs the résumés below). It
assumes the résumés independent given the tool; the résumé's own effect and a name's own quirk,
the same in both audits, cancel, so the claim is about the tool's answers to these texts, not a
new sample of names. "Unchanged" is the difference's 95% interval inside the kind's margin,
and it too needs the résumés a change carried by a few of them would show in
(``Estimate.unseen_floor``): a résumé's unit can move from one end of its range to the other
(a fit difference from -9 to +9: 18 points), so ruling out 0.25 points takes 264 résumés in
each audit, twice what one audit needs to rule out an effect, and two smaller audits say "not
decided", never "unchanged". A finding stored without its unit's range is never "unchanged".

A share read against chance (criterion validity, seniority accuracy) is compared as a
difference of two shares (kind ``validity_gap``).

An impact ratio (a group's selection rate over the highest group's, as Local Law 144 defines
it: each audit against its own highest group) is compared as the ratio of the later ratio to
the earlier, on the log scale. Paired where both audits kept its units on two or more of the
same résumés with the same names of both groups (``core/fairness/impact.impact_units``: each
résumé's share of the log ratio by the delta method, so the spread of their changes is the
spread of the log ratio's change; a reference group that changed between the audits changes
the names, and the finding is then compared unpaired). Unpaired, each audit's standard error
is the larger of its stored one (the log ratio to its reference) and the one its printed lower
bound implies (``(log ratio - log lower bound) / t``: the interval against every other group,
whose upper bound is cut at 1 and so not read). "Unchanged" is the ratio of ratios' 95%
interval inside ``[margin, 1 / margin]`` (0.9 to 1.11 by default), with the résumés a change
carried by a few of them would show in (each résumé's share can move across both audits'
ranges). Two audits of one unchanged model have the same winner's-curse bias (the reference is
the highest of noisy rates), so the difference is centred on 1. A group with no selection in
one audit has no interval (a ratio of 0 has no log).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from scipy import stats

from resumebias_dagster.core.inference import Estimate, InferenceSettings, findings, finish, paired
from resumebias_dagster.core.inference.settings import CHANCE
from resumebias_dagster.core.inference.verdicts import needed_to_rule_out
from resumebias_dagster.core.tables import AuditChanges, FindingUnits, columns, conform, empty_table

KEYS = ["model", "study", "finding"]
# The reach given a change whose unit's range was not stored: no number of résumés rules it out.
UNKNOWN_REACH = 1e12
# Kinds whose change is read in another kind's unit and margin.
CHANGE_KIND = {kind: "validity_gap" for kind in CHANCE}
# Kinds compared as a ratio of the two audits' values (on the log scale).
RATIO_KINDS = ("impact_ratio",)
# A stored impact ratio at or below this is a group nobody in was selected.
NO_SELECTION = 1e-9
PAIRED = "paired: the résumés both audits scored"
UNPAIRED = "unpaired: each audit's interval as a t's"
NOTE_NO_SELECTION = "no interval: the group had no selection in one of the audits (a ratio of 0 has no log)"
NOTE_OTHER_REFERENCE = "the earlier audit's highest group was another: each ratio is against its own audit's highest"


def _interval_se(rows: pd.DataFrame, side: str) -> tuple[np.ndarray, np.ndarray]:
    """One audit's (``side``: ``_b`` or ``_n``) standard errors as a t with its printed 95%
    interval's width would have them (at least the stored one), and their degrees of freedom."""
    df = pd.to_numeric(rows[f"df{side}"], errors="coerce").to_numpy(float)
    n = rows[f"n_resumes{side}"].to_numpy(float)
    df = np.where(np.isfinite(df) & (df > 0), df, np.maximum(n - 1.0, 1.0))
    width = (rows[f"ci_high{side}"] - rows[f"ci_low{side}"]).to_numpy(float)
    se = np.nan_to_num(pd.to_numeric(rows[f"se{side}"], errors="coerce").to_numpy(float), nan=0.0)
    return np.fmax(width / (2.0 * stats.t.ppf(0.975, df)), se), df


def change_reach(rows: pd.DataFrame) -> np.ndarray:
    """How far one résumé's unit can move between the audits: from either end of its range in
    one to the other end in the other (``UNKNOWN_REACH`` where a range was not stored)."""
    lo_b, hi_b, lo_n, hi_n = (
        rows[c].to_numpy(float) for c in ("unit_low_b", "unit_high_b", "unit_low_n", "unit_high_n")
    )
    reach = np.fmax(hi_n - lo_b, hi_b - lo_n)
    return np.where(np.isfinite(reach) & (reach > 0), reach, UNKNOWN_REACH)


def compared(base: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The findings both verdict tables hold with an interval, side by side (``_b`` base, ``_n`` new)."""
    cols = [*KEYS, "family", "description", "kind", "estimate", "ci_low", "ci_high", "se", "df", "n_resumes", "n_names"]
    cols += ["unit_low", "unit_high"]
    both = base[cols].merge(new[cols], on=KEYS, suffixes=("_b", "_n"))
    keep = both["kind_b"].eq(both["kind_n"]) & np.isfinite(
        both[["ci_low_b", "ci_high_b", "ci_low_n", "ci_high_n"]].to_numpy(float)
    ).all(axis=1)
    return both[keep].reset_index(drop=True)


def shared_units(base_units: pd.DataFrame, new_units: pd.DataFrame) -> pd.DataFrame:
    """Per (model, study, finding, résumé): the change of its unit between the audits, over the
    (job description, name) texts both scored, averaged over its job descriptions."""
    for side, table in (("the earlier audit's", base_units), ("the later audit's", new_units)):
        missing = sorted(set(columns(FindingUnits)) - set(table.columns))
        if missing:
            raise ValueError(f"{side} finding units lack the column(s) {', '.join(missing)}")
    on = [*KEYS, "resume_id", "jd"]
    both = base_units.merge(new_units, on=on, suffixes=("_b", "_n"))
    same_name = both["name_b"].fillna("").astype(str) == both["name_n"].fillna("").astype(str)
    both = both[same_name].assign(change=lambda t: t["unit_n"] - t["unit_b"])
    return both.groupby([*KEYS, "resume_id"], as_index=False, sort=True).agg(change=("change", "mean"))


def _paired_rows(rows: pd.DataFrame, shared: pd.DataFrame, reach: float) -> Estimate:
    """The paired Estimate of each row of ``rows`` from its résumés' changes in ``shared``, each
    résumé's change in ``[-reach, reach]``."""
    index = pd.MultiIndex.from_frame(rows[KEYS])
    mine = shared.set_index(KEYS)
    wide = mine[mine.index.isin(index)].pivot_table(index=KEYS, columns="resume_id", values="change", aggfunc="first")
    matrix = wide.reindex(index).to_numpy(float)
    est = paired(matrix, -reach, reach)
    return replace(est, n_names=rows["n_names_n"].to_numpy())


def audit_changes(
    base: pd.DataFrame,
    new: pd.DataFrame,
    settings: InferenceSettings,
    *,
    base_id: str,
    new_id: str,
    base_units: pd.DataFrame | None = None,
    new_units: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The ``AuditChanges`` rows of ``new`` against ``base`` (two ``Verdicts`` tables of the same
    models); with both audits' ``FindingUnits``, the findings they share two or more résumés
    of are compared résumé by résumé (paired), the rest unpaired."""
    both = compared(base, new)
    if not len(both):
        return empty_table(AuditChanges)
    shared = (
        shared_units(base_units, new_units)
        if base_units is not None and new_units is not None
        else pd.DataFrame(columns=[*KEYS, "resume_id", "change"])
    )
    counts = shared.groupby(KEYS).size()
    n_shared = both.set_index(KEYS).index.map(lambda k: int(counts.get(k, 0))).to_numpy()
    # Paired rows are estimated per reach (one range for all units of a ``paired`` call).
    both = both.assign(_paired=n_shared >= 2, _reach=np.where(n_shared >= 2, change_reach(both), 0.0))
    frames = []
    for (kind, is_paired, _), rows in both.groupby(["kind_n", "_paired", "_reach"], sort=True):
        est = _paired_rows(rows, shared, float(rows["_reach"].iloc[0])) if is_paired else None
        test = "t_resume" if is_paired else "welch_t"
        note = PAIRED if is_paired else UNPAIRED
        if kind in RATIO_KINDS:
            frames.append(_ratio_changes(rows, est, test, note, settings))
            continue
        est = est if est is not None else _unpaired(rows)
        meta = _meta(rows) | {"note": note}
        frames.append(findings(meta, est, None, CHANGE_KIND.get(str(kind), str(kind)), test, settings=settings))
    table = finish(frames, settings)
    sides = both.set_index(KEYS)[["estimate_b", "estimate_n"]].rename(
        columns={"estimate_b": "base_estimate", "estimate_n": "new_estimate"}
    )
    table = table.join(sides, on=KEYS)
    return conform(table.assign(snapshot_id=new_id, base_snapshot_id=base_id), AuditChanges)


def _welch(rows: pd.DataFrame, difference: np.ndarray, sides) -> Estimate:
    """The Welch Estimate of ``difference`` from each audit's (standard error, df) in ``sides``,
    each résumé's change within the reach of the audits' unit ranges."""
    (se_b, df_b), (se_n, df_n) = sides
    se = np.sqrt(se_b**2 + se_n**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        welch = se**4 / (se_b**4 / df_b + se_n**4 / df_n)
    df = np.where(se > 0, welch, np.minimum(df_b, df_n))
    n = np.minimum(rows["n_resumes_b"].to_numpy(), rows["n_resumes_n"].to_numpy())
    reach = change_reach(rows)
    return Estimate(difference, se, df, n, rows["n_names_n"].to_numpy(), low=-reach, high=reach)


def snapshot_changes(store, base_id: str, new_id: str, settings: InferenceSettings) -> pd.DataFrame:
    """The ``AuditChanges`` of snapshot ``new_id`` against ``base_id`` of ``store`` (a
    ``SnapshotStore`` or ``SharedSnapshotStore``), paired where both kept units of the same
    résumés. The earlier snapshot may be of another model (the one the later model replaces, or
    any model audited with the same design): its findings are read as the later model's."""
    new, new_units = store.verdicts(new_id), store.units(new_id)
    base, base_units = store.verdicts(base_id), store.units(base_id)
    if len(new) and len(base):
        model = str(new["model"].iloc[0])
        base, base_units = base.assign(model=model), base_units.assign(model=model)
    return audit_changes(
        base,
        new,
        settings,
        base_id=base_id,
        new_id=new_id,
        base_units=base_units if len(base_units) else None,
        new_units=new_units if len(new_units) else None,
    )


def _unpaired(rows: pd.DataFrame) -> Estimate:
    """The Welch difference of each row's two estimates, each audit's interval read as a t's."""
    difference = (rows["estimate_n"] - rows["estimate_b"]).to_numpy(float)
    return _welch(rows, difference, (_interval_se(rows, "_b"), _interval_se(rows, "_n")))


def _log_ratio_se(rows: pd.DataFrame, side: str) -> tuple[np.ndarray, np.ndarray]:
    """One audit's standard error of its log impact ratio: the stored one or, if larger, the one
    its printed lower bound implies (the upper bound is cut at 1); NaN without a selection."""
    df = pd.to_numeric(rows[f"df{side}"], errors="coerce").to_numpy(float)
    df = np.where(np.isfinite(df) & (df > 0), df, np.maximum(rows[f"n_resumes{side}"].to_numpy(float) - 1.0, 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = (np.log(rows[f"estimate{side}"]) - np.log(rows[f"ci_low{side}"])).to_numpy(float)
    stored = np.nan_to_num(pd.to_numeric(rows[f"se{side}"], errors="coerce").to_numpy(float), nan=0.0)
    se = np.fmax(lower / stats.t.ppf(0.975, df), stored)
    return np.where(np.isfinite(se), se, np.nan), df


def _ratio_changes(
    rows: pd.DataFrame, paired_est: Estimate | None, test: str, note: str, settings: InferenceSettings
) -> pd.DataFrame:
    """The findings of the impact ratios both audits have: the later ratio over the earlier, on
    the log scale, from the résumés' paired changes (``paired_est``, its spread around the two
    audits' log difference) or unpaired (module docstring), shown as a ratio with its interval."""
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = (np.log(rows["estimate_n"]) - np.log(rows["estimate_b"])).to_numpy(float)
    if paired_est is None:
        est = _welch(rows, difference, (_log_ratio_se(rows, "_b"), _log_ratio_se(rows, "_n")))
    else:
        est = paired_est.recentred(difference)
    # A group never selected has a ratio of 0 (stored as the 1e-12 its log is taken at): no
    # interval, no test.
    unselected = ((rows["estimate_b"] <= NO_SELECTION) | (rows["estimate_n"] <= NO_SELECTION)).to_numpy()
    est = replace(est, se=np.where(unselected, np.nan, est.se), tie=np.where(unselected, np.nan, est.tie))
    low, high = est.interval(0.95)
    ratio_margin = settings.margins["impact_ratio"]
    margin = -np.log(ratio_margin)  # a change by that factor, either way
    floor, tost = est.unseen_floor(margin), est.tost_p(margin)
    notes = np.full(len(rows), note, dtype=object)
    other = rows["description_b"].to_numpy() != rows["description_n"].to_numpy()
    notes[other] = notes[other] + "; " + NOTE_OTHER_REFERENCE
    notes[unselected] = NOTE_NO_SELECTION
    for i in np.flatnonzero((tost < settings.alpha) & (floor >= settings.alpha)):
        needed = needed_to_rule_out(margin, float(max(est.high[i], -est.low[i])), settings.alpha)
        notes[i] += (
            f"; inside the margin, but ruling out a change by a factor of {ratio_margin:g} takes {needed} "
            f"résumés: a change a few résumés carry could be in none of these {int(est.n_units[i])}"
        )
    return findings(
        _meta(rows) | {"note": notes},
        est,
        est.p_value(),
        "impact_ratio",
        test,
        settings=settings,
        ratio=True,
        interval=(np.exp(low), np.exp(high)),
        tost=np.fmax(tost, floor),
    )


def _meta(rows: pd.DataFrame) -> dict:
    """The identifying columns of the change findings of ``rows``."""
    return {
        "model": rows["model"].to_numpy(),
        "study": rows["study"].to_numpy(),
        "finding": rows["finding"].to_numpy(),
        "family": rows["family_n"].to_numpy(),
        "description": ("change since the last audit: " + rows["description_n"].astype(str)).to_numpy(),
    }
