"""Selection rates and impact ratios (core/fairness/impact.py): a hand-computed example, the zero-count
rule, scipy's Katz interval, both studies' selections and groups, and every bad input."""

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats.contingency import relative_risk

from resumebias_dagster.catalog import CatalogError, catalog_path
from resumebias_dagster.core.fairness.impact import (
    IMPACT_COLUMNS,
    NOTE_NO_ROWS,
    NOTE_NONE_SELECTED,
    NOTE_REFERENCE,
    NOTE_ZERO,
    fit_impact_ratios,
    impact_table,
    katz_interval,
    name_groups,
    seniority_impact_ratios,
)
from resumebias_dagster.core.jd_audit.probes import load_probe_axes

Z = 1.959963984540054  # the 97.5% normal quantile


def predictions(model, demographic, labels, true="mid"):
    return [
        {"variant_kind": "demographic", "original_idx": i, "variant": demographic, "model": model, "run": 0,
         "prediction": label, "true_seniority": true}
        for i, label in enumerate(labels)
    ]


def row(table, selection, dimension, group, model="m"):
    hit = table[(table["model"] == model) & (table["selection"] == selection)
                & (table["dimension"] == dimension) & (table["group"] == group)]
    assert len(hit) == 1, (selection, dimension, group)
    return hit.iloc[0]


@pytest.fixture
def hand_example():
    """Per demographic, 10 valid predictions of which this many are senior:
    caucasian_male 6 (and one unknown), caucasian_female 5, african_american_male 4,
    african_american_female 0. Sex: male 10/20, female 5/20. Race: caucasian 11/20,
    african_american 4/20."""
    rows = []
    for demographic, senior in [("caucasian_male", 6), ("caucasian_female", 5),
                                ("african_american_male", 4), ("african_american_female", 0)]:
        rows += predictions("m", demographic, ["senior"] * senior + ["mid"] * (10 - senior))
    rows += [dict(predictions("m", "caucasian_male", ["unknown"])[0], original_idx=99)]
    # The style experiment is not part of it.
    rows += [{"variant_kind": "style", "original_idx": 0, "variant": "neutral", "model": "m", "run": 0,
              "prediction": "junior", "true_seniority": "mid"}]
    return seniority_impact_ratios(pd.DataFrame(rows))


