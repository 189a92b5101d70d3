"""The seniority study's verdicts: style shifts, name contrasts and inconsistency, each
estimated within résumé with the résumé as the unit (core/inference/).

Values. A variant's value on a résumé is its expected rank under the label distribution
the model gave (exact, no sampling noise) when every prediction of the model carries one,
else the mean rank of its valid sampled runs (runs are repeated measures of one prompt).
Ranks are junior 0, mid 1, senior 2; the true level is the same for every variant of a
résumé, so a difference of ranks is a difference of notebook 001's rank differences.

Findings per model (``family`` in brackets; Benjamini–Bogomolov over a model's families):

* ``style_shift:overstated`` / ``style_shift:understated`` [style]: the mean over résumés of
  (the rewrite's value minus the neutral text's), t over résumés.
* ``inconsistency:style`` / ``inconsistency:demographic`` [style / names]: per résumé, the
  seniority study's inconsistency (its variants' labels not all equal) minus the retest
  floor of the same résumé (the same rule applied to repeated runs of one identical text,
  ``metrics`` module docstring); exact from the distributions when the model gives them.
  The excess has mean 0 when the variants do not matter; t over résumés. Not testable with
  fewer runs than variants and no distributions (no floor).
* ``seniority_bias:racial`` / ``:gender`` / ``:extreme`` [names]: within-résumé contrasts of
  the name variants (caucasian minus african-american, male minus female, caucasian male
  minus african-american female), two-way cluster-robust by résumé and first name: names
  are a random effect, so one name's quirk is not read as its group's bias.

Beside them, the validity findings (``validity`` module: accuracy and rank difference with
intervals, per name group too), under a multiplicity control of their own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import gender_of, race_of
from resumebias_dagster.core.fairness.impact import (
    SENIORITY_SELECTIONS,
    impact_findings,
    impact_units,
    seniority_selection_rows,
)
from resumebias_dagster.core.inference import InferenceSettings, findings, finish, paired, side_contrast
from resumebias_dagster.core.seniority.metrics.scoring import _comb, _score, _Scored
from resumebias_dagster.core.seniority.validity import seniority_validity_verdicts
from resumebias_dagster.core.tables import FindingUnits, Verdicts, conform, empty_table

STYLE_SHIFTS = (
    ("overstated", "overstated minus neutral wording of the same résumé"),
    ("understated", "understated minus neutral wording of the same résumé"),
)
NAME_CONTRASTS = (
    (
        "racial",
        "caucasian minus african-american names on the same résumé",
        lambda v: 1 if race_of(v) == "caucasian" else -1,
    ),
    ("gender", "male minus female names on the same résumé", lambda v: 1 if gender_of(v) == "male" else -1),
    (
        "extreme",
        "caucasian male minus african-american female names on the same résumé",
        lambda v: {"caucasian_male": 1, "african_american_female": -1}.get(v, 0),
    ),
)
INCONSISTENCY = {
    "style": "inconsistency across the three wordings, minus its retest floor",
    "demographic": "inconsistency across the four names, minus its retest floor",
}
FAMILIES = {"style": "style", "demographic": "names"}
# The range of one résumé's difference: ranks (junior 0 to senior 2) differ by at most 2; an
# inconsistency excess lies in [-1, 1].
RANK_RANGE, SHARE_RANGE = (-2.0, 2.0), (-1.0, 1.0)


def _texts(scored: _Scored, names: pd.Series | None) -> pd.DataFrame:
    """One row per (model, experiment, résumé, variant): its value, whether exact, its first name."""
    rows = scored.rows
    exact_model = rows.groupby("model", observed=True)["has_dist"].all()
    exact = rows["model"].map(exact_model).astype(bool).to_numpy()
    value = np.where(exact, rows["exp_rank_diff"].to_numpy(float), rows["rank_diff"].to_numpy(float))
    frame = pd.DataFrame(
        {
            "model": rows["model"].astype(str).to_numpy(),
            "variant_kind": rows["variant_kind"].astype(str).to_numpy(),
            "original_idx": rows["original_idx"].to_numpy(),
            "variant": rows["variant"].astype(str).to_numpy(),
            "value": value,
            "exact": exact,
            "first_name": (
                names.astype("string").str.split().str[0]
                if names is not None
                else pd.Series(pd.NA, index=rows.index, dtype="string")
            ).to_numpy(object),
        }
    )
    keys = ["model", "variant_kind", "original_idx", "variant"]
    return (
        frame.groupby(keys, sort=True, dropna=False)
        .agg(value=("value", "mean"), exact=("exact", "first"), first_name=("first_name", "first"))
        .reset_index()
    )


def _excess_inconsistency(scored: _Scored, model: str, kind: str, exact: bool) -> tuple[np.ndarray, str]:
    """Per résumé: inconsistency minus its retest floor (NaN array and a note when not measurable)."""
    if exact:
        d = scored.dist_originals
        d = d[(d["model"].astype(str) == model) & (d["variant_kind"].astype(str) == kind) & d["complete"]]
        excess = (d["exp_inconsistency"] - d["exp_inconsistency_floor"]).to_numpy(float)
        # The two exact formulas round differently: identical distributions must give exactly 0.
        return np.where(np.abs(excess) < 1e-12, 0.0, excess), "exact, from label distributions"
    res = scored.resumes
    res = res[(res["model"].astype(str) == model) & (res["variant_kind"].astype(str) == kind)]
    runs = res["run"].nunique()
    v = int(scored.n_variants[["style", "demographic"].index(kind)])
    if runs < v:
        return np.array([]), (
            f"{runs} run(s) for {v} variants and no label distributions: no retest floor "
            "(run each prompt twice or more, or give the model's label distributions)"
        )
    observed = res.groupby("original_idx")["inconsistent"].sum() / runs
    texts = scored.texts
    texts = texts[(texts["model"].astype(str) == model) & (texts["variant_kind"].astype(str) == kind)]
    floor = texts.groupby("original_idx")["inconsistent_subsets"].sum() / (v * float(_comb(runs, v)))
    floor = floor.reindex(observed.index, fill_value=0.0)
    return (observed - floor).to_numpy(float), f"sampled: {runs} runs per variant"


def _style_shift_findings(
    m: pd.DataFrame, base: dict[str, str], how: str, settings: InferenceSettings
) -> list[pd.DataFrame]:
    """Each rewrite's shift against the neutral wording of the same résumé."""
    frames = []
    style = m[m["variant_kind"] == "style"].pivot(index="original_idx", columns="variant", values="value")
    for variant, description in STYLE_SHIFTS:
        if {"neutral", variant} <= set(style.columns):
            est = paired((style[variant] - style["neutral"]).to_numpy()[None, :], *RANK_RANGE)
            frames.append(
                findings(
                    {
                        **base,
                        "finding": f"style_shift:{variant}",
                        "family": "style",
                        "description": description,
                        "note": how,
                    },
                    est,
                    None,
                    "style_shift",
                    "t_resume",
                    settings=settings,
                )
            )
    return frames


