"""Selection rates and impact ratios (core/fairness/impact.py): counts and rates by hand,
the résumé-clustered interval of a ratio, junior résumés out of "at or above the true level",
exact probabilities where the model gives them, the reference chosen from the data (the
winner's curse), both studies' selections and groups, and every bad input."""

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from resumebias_dagster.catalog import CatalogError, catalog_path
from resumebias_dagster.core.fairness.impact import (
    IMPACT_COLUMNS,
    NOTE_NO_ROWS,
    NOTE_NONE_SELECTED,
    NOTE_ONE_RESUME,
    NOTE_REFERENCE,
    NOTE_ZERO,
    impact_table,
    seniority_impact_ratios,
)
from resumebias_dagster.core.inference import InferenceSettings, unit_spread
from resumebias_dagster.core.jd_audit.impact import fit_impact_ratios, name_groups
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts

GROUPS = {
    "firstName": {
        "wm": {"sex": "male", "race_ethnicity": "white"},
        "wf": {"sex": "female", "race_ethnicity": "white"},
        "bm": {"sex": "male", "race_ethnicity": "black"},
        "bf": {"sex": "female", "race_ethnicity": "black"},
        "x": {"sex": None, "race_ethnicity": "asian"},
    }
}


def predictions(model, demographic, labels, true="mid", start=0, run=0):
    return [
        {
            "variant_kind": "demographic",
            "original_idx": start + i,
            "variant": demographic,
            "model": model,
            "run": run,
            "prediction": label,
            "true_seniority": true,
        }
        for i, label in enumerate(labels)
    ]


def row(table, selection, dimension, group, model="m"):
    hit = table[
        (table["model"] == model)
        & (table["selection"] == selection)
        & (table["dimension"] == dimension)
        & (table["group"] == group)
    ]
    assert len(hit) == 1, (selection, dimension, group)
    return hit.iloc[0]


@pytest.fixture
def hand_example():
    """10 résumés, each under all four names; senior predictions: caucasian_male on résumés
    0-5, caucasian_female 0-4, african_american_male 0-3, african_american_female none."""
    rows = []
    for demographic, senior in [
        ("caucasian_male", 6),
        ("caucasian_female", 5),
        ("african_american_male", 4),
        ("african_american_female", 0),
    ]:
        rows += predictions("m", demographic, ["senior"] * senior + ["mid"] * (10 - senior))
    rows += [dict(predictions("m", "caucasian_male", ["unknown"])[0], original_idx=10)]
    rows += [
        {
            "variant_kind": "style",
            "original_idx": 0,
            "variant": "neutral",
            "model": "m",
            "run": 0,
            "prediction": "junior",
            "true_seniority": "mid",
        }
    ]
    return pd.DataFrame(rows)


def test_counts_rates_ratios_and_the_resume_clustered_interval(hand_example):
    t = seniority_impact_ratios(hand_example)
    assert list(t.columns) == list(IMPACT_COLUMNS)
    sel = "predicted_senior"
    male, female = row(t, sel, "sex", "male"), row(t, sel, "sex", "female")
    assert (male["n"], male["n_excluded"], male["selected"], male["rate"]) == (20, 1, 10, 0.5)
    assert (female["n"], female["n_excluded"], female["selected"], female["rate"]) == (20, 0, 5, 0.25)
    assert male["reference_group"] == female["reference_group"] == "male"
    assert male["impact_ratio"] == 1 and np.isnan(male["ci_low"]) and male["note"] == NOTE_REFERENCE
    assert female["impact_ratio"] == pytest.approx(0.5) and female["below_four_fifths"]
    # Two groups: the interval is exp(log ratio ± t(G-1) se), se from the résumés' influence
    # on the log ratio (the delta method, clustered by résumé: each résumé is in both groups).
    s_m = np.array([1] * 6 + [0] * 4) + np.array([1] * 4 + [0] * 6)  # caucasian + african-american male
    s_f = np.array([1] * 5 + [0] * 5) + np.zeros(10)
    u = (s_f - 2 * 0.25) / (20 * 0.25) - (s_m - 2 * 0.5) / (20 * 0.5)
    se = np.sqrt((u**2).sum() * 10 / 9)
    # Six of the ten résumés' contrasts tie: the sparse rule (core/inference) adds its variance.
    extra, _ = unit_spread((s_f / 0.25 - s_m / 0.5)[None, :] / 2)
    se = np.sqrt(se**2 + extra[0])
    q = stats.t.ppf(0.975, 9)
    assert female["ci_low"] == pytest.approx(0.5 * np.exp(-q * se))
    assert female["ci_high"] == pytest.approx(min(1.0, 0.5 * np.exp(q * se)))
    aaf = row(t, sel, "intersection", "african_american_female")
    assert aaf["impact_ratio"] == 0 and aaf["ci_low"] == 0 and aaf["note"] == NOTE_ZERO and aaf["ci_high"] < 1
    assert set(t["dimension"]) == {"sex", "race_ethnicity", "intersection"}
    assert t["group_source"].str.contains("proxy for perceived group").all()