def test_hand_computed_counts_rates_ratios_flags_and_intervals(hand_example):
    t = hand_example
    assert list(t.columns) == list(IMPACT_COLUMNS)
    sel = "predicted_senior"

    male, female = row(t, sel, "sex", "male"), row(t, sel, "sex", "female")
    assert (male["n"], male["n_excluded"], male["selected"], male["rate"]) == (20, 1, 10, 0.5)
    assert (female["n"], female["n_excluded"], female["selected"], female["rate"]) == (20, 0, 5, 0.25)
    assert male["reference_group"] == female["reference_group"] == "male"
    assert male["impact_ratio"] == 1 and np.isnan(male["ci_low"]) and male["note"] == NOTE_REFERENCE
    assert not male["below_four_fifths"]
    # Female: 0.25 / 0.5 = 0.5 < 0.8; Katz se = sqrt(1/5 - 1/20 + 1/10 - 1/20) = sqrt(0.2).
    assert female["impact_ratio"] == pytest.approx(0.5) and female["below_four_fifths"]
    se = math.sqrt(0.2)
    assert (female["ci_low"], female["ci_high"]) == pytest.approx((0.5 * math.exp(-Z * se), 0.5 * math.exp(Z * se)))
    assert (female["ci_low"], female["ci_high"]) == pytest.approx((0.20811, 1.20127), abs=1e-5)

    # Race: african_american 4/20 over caucasian 11/20 = 4/11.
    aa = row(t, sel, "race_ethnicity", "african_american")
    assert (aa["n"], aa["selected"], aa["reference_group"], aa["reference_rate"]) == (20, 4, "caucasian", 0.55)
    assert aa["impact_ratio"] == pytest.approx(4 / 11) and aa["below_four_fifths"]
    se = math.sqrt(1 / 4 - 1 / 20 + 1 / 11 - 1 / 20)
    assert (aa["ci_low"], aa["ci_high"]) == pytest.approx((0.13896, 0.95161), abs=1e-5)
    assert aa["ci_high"] == pytest.approx(4 / 11 * math.exp(Z * se))
    assert (aa["sex"], aa["race_ethnicity"]) == (None, "african_american")

    # Intersection: reference caucasian_male 6/10.
    cf = row(t, sel, "intersection", "caucasian_female")
    assert cf["impact_ratio"] == pytest.approx(5 / 6) and not cf["below_four_fifths"]
    assert (cf["ci_low"], cf["ci_high"]) == pytest.approx((0.37438, 1.85490), abs=1e-5)
    aam = row(t, sel, "intersection", "african_american_male")
    assert aam["impact_ratio"] == pytest.approx(4 / 6) and aam["below_four_fifths"]
    assert (aam["ci_low"], aam["ci_high"]) == pytest.approx((0.26773, 1.66005), abs=1e-5)
    assert (aam["sex"], aam["race_ethnicity"]) == ("male", "african_american")
    # Nobody selected: ratio 0, ci_low 0, ci_high with 0.5 added to every cell:
    # (0.5 / 11) / (6.5 / 11) = 1/13, se = sqrt(1/0.5 - 1/11 + 1/6.5 - 1/11).
    aaf = row(t, sel, "intersection", "african_american_female")
    assert aaf["impact_ratio"] == 0 and aaf["ci_low"] == 0 and aaf["below_four_fifths"]
    se = math.sqrt(1 / 0.5 - 1 / 11 + 1 / 6.5 - 1 / 11)
    assert aaf["ci_high"] == pytest.approx(math.exp(math.log(1 / 13) + Z * se))
    assert aaf["ci_high"] == pytest.approx(1.20612, abs=1e-5)
    assert aaf["note"] == NOTE_ZERO

    # Every résumé is mid: "at or above the true level" = mid or senior = all 40 valid rows.
    at = t[t["selection"] == "at_or_above_true_level"]
    assert (at["rate"] == 1).all() and (at["impact_ratio"] == 1).all() and not at["below_four_fifths"].any()
    assert set(t["dimension"]) == {"sex", "race_ethnicity", "intersection"}
    assert len(t) == 2 * (2 + 2 + 4)
    assert t["group_source"].str.contains("proxy for perceived group").all()


def test_katz_interval_matches_scipy_relative_risk():
    rng = np.random.default_rng(4)
    n, n_ref = rng.integers(5, 200, 50), rng.integers(5, 200, 50)
    x, x_ref = rng.integers(1, n + 1), rng.integers(1, n_ref + 1)
    ratio, low, high = katz_interval(x, n, x_ref, n_ref)
    for i in range(50):
        ref = relative_risk(int(x[i]), int(n[i]), int(x_ref[i]), int(n_ref[i]))
        ci = ref.confidence_interval(0.95)
        assert ratio[i] == pytest.approx(ref.relative_risk)
        assert (low[i], high[i]) == pytest.approx((ci.low, ci.high))


def test_undefined_ratios_are_nan():
    ratio, low, high = katz_interval(np.array([0, 3, 2]), np.array([10, 0, 5]), np.array([0, 2, 2]), np.array([10, 5, 0]))
    assert np.isnan(ratio).all() and np.isnan(low).all() and np.isnan(high).all()


def test_exactly_four_fifths_is_not_flagged_and_nobody_selected_is_not_a_ratio():
    rows = pd.DataFrame(
        {
            "model": ["m"] * 20,
            "sex": ["female"] * 10 + ["male"] * 10,
            "race_ethnicity": [None] * 20,
            # 4/10 against 5/10: exactly 0.8.
            "hired": [1.0] * 4 + [0.0] * 6 + [1.0] * 5 + [0.0] * 5,
            "never": [0.0] * 19 + [np.nan],
        }
    )
    t = impact_table(rows, ["hired", "never"], "names are a proxy")
    female = row(t, "hired", "sex", "female")
    assert female["impact_ratio"] == pytest.approx(0.8) and not female["below_four_fifths"]
    assert set(t["dimension"]) == {"sex"}  # no race given: no race or intersection rows
    never = t[t["selection"] == "never"]
    assert never["impact_ratio"].isna().all() and not never["below_four_fifths"].any()
    assert (never["note"] == NOTE_NONE_SELECTED).all()
    assert row(t, "never", "sex", "male")[["n", "n_excluded"]].tolist() == [9, 1]



