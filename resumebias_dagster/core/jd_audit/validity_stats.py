"""Does the screener measure qualification? The validity findings of the fit task (issue 42),
as verdicts of the ``Verdicts`` table, through the estimators, intervals, multiplicity control
and verdict rules of ``core/inference/``.

Input: ``scores`` (``FitScores`` rows run on the validity pairs as variants: model, jd,
resume_id, variant, run, score; ``expected_score`` where the model gives it) and ``pairs``
(``ValidityPairs`` rows: jd, resume_id, group, name, variant, role, edit), merged on (jd,
resume_id, variant). A *set* is (jd, resume_id, group): one baseline and its twins, every
text with one name of that group. A text's value is the model's exact expected score where
every row of the model carries one, else the mean of its valid runs (``fit_stats.text_values``:
runs are repeated measures, never units). A *comparison* is a better or worse twin against its
set's baseline: 1 when ordered the right way (better above, worse below), 0.5 on a tie (equal
to within rounding), 0 otherwise; an equal twin's *change* is its value minus the baseline's.

The résumé is the unit of every interval: a résumé's share is the mean of its comparisons over
the job descriptions, groups and edits in the finding. Findings (per model):

* ``validity:criterion`` (and ``validity:criterion:<jd>`` with two job descriptions or more;
  ``validity:group:<group>`` with two groups or more): the mean over résumés of their share,
  kind ``criterion_validity``. Interval: the t over résumés of the shares (each in 0..1), with
  the sparse and no-spread rules of ``core/inference/estimate.py`` where shares tie: a
  deterministic scorer that orders every pair right (or ties every one) has no spread, and the
  interval is then the exact binomial bound on the share of résumés the sample can have missed
  (60 résumés all right: 0.94 to 1); where at least half the shares tie and the others differ
  (``SHARE_SPARSE``), the t's variance is taken at the exact (Clopper-Pearson) bound of the
  differing share. What it assumes: the
  résumés are a sample of the population the claim is about, and their shares' mean is close
  enough to normal (the central limit theorem; bounded shares get there fast, and the tie rules
  cover the designs where they do not). Its verdict reads the interval alone (``valid`` at or
  above the target of ``catalog/inference.yaml``, ``better than chance`` above 0.5, ``worse
  than chance`` below, else ``no better than chance``), one finding at a time: the per-JD and
  per-group findings are not adjusted for their number.
* ``validity:discriminant`` (kind ``fit_delta``): equal twins minus their baseline, the mean over
  résumés of each résumé's mean change: the placebo arm read as validity. ``equivalent`` (the
  95% interval inside the fit task's margin, TOST) is discriminant validity shown;
  ``beyond_noise``: an edit that must not matter moves the score.
* ``validity:group_gap:<group>`` (kind ``validity_gap``): a group's criterion validity minus the
  reference group's on the same résumé (the reference: the first group of the pairs, or the one
  named); ``validity:equal:<group>`` and ``validity:equal_gap:<group>`` (kind ``fit_delta``):
  the equal twins' change per group and its contrast to the reference. The contrasts are
  ``clustered.side_contrast``: within résumé, names a random effect where they recur on several
  résumés; where one name stands for a group on every résumé its quirk cannot be told from its
  group's, so the contrast is that name's (the paired t over résumés; the note says so).
  Verdicts ``beyond_noise`` / ``equivalent`` (ruled out within the margin) / ``within_noise`` /
  ``inconclusive``, after the multiplicity control of every family (Holm over the model's
  families, Benjamini–Hochberg within).

One résumé: its comparisons (job description x edit, averaged over the groups) are the units,
a claim about that résumé only (test ``t_comparisons``); a group contrast needs two résumés.
``bench_inference_calibration.py --only validity`` checks the error rates and coverage by
simulation through this code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import CHANCE, InferenceSettings, findings, finish, paired, side_contrast
from resumebias_dagster.core.inference.estimate import Estimate
from resumebias_dagster.core.inference.verdicts import qualification_word
from resumebias_dagster.core.jd_audit.fit_stats import BASELINE, SCORE_RANGE, text_values
from resumebias_dagster.core.tables.verdicts import QUALIFICATION_FINDINGS

SCORE_COLUMNS = ("model", "jd", "resume_id", "variant", "run", "score")
PAIR_COLUMNS = ("jd", "resume_id", "group", "name", "variant", "role", "edit")
ROLES = ("baseline", "better", "worse", "equal")
DIRECTION = {"better": 1.0, "worse": -1.0}
PREFIX = "validity:"
CRITERION = QUALIFICATION_FINDINGS["jd_audit"][0]  # "validity:criterion"
SHARE_CHANCE = CHANCE["criterion_validity"]
# A difference of two résumés' shares lies in [-1, 1]; of two changes in [-18, 18] points.
GAP_RANGE = (-1.0, 1.0)
CHANGE_GAP_RANGE = (2 * SCORE_RANGE[0], 2 * SCORE_RANGE[1])
# Two values this close (relative, at least 1 point) are a tie: rounding of equal scores.
TIE_ROUNDING = 1e-9
# A résumé's share is the mean of a few comparisons, so shares tie by construction (a random
# scorer's 8 comparisons give 0.5 to a quarter of the résumés): the sparse rule reads them as
# most résumés unmoved only where at least half tie (``clustered.unit_spread``). Applied to every
# tie it covered 98% of a random scorer's true 0.5, not 95%.
SHARE_SPARSE = 0.5


def _check_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs' key columns as strings; refuses what the statistics cannot read, in one line."""
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"validity pairs: missing columns {missing}; expected {', '.join(PAIR_COLUMNS)}")
    p = pairs[list(PAIR_COLUMNS)].astype(str)
    bad = ~p["role"].isin(ROLES)
    if bad.any():
        row = p[bad].iloc[0]
        raise ValueError(
            f"validity pairs: role {row['role']!r} (variant {row['variant']!r}) is not one of {', '.join(ROLES)}"
        )
    twice = p.duplicated(["jd", "resume_id", "variant"])
    if twice.any():
        row = p[twice].iloc[0]
        raise ValueError(
            f"validity pairs: variant {row['variant']!r} occurs twice for jd {row['jd']!r}, resume_id {row['resume_id']!r}"
        )
    p["twin"] = [
        v[len(g) + 1 :] if v.startswith(f"{g}:") else v for v, g in zip(p["variant"].to_numpy(), p["group"].to_numpy())
    ]
    p["twin"] = p["twin"].where(p["role"] != "baseline", BASELINE)
    bases = (p["role"] == "baseline").groupby([p["jd"], p["resume_id"], p["group"]], sort=False).sum()
    wrong = bases[bases != 1].reset_index()
    if len(wrong):
        jd, resume, group, n = wrong.iloc[0][["jd", "resume_id", "group", "role"]]
        what = "twins but no baseline" if n == 0 else f"{n} baselines"
        raise ValueError(f"validity pairs: the set jd={jd!r}, resume_id={resume!r}, group={group!r} has {what}")
    clash = p.duplicated(["jd", "resume_id", "group", "twin"])
    if clash.any():
        row = p[clash].iloc[0]
        raise ValueError(f"validity pairs: two twins of one set read as {row['twin']!r} (variant {row['variant']!r})")
    return p


