"""The first screen of each audited tool, in plain words (issue 43): does it tell better from
worse candidates; which signals that should not matter moved its answers, largest first, in
its own units; which were ruled out, one line per family; and what this design could not
decide, with the study size ``resumebias plan`` gives for it. Findings that say the same thing
(the same figures across levels, outcomes or job descriptions) are said once, with their count.

Every line is read off the verdicts table and worded by ``wording.Words``: no identifier, no
p-value. Nothing here decides anything."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference.planning import RANDOMISATION, pilot_noise, pilot_structure, resumes_needed
from resumebias_dagster.core.inference.settings import CHANCE, InferenceSettings
from resumebias_dagster.core.inference.verdicts import needed_to_rule_out
from resumebias_dagster.core.reporting.since import since_lines
from resumebias_dagster.core.reporting.validity import (
    CHANCE_WARNING,
    HEADLINE,
    chance_models,
    is_validity,
    validity_sections,
)
from resumebias_dagster.core.reporting.wording import Words, number

# How wide each kind's scale is: findings of different kinds are ordered by their share of it.
SCALE_WIDTH = {"fit_delta": 9.0, "style_shift": 2.0, "seniority_bias": 2.0, "inconsistency": 1.0}
CONTRASTS = ("fit_group", "seniority_bias")
UNDECIDED = ("within_noise", "inconclusive")


def slug(model: str) -> str:
    """An HTML id for a model's section."""
    return "tool-" + (re.sub(r"[^A-Za-z0-9]+", "-", str(model)).strip("-").lower() or "model")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _spread(row: Any) -> str:
    """Over which résumés a change holds: all of them in the same direction when its spread is
    too small for any résumé to sit on the other side of zero (a résumé's difference lies within
    (n−1)/sqrt(n) sample SDs of the mean, so within sd·sqrt(n−1)), else on average. Read only off
    the paired t over résumés (``t_resume``: se = sd / sqrt(n)) or no spread at all."""
    n, se, est = int(row.n_resumes), _num(row.se), _num(row.estimate)
    if n <= 1:
        return "on the one résumé tried"
    paired = row.test == "t_resume" or se == 0
    if paired and np.isfinite(se) and se * math.sqrt(n) * math.sqrt(n - 1) < abs(est):
        return f"on every one of the {n} résumés tried"
    return f"on average over {n} résumés"


