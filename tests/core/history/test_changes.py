"""What changed between two audits of one model (issue 44), through the fit audit's own verdicts
on simulated screeners: a name penalty that doubles, an unchanged model, a deterministic scorer
audited twice on few résumés (not enough to call anything unchanged), and the findings left out."""

import numpy as np
import pytest

from resumebias_dagster.core.fairness.impact import impact_units
from resumebias_dagster.core.history.changes import audit_changes
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.fit_pooled import level_units
from resumebias_dagster.core.jd_audit.impact import fit_selection_rows
from resumebias_dagster.core.jd_audit.verdicts import fit_units, fit_verdicts, group_units
from resumebias_dagster.core.tables import AuditChanges, FindingUnits
from resumebias_dagster.testing.calibration import ARMS, NAME_LEVELS, _fit_scores
from resumebias_dagster.testing.screener_simulation import deterministic_fit_scores

SETTINGS = load_inference_settings()
GROUPS = {"firstName": NAME_LEVELS}
NAME = "fit_level:firstName_black_female"


def _audit(seed, effects, resumes=60):
    return fit_verdicts(_fit_scores(seed, effects, resumes=resumes), SETTINGS, GROUPS, ARMS)


def test_a_name_penalty_that_doubles_is_changed_beyond_noise_and_the_rest_is_not():
    base = _audit(1, {"firstName_black_female": -1.0})
    new = _audit(2, {"firstName_black_female": -2.0})
    changes = AuditChanges.validate(audit_changes(base, new, SETTINGS, base_id="s1", new_id="s2"))
    row = changes.set_index("finding").loc[NAME]
    assert row["verdict"] == "beyond_noise" and row["ci_high"] < 0 < -row["ci_low"]
    assert row["estimate"] == row["new_estimate"] - row["base_estimate"]
    others = changes[~changes["finding"].isin([NAME, "fit_group:race:black", "fit_group:sex"])]
    assert len(others) > 10 and not (others["verdict"] == "beyond_noise").any()
    assert set(changes["snapshot_id"]) == {"s2"} and set(changes["base_snapshot_id"]) == {"s1"}
    assert changes["test"].eq("welch_t").all()
    # Impact ratios are compared as the later ratio over the earlier, shown as a ratio.
    ratios = changes[changes["kind"] == "impact_ratio"].set_index("finding")
    assert len(ratios) >= 8 and ratios.index.isin(base["finding"]).all()
    assert np.allclose(ratios["estimate"], ratios["new_estimate"] / ratios["base_estimate"])
    assert ((ratios["ci_low"] < ratios["estimate"]) & (ratios["estimate"] < ratios["ci_high"])).all()
    assert (ratios["ci_high"] > 1).any()  # a change either way: not cut at 1 as an audit's ratio is


def test_a_deterministic_scorer_audited_twice_on_few_resumes_is_not_called_unchanged():
    variants = ("baseline", "school_a", "school_b", "placebo_p0")

    def audit(seed):
        scores = deterministic_fit_scores(seed, resumes=12, variants=variants, sparse={"school_a": (1.0, -1.0)})
        return fit_verdicts(scores, SETTINGS, arms=ARMS)

    changes = audit_changes(audit(0), audit(1), SETTINGS, base_id="a", new_id="b")
    assert np.allclose(changes["estimate"], 0.0)
    # A change a few résumés carry could be in none of twelve: "not decided", never "unchanged".
    assert changes["verdict"].isin(["within_noise", "inconclusive"]).all(), changes["verdict"].tolist()


def test_an_unchanged_model_audited_on_many_resumes_is_unchanged():
    base = _audit(3, {}, resumes=400)
    new = _audit(4, {}, resumes=400)
    changes = audit_changes(base, new, SETTINGS, base_id="a", new_id="b")
    levels = changes[changes["finding"].str.startswith("fit_level:")]
    assert (levels["verdict"] == "equivalent").mean() > 0.8, levels["verdict"].value_counts()