def test_a_group_without_a_defined_selection_has_no_rate():
    """A model that never recommends for one name (no text): that group is counted, not rated."""
    rows = pd.DataFrame({"model": ["m"] * 4, "sex": ["male", "male", "female", "female"],
                         "race_ethnicity": [None] * 4, "yes": [1.0, 0.0, np.nan, np.nan]})
    female = row(impact_table(rows, ["yes"], "proxy"), "yes", "sex", "female")
    assert (female["n"], female["n_excluded"], female["note"]) == (0, 2, NOTE_NO_ROWS)
    assert np.isnan(female["rate"]) and np.isnan(female["impact_ratio"]) and not female["below_four_fifths"]

def test_at_or_above_true_level_and_invalid_predictions():
    rows = (
        predictions("m", "caucasian_male", ["junior", "mid", "senior", "error"], true="mid")
        + predictions("m", "african_american_male", ["junior", "junior", "mid", "unknown"], true="mid")
    )
    t = seniority_impact_ratios(pd.DataFrame(rows))
    cm = row(t, "at_or_above_true_level", "intersection", "caucasian_male")
    aam = row(t, "at_or_above_true_level", "intersection", "african_american_male")
    assert (cm["n"], cm["n_excluded"], cm["selected"]) == (3, 1, 2)
    assert (aam["n"], aam["n_excluded"], aam["selected"]) == (3, 1, 1)
    assert aam["impact_ratio"] == pytest.approx(0.5) and aam["below_four_fifths"]
    assert set(t[t["dimension"] == "sex"]["group"]) == {"male"}


def test_models_are_separate_tables():
    rows = predictions("a", "caucasian_male", ["senior", "mid"]) + predictions("a", "caucasian_female", ["mid", "mid"])
    rows += predictions("b", "caucasian_male", ["mid", "mid"]) + predictions("b", "caucasian_female", ["senior", "mid"])
    t = seniority_impact_ratios(pd.DataFrame(rows))
    assert row(t, "predicted_senior", "sex", "male", model="a")["reference_group"] == "male"
    assert row(t, "predicted_senior", "sex", "male", model="b")["reference_group"] == "female"


def test_seniority_input_errors():
    good = pd.DataFrame(predictions("m", "caucasian_male", ["mid", "senior"]))
    with pytest.raises(ValueError, match=r"seniority predictions: missing columns \['true_seniority'\]"):
        seniority_impact_ratios(good.drop(columns="true_seniority"))
    with pytest.raises(ValueError, match=r"variant 'hispanic_male' of a demographic row \(row 1 of those\) is not one of"):
        seniority_impact_ratios(good.assign(variant=["caucasian_male", "hispanic_male"]))
    with pytest.raises(ValueError, match=r"prediction 'lead' of a demographic row \(row 0 of those\)"):
        seniority_impact_ratios(good.assign(prediction=["lead", "mid"]))
    with pytest.raises(ValueError, match=r"impact ratios: missing columns \['sex'\]"):
        impact_table(pd.DataFrame({"model": ["m"], "race_ethnicity": ["x"], "s": [1.0]}), ["s"], "proxy")


# --------------------------------------------------------------------------- fit audit


def fit_rows(level, scores, recommends, model="m", jd="j", axis="firstName"):
    return [
        {"model": model, "jd": jd, "resume_id": "r1", "variant": f"{axis}_{level}", "axis": axis, "level": level,
         "run": i, "score": s, "recommend": r}
        for i, (s, r) in enumerate(zip(scores, recommends))
    ]