def _plain(value):
    """A value as Python writes it (numpy's scalars repr as ``np.int64(0)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _check_scores(scores: pd.DataFrame, p: pd.DataFrame) -> pd.DataFrame:
    """The score rows with their pair's set and twin; refuses missing columns, repeated runs and
    rows that name no pair."""
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"validity scores: missing columns {missing}; expected {', '.join(SCORE_COLUMNS)}")
    keys = ["jd", "resume_id", "variant"]
    s = scores.assign(**{k: scores[k].astype(str) for k in keys})
    twice = s.duplicated(["model", *keys, "run"])
    if twice.any():
        row = s[twice].iloc[0]
        where = ", ".join(f"{c}={_plain(row[c])!r}" for c in ("model", *keys, "run"))
        raise ValueError(f"validity scores: the same run occurs twice ({where})")
    value_columns = [c for c in (*SCORE_COLUMNS, "expected_score") if c in s.columns]
    s = s[value_columns].merge(p, on=keys, how="left", validate="many_to_one")
    lost = s["role"].isna()
    if lost.any():
        row = s[lost].iloc[0]
        raise ValueError(
            f"validity scores: {int(lost.sum())} rows name no pair of the pairs table "
            f"(first: jd={row['jd']!r}, resume_id={row['resume_id']!r}, variant={row['variant']!r})"
        )
    if len(s) and not (s["role"] == "baseline").any():
        raise ValueError("validity scores: no baseline was scored; each twin is compared with its set's baseline")
    return s


def comparisons(scores: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per scored twin: model, jd, resume_id, group, name, twin, role, edit, the
    baseline's value ``s0``, the twin's ``value``, ``right`` (1 / 0.5 / 0 for a better or worse
    twin, NaN for an equal one) and ``change`` (value - s0). A twin or baseline without a valid
    run has no value: its comparison is left out."""
    p = _check_pairs(pairs)
    s = _check_scores(scores, p)
    # Each set is a "résumé" of the text-value rule, each twin a "variant" of it.
    sets = pd.factorize(s["resume_id"] + "\x1f" + s["group"])[0]
    keyed = s.assign(resume_id=sets.astype(str), variant=s["twin"])
    values = text_values(keyed.drop(columns=["group", "name", "role", "edit", "twin"]))
    values["set"] = values["resume_id"].astype(np.int64)
    info = s.assign(set=sets).drop_duplicates(["jd", "set", "twin"])
    info = info[["jd", "set", "twin", "resume_id", "group", "name", "role", "edit"]]
    v = values.drop(columns=["resume_id"]).merge(info, left_on=["jd", "set", "variant"], right_on=["jd", "set", "twin"])
    base = v.loc[v["role"] == "baseline", ["model", "jd", "set", "value"]].rename(columns={"value": "s0"})
    out = v[v["role"] != "baseline"].merge(base, on=["model", "jd", "set"], how="left")
    out = out[np.isfinite(out["value"]) & np.isfinite(out["s0"])].copy()
    change = out["value"].to_numpy(float) - out["s0"].to_numpy(float)
    tie = np.abs(change) <= TIE_ROUNDING * np.maximum(1.0, np.abs(out["s0"].to_numpy(float)))
    signed = np.sign(change) * out["role"].map(DIRECTION).to_numpy(float)
    out["change"] = np.where(tie, 0.0, change)
    out["right"] = np.where(tie, 0.5, (signed > 0).astype(float))
    out.loc[out["role"] == "equal", "right"] = np.nan
    columns = ["model", "jd", "resume_id", "group", "name", "twin", "role", "edit", "s0", "value", "right", "change"]
    return out[columns].reset_index(drop=True)


