"""How far judges agree with themselves and each other, and how their verdicts line up with the fit effects."""

from __future__ import annotations

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.labels import VERDICTS
from resumebias_dagster.core.jd_audit.judge.terms import (
    ALL,
    CELL_KEY,
    CROSS_JUDGE_COLUMNS,
    EFFECT_CELL_COLUMNS,
    JUDGE_EFFECT_COLUMNS,
    STABILITY_COLUMNS,
    STABILITY_MATRIX_COLUMNS,
)
from resumebias_dagster.core.tables import (
    CrossJudgeAgreement,
    JudgeStability,
    JudgeStabilityMatrix,
    JudgeVsEffects,
    empty_table,
)

# --------------------------------------------------------------------------- agreement


def cohen_kappa(matrix: np.ndarray) -> np.ndarray:
    """Cohen's kappa of confusion matrices ``(..., k, k)`` (rows: rater A, columns: rater B).

    ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the diagonal share and ``p_e`` the sum of
    row-share x column-share; NaN for an empty matrix or when ``p_e == 1`` (both raters used
    one and the same category: agreement cannot beat chance).
    """
    m = np.asarray(matrix, dtype=float)
    n = m.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(m, axis1=-2, axis2=-1) / n
        p_e = (m.sum(axis=-1) * m.sum(axis=-2)).sum(axis=-1) / n**2
        kappa = (p_o - p_e) / (1.0 - p_e)
    return np.where((n > 0) & (p_e < 1.0 - 1e-12), kappa, np.nan)


def _codes(values: pd.Series) -> np.ndarray:
    return pd.Categorical(values, categories=VERDICTS).codes.astype(np.int64)