def test_fit_selections_groups_and_score_cut():
    rows = (
        fit_rows("james_smith", [8, 7, 6, 9], ["yes", "yes", "maybe", "YES"])
        + fit_rows("sarah_smith", [7, 5, np.nan, 6], ["maybe", "no", None, None])
        + fit_rows("wei_chen", [9, 9], ["yes", "yes"])
        + fit_rows("aisha_okonkwo", [6.5, 7], ["no", "yes"], jd="k")
        + fit_rows("2005", [3, 3], ["no", "no"], axis="graduationYear")  # not a name: ignored
        + [{"model": "m", "jd": "j", "resume_id": "r1", "variant": "baseline", "axis": "baseline", "level": "baseline",
            "run": 0, "score": 9.0, "recommend": "yes"}]
    )
    t = fit_impact_ratios(pd.DataFrame(rows))  # groups from the packaged probe_axes.yaml
    assert set(t["selection"]) == {"recommend_yes", "score_at_least_7"}
    male = row(t, "recommend_yes", "sex", "male")  # James Smith only: Wei Chen has no perceived sex
    female = row(t, "recommend_yes", "sex", "female")  # Sarah Smith + Aisha Okonkwo, over both JDs
    assert (male["n"], male["selected"], male["n_excluded"]) == (4, 3, 0)
    assert (female["n"], female["selected"], female["n_excluded"]) == (4, 1, 2)
    assert female["impact_ratio"] == pytest.approx((1 / 4) / (3 / 4)) and female["below_four_fifths"]
    asian = row(t, "recommend_yes", "race_ethnicity", "asian")
    assert (asian["n"], asian["rate"], asian["note"]) == (2, 1.0, NOTE_REFERENCE)
    white = row(t, "recommend_yes", "race_ethnicity", "white")
    assert (white["n"], white["selected"], white["n_excluded"], white["reference_group"]) == (6, 3, 2, "asian")
    assert "asian_" not in " ".join(t.loc[t["dimension"] == "intersection", "group"])
    assert set(t.loc[t["dimension"] == "intersection", "group"]) == {"white_male", "white_female", "black_female"}
    # Score at or above 7 (a failed run excluded): James 3/4, Sarah 1/3, Aisha 1/2.
    score_female = row(t, "score_at_least_7", "sex", "female")
    assert (score_female["n"], score_female["selected"], score_female["n_excluded"]) == (5, 2, 1)
    cut = fit_impact_ratios(pd.DataFrame(rows), score_cut=6.5)
    assert row(cut, "score_at_least_6.5", "sex", "female")["selected"] == 3
    assert t["group_source"].str.contains("probe_axes.yaml").all()


def test_fit_input_errors():
    good = pd.DataFrame(fit_rows("james_smith", [8, 7], ["yes", "no"]))
    with pytest.raises(ValueError, match=r"score_cut must lie on the 1-10 score scale, got 11"):
        fit_impact_ratios(good, score_cut=11)
    with pytest.raises(ValueError, match=r"fit scores: missing columns \['level'\]"):
        fit_impact_ratios(good.drop(columns="level"))
    with pytest.raises(ValueError, match=r"level 'john_doe' of axis 'firstName' has no declared group"):
        fit_impact_ratios(pd.DataFrame(fit_rows("john_doe", [8], ["yes"])))
    with pytest.raises(ValueError, match=r"recommend 'perhaps' \(row 1\) is not one of yes, no, maybe"):
        fit_impact_ratios(good.assign(recommend=["yes", "perhaps"]))


# --------------------------------------------------------------------------- declared groups


def test_packaged_name_groups_cover_every_first_name():
    axes = {a.id: a for a in load_probe_axes().axes}
    groups = name_groups()
    assert list(groups) == ["firstName"]
    assert set(groups["firstName"]) == set(axes["firstName"].levels)
    assert groups["firstName"]["aisha_okonkwo"] == {"sex": "female", "race_ethnicity": "black"}
    assert groups["firstName"]["wei_chen"]["sex"] is None


