"""The report's summary: each model's headline findings in plain words, each beside the
noise floor it must clear, and what the run did not measure."""

from __future__ import annotations

import math

import pandas as pd


def _num(x) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def _signed(x: float, digits: int = 2) -> str:
    return f"{x:+.{digits}f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _style_findings(model: str, groups: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    rows = groups[(groups["model"] == model) & (groups["group_kind"] == "style")].set_index("group")
    out = []
    if "neutral" in rows.index:
        base = _num(rows.at["neutral", "rank_diff"])
        for style, verb in (("overstated", "overstated"), ("understated", "understated")):
            value = _num(rows.at[style, "rank_diff"]) if style in rows.index else None
            if base is not None and value is not None:
                shift = value - base
                direction = "raises" if shift > 0 else "lowers" if shift < 0 else "does not move"
                amount = f" by {_signed(shift)} levels" if shift else ""
                out.append(f"{verb.capitalize()} wording {direction} the predicted level{amount} "
                           f"(against the neutral text of the same résumé).")
    s = summary[(summary["model"] == model) & (summary["variant_kind"] == "style")]
    if len(s):
        r = s.iloc[0]
        rate, floor = _num(r["inconsistency_rate"]), _num(r["inconsistency_floor"])
        exact = floor is None and _num(r.get("exp_inconsistency_floor")) is not None
        floor = _num(r.get("exp_inconsistency_floor")) if exact else floor
        if rate is not None:
            floor_text = "no test-retest floor (one run and no label distributions)" if floor is None else (
                f"identical résumés differ {_pct(floor)}" + (" (exact, from its label distributions)" if exact
                                                            else " when sampled again"))
            verdict = "" if floor is None else (" — within sampling noise" if rate <= floor else " — beyond sampling noise")
            out.append(f"{_pct(rate)} of people get a different level depending on wording alone; "
                       f"{floor_text}{verdict}.")
    return out


_INDICATORS = (("racial", "caucasian minus african-american names"), ("gender", "male minus female names"),
               ("extreme", "caucasian male minus african-american female names"))


def _name_findings(model: str, summary: pd.DataFrame) -> list[str]:
    s = summary[(summary["model"] == model) & (summary["variant_kind"] == "demographic")]
    if not len(s):
        return []
    r = s.iloc[0]
    parts = []
    for name, what in _INDICATORS:
        value, floor = _num(r[f"{name}_bias"]), _num(r[f"{name}_bias_floor"])
        if floor is None:  # one run: the exact floor from the label distributions, when stored
            floor = _num(r.get(f"exp_{name}_bias_floor"))
        if value is None:
            continue
        noise = "" if floor is None else (" (within its noise floor " + f"{floor:.3f})" if abs(value) <= floor
                                          else " (beyond its noise floor " + f"{floor:.3f})")
        parts.append(f"{name} {_signed(value, 3)} levels, {what}{noise}")
    return ["Names: " + "; ".join(parts) + "."] if parts else []


def _fit_findings(model: str, fit_summary: pd.DataFrame) -> list[str]:
    s = fit_summary[fit_summary["model"] == model]
    if not len(s):
        return []
    r = s.iloc[0]
    floor, bias_index = _num(r["noise_floor"]), _num(r["bias_index"])
    cells, significant = int(r["n_cells"]), int(r["n_significant"])
    out = [f"Fit scores: {significant} of {cells} job-description cells move beyond noise"
           + (f" (the placebo floor is {floor:.2f} points: edits that cannot matter move the score that much)"
              if floor is not None else " (no placebo arm, so no noise floor)") + "."]
    if bias_index is not None:
        out.append(f"Bias index {_signed(bias_index)} points: how much more the demographic and prestige probes "
                   "move the score than the placebo edits do.")
    penalty = _num(r["largest_penalty"])
    if penalty is not None:
        out.append(f"Largest significant penalty: {_signed(penalty)} points for {r['largest_penalty_variant']} "
                   f"on {r['largest_penalty_jd']} (q = {_num(r['largest_penalty_q']):.3g}).")
    prompt_injection = _num(r["prompt_injection_mean_delta"])
    if prompt_injection is not None:
        out.append(f"A hidden instruction in the résumé moves the score by {_signed(prompt_injection)} on average.")
    return out


def _impact_findings(model: str, impact: pd.DataFrame, what: str) -> list[str]:
    t = impact[impact["model"] == model]
    if not len(t):
        return []
    flagged, beyond = int(t["below_four_fifths"].sum()), int(t["ci_below_four_fifths"].sum())
    if not flagged:
        return [f"{what}: no group's selection rate falls below four-fifths of the highest."]
    return [f"{what}: {flagged} group(s) below four-fifths of the highest selection rate, "
            f"{beyond} of them beyond sampling noise (the whole 95% interval under 0.8)."]


def headline_findings(
    bias_summary: pd.DataFrame,
    group_metrics: pd.DataFrame,
    fit_summary: pd.DataFrame,
    seniority_impact: pd.DataFrame,
    fit_impact: pd.DataFrame,
) -> dict[str, list[str]]:
    """Per model, its findings as sentences, in the order a reader needs them."""
    models = sorted(set(bias_summary["model"]) | set(fit_summary["model"]), key=str)
    return {
        model: [
            *_style_findings(model, group_metrics, bias_summary),
            *_name_findings(model, bias_summary),
            *_impact_findings(model, seniority_impact, "Seniority by perceived group"),
            *_fit_findings(model, fit_summary),
            *_impact_findings(model, fit_impact, "Fit scores by perceived group"),
        ]
        for model in models
    }


def not_measured(bias_summary: pd.DataFrame, fit_summary: pd.DataFrame, verdicts: pd.DataFrame) -> list[str]:
    """What this run did not measure, said plainly."""
    out = []
    if not len(bias_summary):
        out.append("No seniority predictions: the seniority study was not run.")
    if not len(fit_summary):
        out.append("No fit scores: the job-description audit was not run.")
    if not len(verdicts):
        out.append("No LLM judge ran (none configured under `judges:` in the models config): the models' "
                   "written justifications were not read.")
    return out