def _means(codes: np.ndarray, cells: np.ndarray, x: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A (findings x cells) array of the mean of ``x`` per (finding code, cell code); NaN where empty."""
    flat = codes * size[1] + cells
    sums = np.bincount(flat, weights=x, minlength=size[0] * size[1])
    counts = np.bincount(flat, minlength=size[0] * size[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sums / counts).reshape(size)


def _units(c: pd.DataFrame, keys: list[str], value: str):
    """Per finding (``keys``): the units of its test as a (findings x units) array, whether it
    has one résumé (then its comparisons, job description x twin averaged over the groups, are
    the units), its résumés, and the finding keys."""
    c = c[np.isfinite(c[value].to_numpy(float))]
    by = c.groupby(keys, sort=True)
    codes, key = by.ngroup().to_numpy(), by.size().reset_index()[keys]
    x = c[value].to_numpy(float)
    resume = pd.factorize(c["resume_id"], sort=True)[0]
    grid = _means(codes, resume, x, (len(key), int(resume.max()) + 1))
    n = np.isfinite(grid).sum(axis=1)
    one = n == 1
    if one.any():
        mine = one[codes]
        cell = pd.factorize(pd.Series(c["jd"].to_numpy()[mine]) + "\x1f" + c["twin"].to_numpy()[mine])[0]
        by_cell = _means(codes[mine], cell, x[mine], (len(key), int(cell.max()) + 1))
        grid = np.pad(grid, ((0, 0), (0, max(0, by_cell.shape[1] - grid.shape[1]))), constant_values=np.nan)
        grid[one] = np.nan
        grid[one, : by_cell.shape[1]] = by_cell[one]
    return grid, one, n, key


def _one_resume(est: Estimate, one: np.ndarray, n_resumes: np.ndarray) -> tuple[Estimate, np.ndarray]:
    """``est`` with one résumé's findings counting one résumé (its comparisons the units)."""
    test = np.where(one, "t_comparisons", "t_resume").astype(object)
    return replace(est, n_resumes=np.where(one, 1, n_resumes).astype(float)), test


def _notes(one: np.ndarray, est: Estimate, extra: Sequence[str] | None = None) -> np.ndarray:
    notes = np.full(len(one), "", dtype=object)
    notes[one] = "one résumé: its comparisons (job description x edit) are the units, a claim about that résumé only"
    low, _ = est.interval(0.95)
    notes[~np.isfinite(low)] = "one comparison: no interval, so no claim against chance or the margin"
    if extra is not None:
        notes = np.array([f"{a}; {b}" if a and b else a or b for a, b in zip(notes, extra)], dtype=object)
    return notes


def _criterion(c: pd.DataFrame, keys: list[str], finding, family: str, describe, *, settings) -> pd.DataFrame:
    """Criterion validity per ``keys`` (the model and maybe jd or group): each résumé's share of
    comparisons ordered the right way, against chance (``SHARE_CHANCE``) and the target."""
    rated = c[c["role"].isin(list(DIRECTION))]
    if not len(rated):
        return pd.DataFrame()
    grid, one, n, key = _units(rated, keys, "right")
    excess = paired(grid - SHARE_CHANCE, -SHARE_CHANCE, 1 - SHARE_CHANCE, sparse_share=SHARE_SPARSE)
    est, test = _one_resume(excess, one, n)
    ties = rated.assign(tie=rated["right"] == 0.5).groupby(keys, sort=True)["tie"].mean().to_numpy(float)
    notes = [f"{t:.0%} of comparisons tied (each counts half)" if t > 0 else "" for t in ties]
    # Per JD or group: a random scorer would be called better or worse than chance for one of
    # k in up to k x 5% of studies; the k intervals are simultaneous at 95% instead (Bonferroni).
    split = key.groupby("model")["model"].transform("size").to_numpy(float) if len(keys) > 1 else np.ones(len(key))
    by = f"findings by {keys[-1]}"
    level = [
        f"interval at {1 - 0.05 / k:.2%}: simultaneous over the model's {k:.0f} {by}" if k > 1 else "" for k in split
    ]
    notes = [f"{a}; {b}" if a and b else a or b for a, b in zip(level, notes)]
    meta = {
        "model": key["model"].to_numpy(),
        "study": "jd_audit",
        "finding": np.asarray([finding(r) for r in key.to_dict("records")], dtype=object),
        "family": family,
        "description": np.asarray([describe(r) for r in key.to_dict("records")], dtype=object),
        "note": _notes(one, est, notes),
    }
    return findings(meta, est, None, "criterion_validity", test, settings=settings, split=split)


def _change(c: pd.DataFrame, keys: list[str], finding, family: str, describe, *, settings) -> pd.DataFrame:
    """Equal twins minus their baseline per ``keys``: each résumé's mean change (fit points)."""
    equal = c[c["role"] == "equal"]
    if not len(equal):
        return pd.DataFrame()
    grid, one, n, key = _units(equal, keys, "change")
    est, test = _one_resume(paired(grid, *SCORE_RANGE), one, n)
    meta = {
        "model": key["model"].to_numpy(),
        "study": "jd_audit",
        "finding": np.asarray([finding(r) for r in key.to_dict("records")], dtype=object),
        "family": family,
        "description": np.asarray([describe(r) for r in key.to_dict("records")], dtype=object),
        "note": _notes(one, est),
    }
    return findings(meta, est, None, "fit_delta", test, settings=settings)


def _stack(ests: list[Estimate]) -> Estimate:
    """Several estimates as one (their fields end to end), for one ``findings`` call."""
    fields = ("estimate", "se", "df", "n_resumes", "n_units", "extra_var", "tie", "low", "high")
    stacked = {f: np.concatenate([np.asarray(getattr(e, f), dtype=float) for e in ests]) for f in fields}
    names = np.concatenate([np.zeros(len(e)) if e.n_names is None else np.asarray(e.n_names, float) for e in ests])
    return Estimate(**stacked, n_names=names, clip=ests[0].clip)


def _gaps(c: pd.DataFrame, reference: str, *, value: str, settings: InferenceSettings) -> pd.DataFrame:
    """Each group against the reference group within résumé (``side_contrast``): criterion
    validity (``value`` "right", kind ``validity_gap``) or the equal twins' change ("change")."""
    rows = c[np.isfinite(c[value])]
    rows = rows.groupby(["model", "resume_id", "group", "name"], sort=True)[value].mean().reset_index()
    kind, (low, high), what, stem = (
        ("validity_gap", GAP_RANGE, "criterion validity", "group_gap")
        if value == "right"
        else ("fit_delta", CHANGE_GAP_RANGE, "equal twins' change", "equal_gap")
    )
    sparse = SHARE_SPARSE if value == "right" else 0.0
    ests, meta = [], []
    for model, mine in rows.groupby("model", sort=True):
        if reference not in set(mine["group"]):
            continue
        resume, name, level = (pd.factorize(mine[k])[0] for k in ("resume_id", "name", "group"))
        y = mine[value].to_numpy(float)
        for group in sorted(set(mine["group"]) - {reference}):
            side = np.where(mine["group"] == group, 1, np.where(mine["group"] == reference, -1, 0))
            est = side_contrast(y, resume, side, name, level, low=low, high=high, sparse_share=sparse)
            test, note = "t_resume_name", ""
            if not np.isfinite(est.se[0]) and est.n_resumes[0] >= 2:
                # One name per group on several résumés: the contrast is that name's against the reference's.
                est = side_contrast(y, resume, side, low=low, high=high, sparse_share=sparse)
                test, note = "t_resume", "one name per group: this contrasts those names, not the groups"
            if est.n_resumes[0] < 2:
                test, note = "t_resume", "a group contrast needs two résumés or more: no interval"
            ests.append(est)
            description = f"{what}: {group} minus {reference} names on the same résumé"
            meta.append((model, f"{PREFIX}{stem}:{group}", description, note, test))
    if not ests:
        return pd.DataFrame()
    columns = [np.asarray(x, dtype=object) for x in zip(*meta)]
    info: dict[str, object] = dict(zip(("model", "finding", "description", "note"), columns[:4]))
    info |= {"study": "jd_audit", "family": f"{PREFIX}{stem}"}
    return findings(info, _stack(ests), None, kind, columns[4], settings=settings)


def _reference(p: pd.DataFrame, reference: str | None) -> str:
    groups = list(pd.unique(p["group"].astype(str)))
    if reference is None:
        return groups[0]
    if reference not in groups:
        raise ValueError(f"validity: reference group {reference!r} is not a group of the pairs ({', '.join(groups)})")
    return reference


def validity_verdicts(
    scores: pd.DataFrame,
    pairs: pd.DataFrame,
    settings: InferenceSettings | None = None,
    reference: str | None = None,
) -> pd.DataFrame:
    """The ``Verdicts`` rows of the validity findings (module docstring) of every model in
    ``scores``; ``reference``: the group the others are contrasted with (default the pairs'
    first group)."""
    settings = settings or InferenceSettings()
    c = comparisons(scores, pairs)
    ref = _reference(pairs, reference)
    if not len(c):
        return finish([], settings)
    rules = "better twin above and worse twin below the baseline (ties half)"
    frames = [
        _criterion(
            c, ["model"], lambda r: CRITERION, CRITERION, lambda r: f"{rules}, each résumé's share", settings=settings
        ),
        _change(
            c,
            ["model"],
            lambda r: f"{PREFIX}discriminant",
            f"{PREFIX}discriminant",
            lambda r: "equal twins (an edit that must not matter) minus their baseline, every group",
            settings=settings,
        ),
    ]
    several_jds = c.groupby("model")["jd"].transform("nunique") > 1
    frames.append(
        _criterion(
            c[several_jds],
            ["model", "jd"],
            lambda r: f"{CRITERION}:{r['jd']}",
            f"{CRITERION}_by_jd",
            lambda r: f"{rules}, under job description {r['jd']}",
            settings=settings,
        )
    )
    if c["group"].nunique() > 1:
        frames += _by_group(c, ref, rules, settings)
    return finish([f for f in frames if len(f)], settings)


def _by_group(c: pd.DataFrame, reference: str, rules: str, settings: InferenceSettings) -> list[pd.DataFrame]:
    """Criterion validity and the equal twins' change per name group, and each against the reference."""
    return [
        _criterion(
            c,
            ["model", "group"],
            lambda r: f"{PREFIX}group:{r['group']}",
            f"{CRITERION}_by_group",
            lambda r: f"{rules}, with {r['group']} names",
            settings=settings,
        ),
        _change(
            c,
            ["model", "group"],
            lambda r: f"{PREFIX}equal:{r['group']}",
            f"{PREFIX}equal",
            lambda r: f"equal twins minus their baseline, with {r['group']} names",
            settings=settings,
        ),
        _gaps(c[c["role"].isin(list(DIRECTION))], reference, value="right", settings=settings),
        _gaps(c[c["role"] == "equal"], reference, value="change", settings=settings),
    ]


def validity_summary(verdicts: pd.DataFrame) -> dict[str, str]:
    """Per model with a ``validity:criterion`` finding, the report's word: ``valid``, ``no
    better than chance`` (its interval contains chance or lies below it) or ``not shown valid``
    (better than chance but short of the target, or no interval to tell)."""
    rows = verdicts[verdicts["finding"] == CRITERION]
    return {str(r["model"]): qualification_word(r["verdict"], r["ci_low"]) for r in rows.to_dict("records")}