# Why a name contrast has no interval although it has résumés (issue 41: it printed "n/a to n/a"
# with no reason).
NOTE_ONE_NAME_PER_GROUP = (
    "no interval: each group has one name, so a name's own effect cannot be told from its group's "
    "(give each group two names or more)"
)


def _name_contrast_findings(
    m: pd.DataFrame, base: dict[str, str], how: str, settings: InferenceSettings
) -> list[pd.DataFrame]:
    """The within-résumé contrasts of the name variants; names a random effect where recorded."""
    demo = m[m["variant_kind"] == "demographic"]
    if not len(demo):
        return []
    frames = []
    resume = demo["original_idx"].to_numpy()
    have_names = demo["first_name"].notna().all()
    name = pd.factorize(demo["first_name"].astype(str))[0] if have_names else None
    note = how if have_names else how + "; names not recorded, so names are not a random effect"
    for contrast, description, side_of in NAME_CONTRASTS:
        side = np.array([side_of(v) for v in demo["variant"]])
        low, high = RANK_RANGE
        est = side_contrast(
            demo["value"].to_numpy(float), resume, side, name, pd.factorize(demo["variant"])[0], low=low, high=high
        )
        why = note
        if have_names and est.n_resumes[0] > 1 and not np.isfinite(est.se[0]):
            why = note + "; " + NOTE_ONE_NAME_PER_GROUP
        frames.append(
            findings(
                {
                    **base,
                    "finding": f"seniority_bias:{contrast}",
                    "family": "names",
                    "description": description,
                    "note": why,
                },
                est,
                None,
                "seniority_bias",
                "t_resume_name" if have_names else "t_resume",
                settings=settings,
            )
        )
    return frames