def test_junior_resumes_are_not_counted_as_selected_at_or_above_their_level():
    # Issue 24, item 2: a junior is at or above its level whatever the model says; counting
    # those rows pulled ratios towards 1 (50% vs 35% of the rows that can vary read 0.85).
    rows = []
    for demographic, hits in (("caucasian_male", 10), ("african_american_male", 7)):
        rows += predictions("m", demographic, ["junior"] * 10, true="junior", start=0)
        rows += predictions("m", demographic, ["mid"] * hits + ["junior"] * (20 - hits), true="mid", start=10)
    t = seniority_impact_ratios(pd.DataFrame(rows))
    aam = row(t, "at_or_above_true_level", "intersection", "african_american_male")
    assert (aam["n"], aam["n_excluded"]) == (20, 10)
    assert aam["impact_ratio"] == pytest.approx(0.70) and aam["below_four_fifths"]


def test_label_distributions_give_exact_selection_probabilities():
    # Issue 24, item 3: the sampled labels were used although the distribution was stored.
    rows = []
    for demographic, p_senior in (("caucasian_female", 0.4), ("african_american_female", 0.3)):
        for i in range(12):
            for run in range(3):
                rows.append(
                    {
                        **predictions("m", demographic, ["mid" if run else "senior"], start=i, run=run)[0],
                        "p_junior": 0.1,
                        "p_mid": 0.9 - p_senior,
                        "p_senior": p_senior,
                    }
                )
    t = seniority_impact_ratios(pd.DataFrame(rows))
    aaf = row(t, "predicted_senior", "intersection", "african_american_female")
    assert aaf["rate"] == pytest.approx(0.3) and aaf["selected"] == pytest.approx(3.6)
    assert aaf["impact_ratio"] == pytest.approx(0.75) and aaf["n"] == 12  # 12 individuals, not 36 runs
    # A mid résumé is at or above its level with p_mid + p_senior.
    assert row(t, "at_or_above_true_level", "intersection", "caucasian_female")["rate"] == pytest.approx(0.9)


def test_the_reference_chosen_from_the_data_does_not_make_noise_a_finding():
    # Issue 24, item 8: the reference is the highest of noisy rates; an interval that treats it
    # as fixed reads the smallest of four equal groups as below it too often.
    rng = np.random.default_rng(1)
    flagged = covered = 0
    studies = 150
    for _ in range(studies):
        rows = []
        for demographic in ("caucasian_male", "caucasian_female", "african_american_male", "african_american_female"):
            rows += predictions("m", demographic, list(np.where(rng.random(60) < 0.4, "senior", "mid")))
        t = seniority_impact_ratios(pd.DataFrame(rows))
        inter = t[(t["selection"] == "predicted_senior") & (t["dimension"] == "intersection")]
        flagged += int((inter["ci_high"] < 1).any())
        covered += int((inter["ci_high"].fillna(1) >= 1).all())
    assert flagged / studies <= 0.07
    assert covered / studies >= 0.93