def _interval(row: Any, scale: float = 1.0, digits: int = 2) -> str:
    low, high = _num(row.ci_low), _num(row.ci_high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    return f" (95% interval {number(low * scale, digits)} to {number(high * scale, digits)})"


def _change(rows: pd.DataFrame, words: Words) -> str:
    """One line for findings with the same figures (the first row's), its subject every row's words."""
    row = next(rows.itertuples(index=False))
    names = [words.finding(r) for r in rows.itertuples(index=False)]
    kind, est = str(row.kind), _num(row.estimate)
    unit, scale = words.unit(kind)
    subject = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    alike = f" ({len(names)} findings alike)" if len(names) > 1 else ""
    if kind == "impact_ratio":
        return _cap(f"{subject}: {number(est)} times as often{_interval(row)}{alike}.")
    if kind in ("inconsistency", "validity_gap") or kind in CHANCE:
        return _cap(f"{subject}: {number(est * 100, 1)} {unit} {scale}{_interval(row, 100, 1)}, {_spread(row)}{alike}.")
    if str(row.finding).startswith(CONTRASTS) or kind == "rank_difference":
        way = "higher" if est > 0 else "lower"
        return _cap(f"{subject}: {number(abs(est))} {unit} {way} {scale}{_interval(row)}, {_spread(row)}{alike}.")
    what = "score" if kind == "fit_delta" else "level it reads"
    verb = ("each raise" if est > 0 else "each lower") if len(names) > 1 else ("raises" if est > 0 else "lowers")
    return _cap(
        f"{subject} {verb} the {what} by {number(abs(est))} {unit} {scale}{_interval(row)}, {_spread(row)}{alike}."
    )


def _collapsed(rows: pd.DataFrame) -> list[pd.DataFrame]:
    """Groups of rows that print the same figures (kind, rounded estimate and interval): the same
    result across levels, outcomes or axes is said once."""
    if not len(rows):
        return []
    key = pd.DataFrame(
        {
            "kind": rows["kind"].astype(str),
            "est": rows["estimate"].round(2),
            "low": rows["ci_low"].round(2),
            "high": rows["ci_high"].round(2),
        }
    ).fillna(-999.0)
    return [g for _, g in rows.groupby([key[c] for c in key.columns], sort=False, dropna=False)]


def _size(rows: pd.DataFrame) -> float:
    r = rows.iloc[0]
    est = _num(r["estimate"])
    if r["kind"] == "impact_ratio":
        return 1.0 - est
    return abs(est) / SCALE_WIDTH.get(str(r["kind"]), 1.0)


def groups_named(mine: pd.DataFrame, words: Words) -> str:
    """The name groups a model's name findings compared, in EEO-1 words: every race/ethnicity of
    the fit audit's contrasts (against White), or the seniority study's two, and both sexes."""
    findings = mine["finding"].astype(str)
    races = ["white"] + sorted({f.split(":")[2] for f in findings if f.startswith("fit_group:race:")})
    if len(races) == 1 and findings.str.startswith("seniority_bias:").any():
        races = ["caucasian", "african_american"]
    if len(races) == 1:
        return ""
    named = [words.lookup("race_ethnicity", r) for r in races]
    return f"{', '.join(named[:-1])} and {named[-1]}; {words.lookup('sex', 'female')} and {words.lookup('sex', 'male')}"


def _family(row: Any, groups: dict[str, str], words: Words) -> str:
    """A finding's family in words, a names family with the groups its study compared."""
    family = words.family_of(row)
    named = groups.get(str(row["study"]), "")
    return f"{family} ({named})" if family == words.family("firstName") and named else family


def _groups_by_study(mine: pd.DataFrame, words: Words) -> dict[str, str]:
    return {str(s): groups_named(rows, words) for s, rows in mine.groupby("study", sort=False)}


def _within_margin(row: Any) -> bool:
    """Beyond noise, but its whole interval inside the margin: found, and smaller than what matters."""
    low, high, margin = _num(row["ci_low"]), _num(row["ci_high"]), _num(row["margin"])
    if row["kind"] == "impact_ratio":
        return bool(low >= margin)
    return bool(max(abs(low), abs(high)) < margin)


def _small_line(rows: pd.DataFrame, words: Words) -> str:
    """The findings beyond noise but smaller than their margin, of one kind, in one line."""
    r = rows.iloc[0]
    unit, scale = words.unit(str(r["kind"]))
    factor = 100.0 if unit == "percentage points" else 1.0
    ratio = r["kind"] == "impact_ratio"
    items = "; ".join(
        f"{words.finding(x)} ({number(_num(x.estimate)) if ratio else number(_num(x.estimate) * factor)})"
        for x in rows.sort_values("estimate", key=abs, ascending=False).itertuples(index=False)
    )
    bound = f"a ratio of {number(_num(r['margin']))}" if ratio else f"±{number(_num(r['margin']) * factor)} {unit}"
    return _cap(f"beyond noise but smaller than {bound}, the margin that counts as mattering: {items}.")


def moved_lines(found: pd.DataFrame, words: Words) -> list[str]:
    """The findings beyond noise, collapsed, largest first; those smaller than their margin
    after them, one line per kind."""
    if not len(found):
        return []
    small = pd.Series([_within_margin(r) for _, r in found.iterrows()], index=found.index, dtype=bool)
    groups = sorted(_collapsed(found[~small]), key=_size, reverse=True)
    lines = [_change(g, words) for g in groups]
    return lines + [_small_line(rows, words) for _, rows in found[small].groupby("kind", sort=False)]


def _bound(row: Any, words: Words) -> str:
    margin = _num(row["margin"])
    if row["kind"] == "impact_ratio":
        return f"no ratio under {number(margin)}"
    unit, _ = words.unit(str(row["kind"]))
    return f"no change beyond ±{number(margin * (100.0 if unit == 'percentage points' else 1.0))} {unit}"


def ruled_out_lines(equivalent: pd.DataFrame, words: Words, groups: dict[str, str] | None = None) -> list[str]:
    """One line per family whose findings were ruled out beyond the margin (a family of one
    finding: the finding's own words); the selection-rate families, one line per bound."""
    out = []
    ratios = equivalent[equivalent["kind"] == "impact_ratio"]
    for _, rows in equivalent[equivalent["kind"] != "impact_ratio"].groupby(["kind", "family"], sort=False):
        r = rows.iloc[0]
        what = _family(r, groups or {}, words) if len(rows) > 1 else words.finding(r)
        count = f" ({len(rows)} findings)" if len(rows) > 1 else ""
        out.append(_cap(f"{what}: {_bound(r, words)}{count}."))
    bounds = pd.Series([_bound(r, words) for _, r in ratios.iterrows()], index=ratios.index, dtype=object)
    for bound, rows in ratios.groupby(bounds, sort=False):
        parts = rows["family"].astype(str).str.split(":")
        selections = sorted({words.selection(p[1]) for p in parts})
        order = {d: i for i, d in enumerate(("sex", "race_ethnicity", "intersection"))}
        dims = sorted({p[2] for p in parts if len(p) > 2}, key=lambda d: order.get(d, 9))
        by = [f"by {'both' if d == 'intersection' and len(dims) > 1 else words.lookup('dimensions', d)}" for d in dims]
        by_text = by[0] if len(by) == 1 else ", ".join(by[:-1]) + " and " + by[-1]
        out.append(
            _cap(f"how often each group is {' or '.join(selections)}, {by_text}: {bound} ({_count(len(rows))}).")
        )
    return out


def _plan_figure(mine: pd.DataFrame, wide: pd.DataFrame, settings: InferenceSettings, words: Words) -> str:
    """``resumebias plan``'s résumés for the declared effect at the declared power, from this
    run's noise, for the undecided findings whose interval is wider than their margin."""
    if not len(wide):
        return ""
    kind = str(wide["kind"].value_counts().index[0])
    noise = pilot_noise(wide, kind, runs=1)
    effect = settings.detect[kind]
    target = math.log(effect) if kind == "impact_ratio" else effect - CHANCE.get(kind, 0.0)
    needed = resumes_needed(target, noise.sd, settings, kind in RANDOMISATION, pilot_structure(mine, kind))
    have = int(wide["n_resumes"].max())
    if needed <= have:  # the intervals are wide for another reason than noise (a tie, one name per group)
        return ""
    unit, _ = words.unit(kind)
    size = f"a ratio of {number(effect)}" if kind == "impact_ratio" else f"a change of {number(effect)} {unit}"
    return (
        f" For {_count(len(wide))} with {'an interval' if len(wide) == 1 else 'intervals'} wider than"
        f" {'its' if len(wide) == 1 else 'their'} margin, {needed:,} résumés (this run: {have}) would find {size}"
        f" with {settings.power:.0%} power (resumebias plan)."
    )


def _count(n: int, what: str = "") -> str:
    return f"{n} {what + ' ' if what else ''}finding{'s' if n != 1 else ''}"


def _sparse(flat: pd.DataFrame, inside: pd.DataFrame, settings: InferenceSettings, words: Words) -> str:
    """Findings that moved no résumé, or all by less than the margin: what ruling a change out
    takes when a few résumés could carry it (``needed_to_rule_out``, as the verdicts compute it),
    findings alike in that said once."""
    both = pd.concat([flat.assign(is_flat=True), inside.assign(is_flat=False)])
    if not len(both):
        return ""
    counts: dict[tuple[int, str, str], list[int]] = {}
    for r in both.itertuples(index=False):
        unit, _ = words.unit(str(r.kind))
        margin = _num(r.margin)
        needed = needed_to_rule_out(margin, SCALE_WIDTH.get(str(r.kind), 1.0), settings.alpha)
        shown = margin * (100.0 if unit == "percentage points" else 1.0)
        counts.setdefault((needed, number(shown), unit), [0, 0])[0 if r.is_flat else 1] += 1
    phrases = []
    for (needed, bound, unit), (n_flat, n_inside) in counts.items():
        parts = [f"{n_flat} moved no résumé at all"] if n_flat else []
        parts += [f"{n_inside} moved them by less than ±{bound} {unit}"] if n_inside else []
        phrases.append(
            f" {' and '.join(parts)}; ruling out a change of ±{bound} {unit} that only a few résumés would show"
            f" takes {needed:,} résumés"
        )
    return ";".join(phrases) + f" (this run: {int(both['n_resumes'].max())})."


def _alike(tied: pd.DataFrame, settings: InferenceSettings, words: Words) -> str:
    """Findings that moved every résumé by the same amount, too few résumés to carry it to
    résumés not seen: the résumés from which the same change would clear noise."""
    if not len(tied):
        return ""
    r = tied.iloc[tied["estimate"].abs().argmax()]
    width = SCALE_WIDTH.get(str(r["kind"]), 1.0)
    x = abs(float(r["estimate"]))
    needed = needed_to_rule_out(x, x + width, settings.alpha)
    names = "; ".join(words.finding(t) for t in tied.head(2).itertuples(index=False))
    return (
        f" {_count(len(tied))} moved every résumé by the same amount ({names}{'; …' if len(tied) > 2 else ''}),"
        f" which {int(r['n_resumes'])} résumés cannot carry to résumés not seen; from {needed:,} résumés on it could be"
        " beyond noise."
    )


def undecided_lines(
    mine: pd.DataFrame, undecided: pd.DataFrame, settings: InferenceSettings, words: Words
) -> list[str]:
    """What this design could not decide, by why: no change at all or changes inside the margin
    that few résumés cannot rule out, one change on every résumé that few résumés cannot carry,
    what could not be tested (each reason once), and what would decide the rest."""
    if not len(undecided):
        return []
    u = undecided
    low, high = (pd.to_numeric(u[c], errors="coerce") for c in ("ci_low", "ci_high"))
    se, est = pd.to_numeric(u["se"], errors="coerce"), pd.to_numeric(u["estimate"], errors="coerce")
    untestable = ~np.isfinite(low)
    tied = ~untestable & (se == 0) & (u["kind"] != "impact_ratio")
    flat = tied & (est == 0)
    inside = ~untestable & ~tied & (np.maximum(high.abs(), low.abs()) < u["margin"]) & (u["kind"] != "impact_ratio")
    wide = ~untestable & ~tied & ~inside
    groups = _groups_by_study(mine, words)
    families = Counter(_family(r, groups, words) for _, r in u.iterrows())
    order = sorted(families, key=lambda f: (not f.startswith(words.family("firstName")), -families[f], f))
    more = f"; and {len(order) - 3} more" if len(order) > 3 else ""
    line = f"{_count(len(u))} undecided ({'; '.join(order[:3])}{more})."
    ratio = u["kind"] == "impact_ratio"
    study = u["kind"].map(lambda k: "jd_audit" if k == "fit_delta" else "seniority")
    for name in study[~ratio].value_counts().index:
        k = study == name
        text = _sparse(u[k & flat], u[k & inside], settings, words) + _alike(u[k & tied & ~flat], settings, words)
        line += f" {_cap(words.lookup('studies', name))}:{text}" if text else ""
    wide = wide | (ratio & ~untestable)
    for reason, count in Counter(_reason(str(n)) for n in u[untestable]["note"]).items():
        line += f" {count} could not be tested: {reason}."
    plan = _plan_figure(mine, u[wide & (se > 0)], settings, words)
    if not plan and wide.any():
        plan = f" {_count(int(wide.sum()))} had {'an interval' if wide.sum() == 1 else 'intervals'} too wide to decide."
    return [line + plan]


def _reason(note: str) -> str:
    """A note's reason, its counts left out so that the same reason reads once."""
    note = note.strip().rstrip(".")
    return (note.rsplit(": ", 1)[-1] if ": " in note else note) or "no interval could be computed"


# Per study: its task's name (as validity_sections gives it) and why its validity may be missing.
UNMEASURED = {
    "jd_audit": "no better and worse twins of the résumés were scored (the validity assets)",
    "seniority": "no seniority labels of résumés with a known level were predicted",
}


def _unmeasured(mine: pd.DataFrame, measured: set[str]) -> list[str]:
    """A line per study the model was audited in whose validity this run did not measure."""
    out = []
    for study in sorted(set(mine["study"].astype(str)) & set(UNMEASURED)):
        task = HEADLINE[study][1]
        if task not in measured:
            out.append(f"{task}: not measured in this run; {UNMEASURED[study]}.")
    return out


def tool_overviews(
    verdicts: pd.DataFrame, words: Words, settings: InferenceSettings, changes: pd.DataFrame | None = None
) -> list[dict[str, Any]]:
    """Per model: its section id and the first screen's lines (validity, since the last audit
    where ``changes`` has the model, moved, ruled out, undecided)."""
    if not len(verdicts):
        return []
    validity = {v["model"]: v for v in validity_sections(verdicts)}
    noise = chance_models(verdicts)
    bias = verdicts[~is_validity(verdicts["finding"])]
    out = []
    for model in sorted(set(map(str, verdicts["model"]))):
        mine = bias[bias["model"].astype(str) == model]
        v = validity.get(model)
        tasks = [f"{t['task']}: {t['headline']} {t['sentence']}" for t in v["tasks"]] if v else []
        tasks += _unmeasured(mine, {t["task"] for t in v["tasks"]} if v else set())
        warn = sorted(words.lookup("studies", s) for m, s in noise if m == model)
        out.append(
            {
                "model": model,
                "id": slug(model),
                "validity": tasks,
                "since": since_lines(_of(changes, model), words, int((verdicts["model"].astype(str) == model).sum())),
                "warning": f"{_cap(CHANCE_WARNING)} ({', '.join(warn)})." if warn else "",
                "moved": moved_lines(mine[mine["verdict"] == "beyond_noise"], words),
                "ruled_out": ruled_out_lines(
                    mine[mine["verdict"] == "equivalent"], words, _groups_by_study(mine, words)
                ),
                "undecided": undecided_lines(mine, mine[mine["verdict"].isin(UNDECIDED)], settings, words),
            }
        )
    return out


def _screens(overviews: Sequence[dict[str, Any]], name, heading: str, item: str) -> list[str]:
    """Each first screen as lines: the model's ``name``, then each heading and its lines."""
    parts = []
    for o in overviews:
        lines = [name(o["model"])]
        for title, key in HEADINGS:
            if o[key]:
                lines.append(heading + title)
                lines += [item + s for s in o[key]]
        if o["warning"]:
            lines.append(heading + o["warning"])
        parts.append("\n".join(lines))
    return parts


def overview_markdown(overviews: Sequence[dict[str, Any]]) -> str:
    """The first screens as Markdown (the Dagster UI's metadata)."""
    return "\n\n".join(_screens(overviews, lambda m: f"**{m}**", "- ", "  - "))


def overview_text(overviews: Sequence[dict[str, Any]]) -> str:
    """The first screens as plain text (``resumebias run``'s output)."""
    parts = _screens(overviews, str.upper, "  ", "    - ")
    return "\n\n".join(parts) + ("\n" if parts else "")


def _of(changes: pd.DataFrame | None, model: str) -> pd.DataFrame:
    if changes is None or not len(changes):
        return pd.DataFrame()
    return changes[changes["model"].astype(str) == model]


HEADINGS = (
    ("Does it tell better from worse candidates?", "validity"),
    ("Since the last audit", "since"),
    ("What moved its answers (beyond noise), largest first", "moved"),
    ("Ruled out", "ruled_out"),
    ("Not decided", "undecided"),
)
