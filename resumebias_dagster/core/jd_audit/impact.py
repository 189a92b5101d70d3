"""Impact ratios of the job-description audit: who counts as selected, and in which group.

The measure itself (selection rates, impact ratios, their intervals) is the one of both
studies, in ``core/fairness/impact.py``; this module adds what only the fit audit knows: the
groups each name level of ``probe_axes.yaml`` declares, and selection as a ``recommend`` yes
or a score at or above a cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.fairness.impact import impact_table
from resumebias_dagster.core.tables import FitImpactRatios, empty_table

DEFAULT_SCORE_CUT = 7.0
FIT_GROUP_SOURCE = (
    "groups declared per name level in probe_axes.yaml; names are a proxy for perceived group, not identity"
)


def name_level_rows(
    scores: pd.DataFrame, groups: Mapping[str, Mapping[str, Any]]
) -> tuple[pd.DataFrame, dict[tuple[str, str], Any]]:
    """The rows of ``scores`` on an axis that declares ``groups`` (the name variants), and each
    (axis, level)'s group; a level the axis does not declare is refused, naming it (scores of
    older probes)."""
    named = scores[scores["axis"].isin(list(groups))]
    lookup = {(axis, str(level)): g for axis, levels in groups.items() for level, g in levels.items()}
    unknown = sorted({p for p in zip(named["axis"], named["level"].astype(str)) if p not in lookup})
    if unknown:
        axis, level = unknown[0]
        raise ValueError(
            f"fit scores: level {level!r} of axis {axis!r} has no declared group in probe_axes.yaml "
            f"(`groups` of {axis}: {sorted(groups[axis])}); re-score with the current probes or declare it"
        )
    return named, lookup


def name_groups(catalog_dir=None) -> dict[str, dict[str, dict[str, str | None]]]:
    """Axis -> level -> {sex, race_ethnicity}: the ``groups`` the axes of ``probe_axes.yaml`` declare."""
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.jd_audit.probes import AXES_FILE, load_probe_axes

    groups = {a.id: a.params["groups"] for a in load_probe_axes(catalog_dir).axes if "groups" in a.params}
    if not groups:
        raise CatalogError(
            f"{AXES_FILE}: no axis declares `groups` (level -> {{sex, race_ethnicity}}), so the fit audit "
            "has no groups to compare; add them under the firstName axis as the packaged file does"
        )
    return groups


def score_selection(score_cut: float) -> str:
    """The ``selection`` name of "score at or above ``score_cut``"."""
    return f"score_at_least_{score_cut:g}"


def score_cut_of(verdicts: pd.DataFrame) -> float:
    """The score cut a fit audit's verdicts read as selected (one for every model, as the
    ``fit_verdicts`` asset's config sets it), from their impact-ratio findings' names
    (``DEFAULT_SCORE_CUT`` where they have none)."""
    cuts = verdicts["finding"].astype(str).str.extract(r"^impact_ratio:score_at_least_([0-9.]+):")[0].dropna()
    return float(cuts.iloc[0]) if len(cuts) else DEFAULT_SCORE_CUT


def _at_least(distribution: pd.Series, cut: float) -> np.ndarray:
    """P(score >= cut) from each row's stored 1-10 distribution (a JSON list; NaN without)."""
    codes, uniques = pd.factorize(distribution)
    probs = np.array([sum(p for s, p in zip(range(1, 11), json.loads(u)) if s >= cut) for u in uniques] + [np.nan])
    return probs[codes]


def fit_selection_rows(
    scores: pd.DataFrame,
    groups: Mapping[str, Mapping[str, Mapping[str, str | None]]],
    score_cut: float = DEFAULT_SCORE_CUT,
) -> tuple[pd.DataFrame, tuple[str, str]]:
    """One row per name variant of the fit audit (model, job description, résumé, level) with
    its selection values, and the selections' names: recommend yes over the runs that
    answered, and a score at or above ``score_cut`` (the probability from the model's score
    distribution where it stores one, else the share of valid runs)."""
    from resumebias_dagster.core.jd_audit.fit_stats import recommend_yes

    if not 1 <= score_cut <= 10:
        raise ValueError(f"score_cut must lie on the 1-10 score scale, got {score_cut!r}")
    selection = score_selection(score_cut)
    required = ("model", "axis", "level", "score")
    missing = [c for c in required if c not in scores.columns]
    if missing:
        raise ValueError(f"fit scores: missing columns {missing}; expected {', '.join(required)}")
    named, lookup = name_level_rows(scores, groups)
    score = pd.to_numeric(named["score"], errors="coerce").to_numpy(dtype=float)
    sampled = np.where(np.isnan(score), np.nan, score >= score_cut)
    if "score_distribution" in named.columns:
        exact = _at_least(named["score_distribution"], score_cut)
        has = pd.Series(~np.isnan(exact), index=named.index).groupby(named["model"]).transform("all").to_numpy(bool)
        sampled = np.where(has, exact, sampled)
    rows = pd.DataFrame(
        {
            "model": named["model"].to_numpy(),
            "jd": named["jd"].to_numpy() if "jd" in named.columns else "",
            "resume": (named["resume_id"].astype(str).to_numpy() if "resume_id" in named.columns else "0"),
            "level": named["level"].astype(str).to_numpy(),
            "axis": named["axis"].to_numpy(),
            "name": named["name"].to_numpy(object) if "name" in named.columns else None,
            "recommend_yes": recommend_yes(named),
            selection: sampled.astype(float),
        }
    )
    out = (
        rows.groupby(["model", "jd", "resume", "axis", "level"], sort=True, dropna=False)
        .agg(name=("name", "first"), recommend_yes=("recommend_yes", "mean"), **{selection: (selection, "mean")})
        .reset_index()
    )
    out["name"] = out["name"].where(out["name"].notna(), out["level"])  # one name per level: the level names it
    out["sex"] = [lookup[(a, lv)]["sex"] for a, lv in zip(out["axis"], out["level"])]
    out["race_ethnicity"] = [lookup[(a, lv)]["race_ethnicity"] for a, lv in zip(out["axis"], out["level"])]
    return out, ("recommend_yes", selection)


def fit_impact_ratios(
    scores: pd.DataFrame,
    groups: Mapping[str, Mapping[str, Mapping[str, str | None]]] | None = None,
    score_cut: float = DEFAULT_SCORE_CUT,
    snapshots: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Impact ratios of the fit audit over the name variants (the levels of the axes in
    ``groups``, default: ``name_groups()``), pooled over job descriptions and résumés per
    model: selected = ``recommend`` yes, or a score at or above ``score_cut``. ``snapshots``
    gives each model's ``resolved_models``."""
    if not 1 <= score_cut <= 10:
        raise ValueError(f"score_cut must lie on the 1-10 score scale, got {score_cut!r}")
    if not len(scores):
        return empty_table(FitImpactRatios)
    rows, selections = fit_selection_rows(scores, name_groups() if groups is None else groups, score_cut)
    return impact_table(rows, selections, FIT_GROUP_SOURCE, table=FitImpactRatios, snapshots=snapshots)