def _matrices(group: np.ndarray, a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    """3x3 confusion matrices per group from verdict codes (all >= 0)."""
    k = len(VERDICTS)
    flat = np.bincount(group * k * k + a * k + b, minlength=size * k * k)
    return flat.reshape(size, k, k)


def judge_stability(verdicts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Does the judge flip between a cell's two samples? Per judge (and over all judges when
    there are several).

    Over cells whose samples differ and both have a verdict: the 3x3 matrix (rows: verdict on
    the first sample, columns: on the typical sample, with totals) and a summary
    (``STABILITY_COLUMNS``): the disagreement rate with its denominator ``n_compared``,
    Cohen's kappa, the flips bias -> justified and justified -> bias and their ratio
    ``asymmetry`` (NaN when no justified -> bias flip), and the cells left out: coinciding
    samples (``n_coinciding``) and a missing verdict (``n_missing``). No verdicts: both
    tables empty, with their declared columns and dtypes.
    """
    if not len(verdicts):
        return empty_table(JudgeStabilityMatrix), empty_table(JudgeStability)
    judges = list(pd.unique(verdicts["judge"]))
    if len(judges) > 1:
        verdicts = pd.concat([verdicts, verdicts.assign(judge=ALL)], ignore_index=True)
        judges.append(ALL)
    g = pd.Categorical(verdicts["judge"], categories=judges).codes.astype(np.int64)
    coincide = verdicts["samples_coincide"].to_numpy(dtype=bool)
    a, b = _codes(verdicts["verdict_first"]), _codes(verdicts["verdict_typical"])
    both = (a >= 0) & (b >= 0)
    use = ~coincide & both
    m = _matrices(g[use], a[use], b[use], len(judges))
    size = len(judges)
    n_cells = np.bincount(g, minlength=size)
    n_coinciding = np.bincount(g[coincide], minlength=size)
    n_missing = np.bincount(g[~coincide & ~both], minlength=size)
    n_compared = m.sum(axis=(1, 2))
    n_agree = np.trace(m, axis1=1, axis2=2)
    bi, ju = VERDICTS.index("bias"), VERDICTS.index("justified")
    b2j, j2b = m[:, bi, ju], m[:, ju, bi]
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n_compared > 0, (n_compared - n_agree) / n_compared, np.nan)
        asym = np.where(j2b > 0, b2j / np.maximum(j2b, 1), np.nan)
    summary = pd.DataFrame(
        {
            "judge": judges,
            "n_cells": n_cells,
            "n_coinciding": n_coinciding,
            "n_missing": n_missing,
            "n_compared": n_compared,
            "n_agree": n_agree,
            "n_disagree": n_compared - n_agree,
            "disagreement_rate": rate,
            "kappa": cohen_kappa(m),
            "n_bias_to_justified": b2j,
            "n_justified_to_bias": j2b,
            "asymmetry": asym,
        }
    )
    rows = []
    for j, judge in enumerate(judges):
        for r, verdict in enumerate(VERDICTS):
            rows.append(
                {"judge": judge, "first_verdict": verdict, **dict(zip(VERDICTS, m[j, r])), "row_total": m[j, r].sum()}
            )
        rows.append(
            {
                "judge": judge,
                "first_verdict": "col_total",
                **dict(zip(VERDICTS, m[j].sum(axis=0))),
                "row_total": m[j].sum(),
            }
        )
    matrix = pd.DataFrame(rows, columns=list(STABILITY_MATRIX_COLUMNS))
    matrix[[*VERDICTS, "row_total"]] = matrix[[*VERDICTS, "row_total"]].astype(np.int64)
    return matrix, summary[list(STABILITY_COLUMNS)]


def cross_judge_agreement(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Agreement of the first two judges (in order of appearance) on the headline (typical)
    verdict, per audited model and over all models: cells both judged, agreement rate, kappa.
    The ``CrossJudgeAgreement`` table: typed and empty with fewer than two judges."""
    judges = list(pd.unique(verdicts["judge"])) if len(verdicts) else []
    if len(judges) < 2:
        return empty_table(CrossJudgeAgreement)
    ja, jb = judges[:2]
    key = list(CELL_KEY)
    a = verdicts.loc[verdicts["judge"] == ja, [*key, "verdict_typical"]]
    b = verdicts.loc[verdicts["judge"] == jb, [*key, "verdict_typical"]]
    both = a.merge(b, on=key, suffixes=("_a", "_b"))
    ca, cb = _codes(both["verdict_typical_a"]), _codes(both["verdict_typical_b"])
    ok = (ca >= 0) & (cb >= 0)
    models = sorted(pd.unique(verdicts["model"]).tolist(), key=str)
    groups = [*models, ALL]
    code = pd.Categorical(both["model"], categories=models).codes.astype(np.int64)
    per_model = _matrices(code[ok], ca[ok], cb[ok], len(models))
    m = np.concatenate([per_model, per_model.sum(axis=0, keepdims=True)])
    n = m.sum(axis=(1, 2))
    agree = np.trace(m, axis1=1, axis2=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, agree / np.maximum(n, 1), np.nan)
    return pd.DataFrame(
        {
            "model": groups,
            "judge_a": ja,
            "judge_b": jb,
            "n_both": n,
            "n_agree": agree,
            "agreement_rate": rate,
            "kappa": cohen_kappa(m),
        }
    )[list(CROSS_JUDGE_COLUMNS)].astype(empty_table(CrossJudgeAgreement).dtypes.to_dict())


# --------------------------------------------------------------------------- judge vs effects


def judge_effect_cells(verdicts: pd.DataFrame, effects: pd.DataFrame) -> pd.DataFrame:
    """Per (judge, model, jd, variant): the headline verdict next to ``fit_effects``' statistics.

    ``fit_effects`` pools the résumés of a (model, jd, variant) cell; verdicts are per résumé.
    A cell's verdict is the most common headline (typical-sample) verdict over its résumés, a
    tie between verdicts counting as "mixed" (the judge's reading is split); résumés without a
    verdict are left out (``n_judged`` of ``n_resumes``), a cell with none has verdict None.
    ``finding``: "unverbalised bias" (significant delta, judged justified), "bias on noise"
    (judged bias, delta not significant), else "".
    """
    key = ["judge", "model", "jd", "variant"]
    grouped = verdicts.groupby(key, sort=True, dropna=False)
    cell_id = grouped.ngroup().to_numpy()
    size = grouped.ngroups
    cells = grouped.agg(n_resumes=("arm", "size"), arm=("arm", "first")).reset_index()
    code = _codes(verdicts["verdict_typical"])
    ok = code >= 0
    k = len(VERDICTS)
    c = np.bincount(cell_id[ok] * k + code[ok], minlength=size * k).reshape(size, k)
    top = c.max(axis=1) if size else np.zeros(0, dtype=np.int64)
    split = (c == top[:, None]).sum(axis=1) > 1
    verdict = np.where(split, "mixed", np.array(VERDICTS, dtype=object)[c.argmax(axis=1)]).astype(object)
    verdict[top == 0] = None  # no résumé of the cell has a verdict
    cells["n_judged"] = c.sum(axis=1)
    cells["verdict"] = pd.Series(verdict, dtype=object)
    stats = effects[["model", "jd", "variant", "delta", "q_value", "clears_floor", "significant"]]
    cells = cells.merge(stats, on=["model", "jd", "variant"], how="left", indicator=True)
    has_effect = (cells.pop("_merge") == "both").to_numpy()
    significant = cells["significant"].eq(True).to_numpy()
    # NA where fit_effects has no row for the cell.
    cells["significant"] = pd.arrays.BooleanArray(significant, ~has_effect)
    cells["clears_floor"] = pd.arrays.BooleanArray(cells["clears_floor"].eq(True).to_numpy(), ~has_effect)
    cells["finding"] = np.select(
        [has_effect & significant & (verdict == "justified"), has_effect & ~significant & (verdict == "bias")],
        ["unverbalised bias", "bias on noise"],
        default="",
    )
    return cells[list(EFFECT_CELL_COLUMNS)]


def judge_vs_effects(verdicts: pd.DataFrame, effects: pd.DataFrame) -> pd.DataFrame:
    """Per (judge, model): the judge's headline verdicts cross-tabulated against significance.

    Over (jd, variant) cells with a verdict and a ``fit_effects`` row (see
    ``judge_effect_cells`` for how résumés are aggregated): counts ``significant_<verdict>``
    and ``noise_<verdict>``; ``n_unverbalised_bias`` = significant cells judged justified,
    its rate over significant cells; ``n_bias_on_noise`` = cells judged bias whose delta is
    not significant, its rate over cells judged bias. ``n_unjudged``: cells without any
    verdict; ``n_no_effect``: judged cells ``fit_effects`` has no row for. No verdicts: an
    empty table with the declared columns and dtypes.
    """
    if not len(verdicts):
        return empty_table(JudgeVsEffects)
    cells = judge_effect_cells(verdicts, effects)
    key = ["judge", "model"]
    judged = cells["verdict"].notna().to_numpy()
    has_effect = cells["significant"].notna().to_numpy()
    significant = cells["significant"].fillna(False).to_numpy(dtype=bool)
    verdict = cells["verdict"].to_numpy()
    flags = cells[key].copy()
    for label, side in (("significant", significant), ("noise", ~significant)):
        for v in VERDICTS:
            flags[f"{label}_{v}"] = judged & has_effect & side & (verdict == v)
    flags["n_unjudged"] = ~judged
    flags["n_no_effect"] = judged & ~has_effect
    out = flags.groupby(key, sort=True).sum().astype(np.int64).reset_index()
    out["n_significant"] = out[[f"significant_{v}" for v in VERDICTS]].sum(axis=1)
    out["n_not_significant"] = out[[f"noise_{v}" for v in VERDICTS]].sum(axis=1)
    out["n_cells"] = out["n_significant"] + out["n_not_significant"]
    out["n_unverbalised_bias"] = out["significant_justified"]
    out["n_judged_bias"] = out["significant_bias"] + out["noise_bias"]
    out["n_bias_on_noise"] = out["noise_bias"]
    out["unverbalised_bias_rate"] = out["n_unverbalised_bias"] / out["n_significant"].where(out["n_significant"] > 0)
    out["bias_on_noise_rate"] = out["n_bias_on_noise"] / out["n_judged_bias"].where(out["n_judged_bias"] > 0)
    return out[list(JUDGE_EFFECT_COLUMNS)]