def _inconsistency_findings(
    scored: _Scored, m: pd.DataFrame, base: dict[str, str], exact: bool, settings: InferenceSettings
) -> list[pd.DataFrame]:
    """Each experiment's inconsistency in excess of its retest floor."""
    frames = []
    for kind in sorted(set(m["variant_kind"])):
        excess, note = _excess_inconsistency(scored, base["model"], kind, exact)
        est = paired(excess[None, :] if len(excess) else np.full((1, 1), np.nan), *SHARE_RANGE)
        frames.append(
            findings(
                {
                    **base,
                    "finding": f"inconsistency:{kind}",
                    "family": FAMILIES[kind],
                    "description": INCONSISTENCY[kind],
                    "note": note,
                },
                est,
                None,
                "inconsistency",
                "t_resume",
                settings=settings,
            )
        )
    return frames


def seniority_verdicts(predictions: pd.DataFrame, settings: InferenceSettings) -> pd.DataFrame:
    """The ``Verdicts`` rows of every model in ``predictions`` (the metrics' input table),
    the name experiment's impact ratios (``core/fairness/impact.py``) ranked with them."""
    if not len(predictions):
        return finish([], settings)
    scored = _score(predictions)
    names = predictions["name"] if "name" in predictions.columns else None
    texts = _texts(scored, names)
    frames = []
    for model, m in texts.groupby("model", sort=True):
        exact = bool(m["exact"].all())
        how = "exact expected ranks" if exact else "mean rank of the sampled runs"
        base = {"model": str(model), "study": "seniority"}
        frames += _style_shift_findings(m, base, how, settings)
        frames += _name_contrast_findings(m, base, how, settings)
        frames += _inconsistency_findings(scored, m, base, exact, settings)
    impact = impact_findings(seniority_selection_rows(predictions), SENIORITY_SELECTIONS, "seniority", settings)
    bias = finish(frames + impact, settings)
    # Validity answers another question than bias: its findings take their own multiplicity
    # control, so adding them leaves every bias finding's adjusted p as it was.
    validity = seniority_validity_verdicts(predictions, settings, scored.rows)
    table = conform(pd.concat([t for t in (bias, validity) if len(t)] or [bias], ignore_index=True), Verdicts)
    table["model"] = table["model"].astype(str)
    return table


def _unit_rows(model: str, finding: str, units: pd.Series, names: pd.Series | None = None) -> pd.DataFrame:
    """``FindingUnits`` rows of one finding: ``units`` by résumé (``original_idx``)."""
    return pd.DataFrame(
        {
            "model": model,
            "study": "seniority",
            "finding": finding,
            "resume_id": units.index.astype(str),
            "jd": "",
            "name": None if names is None else names.reindex(units.index).to_numpy(object),
            "unit": units.to_numpy(float),
        }
    )


def seniority_units(predictions: pd.DataFrame) -> pd.DataFrame:
    """The ``FindingUnits`` of the style shifts, the name contrasts and the impact ratios: per
    résumé (its ``original_idx``), the rewrite's value minus the neutral text's; the mean of a
    contrast's one side of names minus the other's (``name``: the first names, "; "-joined, so a
    later audit pairs with it only on the same names); each résumé's share of a log impact ratio
    (``impact_units``). A later audit of the same résumés compares these résumé by résumé
    (core/history/changes.py); inconsistency and validity are compared unpaired."""
    if not len(predictions):
        return empty_table(FindingUnits)
    texts = _texts(_score(predictions), predictions["name"] if "name" in predictions.columns else None)
    frames = []
    for model, m in texts.groupby("model", sort=True):
        style = m[m["variant_kind"] == "style"].pivot(index="original_idx", columns="variant", values="value")
        for variant, _ in STYLE_SHIFTS:
            if {"neutral", variant} <= set(style.columns):
                frames.append(
                    _unit_rows(str(model), f"style_shift:{variant}", (style[variant] - style["neutral"]).dropna())
                )
        demo = m[m["variant_kind"] == "demographic"]
        for contrast, _, side_of in NAME_CONTRASTS:
            side = demo["variant"].map(side_of)
            by = demo.groupby([side.rename("side"), "original_idx"])["value"].mean()
            if not {1, -1} <= set(by.index.get_level_values("side")):
                continue
            units = (by.xs(1, level="side") - by.xs(-1, level="side")).dropna()
            named = demo[(side != 0) & demo["first_name"].notna()]
            names = named.groupby("original_idx")["first_name"].agg(lambda n: "; ".join(sorted(set(map(str, n)))))
            frames.append(_unit_rows(str(model), f"seniority_bias:{contrast}", units, names))
    frames.append(impact_units(seniority_selection_rows(predictions), SENIORITY_SELECTIONS, "seniority"))
    kept = [f for f in frames if len(f)]
    return conform(pd.concat(kept, ignore_index=True), FindingUnits) if kept else empty_table(FindingUnits)