def test_a_change_a_few_resumes_could_carry_keeps_two_tight_audits_from_unchanged():
    """Two audits of a low-noise screener on 100 résumés each: every interval is narrow, but a
    change of the margin carried by a few résumés (each by up to 18 points: -9 to +9) could lie in
    none of them, so nothing is called unchanged before 264 résumés (ln(0.025) / ln(1 - 0.25 / 18))."""
    from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

    def audit(seed, resumes):
        variants = ["baseline", "school_a", "school_b", "placebo_p0"]
        scores = simulate_fit_scores(
            ["m"], ["j0"], variants, 5, effects={}, sd=0.2, resumes=resumes, effect_sd=0.02, seed=seed, integer=False
        )
        scores["axis"] = scores["variant"].str.split("_").str[0]
        scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
        scores["arm"] = np.where(
            scores["axis"] == "placebo", "placebo", np.where(scores["variant"] == "baseline", "baseline", "probe")
        )
        return fit_verdicts(scores, SETTINGS, arms=ARMS)

    base, new = audit(5, 100), audit(6, 100)
    assert (new["ci_high"] - new["ci_low"]).max() < 0.1  # each audit alone is tight
    changes = audit_changes(base, new, SETTINGS, base_id="a", new_id="b")
    assert len(changes) == 3 and not changes["verdict"].eq("equivalent").any(), changes[["finding", "verdict"]]
    assert changes["note"].str.contains("264 résumés").all(), changes["note"].tolist()
    wide = audit_changes(audit(7, 270), audit(8, 270), SETTINGS, base_id="a", new_id="b")
    assert wide["verdict"].eq("equivalent").all(), wide[["finding", "verdict", "ci_low", "ci_high"]]


# ---------------------------------------------------------------- paired: audits that share résumés


def _shared(effects_before, effects_after, resumes=40, seed=11):
    """Two audits of the same résumés (and names), the model answering afresh, with their units."""
    first = _fit_scores(seed, effects_before, resumes=resumes)
    second = _fit_scores(seed, effects_after, resumes=resumes, noise_seed=seed + 1)
    verdicts = [fit_verdicts(s, SETTINGS, GROUPS, ARMS) for s in (first, second)]
    return first, second, verdicts


def test_shared_resumes_are_compared_resume_by_resume():
    first, second, (base, new) = _shared({"firstName_black_female": -1.0}, {"firstName_black_female": -2.0})
    paired_changes = AuditChanges.validate(
        audit_changes(
            base,
            new,
            SETTINGS,
            base_id="a",
            new_id="b",
            base_units=fit_units(first, GROUPS),
            new_units=fit_units(second, GROUPS),
        )
    )
    unpaired = audit_changes(base, new, SETTINGS, base_id="a", new_id="b").set_index("finding")
    levels = paired_changes[paired_changes["finding"].str.startswith("fit_level:")].set_index("finding")
    assert levels["test"].eq("t_resume").all() and levels["note"].str.startswith("paired").all()
    assert (levels["n_resumes"] == 40).all()
    row = levels.loc[NAME]
    assert row["verdict"] == "beyond_noise" and row["ci_low"] < -1.0 < row["ci_high"] < 0
    # The level's own effect on each résumé and each name's quirk cancel: a narrower interval.
    assert row["ci_high"] - row["ci_low"] < unpaired.loc[NAME, "ci_high"] - unpaired.loc[NAME, "ci_low"]
    assert not levels.drop(index=NAME)["verdict"].eq("beyond_noise").any()
    # The name groups' contrasts are paired too: the doubled penalty moves the Black and the
    # female contrasts, and the others stay within noise.
    groups = paired_changes[paired_changes["finding"].str.startswith("fit_group:")].set_index("finding")
    assert len(groups) == 4 and groups["test"].eq("t_resume").all()
    assert groups.loc["fit_group:race:black", "verdict"] == "beyond_noise"
    assert groups.loc["fit_group:race:black", "ci_high"] < unpaired.loc["fit_group:race:black", "ci_high"]
    assert not groups.loc[["fit_group:race:asian", "fit_group:race:hispanic"], "verdict"].eq("beyond_noise").any()
    # Without units, every finding is compared unpaired, the impact ratios too.
    assert unpaired["test"].eq("welch_t").all() and unpaired.index.str.startswith("impact_ratio:").sum() >= 8


