"""The job-description audit's verdicts (the fit audit's findings, core/inference/).

* ``fit_level:<variant>`` [family ``<arm>:<axis>``]: the change a level makes to the score,
  averaged over the job descriptions, with the résumé as the unit (``fit_pooled.pooled_levels``:
  the paired t over résumés, a name level's names a random effect; with one résumé, over the
  job descriptions, a claim about that résumé, and its note says so). The placebo arm's
  findings are the check: they should be beyond noise in about alpha of studies at most.
* ``fit_group:sex`` and ``fit_group:race:<group>`` [family ``names:<axis>``]: the
  name levels of an axis that declares ``groups`` compared within résumé: female minus male
  names, each race/ethnicity minus the reference (white, where the names include it), each
  résumé's names averaged over the job descriptions; two-way cluster-robust by résumé and
  name, so a penalty on one name is that name's quirk unless its group's other names share
  it (``core/inference/clustered.py``). A level with ``sex: null`` is in no sex contrast.
* ``impact_ratio:...`` [family ``impact:<selection>:<dimension>``]: the name
  groups' selection rates (``core/fairness/impact.py``).

Every family of a model goes through one multiplicity control (``core/inference``: Holm over
the families, Benjamini–Hochberg within), the prompt-injection and placebo arms included.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from resumebias_dagster.core.fairness.impact import impact_findings, impact_units
from resumebias_dagster.core.inference import InferenceSettings, findings, finish, side_contrast
from resumebias_dagster.core.jd_audit.fit_pooled import level_units, pooled_levels
from resumebias_dagster.core.jd_audit.fit_stats import SCORE_RANGE, text_values
from resumebias_dagster.core.jd_audit.impact import DEFAULT_SCORE_CUT, fit_selection_rows
from resumebias_dagster.core.tables import FindingUnits, conform, empty_table

REFERENCE_RACE = "white"


def _level_findings(scores: pd.DataFrame, settings: InferenceSettings, arms) -> list[pd.DataFrame]:
    keys, est, p, test = pooled_levels(scores, settings, arms)
    description = [
        f"{a} {lv} minus the baseline résumé, over {n} job description{'s' if n != 1 else ''}"
        for a, lv, n in zip(keys["axis"], keys["level"], keys["n_jds"])
    ]
    meta = {
        "model": keys["model"].to_numpy(),
        "study": "jd_audit",
        "finding": ("fit_level:" + keys["variant"]).to_numpy(),
        "family": (keys["arm"] + ":" + keys["axis"]).to_numpy(),
        "description": np.asarray(description, dtype=object),
        "note": _one_resume_notes(scores, keys, test),
    }
    return [findings(meta, est, p, "fit_delta", test, settings=settings)]


def _one_resume_notes(scores: pd.DataFrame, keys: pd.DataFrame, test: np.ndarray) -> np.ndarray:
    """What a level's finding can claim when one résumé carries it: that résumé (with that name,
    for a name level), never a group; the job descriptions are the units."""
    names: dict[tuple[str, str], list[str]] = {}
    if "name" in scores.columns:
        named = scores[scores["name"].notna()]
        for (model, variant), values in named.groupby(["model", "variant"])["name"]:
            names[str(model), str(variant)] = sorted(set(map(str, values)))
    notes = np.full(len(keys), "", dtype=object)
    for i in np.flatnonzero(test == "t_jd"):
        who = names.get((str(keys["model"].iloc[i]), str(keys["variant"].iloc[i])))
        claim = (
            f"a claim about that résumé with the name {', '.join(who)} only, not about its group"
            if who
            else "a claim about that résumé only"
        )
        notes[i] = f"one résumé: the job descriptions are the units, {claim}"
    return notes


def _group_texts(scores: pd.DataFrame, groups: Mapping[str, Mapping[str, Mapping[str, str | None]]]):
    """Per name axis that declares groups: its variants' perceived groups and its texts (one row
    per text, a text without a name named by its variant)."""
    if "axis" not in scores.columns:
        return
    texts = text_values(scores[scores["axis"].isin(list(groups)) | (scores["variant"] == "baseline")])
    for axis, levels in groups.items():
        variants = {f"{axis}_{level}": g for level, g in levels.items()}
        t = texts[texts["variant"].isin(list(variants))]
        if len(t):
            t = t.assign(name=t["name"].fillna(t["variant"]) if "name" in t.columns else t["variant"])
            yield axis, variants, t


def _contrasts(t: pd.DataFrame, variants: Mapping[str, Mapping[str, str | None]]):
    """The group contrasts of one axis's rows ``t``: (key, description, side), side +1 for the
    rows of the group, -1 for those it is compared with, 0 for the rest."""
    sex = t["variant"].map(lambda v: variants[v]["sex"])
    race = t["variant"].map(lambda v: variants[v]["race_ethnicity"])
    out = [
        (
            "sex",
            "female minus male names on the same résumé",
            np.where(sex == "female", 1, np.where(sex == "male", -1, 0)),
        )
    ]
    if REFERENCE_RACE in set(race):
        out += [
            (
                f"race:{r}",
                f"{r.replace('_', ' ')} minus {REFERENCE_RACE} names on the same résumé",
                np.where(race == r, 1, np.where(race == REFERENCE_RACE, -1, 0)),
            )
            for r in sorted(r for r in race.dropna().unique() if r != REFERENCE_RACE)
        ]
    return out


def _group_findings(
    scores: pd.DataFrame, settings: InferenceSettings, groups: Mapping[str, Mapping[str, Mapping[str, str | None]]]
) -> list[pd.DataFrame]:
    frames = []
    for axis, variants, texts in _group_texts(scores, groups):
        # Each résumé's name variant, averaged over the job descriptions it was scored under.
        t = texts.groupby(["model", "resume_id", "variant"], as_index=False, sort=True).agg(
            value=("value", "mean"), name=("name", "first")
        )
        for model, rows in t.groupby("model", sort=True):
            at = (t["model"] == model).to_numpy()
            resume = pd.factorize(rows["resume_id"])[0]
            name = pd.factorize(rows["name"])[0]
            level = pd.factorize(rows["variant"])[0]
            for key, description, side in _contrasts(t, variants):
                low, high = SCORE_RANGE
                est = side_contrast(rows["value"].to_numpy(float), resume, side[at], name, level, low=low, high=high)
                frames.append(
                    findings(
                        {
                            "model": model,
                            "study": "jd_audit",
                            "finding": f"fit_group:{key}",
                            "family": f"names:{axis}",
                            "description": description,
                            "note": ""
                            if np.isfinite(est.se[0]) or est.n_resumes[0] < 2
                            else "one name per group: a "
                            "name's own effect cannot be told from its group's, so there is no test",
                        },
                        est,
                        None,
                        "fit_delta",
                        "t_resume_name",
                        settings=settings,
                    )
                )
    return frames


def group_units(
    scores: pd.DataFrame, groups: Mapping[str, Mapping[str, Mapping[str, str | None]]] | None
) -> pd.DataFrame:
    """The ``FindingUnits`` of the ``fit_group`` findings: each résumé's contrast under each job
    description (its group's names' mean minus the names it is compared with, as
    ``side_contrast`` takes them), ``name`` the names it was drawn from (a later audit's contrast
    is paired with it only on the same names)."""
    frames = []
    for _, variants, t in _group_texts(scores, groups or {}):
        for key, _, side in _contrasts(t, variants):
            rows = t.assign(side=side)[side != 0]
            rows = rows[rows["value"].notna()]
            by = ["model", "resume_id", "jd"]
            plus = rows[rows["side"] > 0].groupby(by)["value"].mean()
            minus = rows[rows["side"] < 0].groupby(by)["value"].mean()
            names = rows.groupby(by)["name"].agg(lambda n: "; ".join(sorted(set(map(str, n)))))
            d = (plus - minus).dropna()
            if not len(d):
                continue
            frames.append(
                pd.DataFrame(
                    {
                        "model": d.index.get_level_values("model").astype(str),
                        "study": "jd_audit",
                        "finding": f"fit_group:{key}",
                        "resume_id": d.index.get_level_values("resume_id").astype(str),
                        "jd": d.index.get_level_values("jd").astype(str),
                        "name": names.reindex(d.index).to_numpy(object),
                        "unit": d.to_numpy(float),
                    }
                )
            )
    if not frames:
        return empty_table(FindingUnits)
    return conform(pd.concat(frames, ignore_index=True), FindingUnits)


def fit_units(
    scores: pd.DataFrame,
    groups: Mapping[str, Mapping[str, Mapping[str, str | None]]] | None = None,
    score_cut: float = DEFAULT_SCORE_CUT,
) -> pd.DataFrame:
    """The ``FindingUnits`` of the fit audit: its levels', its group contrasts' and, with
    ``groups``, its impact ratios' (selected as ``fit_verdicts`` takes it at ``score_cut``)."""
    frames = [level_units(scores), group_units(scores, groups)]
    if groups:
        rows, selections = fit_selection_rows(scores, groups, score_cut)
        frames.append(impact_units(rows, selections, "jd_audit"))
    frames = [t for t in frames if len(t)]
    return conform(pd.concat(frames, ignore_index=True), FindingUnits) if frames else empty_table(FindingUnits)


def fit_verdicts(
    scores: pd.DataFrame,
    settings: InferenceSettings,
    groups: Mapping[str, Mapping[str, Mapping[str, str | None]]] | None = None,
    arms: Mapping[str, str] | None = None,
    score_cut: float = DEFAULT_SCORE_CUT,
) -> pd.DataFrame:
    """The ``Verdicts`` rows of the fit audit; ``groups`` the name axes' perceived groups
    (``probe_axes.yaml``), whose impact ratios (selected: recommend yes, or a score at or above
    ``score_cut``) are ranked with the probe arm's findings."""
    if not len(scores):
        return finish([], settings)
    frames = _level_findings(scores, settings, arms)
    frames += _group_findings(scores, settings, groups or {})
    if groups:
        rows, selections = fit_selection_rows(scores, groups, score_cut)
        frames += impact_findings(rows, selections, "jd_audit", settings)
    return finish(frames, settings)
