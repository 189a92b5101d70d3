"""NYC Local Law 144 bias-audit tables (core/compliance/ll144.py), checked against small
examples computed by hand: scoring rates with ties at the median, every category in the ratios
by default and, where the auditor chooses and justifies it, a category under 2% left out with its
reason, unknown categories counted, intersections, a fit-audit individual counted once over its
job descriptions, a three-outcome classifier's selection rates, exact probabilities, and every
bad input."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.compliance.ll144 import (
    COLUMN_NAMES,
    EEO1_RACES,
    EXCLUDED_EMPTY,
    MAX_MIN_SHARE,
    check_exclusion,
    scoring_rate_table,
    selection_rate_table,
    summary_counts,
)
from resumebias_dagster.core.fairness.impact import NOTE_REFERENCE, NOTE_ZERO, _impact_rows
from resumebias_dagster.core.tables import BiasAuditRates, FitScores, SeniorityPredictions, columns, empty_table

# The auditor's justification for leaving out categories under 2% (6 RCNY §5-301(d)).
JUSTIFY = "fewer than 2% of the test names: a rate from one or two names says nothing about the category"
EXCLUDE = {"min_share": MAX_MIN_SHARE, "exclusion_justification": JUSTIFY}

GROUPS = {
    "firstName": {
        "wm": {"sex": "male", "race_ethnicity": "white"},
        "wf": {"sex": "female", "race_ethnicity": "white"},
        "bm": {"sex": "male", "race_ethnicity": "black"},
        "bf": {"sex": "female", "race_ethnicity": "black"},
        "am": {"sex": "male", "race_ethnicity": "asian"},
        "x": {"sex": None, "race_ethnicity": "hispanic_latino"},  # names give no perceived sex
        "y": {"sex": "female", "race_ethnicity": "middle_eastern"},  # no EEO-1 category
    }
}


def fit_rows(level, resume, scores, *, model="m", jd="j1", recommend=None, name=None, axis="firstName"):
    """fit_scores rows (every column of the FitScores table) of one name variant, one per run;
    a NaN score is a failed run."""
    out = []
    for run, score in enumerate(scores):
        row = dict.fromkeys(columns(FitScores))
        failed = bool(np.isnan(score))
        row.update(
            model=model,
            jd=jd,
            resume_id=f"r{resume:02d}",
            variant=f"{axis}_{level}",
            arm="probe",
            axis=axis,
            level=level,
            name=name or f"{level.upper()} Name{resume}",
            run=run,
            score=float(score),
            recommend=None if failed else (recommend[run] if recommend else ("yes" if score >= 8 else "no")),
            error="timeout" if failed else None,
            expected_score=np.nan,
        )
        out.append(row)
    return out


# Per level: the score of each of its individuals (one per résumé r00, r01, ...); a tuple is
# the individual's runs (its score: their mean over the valid ones).
SCORES = {
    "wm": [8] * 8 + [(6, 8)] * 2 + [5] * 2,  # 12 individuals: 8 above the median 7, 2 at it
    "wf": [8] * 6 + [7] * 3 + [5] * 3,  # 6 above
    "bm": [9] * 4 + [7] * 4 + [5] * 4,  # 4 above
    "bf": [8] * 3 + [(7, np.nan)] + [7] * 2 + [4] * 6,  # 3 above; one 7 from its one valid run
    "am": [9],  # 1 individual: 1 of 52, under 2%
    "x": [8, 6],  # Hispanic or Latino, sex unknown
    "y": [7, (np.nan, np.nan)],  # Female, race unknown; the second has no valid run: missing
}


def hand_scores(extra=()):
    rows = []
    for level, values in SCORES.items():
        for resume, v in enumerate(values):
            rows += fit_rows(level, resume, v if isinstance(v, tuple) else (v, v))
    # Not individuals: a baseline and a variant of an axis without groups.
    rows += fit_rows("2005", 0, (3, 3), axis="graduationYear")
    rows += [dict(fit_rows("baseline", 0, (9,))[0], variant="baseline", arm="baseline", axis="baseline")]
    return pd.DataFrame(rows + list(extra), columns=columns(FitScores))


def at(table, dimension, category, outcome=None):
    hit = table[(table["dimension"] == dimension) & (table["category"] == category)]
    if outcome is not None:
        hit = hit[hit["outcome"] == outcome]
    assert len(hit) == 1, (dimension, category, outcome)
    return hit.iloc[0]


def test_scoring_rates_by_hand_ties_small_category_unknowns_and_intersections():
    t = scoring_rate_table(hand_scores(), groups=GROUPS, **EXCLUDE)
    assert tuple(t.columns) == COLUMN_NAMES
    BiasAuditRates.validate(t)  # the table its asset stores: every column, dtype and check
    assert dict(t.dtypes.astype(str)) == dict(empty_table(BiasAuditRates).dtypes.astype(str))
    # Sorted scores of the 52 individuals with one: 6 x 4, 9 x 5, 1 x 6, 13 x 7, 18 x 8, 5 x 9;
    # the 26th and 27th are 7: median 7, with 13 individuals exactly at it (not above).
    assert (t["median_score"] == 7).all() and (t["n_at_median"] == 13).all() and (t["n_total"] == 52).all()
    assert (t["measure"] == "scoring_rate").all() and (t["outcome"] == "above_median").all()
    assert set(t["model"]) == {"m"} and set(t["study"]) == {"jd_audit"}
    assert t["group_source"].str.contains("proxy").all()

    # Sex: Male = wm 12 + bm 12 + am 1 (13 above), Female = wf 12 + bf 12 + y 1 (9 above), x's 2 unknown.
    male, female = at(t, "sex", "Male"), at(t, "sex", "Female")
    assert (male["n"], male["n_selected"], male["rate"]) == (25, 13, 0.52)
    assert (female["n"], female["n_missing"], female["n_selected"], female["rate"]) == (25, 1, 9, 0.36)
    assert male["impact_ratio"] == 1 and male["note"] == NOTE_REFERENCE and male["reference_category"] == "Male"
    assert female["impact_ratio"] == pytest.approx(0.36 / 0.52) and female["below_four_fifths"]
    assert (t.loc[t["dimension"] == "sex", "n_unknown"] == 2).all()

    # Race/ethnicity: Asian (1 of 52, rate 1) is under 2%: reported, but out of the ratios, so
    # White (14 of 24) is the reference, not Asian.
    white, black, hisp, asian = (
        at(t, "race_ethnicity", c) for c in ("White", "Black or African American", "Hispanic or Latino", "Asian")
    )
    assert (white["n"], white["n_selected"]) == (24, 14) and white["rate"] == pytest.approx(14 / 24)
    assert (black["n"], black["n_selected"]) == (24, 7) and black["impact_ratio"] == pytest.approx(0.5)
    assert (hisp["n"], hisp["n_selected"], hisp["rate"]) == (2, 1, 0.5)
    assert hisp["impact_ratio"] == pytest.approx(0.5 / (14 / 24)) and not hisp["below_four_fifths"]
    assert (asian["n"], asian["n_selected"], asian["rate"]) == (1, 1, 1.0)
    assert asian["share"] == pytest.approx(1 / 52) and np.isnan(asian["impact_ratio"])
    assert "under 2%" in asian["excluded_reason"] and "1 of 52" in asian["excluded_reason"]
    assert (t["min_share"] == 0.02).all() and (t["exclusion_justification"] == JUSTIFY).all()
    assert not asian["below_four_fifths"] and np.isnan(asian["ci_low"]) and asian["reference_category"] is None
    assert (t.loc[(t["dimension"] == "race_ethnicity") & (t["n"] > 0), "reference_category"] != "Asian").all()
    race = t[t["dimension"] == "race_ethnicity"]
    assert list(race["category"]) == list(EEO1_RACES) and (race["n_unknown"] == 1).all()
    empty = race[race["n"] == 0]
    assert len(empty) == 3 and (empty["excluded_reason"] == EXCLUDED_EMPTY).all() and empty["rate"].isna().all()
    assert (white["excluded_reason"], black["excluded_reason"]) == ("", "")
    # Counts add up: categories + unknown = the sample.
    for dim in ("sex", "race_ethnicity", "intersection"):
        d = t[t["dimension"] == dim]
        assert d["n"].sum() + d["n_unknown"].iloc[0] == 52

    # Intersections: x (sex unknown) and y (race unknown) are unknown; Asian Male under 2%.
    wm, wf, bm, bf = (
        at(t, "intersection", c)
        for c in ("White Male", "White Female", "Black or African American Male", "Black or African American Female")
    )
    assert [(r["n"], r["n_selected"]) for r in (wm, wf, bm, bf)] == [(12, 8), (12, 6), (12, 4), (12, 3)]
    assert [r["impact_ratio"] for r in (wm, wf, bm, bf)] == pytest.approx([1, 0.75, 0.5, 0.375])
    assert (wf["sex"], wf["race_ethnicity"]) == ("Female", "White")
    assert wf["below_four_fifths"]  # 0.75 < 0.8
    assert "under 2%" in at(t, "intersection", "Asian Male")["excluded_reason"]
    assert (t.loc[t["dimension"] == "intersection", "n_unknown"] == 3).all()
    assert len(t) == 2 + 7 + 14


def test_the_interval_is_impact_py_s_over_the_categories_in_the_ratios():
    t = scoring_rate_table(hand_scores(), groups=GROUPS, **EXCLUDE)
    # The same individuals by hand (above the median 7 or not), Asian left out: impact.py's
    # interval and p of the race/ethnicity ratios.
    rows = []
    for level, race in (("wm", "White"), ("wf", "White"), ("bm", "Black"), ("bf", "Black"), ("x", "Hispanic")):
        for resume, v in enumerate(SCORES[level]):
            score = np.nanmean(v) if isinstance(v, tuple) else v
            rows.append(
                {
                    "model": "m",
                    "resume": f"r{resume:02d}",
                    "name": f"{level.upper()} Name{resume}",
                    "sex": None,
                    "race_ethnicity": race,
                    "above": float(score > 7),
                }
            )
    ref = _impact_rows(pd.DataFrame(rows), ["above"])
    for mine, theirs in (("Black or African American", "Black"), ("Hispanic or Latino", "Hispanic")):
        a, b = at(t, "race_ethnicity", mine), ref[ref["group"] == theirs].iloc[0]
        assert (a["ci_low"], a["ci_high"], a["p_value"]) == pytest.approx((b["ci_low"], b["ci_high"], b["p_value"]))
        assert a["ci_low"] <= a["impact_ratio"] <= a["ci_high"] <= 1
        assert a["ci_below_four_fifths"] == (a["below_four_fifths"] and a["ci_high"] < 0.8)


def test_summary_counts_by_hand():
    s = summary_counts(hand_scores(), groups=GROUPS)
    assert (s.model, s.study, s.n_total, s.n_missing) == ("m", "jd_audit", 52, 1)
    assert s.n_unknown == {"sex": 2, "race_ethnicity": 1, "intersection": 3}
    assert s.counts["sex"] == {"Male": 25, "Female": 25}
    assert s.counts["race_ethnicity"] == {
        "Hispanic or Latino": 2,
        "White": 24,
        "Black or African American": 24,
        "Native Hawaiian or Other Pacific Islander": 0,
        "Asian": 1,
        "American Indian or Alaska Native": 0,
        "Two or More Races": 0,
    }
    assert s.counts["intersection"]["Asian Male"] == 1 and s.counts["intersection"]["Hispanic or Latino Male"] == 0
    assert sum(s.counts["intersection"].values()) == 49
    assert (s.median_score, s.n_at_median, s.n_above_median) == (7.0, 13, 23)
    assert s.unmapped_labels == ("race_ethnicity:middle_eastern",)
    assert "proxy" in s.group_source


def test_by_default_every_non_empty_category_is_in_the_ratios():
    # §5-301(d) lets the auditor leave out a category under 2%, with a justification: the
    # auditor's choice, so not done unless asked. Asian (1 of 52) is in the ratios, the reference.
    for t in (
        scoring_rate_table(hand_scores(), groups=GROUPS),
        scoring_rate_table(hand_scores(), groups=GROUPS, min_share=0),
        selection_rate_table(hand_scores(), groups=GROUPS, outcomes=["recommend_yes"]),
    ):
        asian = at(t, "race_ethnicity", "Asian")
        assert asian["impact_ratio"] == 1 and asian["excluded_reason"] == "" and asian["note"] == NOTE_REFERENCE
        white = at(t, "race_ethnicity", "White")
        assert white["impact_ratio"] == pytest.approx(white["rate"])  # Asian's rate is 1
        assert (t.loc[t["n"] > 0, "excluded_reason"] == "").all()
        assert (t["min_share"] == 0).all() and (t["exclusion_justification"] == "").all()
    # The justification is kept word for word; the reason gives the threshold chosen.
    t = scoring_rate_table(hand_scores(), groups=GROUPS, min_share=0.0195, exclusion_justification=f"  {JUSTIFY} ")
    asian = at(t, "race_ethnicity", "Asian")  # 1 of 52: 1.92%
    assert "under 1.95% of the data" in asian["excluded_reason"] and np.isnan(asian["impact_ratio"])
    assert (t["exclusion_justification"] == JUSTIFY).all()


def test_leaving_out_small_categories_needs_a_justification_and_at_most_2_percent():
    scores = hand_scores()
    for blank in ("", "   "):
        with pytest.raises(ValueError, match=r"min_share 0.02 > 0 needs exclusion_justification") as err:
            scoring_rate_table(scores, groups=GROUPS, min_share=0.02, exclusion_justification=blank)
        assert "§5-301(d)" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="exclusion_justification"):
        selection_rate_table(seniority_frame(), min_share=0.01)
    with pytest.raises(ValueError, match=r"min_share 0.05 is over 0.02: 6 RCNY §5-301\(d\) lets an auditor leave out"):
        scoring_rate_table(scores, groups=GROUPS, min_share=0.05, exclusion_justification=JUSTIFY)
    with pytest.raises(ValueError, match=r"min_share -0.01 is negative"):
        check_exclusion(-0.01, "")
    with pytest.raises(ValueError, match="min_share nan is not a number"):
        check_exclusion(float("nan"), JUSTIFY)
    with pytest.raises(ValueError, match="min_share '0.02' is not a number"):
        check_exclusion("0.02", JUSTIFY)
    with pytest.raises(ValueError, match="exclusion_justification is given but min_share is 0"):
        check_exclusion(0, JUSTIFY)
    assert check_exclusion(0, "") == "" and check_exclusion(np.float32(0.01), f" {JUSTIFY}\n") == JUSTIFY


def test_the_table_refuses_an_exclusion_nobody_chose_or_justified():
    import pandera.errors

    t = scoring_rate_table(hand_scores(), groups=GROUPS, **EXCLUDE)
    BiasAuditRates.validate(t)
    with pytest.raises(pandera.errors.SchemaError, match="bias_audit_small_left_out_only_by_choice"):
        BiasAuditRates.validate(t.assign(min_share=0.0, exclusion_justification=""))
    with pytest.raises(pandera.errors.SchemaError, match="bias_audit_exclusion_justified"):
        BiasAuditRates.validate(t.assign(exclusion_justification=" "))
    with pytest.raises(pandera.errors.SchemaError, match="less_than_or_equal_to"):
        BiasAuditRates.validate(t.assign(min_share=0.05))


def test_a_fit_individual_is_one_resume_with_one_name_counted_once_over_job_descriptions():
    # One résumé with one name scored under several job descriptions is one individual: its
    # score the mean over the job descriptions of each one's mean over runs, its selection the
    # mean over them of each one's share of answered runs. A job description where every run
    # failed adds nothing.
    rows = fit_rows("wm", 0, (8, 8), jd="j1", recommend=["yes", "yes"])
    rows += fit_rows("wm", 0, (6, 6, 6), jd="j2", recommend=["yes", "no", "no"])
    rows += fit_rows("wm", 0, (np.nan, np.nan), jd="j3")
    rows += fit_rows("bf", 0, (4, 4), jd="j1", recommend=["no", "no"])
    rows += fit_rows("bf", 0, (5, 5, 5), jd="j2", recommend=["maybe", "no", "no"])
    rows += fit_rows("bf", 0, (np.nan, np.nan), jd="j3")
    rows += fit_rows("wf", 1, (9, 7), jd="j1", recommend=["yes", "maybe"])  # one job description only
    frame = pd.DataFrame(rows, columns=columns(FitScores))
    # Scores: wm (8 + 6) / 2 = 7, bf (4 + 5) / 2 = 4.5, wf 8: three individuals, median 7.
    s = summary_counts(frame, groups=GROUPS)
    assert (s.n_total, s.n_missing) == (3, 0)
    assert (s.median_score, s.n_at_median, s.n_above_median) == (7.0, 1, 1)
    assert s.counts["sex"] == {"Male": 1, "Female": 2}
    t = scoring_rate_table(frame, groups=GROUPS)
    assert (t["n_total"] == 3).all() and at(t, "sex", "Female")["n_selected"] == 1
    sel = selection_rate_table(frame, groups=GROUPS)
    assert (sel["n_total"] == 3).all()
    # wm: yes on 1 of j1's runs' share 1 and j2's 1/3: 2/3 (not the pooled 3/5); wf: 1/2.
    white_yes = at(sel, "race_ethnicity", "White", "recommend_yes")
    assert white_yes["n"] == 2 and white_yes["n_selected"] == pytest.approx(2 / 3 + 1 / 2)
    # An expected count, not rounded: bf's no is (1 + 2/3) / 2.
    black_no = at(sel, "race_ethnicity", "Black or African American", "recommend_no")
    assert (black_no["n"], black_no["n_selected"]) == (1, pytest.approx(5 / 6))
    note = t["individuals_note"].iloc[0]
    assert (t["individuals_note"] == note).all() and (sel["individuals_note"] == note).all()
    assert "one résumé with one name" in note and "counted once" in note
    assert "1 to 2 job descriptions" in note and "2 to 3 valid runs" in note
    # Every job description and run the same: one number each.
    even = frame[(frame["jd"] != "j3") & ~(frame["level"] == "wf")]
    even = even[even["run"] < 2]
    assert "over 2 job descriptions and 2 valid runs" in scoring_rate_table(even, groups=GROUPS)["individuals_note"][0]


def seniority_rows(model, demographic, resume, labels, dist=None):
    """seniority_predictions rows (every column of the table) of one name variant, one per run."""
    out = []
    for run, label in enumerate(labels):
        row = dict.fromkeys(columns(SeniorityPredictions))
        row.update(
            variant_kind="demographic",
            original_idx=resume,
            variant=demographic,
            model=model,
            run=run,
            prediction=label,
            true_seniority="mid",
            name=f"{demographic[:3].title()}{resume} Smith",
            error="boom" if label == "error" else None,
            name_scope="everywhere",
        )
        if dist is not None:
            row.update(p_junior=dist[0], p_mid=dist[1], p_senior=dist[2])
        out.append(row)
    return out


# Two runs per individual; "unknown"/"error" runs are invalid (left out of the mean).
SENIORITY = {
    "caucasian_male": [("senior", "senior"), ("senior", "mid"), ("mid", "mid"), ("junior", "unknown")],
    "caucasian_female": [("senior", "mid"), ("mid", "mid"), ("mid", "junior"), ("junior", "junior")],
    "african_american_male": [("senior", "senior"), ("mid", "mid"), ("junior", "junior"), ("error", "error")],
    "african_american_female": [("mid", "mid"), ("mid", "junior"), ("junior", "junior"), ("junior", "junior")],
}


def seniority_frame():
    rows = []
    for demographic, runs in SENIORITY.items():
        for resume, labels in enumerate(runs):
            rows += seniority_rows("m", demographic, resume, labels)
    # A style row: not an individual of the name experiment.
    rows.append(dict(seniority_rows("m", "caucasian_male", 0, ["junior"])[0], variant_kind="style", variant="neutral"))
    return pd.DataFrame(rows, columns=columns(SeniorityPredictions))


def test_selection_rates_of_a_three_outcome_classifier_by_hand():
    t = selection_rate_table(seniority_frame())
    assert tuple(t.columns) == COLUMN_NAMES and (t["measure"] == "selection_rate").all()
    assert list(dict.fromkeys(t["outcome"])) == ["junior", "mid", "senior"] and len(t) == 3 * 23
    assert t["median_score"].isna().all() and t["n_at_median"].isna().all()
    assert (t["n_total"] == 15).all() and (t["n_unknown"] == 0).all() and (t["study"] == "seniority").all()
    # Per individual, the share of its valid runs with the label. Male: caucasian 4 + african-
    # american 3 (one with no valid run: missing); senior 1 + .5 + 1 = 2.5 of 7.
    male = at(t, "sex", "Male", "senior")
    assert (male["n"], male["n_missing"], male["n_selected"]) == (7, 1, 2.5)
    assert male["rate"] == pytest.approx(2.5 / 7) and male["share"] == pytest.approx(7 / 15)
    female = at(t, "sex", "Female", "senior")
    assert (female["n"], female["n_selected"], female["rate"]) == (8, 0.5, 0.0625)
    assert female["impact_ratio"] == pytest.approx(0.0625 / (2.5 / 7)) and female["below_four_fifths"]
    # mid: male 2.5 / 7, female 3.5 / 8: female the reference.
    assert at(t, "sex", "Female", "mid")["impact_ratio"] == 1
    assert at(t, "sex", "Male", "mid")["impact_ratio"] == pytest.approx((2.5 / 7) / (3.5 / 8))
    assert not at(t, "sex", "Male", "mid")["below_four_fifths"]  # 0.816
    # junior: male 2 / 7, female 4 / 8.
    assert at(t, "sex", "Male", "junior")["impact_ratio"] == pytest.approx((2 / 7) / 0.5)
    # Race: White (caucasian) 8, Black (african-american) 7.
    white, black = (
        at(t, "race_ethnicity", "White", "junior"),
        at(t, "race_ethnicity", "Black or African American", "junior"),
    )
    assert (white["n"], white["n_selected"], black["n"], black["n_selected"]) == (8, 2.5, 7, 3.5)
    assert white["impact_ratio"] == pytest.approx(0.3125 / 0.5) and black["impact_ratio"] == 1
    # Intersections, senior: White Male 1.5/4, White Female 0.5/4, Black Male 1/3, Black Female 0/4.
    inter = t[(t["dimension"] == "intersection") & (t["outcome"] == "senior") & (t["n"] > 0)].set_index("category")
    assert inter["n"].to_dict() == {
        "White Male": 4,
        "White Female": 4,
        "Black or African American Male": 3,
        "Black or African American Female": 4,
    }
    assert inter["rate"].to_list() == pytest.approx([0.375, 0.125, 1 / 3, 0.0])
    assert inter["impact_ratio"].to_list() == pytest.approx([1, 1 / 3, (1 / 3) / 0.375, 0.0])
    assert inter.loc["Black or African American Female", "note"] == NOTE_ZERO
    assert inter.loc["Black or African American Male", "n_missing"] == 1
    # Only the caucasian and african-american categories exist in this study: the rest are empty rows.
    assert (t.loc[t["n"] == 0, "excluded_reason"] == EXCLUDED_EMPTY).all()
    assert set(t.loc[(t["dimension"] == "race_ethnicity") & (t["n"] > 0), "category"]) == {
        "White",
        "Black or African American",
    }
    only = selection_rate_table(seniority_frame(), outcomes=["senior"])
    assert set(only["outcome"]) == {"senior"} and len(only) == 23


def test_the_seniority_score_is_the_expected_rank_and_its_median_ties():
    t = scoring_rate_table(seniority_frame())
    # Mean ranks: cm 2, 1.5, 1, 0 | cf 1.5, 1, .5, 0 | aam 2, 1, 0 | aaf 1, .5, 0, 0 (15 individuals):
    # sorted 0 x5, .5 x2, 1 x4, 1.5 x2, 2 x2: the 8th is 1, four at it, four above.
    assert (t["median_score"] == 1).all() and (t["n_at_median"] == 4).all()
    assert at(t, "sex", "Male")["n_selected"] == 3 and at(t, "sex", "Female")["n_selected"] == 1
    s = summary_counts(seniority_frame())
    assert (s.n_total, s.n_missing, s.n_above_median, s.n_at_median) == (15, 1, 4, 4)
    assert s.n_unknown == {"sex": 0, "race_ethnicity": 0, "intersection": 0} and s.unmapped_labels == ()
    # An individual is one résumé with one name; its runs (1 or 2 valid here) are averaged.
    note = t["individuals_note"].iloc[0]
    assert "one résumé with one name" in note and "1 to 2 valid runs" in note and "job description" not in note


def test_label_distributions_give_exact_rates_and_expected_ranks():
    rows = []
    for demographic, dist in (("caucasian_male", (0.2, 0.5, 0.3)), ("african_american_male", (0.4, 0.5, 0.1))):
        for resume in range(3):
            rows += seniority_rows("e", demographic, resume, ["mid", "senior"], dist=dist)
    rows += seniority_rows("m", "caucasian_male", 0, ["mid"])  # another model: ignored with model="e"
    frame = pd.DataFrame(rows, columns=columns(SeniorityPredictions))
    t = selection_rate_table(frame, model="e", outcomes=["senior"])
    assert set(t["model"]) == {"e"}
    assert at(t, "race_ethnicity", "White")["n_selected"] == pytest.approx(0.9)  # 3 x 0.3, not the sampled labels
    assert at(t, "race_ethnicity", "Black or African American")["impact_ratio"] == pytest.approx(1 / 3)
    # Expected ranks 1.1 (White) and 0.7 (Black): median 0.9, nobody at it.
    s = scoring_rate_table(frame, model="e")
    assert s["median_score"].iloc[0] == pytest.approx(0.9) and s["n_at_median"].iloc[0] == 0
    assert (
        at(s, "race_ethnicity", "White")["rate"] == 1
        and at(s, "race_ethnicity", "Black or African American")["rate"] == 0
    )


def test_fit_recommend_classes_and_exact_expected_scores():
    rows = fit_rows("wm", 0, (8, 8, 8), recommend=["yes", "maybe", "yes"])
    rows += fit_rows("wm", 1, (8, 8, 8), recommend=["no", "no", ""])  # a blank answer: no recommendation
    rows += fit_rows("bf", 0, (8, 8, 8), recommend=["maybe", "maybe", "no"])
    rows += fit_rows("bf", 1, (8, 8, 8), recommend=["yes", "no", "no"])
    frame = pd.DataFrame(rows, columns=columns(FitScores))
    t = selection_rate_table(frame, groups=GROUPS)
    assert list(dict.fromkeys(t["outcome"])) == ["recommend_yes", "recommend_maybe", "recommend_no"]
    # White: 2/3 and 0 yes (the blank left out); Black: 0 and 1/3.
    white = at(t, "race_ethnicity", "White", "recommend_yes")
    black = at(t, "race_ethnicity", "Black or African American", "recommend_yes")
    assert (white["n_selected"], white["rate"]) == pytest.approx((2 / 3, 1 / 3))
    assert (black["n_selected"], black["rate"]) == pytest.approx((1 / 3, 1 / 6)) and black["impact_ratio"] == 0.5
    assert at(t, "sex", "Female", "recommend_maybe")["rate"] == pytest.approx((2 / 3 + 0) / 2)
    assert at(t, "sex", "Male", "recommend_no")["rate"] == pytest.approx((0 + 1) / 2)
    # Every row carries its expected score: the score is the expectation, not the sampled runs.
    exact = frame.assign(expected_score=np.repeat([6.5, 7.5, 7.0, 7.0], 3))
    s = summary_counts(exact, groups=GROUPS)
    assert (s.median_score, s.n_at_median, s.n_above_median) == (7.0, 2, 1)
    note = scoring_rate_table(exact, groups=GROUPS)["individuals_note"].iloc[0]
    assert "over 1 job description" in note and "exact expected score" in note


def test_the_packaged_name_levels_map_to_eeo1_categories():
    # groups=None: probe_axes.yaml's firstName groups (white, black, hispanic_latino, asian).
    levels = ("white_male", "white_female", "black_male", "black_female")
    levels += ("hispanic_latino_male", "hispanic_latino_female", "asian_male", "asian_female")
    rows = [r for i, level in enumerate(levels) for r in fit_rows(level, 0, (i + 1, i + 1))]
    s = summary_counts(pd.DataFrame(rows, columns=columns(FitScores)))
    assert s.n_unknown == {"sex": 0, "race_ethnicity": 0, "intersection": 0} and s.unmapped_labels == ()
    assert {k for k, v in s.counts["race_ethnicity"].items() if v} == {
        "White",
        "Black or African American",
        "Hispanic or Latino",
        "Asian",
    }
    assert s.counts["sex"] == {"Male": 4, "Female": 4} and sum(s.counts["intersection"].values()) == 8
    assert (s.median_score, s.n_at_median, s.n_above_median) == (4.5, 0, 4)


def test_bad_inputs_name_the_problem():
    scores = hand_scores()
    with pytest.raises(ValueError, match=r"missing columns \['score'\]"):
        scoring_rate_table(scores.drop(columns=["score"]), groups=GROUPS)
    with pytest.raises(ValueError, match=r"missing columns \['model'\]"):
        scoring_rate_table(scores.drop(columns=["model"]), groups=GROUPS)
    with pytest.raises(ValueError, match=r"missing columns \['prediction'\]"):
        selection_rate_table(seniority_frame().drop(columns=["prediction"]))
    with pytest.raises(ValueError, match="no individual"):
        scoring_rate_table(scores[scores["axis"] != "firstName"], groups=GROUPS)
    with pytest.raises(ValueError, match="no individual.*demographic"):
        selection_rate_table(seniority_frame().assign(variant_kind="style", variant="neutral"))
    with pytest.raises(ValueError, match=r"2 models \(m, n\); pass model="):
        scoring_rate_table(pd.concat([scores, scores.assign(model="n")]), groups=GROUPS)
    with pytest.raises(ValueError, match="model 'zz' has no rows"):
        scoring_rate_table(scores, groups=GROUPS, model="zz")
    with pytest.raises(ValueError, match="level 'q' of axis 'firstName' has no declared group"):
        scoring_rate_table(pd.DataFrame(fit_rows("q", 0, (5, 5))), groups=GROUPS)
    with pytest.raises(ValueError, match="no individual has a valid score"):
        scoring_rate_table(pd.DataFrame(fit_rows("wm", 0, (np.nan, np.nan))), groups=GROUPS)
    with pytest.raises(ValueError, match="no individual has a valid score"):
        summary_counts(pd.DataFrame(fit_rows("wm", 0, (np.nan,))), groups=GROUPS)
    with pytest.raises(ValueError, match="recommend 'perhaps' is not one of"):
        selection_rate_table(pd.DataFrame(fit_rows("wm", 0, (5,), recommend=["perhaps"])), groups=GROUPS)
    with pytest.raises(ValueError, match="no `recommend` column"):
        selection_rate_table(scores.drop(columns=["recommend"]), groups=GROUPS)
    with pytest.raises(ValueError, match="no individual has a valid 'recommend_yes'"):
        selection_rate_table(scores.assign(recommend=None), groups=GROUPS)
    with pytest.raises(ValueError, match=r"outcomes \['recommend_yes'\] are not outcomes of the seniority study"):
        selection_rate_table(seniority_frame(), outcomes=["recommend_yes"])
    with pytest.raises(ValueError, match="prediction 'maybe' of a demographic row"):
        selection_rate_table(seniority_frame().assign(prediction="maybe"))
    with pytest.raises(ValueError, match="cannot tell the study"):
        scoring_rate_table(pd.DataFrame({"model": ["m"], "score": [5.0]}))
    with pytest.raises(ValueError, match="study 'hiring' is not one of"):
        scoring_rate_table(scores, groups=GROUPS, study="hiring")
    with pytest.raises(ValueError, match=r"min_share 1.5 is over 0.02"):
        scoring_rate_table(scores, groups=GROUPS, min_share=1.5, exclusion_justification=JUSTIFY)
    with pytest.raises(ValueError, match="confidence must lie in"):
        selection_rate_table(seniority_frame(), confidence=1.0)