def test_group_units_are_what_the_group_contrast_averages():
    scores = _fit_scores(3, {"firstName_black_female": -1.0}, resumes=6)
    units = FindingUnits.validate(group_units(scores, GROUPS))
    verdicts = fit_verdicts(scores, SETTINGS, GROUPS, ARMS).set_index("finding")
    assert set(units["finding"]) == {
        "fit_group:sex",
        "fit_group:race:asian",
        "fit_group:race:black",
        "fit_group:race:hispanic",
    }
    per_resume = units.groupby(["finding", "resume_id"])["unit"].mean().groupby("finding").mean()
    for finding, estimate in per_resume.items():
        assert estimate == pytest.approx(verdicts.loc[finding, "estimate"])
    # Each unit names the names it was drawn from: a black contrast, black and white names only.
    black = units.loc[units["finding"] == "fit_group:race:black", "name"].iloc[0].split("; ")
    assert len(black) == 4 and all(("_black_" in n or "_white_" in n) for n in black)
    ratios = impact_units(*fit_selection_rows(scores, GROUPS), "jd_audit")
    assert group_units(scores, {}).empty
    assert len(fit_units(scores, GROUPS)) == len(units) + len(level_units(scores)) + len(ratios)


def test_level_units_are_what_the_level_finding_averages():
    scores = _fit_scores(3, {"school_l0": -1.0}, resumes=6)
    units = FindingUnits.validate(level_units(scores))
    verdicts = fit_verdicts(scores, SETTINGS, GROUPS, ARMS).set_index("finding")
    per_resume = units.groupby(["finding", "resume_id"])["unit"].mean().groupby("finding").mean()
    for finding in ("fit_level:school_l0", "fit_level:placebo_p1"):
        assert per_resume[finding] == pytest.approx(verdicts.loc[finding, "estimate"])
    assert set(units["jd"]) == {"j0", "j1"} and units.loc[units["finding"] == NAME, "name"].notna().all()


def test_an_unchanged_deterministic_scorer_on_the_same_resumes_needs_as_many_to_be_unchanged():
    variants = ("baseline", "school_a", "school_b", "placebo_p0")

    def changes(resumes):
        scores = deterministic_fit_scores(
            0, resumes=resumes, jds=1, variants=variants, sparse={"school_a": (1.0, -1.0)}
        )
        verdicts = fit_verdicts(scores, SETTINGS, arms=ARMS)
        units = level_units(scores)
        return audit_changes(verdicts, verdicts, SETTINGS, base_id="a", new_id="b", base_units=units, new_units=units)

    few, many = changes(40), changes(270)
    assert few["test"].eq("t_resume").all() and np.allclose(few["estimate"], 0.0)
    assert not few["verdict"].eq("equivalent").any() and not few["verdict"].eq("beyond_noise").any()
    assert many["verdict"].eq("equivalent").all(), many[["finding", "verdict"]]


def test_a_resume_whose_name_changed_is_not_paired():
    first, second, (base, new) = _shared({}, {}, resumes=3)
    renamed = level_units(second)
    named = renamed["name"].notna()
    renamed.loc[named & (renamed["resume_id"] != "r000"), "name"] = "someone else"
    changes = audit_changes(
        base, new, SETTINGS, base_id="a", new_id="b", base_units=level_units(first), new_units=renamed
    ).set_index("finding")
    # One résumé kept its names: too few to pair, so the name levels are compared unpaired.
    assert changes.loc[NAME, "test"] == "welch_t" and changes.loc["fit_level:school_l0", "test"] == "t_resume"


def test_units_without_their_columns_are_refused_with_the_column_named():
    first, second, (base, new) = _shared({}, {}, resumes=3)
    with pytest.raises(ValueError, match=r"the later audit's finding units lack the column\(s\) jd$"):
        audit_changes(
            base,
            new,
            SETTINGS,
            base_id="a",
            new_id="b",
            base_units=level_units(first),
            new_units=level_units(second).drop(columns="jd"),
        )


def test_the_changes_calibration_runs_on_a_few_simulated_studies():
    """The benchmark's scenarios (bench_inference_calibration.py --only changes) through the
    same code: an unchanged deterministic scorer is never called changed, and a change of the
    margin's size is never called unchanged (the full figures are in docs/methods.md)."""
    from resumebias_dagster.testing.calibration import calibrate
    from resumebias_dagster.testing.changes_calibration import CHANGES_SCENARIOS

    picked = [
        s
        for s in CHANGES_SCENARIOS
        if s.verdict_type.startswith("changes (paired): unchanged deterministic scorer, 40")
    ]
    picked += [s for s in CHANGES_SCENARIOS if "declared 0.25" in s.verdict_type]
    assert len(picked) == 3
    table = calibrate(3, load_inference_settings(), seed=11, scenarios=picked).set_index("verdict_type")
    deterministic = table.loc["changes (paired): unchanged deterministic scorer, 40 shared résumés"]
    assert deterministic["false_positive_rate"] == 0 and deterministic["coverage_null"] == 1
    at_margin = table[table.index.str.contains("declared 0.25")]
    assert (at_margin["ruled_out_at_margin"] == 0).all() and at_margin["printed_power"].between(0, 1).all()