def test_exactly_four_fifths_is_not_flagged_and_nobody_selected_is_not_a_ratio():
    rows = pd.DataFrame(
        {
            "model": "m",
            "resume": list(range(10)) * 2,
            "sex": ["female"] * 10 + ["male"] * 10,
            "race_ethnicity": None,
            "hired": [1.0] * 4 + [0.0] * 6 + [1.0] * 5 + [0.0] * 5,
            "never": [0.0] * 19 + [np.nan],
        }
    )
    t = impact_table(rows, ["hired", "never"], "names are a proxy")
    female = row(t, "hired", "sex", "female")
    assert female["impact_ratio"] == pytest.approx(0.8) and not female["below_four_fifths"]
    assert set(t["dimension"]) == {"sex"}
    never = t[t["selection"] == "never"]
    assert never["impact_ratio"].isna().all() and (never["note"] == NOTE_NONE_SELECTED).all()
    assert row(t, "never", "sex", "male")[["n", "n_excluded"]].tolist() == [9, 1]


def test_a_group_without_a_defined_selection_has_no_rate():
    rows = pd.DataFrame(
        {
            "model": "m",
            "resume": [0, 1, 0, 1],
            "sex": ["male", "male", "female", "female"],
            "race_ethnicity": None,
            "yes": [1.0, 0.0, np.nan, np.nan],
        }
    )
    female = row(impact_table(rows, ["yes"], "proxy"), "yes", "sex", "female")
    assert (female["n"], female["n_excluded"], female["note"]) == (0, 2, NOTE_NO_ROWS)
    assert np.isnan(female["rate"]) and np.isnan(female["impact_ratio"]) and not female["below_four_fifths"]


def test_models_are_separate_and_runs_are_averaged():
    rows = predictions("a", "caucasian_male", ["senior", "mid"]) + predictions("a", "caucasian_female", ["mid", "mid"])
    rows += predictions("b", "caucasian_male", ["mid", "mid"]) + predictions("b", "caucasian_female", ["senior", "mid"])
    rows += predictions("b", "caucasian_female", ["mid", "mid"], run=1)
    t = seniority_impact_ratios(pd.DataFrame(rows))
    assert row(t, "predicted_senior", "sex", "male", model="a")["reference_group"] == "male"
    female_b = row(t, "predicted_senior", "sex", "female", model="b")
    assert female_b["reference_group"] == "female" and female_b["n"] == 2 and female_b["selected"] == pytest.approx(0.5)


def test_seniority_input_errors():
    good = pd.DataFrame(predictions("m", "caucasian_male", ["mid", "senior"]))
    with pytest.raises(ValueError, match=r"seniority predictions: missing columns \['true_seniority'\]"):
        seniority_impact_ratios(good.drop(columns="true_seniority"))
    with pytest.raises(
        ValueError, match=r"variant 'hispanic_male' of a demographic row \(row 1 of those\) is not one of"
    ):
        seniority_impact_ratios(good.assign(variant=["caucasian_male", "hispanic_male"]))
    with pytest.raises(ValueError, match=r"prediction 'lead' of a demographic row \(row 0 of those\)"):
        seniority_impact_ratios(good.assign(prediction=["lead", "mid"]))
    with pytest.raises(ValueError, match=r"impact ratios: missing columns \['sex'\]"):
        impact_table(pd.DataFrame({"model": ["m"], "resume": [0], "race_ethnicity": ["x"], "s": [1.0]}), ["s"], "proxy")


# --------------------------------------------------------------------------- fit audit


def fit_rows(level, scores, recommends, resume="r1", jd="j", axis="firstName", name=None):
    return [
        {
            "model": "m",
            "jd": jd,
            "resume_id": resume,
            "variant": f"{axis}_{level}",
            "axis": axis,
            "level": level,
            "run": i,
            "score": s,
            "recommend": r,
            "name": name,
        }
        for i, (s, r) in enumerate(zip(scores, recommends))
    ]


