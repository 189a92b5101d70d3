"""The first screen of each tool (issue 43), read off verdicts the fit audit's own code computes
on simulated screeners: a deterministic one that takes the same points off every résumé for
two levels of one axis (the design employers' tools bring), a noisy one, and one audited on
enough résumés to rule changes out."""

import re

import numpy as np
import pytest

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.inference.planning import RANDOMISATION, pilot_noise, pilot_structure, resumes_needed
from resumebias_dagster.core.jd_audit.impact import name_groups
from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.reporting.overview import overview_markdown, overview_text, tool_overviews
from resumebias_dagster.core.reporting.wording import load_words
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

SETTINGS = load_inference_settings()
WORDS = load_words(strict=True)
AXES = ("careerGap", "school", "firstName", "placebo")
IDENTIFIER = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b|\b[a-z]+[A-Z][a-zA-Z]*\b")
SCIENTIFIC = re.compile(r"\d[eE][-+]?\d")


def _scores(effects, *, resumes=12, sd=0.0, effect_sd=0.0, model="acme", seed=3):
    axes = [a for a in load_probe_axes().axes if a.id in AXES]
    variants = ["baseline", *(f"{a.id}_{level}" for a in axes for level in a.levels)]
    scores = simulate_fit_scores(
        [model], ["j0", "j1"], variants, 1, resumes=resumes, sd=sd, effect_sd=effect_sd, effects=effects, seed=seed
    )
    scores["axis"] = scores["variant"].str.split("_").str[0]
    scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
    arms = {a.id: a.arm for a in axes}
    scores["arm"] = scores["axis"].map(arms).fillna("baseline")
    named = scores["axis"] == "firstName"
    scores["name"] = np.where(named, scores["variant"] + "_" + scores["resume_id"], None)  # type: ignore[call-overload]
    return scores, arms


def _verdicts(effects, **design):
    scores, arms = _scores(effects, **design)
    return fit_verdicts(scores, SETTINGS, name_groups(), arms)


def _screen(verdicts):
    (only,) = tool_overviews(verdicts, WORDS, SETTINGS)
    return only


def test_a_deterministic_penalty_on_two_levels_is_one_line_largest_first_on_every_resume():
    effects = {"careerGap_unexplained": -1.5, "careerGap_caregiving": -1.5, "school_mit": 3.0}
    screen = _screen(_verdicts(effects, resumes=60))
    moved = screen["moved"]
    assert len(moved) == 2, moved  # the two career-gap levels say the same thing: said once
    assert moved[0].startswith("A degree from MIT raises the score by 3 points on the 1–10 fit scale")
    assert moved[1].startswith(
        "A two-year caregiving gap in the career and an unexplained two-year gap in the career each lower the score "
        "by 1.5 points on the 1–10 fit scale"
    )
    assert moved[1].endswith("on every one of the 60 résumés tried (2 findings alike).")
    # The rest moved nothing, and 60 résumés cannot rule a change out: what would, said once.
    (undecided,) = screen["undecided"]
    assert "moved no résumé at all" in undecided and "takes 131 résumés (this run: 60)" in undecided
    assert "names of every group (White, Asian, Black or African American and Hispanic or Latino" in undecided
    for line in moved + screen["undecided"]:
        assert not IDENTIFIER.search(line) and not SCIENTIFIC.search(line), line


def test_a_change_on_every_one_of_too_few_resumes_says_from_how_many_it_would_clear_noise():
    (undecided,) = _screen(_verdicts({"careerGap_unexplained": -1.5}, resumes=12))["undecided"]
    # An effect x on every résumé clears noise once (1 - x / (x + 9))**n < alpha / 2: from 24 résumés.
    assert (
        "1 finding moved every résumé by the same amount (an unexplained two-year gap in the career), which 12 "
        "résumés cannot carry to résumés not seen; from 24 résumés on it could be beyond noise."
    ) in undecided, undecided