# ---------------------------------------------------------------- impact ratios


def _named_tool(seed, resumes, share, shift=-2.0):
    """A deterministic scorer that ignores names but takes ``shift`` points off ``share`` of the
    résumés carrying a Black woman's name (12 names a group, drawn per résumé)."""
    variants = ("baseline", *(f"firstName_{lv}" for lv in NAME_LEVELS))
    return deterministic_fit_scores(
        seed, resumes=resumes, variants=variants, sparse={"firstName_black_female": (share, shift)}, names_per_level=12
    )


def _ratio_changes(first, second):
    base, new = (fit_verdicts(s, SETTINGS, GROUPS, ARMS) for s in (first, second))
    units = {"base_units": fit_units(first, GROUPS), "new_units": fit_units(second, GROUPS)}
    changes = AuditChanges.validate(audit_changes(base, new, SETTINGS, base_id="a", new_id="b", **units))
    return changes[changes["kind"] == "impact_ratio"].set_index("finding")


def test_an_unchanged_deterministic_scorer_s_impact_ratios_are_unchanged_only_on_enough_shared_resumes():
    few = _ratio_changes(_named_tool(0, 40, 0.1), _named_tool(0, 40, 0.1))
    assert len(few) == 11 and few["test"].eq("t_resume").all() and np.allclose(few["estimate"], 1.0)
    # A change a few résumés carry could be in none of 40: not decided, never unchanged.
    assert few["verdict"].isin(["within_noise", "inconclusive"]).all(), few[["verdict", "note"]]
    many = _ratio_changes(_named_tool(0, 300, 0.1), _named_tool(0, 300, 0.1))
    assert many["verdict"].eq("equivalent").all(), many[["verdict", "ci_low", "ci_high", "note"]]
    assert (many["ci_low"] >= 0.9).all() and (many["ci_high"] <= 1 / 0.9).all()


def test_a_penalty_on_more_resumes_lowers_her_group_s_impact_ratio_beyond_noise():
    changes = _ratio_changes(_named_tool(0, 300, 0.1), _named_tool(0, 300, 0.4))
    hers = changes.loc["impact_ratio:score_at_least_7:intersection:black_female"]
    assert hers["verdict"] == "beyond_noise" and hers["test"] == "t_resume" and hers["ci_high"] < 0.9
    # Paired: the same résumés and names; its true ratio of ratios (0.55 / 0.70) is inside the interval.
    assert hers["ci_low"] < (0.75125 - 0.5 * 0.4) / (0.75125 - 0.5 * 0.1) < hers["ci_high"]
    reached = ("intersection:black_female", "race_ethnicity:black", "sex:female")
    others = changes.drop(index=[f"impact_ratio:score_at_least_7:{k}" for k in reached])
    assert others["verdict"].eq("equivalent").all(), others[["verdict", "note"]]


def test_a_group_never_selected_in_one_audit_has_no_ratio_of_ratios():
    # Every Black woman's résumé loses 9 points in the later audit: none is selected at 7.
    changes = _ratio_changes(_named_tool(0, 40, 0.1), _named_tool(0, 40, 1.0, shift=-9.0))
    hers = changes.loc["impact_ratio:score_at_least_7:intersection:black_female"]
    assert not np.isfinite(hers["ci_low"]) and hers["verdict"] == "inconclusive"
    assert hers["note"] == "no interval: the group had no selection in one of the audits (a ratio of 0 has no log)"


def test_a_reference_group_that_changed_is_said_and_compared_unpaired():
    first = _named_tool(0, 60, 0.0)
    second = first.copy()
    # Every group is selected alike, the first by name (Asian women) the highest; the later audit
    # selects White men's résumés a little more: they are the highest group now.
    up = (second["variant"] == "firstName_white_male") & second["score"].between(6.5, 7.0, inclusive="left")
    second.loc[up, "score"] = 7.0
    changes = _ratio_changes(first, second)
    male = changes.loc["impact_ratio:score_at_least_7:intersection:black_male"]
    assert male["test"] == "welch_t" and "the earlier audit's highest group was another" in male["note"]
    assert "against white_male" in male["description"]