def test_fit_selections_groups_and_score_cut():
    rows = (
        fit_rows("wm", [8, 7, 6, 9], ["yes", "yes", "maybe", "YES"])
        + fit_rows("wf", [7, 5, np.nan, 6], ["maybe", "no", None, None])
        + fit_rows("x", [9, 9], ["yes", "yes"])
        + fit_rows("bf", [6.5, 7], ["no", "yes"], resume="r2")
        + fit_rows("wf", [7, 7], ["yes", "yes"], resume="r2")
        + fit_rows("2005", [3, 3], ["no", "no"], axis="graduationYear")
    )
    t = fit_impact_ratios(pd.DataFrame(rows), GROUPS)
    assert set(t["selection"]) == {"recommend_yes", "score_at_least_7"}
    male, female = row(t, "recommend_yes", "sex", "male"), row(t, "recommend_yes", "sex", "female")
    # Individuals are name variants on a résumé (and JD); their runs are averaged (a run
    # without a recommendation is left out).
    assert (male["n"], male["selected"]) == (1, pytest.approx(0.75))
    assert (female["n"], female["selected"]) == (3, pytest.approx(0 + 1 / 2 + 1))
    assert set(t.loc[t["dimension"] == "intersection", "group"]) == {"white_male", "white_female", "black_female"}
    score_female = row(t, "score_at_least_7", "sex", "female")
    # wf on r1: 1 of 3 valid runs; bf on r2: 1 of 2; wf on r2: 2 of 2.
    assert score_female["selected"] == pytest.approx(1 / 3 + 1 / 2 + 1)
    cut = fit_impact_ratios(pd.DataFrame(rows), GROUPS, score_cut=6.5)
    assert row(cut, "score_at_least_6.5", "sex", "female")["selected"] == pytest.approx(1 / 3 + 1 + 1)
    assert t["group_source"].str.contains("probe_axes.yaml").all()


def test_fit_scores_use_the_score_distribution_where_stored():
    dist = "[" + ", ".join(["0.0"] * 5 + ["0.25", "0.25", "0.25", "0.25", "0.0"]) + "]"  # P(score >= 7) = 0.75
    rows = pd.DataFrame(fit_rows("wm", [6, 6], [None, None]) + fit_rows("wf", [9, 9], [None, None]))
    rows["score_distribution"] = dist
    t = fit_impact_ratios(rows, GROUPS)
    assert row(t, "score_at_least_7", "sex", "male")["rate"] == pytest.approx(0.75)


def test_fit_input_errors():
    good = pd.DataFrame(fit_rows("wm", [8, 7], ["yes", "no"]))
    with pytest.raises(ValueError, match=r"score_cut must lie on the 1-10 score scale, got 11"):
        fit_impact_ratios(good, GROUPS, score_cut=11)
    with pytest.raises(ValueError, match=r"fit scores: missing columns \['level'\]"):
        fit_impact_ratios(good.drop(columns="level"), GROUPS)
    with pytest.raises(ValueError, match=r"level 'john_doe' of axis 'firstName' has no declared group"):
        fit_impact_ratios(pd.DataFrame(fit_rows("john_doe", [8], ["yes"])), GROUPS)
    with pytest.raises(ValueError, match=r"recommend 'perhaps' \(row 1\) is not one of yes, no, maybe"):
        fit_impact_ratios(good.assign(recommend=["yes", "perhaps"]), GROUPS)


# --------------------------------------------------------------------------- declared groups


def test_packaged_name_groups_cover_every_name_level():
    axes = {a.id: a for a in load_probe_axes().axes}
    groups = name_groups()
    assert list(groups) == ["firstName"]
    assert set(groups["firstName"]) == set(axes["firstName"].levels)


def _catalog_with(tmp_path, edit):
    data = yaml.safe_load(catalog_path("probe_axes.yaml").read_text())
    edit(data["axes"])
    folder = tmp_path / "catalog"
    folder.mkdir(exist_ok=True)
    (folder / "probe_axes.yaml").write_text(yaml.safe_dump(data, allow_unicode=True))
    return folder