def test_a_noisy_effect_is_an_average_and_the_plan_figure_is_plans():
    verdicts = _verdicts({"careerGap_unexplained": -2.0}, resumes=12, sd=1.0, effect_sd=0.8)
    screen = _screen(verdicts)
    assert any("on average over 12 résumés" in line for line in screen["moved"]), screen["moved"]
    (undecided,) = screen["undecided"]
    # The figure is resumebias plan's: the same functions on this run's noise.
    wide = verdicts[verdicts["verdict"].isin(["within_noise", "inconclusive"]) & (verdicts["se"] > 0)]
    wide = wide[np.maximum(wide["ci_high"].abs(), wide["ci_low"].abs()) >= wide["margin"]]
    kind = wide["kind"].value_counts().index[0]
    needed = resumes_needed(
        SETTINGS.detect[kind],
        pilot_noise(wide, kind, runs=1).sd,
        SETTINGS,
        kind in RANDOMISATION,
        pilot_structure(verdicts, kind),
    )
    assert f"{needed:,} résumés (this run: 12) would find a change of 0.25 points with 80% power (resumebias plan)" in (
        undecided
    ), undecided


def test_what_enough_resumes_rule_out_is_one_line_per_family():
    screen = _screen(_verdicts({"school_mit": 0.2}, resumes=140, sd=0.3))
    # Found, but smaller than the margin: said so, after what matters.
    assert screen["moved"] == [
        "Beyond noise but smaller than ±0.25 points, the margin that counts as mattering: a degree from MIT (0.16)."
    ], screen["moved"]
    ruled = screen["ruled_out"]
    assert any(line.startswith("A gap in the career: no change beyond ±0.25 points (2 findings).") for line in ruled)
    assert any(
        line.startswith("Names of every group (White, Asian, Black or African American and Hispanic or Latino;")
        for line in ruled
    ), ruled
    assert len(ruled) == len(set(ruled))


def test_the_summary_for_the_terminal_and_the_ui_says_the_same_lines():
    screen = tool_overviews(_verdicts({"careerGap_unexplained": -1.5}), WORDS, SETTINGS)
    text, markdown = overview_text(screen), overview_markdown(screen)
    for line in screen[0]["moved"] + screen[0]["undecided"]:
        assert line in text and line in markdown
    assert text.startswith("ACME\n") and markdown.startswith("**acme**")


@pytest.mark.parametrize("seed", range(6))
def test_on_every_resume_is_said_only_where_every_resume_moved_that_way(seed):
    """Sparse effects (a few résumés moved a lot), spread effects and deterministic ones, on few
    and many résumés: whenever a line says "on every one of the résumés", every résumé's own
    change (averaged over the job descriptions) has the finding's sign."""
    rng = np.random.default_rng(seed)
    resumes = int(rng.choice([12, 40, 80]))
    scores, arms = _scores(
        {"careerGap_unexplained": -1.5, "school_mit": 2.0},
        resumes=resumes,
        sd=float(rng.choice([0.0, 0.3])),
        effect_sd=float(rng.choice([0.0, 1.5])),
        seed=seed,
    )
    # A sparse penalty: a tenth of the résumés lose 4 points for a caregiving gap, the rest nothing.
    hit = scores["resume_id"].isin(sorted(set(scores["resume_id"]))[: max(1, resumes // 10)])
    scores.loc[(scores["variant"] == "careerGap_caregiving") & hit, "score"] -= 4.0
    verdicts = fit_verdicts(scores, SETTINGS, name_groups(), arms)
    means = scores.groupby(["variant", "resume_id"])["score"].mean().unstack()
    deltas = means.sub(means.loc["baseline"], axis=1)
    for row in verdicts[verdicts["verdict"] == "beyond_noise"].itertuples(index=False):
        line = " ".join(tool_overviews(verdicts[verdicts["finding"] == row.finding], WORDS, SETTINGS)[0]["moved"])
        variant = row.finding.removeprefix("fit_level:")
        if "on every one of the" in line and variant in deltas.index:
            assert (np.sign(deltas.loc[variant]) == np.sign(row.estimate)).all(), (row.finding, line)
        if variant == "careerGap_caregiving":
            assert "on every one" not in line, line