def _catalog_with(tmp_path, edit):
    data = yaml.safe_load(catalog_path("probe_axes.yaml").read_text())
    edit(data["axes"])
    folder = tmp_path / "catalog"
    folder.mkdir(exist_ok=True)
    (folder / "probe_axes.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))
    return folder


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda a: a["firstName"]["groups"].pop("wei_chen"), r"must list every level once: missing \['wei_chen'\], not a level \[\]"),
        (lambda a: a["firstName"]["groups"].update(john_doe={"sex": "male", "race_ethnicity": "white"}),
         r"missing \[\], not a level \['john_doe'\]"),
        (lambda a: a["firstName"]["groups"].update(wei_chen={"sex": "man", "race_ethnicity": "asian"}),
         r"groups.wei_chen.sex must be male, female or null \(no perceived sex\), got 'man'"),
        (lambda a: a["firstName"]["groups"].update(wei_chen={"sex": None, "race_ethnicity": "East Asian"}),
         r"groups.wei_chen.race_ethnicity must be null or lower-case letters, digits and underscores, got 'East Asian'"),
        (lambda a: a["firstName"]["groups"].update(wei_chen={"sex": None}),
         r"groups.wei_chen must be \{sex: ..., race_ethnicity: ...\}"),
        (lambda a: a["firstName"].update(groups=["james_smith"]), r"`groups` must map each level"),
        (lambda a: a["school"].update(groups={}), r"`groups` declares the perceived group of names: only a person_name axis"),
    ],
)
def test_bad_groups_are_refused_naming_the_file_axis_and_level(tmp_path, edit, message):
    folder = _catalog_with(tmp_path, edit)
    with pytest.raises(CatalogError, match=r"probe_axes.yaml: axis '\w+': .*" + message):
        load_probe_axes(folder)


def test_a_catalog_without_groups_is_a_clear_error(tmp_path):
    folder = _catalog_with(tmp_path, lambda a: a["firstName"].pop("groups"))
    with pytest.raises(CatalogError, match=r"probe_axes.yaml: no axis declares `groups`.*under the firstName axis"):
        name_groups(folder)


def test_no_rows_give_the_declared_tables_typed_and_empty():
    from resumebias_dagster.core.fairness.impact import fit_impact_ratios, seniority_impact_ratios
    from resumebias_dagster.core.tables import (
        FitImpactRatios,
        SeniorityImpactRatios,
        SeniorityPredictions,
        columns,
        empty_table,
    )

    predictions = empty_table(SeniorityPredictions)
    for table, model in ((seniority_impact_ratios(predictions), SeniorityImpactRatios),
                         (fit_impact_ratios(pd.DataFrame()), FitImpactRatios)):
        assert list(table.columns) == columns(model) and table.empty
        model.validate(table)


def test_the_interval_flag_says_whether_a_shortfall_is_beyond_noise():
    # 10 of 100 against 50 of 100: ratio 0.2, Katz upper limit 0.2 * exp(1.96 * sqrt(0.1)) = 0.37.
    # 35 of 50 against 50 of 50: ratio 0.7 (flagged), upper limit 0.84: within noise of 0.8.
    def rows(model, counts):
        out = []
        for sex, (selected, n) in counts.items():
            out += [{"model": model, "sex": sex, "race_ethnicity": None, "s": float(i < selected)} for i in range(n)]
        return out

    df = pd.DataFrame(rows("far", {"male": (50, 100), "female": (10, 100)})
                      + rows("near", {"male": (50, 50), "female": (35, 50)}))
    t = impact_table(df, ["s"], "names are a proxy")
    far = t[(t["model"] == "far") & (t["group"] == "female")].iloc[0]
    near = t[(t["model"] == "near") & (t["group"] == "female")].iloc[0]
    assert far["impact_ratio"] == pytest.approx(0.2) and far["ci_high"] == pytest.approx(0.2 * math.exp(Z * math.sqrt(0.1)))
    assert far["below_four_fifths"] and far["ci_below_four_fifths"]
    assert near["impact_ratio"] == pytest.approx(0.7) and near["ci_high"] > 0.8
    assert near["below_four_fifths"] and not near["ci_below_four_fifths"]
    assert not t.loc[t["group"] == "male", "ci_below_four_fifths"].any()