def _first_level(axes):
    return next(iter(axes["firstName"]["levels"]))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda a: a["firstName"]["groups"].pop(_first_level(a)),
            r"must list every level once: missing \['\w+'\], not a level \[\]",
        ),
        (
            lambda a: a["firstName"]["groups"].update(john_doe={"sex": "male", "race_ethnicity": "white"}),
            r"missing \[\], not a level \['john_doe'\]",
        ),
        (
            lambda a: a["firstName"]["groups"].update({_first_level(a): {"sex": "man", "race_ethnicity": "asian"}}),
            r"sex must be male, female or null \(no perceived sex\), got 'man'",
        ),
        (
            lambda a: a["firstName"]["groups"].update({_first_level(a): {"sex": None, "race_ethnicity": "East Asian"}}),
            r"race_ethnicity must be null or lower-case letters, digits and underscores, got 'East Asian'",
        ),
        (
            lambda a: a["firstName"]["groups"].update({_first_level(a): {"sex": None}}),
            r"must be \{sex: ..., race_ethnicity: ...\}",
        ),
        (lambda a: a["firstName"].update(groups=["x"]), r"`groups` must map each level"),
        (
            lambda a: a["school"].update(groups={}),
            r"`groups` declares the perceived group of names: only a person_name axis",
        ),
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
    from resumebias_dagster.core.tables import (
        FitImpactRatios,
        SeniorityImpactRatios,
        SeniorityPredictions,
        columns,
        empty_table,
    )

    for table, model in (
        (seniority_impact_ratios(empty_table(SeniorityPredictions)), SeniorityImpactRatios),
        (fit_impact_ratios(pd.DataFrame()), FitImpactRatios),
    ):
        assert list(table.columns) == columns(model) and table.empty
        model.validate(table)


def test_the_interval_flag_says_whether_a_shortfall_is_beyond_noise():
    def rows(model, counts):
        out = []
        for sex, selected in counts.items():
            out += [
                {"model": model, "resume": i, "sex": sex, "race_ethnicity": None, "s": float(i < selected)}
                for i in range(100)
            ]
        return out

    t = impact_table(
        pd.DataFrame(rows("far", {"male": 50, "female": 10}) + rows("near", {"male": 50, "female": 36})),
        ["s"],
        "names are a proxy",
    )
    far = t[(t["model"] == "far") & (t["group"] == "female")].iloc[0]
    near = t[(t["model"] == "near") & (t["group"] == "female")].iloc[0]
    assert far["impact_ratio"] == pytest.approx(0.2) and far["ci_below_four_fifths"]
    assert (
        near["impact_ratio"] == pytest.approx(0.72) and near["below_four_fifths"] and not near["ci_below_four_fifths"]
    )


def test_a_missing_interval_says_why():
    # Issue 38, item 8: a ratio without an interval carried no reason. One résumé, read senior
    # under the caucasian name in both runs and under the african-american one in one of two.
    rows = predictions("m", "caucasian_male", ["senior"]) + predictions("m", "caucasian_male", ["senior"], run=1)
    rows += predictions("m", "african_american_male", ["senior"]) + predictions(
        "m", "african_american_male", ["mid"], run=1
    )
    one = seniority_impact_ratios(pd.DataFrame(rows))
    aa = row(one, "predicted_senior", "race_ethnicity", "african_american")
    assert aa["impact_ratio"] == pytest.approx(0.5) and np.isnan(aa["ci_low"]) and np.isnan(aa["ci_high"])
    assert aa["note"] == NOTE_ONE_RESUME


def test_a_deterministic_tie_is_no_finding_and_its_interval_says_so():
    # Issue 38, item 2: two groups' selections from the same few résumés gave the log ratio a
    # standard error of 0, p = 0 and "beyond noise". Here each group is selected on résumé 0
    # only (fully vs in 3 of 5 runs): every résumé's scaled contrast is 0, the ratio is 0.6.
    rows = []
    for demographic, runs in (("caucasian_male", 5), ("african_american_male", 3)):
        for run in range(5):
            rows += predictions("m", demographic, ["senior" if run < runs else "mid"] + ["mid"] * 8, run=run)
    t = seniority_impact_ratios(pd.DataFrame(rows))
    aa = row(t, "predicted_senior", "race_ethnicity", "african_american")
    assert aa["impact_ratio"] == pytest.approx(0.6)
    assert aa["ci_low"] < 0.6 and aa["ci_high"] == 1.0 and not aa["ci_below_four_fifths"]
    verdicts = seniority_verdicts(pd.DataFrame(rows), InferenceSettings()).set_index("finding")
    finding = verdicts.loc["impact_ratio:predicted_senior:race_ethnicity:african_american"]
    assert finding["p"] > 0.05 and finding["verdict"] != "beyond_noise"