def test_impact_units_are_each_resume_s_share_of_the_log_ratio():
    scores = _fit_scores(3, {"firstName_black_female": -1.0}, resumes=30)
    rows, selections = fit_selection_rows(scores, GROUPS)
    units = FindingUnits.validate(impact_units(rows, selections, "jd_audit"))
    verdicts = fit_verdicts(scores, SETTINGS, GROUPS, ARMS).set_index("finding")
    per_resume = units.groupby(["finding", "resume_id"])["unit"].mean()
    assert set(per_resume.index.get_level_values(0)) == set(verdicts.index[verdicts["kind"] == "impact_ratio"])
    for finding, values in per_resume.groupby(level=0):
        # The delta method's influences: they average to 0, each within the finding's unit range.
        assert abs(values.mean()) < 1e-9
        low, high = verdicts.loc[finding, "unit_low"], verdicts.loc[finding, "unit_high"]
        assert values.between(low - 1e-9, high + 1e-9).all()
    # Each unit names both groups' names there: a later audit pairs with it only on the same ones.
    black = units.loc[units["finding"].str.endswith(":intersection:black_female"), "name"].iloc[0].split("; ")
    assert len(black) == 2 and any("black_female" in n for n in black)


def test_a_ratio_change_above_its_margin_is_not_read_as_inside_it():
    from resumebias_dagster.core.inference import classify

    verdicts = classify([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.95, 1.05, 1.2], 0.9, 0.05, ratio=True)
    assert list(verdicts) == ["within_noise", "within_noise", "inconclusive"]


# ---------------------------------------------------------------- the seniority study, paired


def test_the_seniority_study_s_shared_resumes_are_compared_resume_by_resume():
    """Two audits of one LLM-like labeller on the same 120 résumés and names, answered afresh, its
    penalty on African-American names doubled: the style shifts, the name contrasts and the impact
    ratios are paired (units from seniority_units), inconsistency and validity unpaired."""
    from resumebias_dagster.core.seniority.verdicts import seniority_units, seniority_verdicts
    from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions

    groups = ("african_american_male", "african_american_female")

    def audit(shift, noise_seed):
        return simulate_seniority_predictions(
            exact=False, group_effects=dict.fromkeys(groups, shift), name_sd=0.3, seed=7, noise_seed=noise_seed
        )

    first, second = audit(-0.3, 1), audit(-0.9, 2)
    units = FindingUnits.validate(seniority_units(first))
    base, new = (seniority_verdicts(p, SETTINGS) for p in (first, second))
    paired_changes = audit_changes(
        base, new, SETTINGS, base_id="a", new_id="b", base_units=units, new_units=seniority_units(second)
    ).set_index("finding")
    unpaired = audit_changes(base, new, SETTINGS, base_id="a", new_id="b").set_index("finding")
    shifts = [f for f in paired_changes.index if f.startswith(("style_shift:", "seniority_bias:"))]
    assert len(shifts) == 5 and paired_changes.loc[shifts, "test"].eq("t_resume").all()
    assert (paired_changes.loc[shifts, "n_resumes"] == 120).all()
    rest = paired_changes.index.str.startswith(("inconsistency:", "validity:"))
    assert rest.any() and paired_changes.loc[rest, "test"].eq("welch_t").all()
    racial = "seniority_bias:racial"
    assert paired_changes.loc[racial, "verdict"] == "beyond_noise" and paired_changes.loc[racial, "estimate"] > 0
    width = paired_changes["ci_high"] - paired_changes["ci_low"]
    assert width[racial] < (unpaired["ci_high"] - unpaired["ci_low"])[racial]
    # Nothing else about wording moved: the style shifts stay within noise.
    assert (
        not paired_changes.loc[["style_shift:overstated", "style_shift:understated"], "verdict"]
        .eq("beyond_noise")
        .any()
    )
    # The units are what the findings average: per résumé, their mean is the estimate.
    verdicts = base.set_index("finding")
    means = units.groupby(["finding", "resume_id"])["unit"].mean().groupby("finding").mean()
    for finding in shifts:
        assert means[finding] == pytest.approx(verdicts.loc[finding, "estimate"])
