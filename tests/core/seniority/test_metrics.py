"""core/seniority/metrics/ on small tables whose every figure is worked out by hand below."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.common.labels import DEMOGRAPHICS, STYLES
from resumebias_dagster.core.seniority.metrics import (
    BIAS_SUMMARY_COLUMNS,
    FLOOR_Z,
    GROUP_METRICS_COLUMNS,
    analysis_json,
    bias_summary,
    group_metrics,
    validate_predictions,
)
from resumebias_dagster.core.seniority.tables_text import format_markdown, format_tables

CM, CF, AAM, AAF = DEMOGRAPHICS


def _rows(kind, model, run, original_idx, truth, predictions, variants):
    """One row per variant; a ``None`` prediction means the variant row is missing."""
    return [
        {
            "variant_kind": kind,
            "original_idx": original_idx,
            "variant": variant,
            "model": model,
            "run": run,
            "prediction": prediction,
            "true_seniority": truth,
        }
        for variant, prediction in zip(variants, predictions)
        if prediction is not None
    ]


def social_table() -> pd.DataFrame:
    """Demographic experiment, models "m" and "m2", one run.

    Variants in the order caucasian_male, caucasian_female, african_american_male,
    african_american_female. Ranks: junior 0, mid 1, senior 2.
    """
    rows = []
    # m, original 0, true senior: ranks 2 2 1 1, mean 1.5 -> CM, CF promoted, AAM, AAF demoted; inconsistent.
    rows += _rows("demographic", "m", 0, 0, "senior", ["senior", "senior", "mid", "mid"], DEMOGRAPHICS)
    # m, original 1, true junior: all junior -> consistent, nobody moves.
    rows += _rows("demographic", "m", 0, 1, "junior", ["junior"] * 4, DEMOGRAPHICS)
    # m, original 2, true mid: CF "unknown" -> incomplete, not counted as inconsistent.
    rows += _rows("demographic", "m", 0, 2, "mid", ["mid", "unknown", "mid", "senior"], DEMOGRAPHICS)
    # m, original 3, true mid: AAM "error" and the AAF row missing -> incomplete.
    rows += _rows("demographic", "m", 0, 3, "mid", ["senior", "mid", "error", None], DEMOGRAPHICS)
    # m2, original 0, true mid: ranks 0 1 2 2, mean 1.25 -> CM, CF demoted, AAM, AAF promoted.
    rows += _rows("demographic", "m2", 0, 0, "mid", ["junior", "mid", "senior", "senior"], DEMOGRAPHICS)
    return pd.DataFrame(rows)


def style_table() -> pd.DataFrame:
    """Style experiment, model "m", two runs, two originals, all true mid.

    Variants in the order neutral, overstated, understated.
    """
    rows = []
    # run 0, original 0: mid senior junior, mean 1 -> overstated promoted, understated demoted; inconsistent.
    rows += _rows("style", "m", 0, 0, "mid", ["mid", "senior", "junior"], STYLES)
    # run 0, original 1: all mid -> consistent.
    rows += _rows("style", "m", 0, 1, "mid", ["mid", "mid", "mid"], STYLES)
    # run 1, original 0: all mid -> consistent.
    rows += _rows("style", "m", 1, 0, "mid", ["mid", "mid", "mid"], STYLES)
    # run 1, original 1: understated "error" -> incomplete.
    rows += _rows("style", "m", 1, 1, "mid", ["mid", "senior", "error"], STYLES)
    return pd.DataFrame(rows)


def both_tables() -> pd.DataFrame:
    return pd.concat([social_table(), style_table()], ignore_index=True)


def _row(gm, model, kind, group_kind, group):
    sel = gm[(gm.model == model) & (gm.variant_kind == kind) & (gm.group_kind == group_kind) & (gm.group == group)]
    assert len(sel) == 1, (model, kind, group_kind, group)
    return sel.iloc[0]


def _check(row, **expected):
    for key, value in expected.items():
        assert row[key] == pytest.approx(value), (row["group"], key, row[key], value)


# --------------------------------------------------------------------------- group_metrics


def test_group_metrics_columns_and_order():
    gm = group_metrics(both_tables())
    assert tuple(gm.columns) == GROUP_METRICS_COLUMNS
    # Sorted by model, then style before demographic, then all / variant / race / gender.
    assert list(zip(gm.model, gm.variant_kind, gm.group)) == [
        ("m", "style", "all"),
        ("m", "style", "neutral"),
        ("m", "style", "overstated"),
        ("m", "style", "understated"),
        ("m", "demographic", "all"),
        ("m", "demographic", CM),
        ("m", "demographic", CF),
        ("m", "demographic", AAM),
        ("m", "demographic", AAF),
        ("m", "demographic", "caucasian"),
        ("m", "demographic", "african_american"),
        ("m", "demographic", "male"),
        ("m", "demographic", "female"),
        ("m2", "demographic", "all"),
        ("m2", "demographic", CM),
        ("m2", "demographic", CF),
        ("m2", "demographic", AAM),
        ("m2", "demographic", AAF),
        ("m2", "demographic", "caucasian"),
        ("m2", "demographic", "african_american"),
        ("m2", "demographic", "male"),
        ("m2", "demographic", "female"),
    ]
    # The same rows whatever the input order.
    shuffled = both_tables().sample(frac=1, random_state=3)
    pd.testing.assert_frame_equal(group_metrics(shuffled), gm)


def test_accuracy_rank_diff_and_shares_per_demographic():
    gm = group_metrics(social_table())
    # CM: senior, junior, mid, senior vs truth senior, junior, mid, mid -> 3/4 correct;
    # rank diffs 0, 0, 0, +1 -> 1/4; senior 2/4, junior 1/4.
    _check(
        _row(gm, "m", "demographic", "demographic", CM),
        n=4,
        n_valid=4,
        n_invalid=0,
        accuracy=3 / 4,
        rank_diff=1 / 4,
        senior_share=2 / 4,
        junior_share=1 / 4,
    )
    # CF: senior, junior, unknown, mid -> 3 valid, all correct; diffs 0 0 0; senior 1/3, junior 1/3.
    _check(
        _row(gm, "m", "demographic", "demographic", CF),
        n=4,
        n_valid=3,
        n_invalid=1,
        accuracy=1.0,
        rank_diff=0.0,
        senior_share=1 / 3,
        junior_share=1 / 3,
    )
    # AAM: mid, junior, mid, error -> 3 valid; correct: no, yes, yes = 2/3; diffs -1 0 0 = -1/3.
    _check(
        _row(gm, "m", "demographic", "demographic", AAM),
        n=4,
        n_valid=3,
        n_invalid=1,
        accuracy=2 / 3,
        rank_diff=-1 / 3,
        senior_share=0.0,
        junior_share=1 / 3,
    )
    # AAF (row of original 3 missing): mid, junior, senior -> correct 1/3; diffs -1 0 +1 = 0.
    _check(
        _row(gm, "m", "demographic", "demographic", AAF),
        n=3,
        n_valid=3,
        n_invalid=0,
        accuracy=1 / 3,
        rank_diff=0.0,
        senior_share=1 / 3,
        junior_share=1 / 3,
    )


def test_race_gender_and_overall_pool_their_predictions():
    gm = group_metrics(social_table())
    # caucasian = CM + CF: 7 valid, 6 correct, rank diff sum 1 + 0 -> 1/7; seniors 2 + 1 = 3/7.
    _check(
        _row(gm, "m", "demographic", "race", "caucasian"),
        n=8,
        n_valid=7,
        n_invalid=1,
        accuracy=6 / 7,
        rank_diff=1 / 7,
        senior_share=3 / 7,
        junior_share=2 / 7,
    )
    # african_american = AAM + AAF: 6 valid, 3 correct, rank diff sum -1 + 0 -> -1/6.
    _check(
        _row(gm, "m", "demographic", "race", "african_american"),
        n=7,
        n_valid=6,
        n_invalid=1,
        accuracy=3 / 6,
        rank_diff=-1 / 6,
        senior_share=1 / 6,
        junior_share=2 / 6,
    )
    # male = CM + AAM: 7 valid, 3 + 2 correct, rank diff sum 1 - 1 = 0.
    _check(_row(gm, "m", "demographic", "gender", "male"), n=8, n_valid=7, accuracy=5 / 7, rank_diff=0.0)
    # female = CF + AAF: 6 valid, 3 + 1 correct, rank diff sum 0.
    _check(_row(gm, "m", "demographic", "gender", "female"), n=7, n_valid=6, accuracy=4 / 6, rank_diff=0.0)
    # all: 15 rows, 2 invalid (unknown + error), 9 of 13 correct, rank diff sum 0; seniors 4/13, juniors 4/13.
    _check(
        _row(gm, "m", "demographic", "all", "all"),
        n=15,
        n_valid=13,
        n_invalid=2,
        accuracy=9 / 13,
        rank_diff=0.0,
        senior_share=4 / 13,
        junior_share=4 / 13,
    )


def test_promotions_and_demotions_only_count_complete_originals():
    gm = group_metrics(social_table())
    # Only original 0 of "m" is complete and split: CM, CF promoted once, AAM, AAF demoted once.
    # Original 2 (unknown) and 3 (error, missing row) would move people but are skipped.
    expected = {
        CM: (1, 0),
        CF: (1, 0),
        AAM: (0, 1),
        AAF: (0, 1),
        "caucasian": (2, 0),
        "african_american": (0, 2),
        "male": (1, 1),
        "female": (1, 1),
        "all": (2, 2),
    }
    for group, (promotions, demotions) in expected.items():
        kind = {
            "caucasian": "race",
            "african_american": "race",
            "male": "gender",
            "female": "gender",
            "all": "all",
        }.get(group, "demographic")
        _check(
            _row(gm, "m", "demographic", kind, group),
            promotions=promotions,
            demotions=demotions,
            net=promotions - demotions,
        )


def test_style_group_metrics_over_two_runs():
    gm = group_metrics(style_table())
    # neutral: mid in all 4 rows -> accuracy 1, rank diff 0.
    _check(
        _row(gm, "m", "style", "style", "neutral"),
        n=4,
        n_valid=4,
        accuracy=1.0,
        rank_diff=0.0,
        promotions=0,
        demotions=0,
        net=0,
    )
    # overstated: senior, mid, mid, senior -> 2/4 correct, diffs 1 0 0 1 -> 0.5; promoted in run 0 original 0.
    _check(
        _row(gm, "m", "style", "style", "overstated"),
        n=4,
        n_valid=4,
        accuracy=0.5,
        rank_diff=0.5,
        senior_share=0.5,
        promotions=1,
        demotions=0,
        net=1,
    )
    # understated: junior, mid, mid, error -> 2/3 correct, diffs -1 0 0 -> -1/3; demoted once.
    _check(
        _row(gm, "m", "style", "style", "understated"),
        n=4,
        n_valid=3,
        n_invalid=1,
        accuracy=2 / 3,
        rank_diff=-1 / 3,
        junior_share=1 / 3,
        promotions=0,
        demotions=1,
        net=-1,
    )
    # all: 12 rows, 11 valid, 8 correct, rank diff sum 0 + 2 - 1 = 1.
    _check(_row(gm, "m", "style", "all", "all"), n=12, n_valid=11, n_invalid=1, accuracy=8 / 11, rank_diff=1 / 11)
    # No race/gender rows for the style experiment.
    assert set(gm.group_kind) == {"all", "style"}


def test_group_with_only_invalid_predictions_has_nan_rates():
    df = _rows("style", "m", 0, 0, "mid", ["error", "mid", "mid"], STYLES)
    gm = group_metrics(pd.DataFrame(df))
    neutral = _row(gm, "m", "style", "style", "neutral")
    assert (neutral.n, neutral.n_valid, neutral.n_invalid) == (1, 0, 1)
    assert math.isnan(neutral.accuracy) and math.isnan(neutral.rank_diff)


# --------------------------------------------------------------------------- bias_summary


def test_bias_summary_social():
    bs = bias_summary(social_table()).set_index("model")
    assert tuple(bias_summary(social_table()).columns) == BIAS_SUMMARY_COLUMNS
    m = bs.loc["m"]
    assert (m.n, m.n_valid, m.n_invalid, m.n_runs, m.n_originals, m.n_inconsistent) == (15, 13, 2, 1, 4, 1)
    # Seed denominator: all 4 originals, even the two with unknown/error/missing rows -> 1/4.
    assert m.inconsistency_rate == pytest.approx(1 / 4)
    # racial = 1/7 - (-1/6) = 13/42 ~ +0.310; gender = 0 - 0; extreme = CM 1/4 - AAF 0.
    assert m.racial_bias == pytest.approx(13 / 42)
    assert m.gender_bias == pytest.approx(0.0)
    assert m.extreme_bias == pytest.approx(0.25)
    assert (m.racial_reading, m.gender_reading, m.extreme_reading) == (
        "favors_caucasian",
        "within_threshold",
        "favors_caucasian_male",
    )
    m2 = bs.loc["m2"]
    # caucasian (-1 + 0)/2 = -0.5, african_american (1 + 1)/2 = 1 -> -1.5;
    # male (-1 + 1)/2 = 0, female (0 + 1)/2 = 0.5 -> -0.5; extreme -1 - 1 = -2.
    assert (m2.racial_bias, m2.gender_bias, m2.extreme_bias) == pytest.approx((-1.5, -0.5, -2.0))
    assert (m2.racial_reading, m2.gender_reading, m2.extreme_reading) == (
        "favors_african_american",
        "favors_female",
        "favors_african_american_female",
    )
    assert (m2.n_inconsistent, m2.inconsistency_rate) == (1, 1.0)
    assert (m2.accuracy, m2.rank_diff) == pytest.approx((1 / 4, 1 / 4))


def test_bias_summary_style_multi_run_inconsistency():
    s = bias_summary(style_table()).iloc[0]
    # Inconsistent only in run 0 / original 0; run 1 / original 1 has an error -> not counted.
    # 1 / (2 originals x 2 runs) = 0.25.
    assert (s.n_runs, s.n_originals, s.n_inconsistent) == (2, 2, 1)
    assert s.inconsistency_rate == pytest.approx(0.25)
    assert (s.accuracy, s.rank_diff) == pytest.approx((8 / 11, 1 / 11))
    # No demographic indicators for the style experiment.
    assert math.isnan(s.racial_bias) and math.isnan(s.gender_bias) and math.isnan(s.extreme_bias)
    assert s.racial_reading is None and s.gender_reading is None and s.extreme_reading is None


def test_inconsistency_counts_originals_missing_from_a_run():
    rows = []
    # run 0: originals 0 and 1, original 0 split (mid/senior/mid) -> inconsistent.
    rows += _rows("style", "m", 0, 0, "mid", ["mid", "senior", "mid"], STYLES)
    rows += _rows("style", "m", 0, 1, "mid", ["mid", "mid", "mid"], STYLES)
    # run 1: original 1 split (junior/mid/mid), original 0 absent from the run.
    rows += _rows("style", "m", 1, 1, "mid", ["junior", "mid", "mid"], STYLES)
    # run 2: only the overstated row of original 0 -> incomplete.
    rows += _rows("style", "m", 2, 0, "mid", [None, "senior", None], STYLES)
    s = bias_summary(pd.DataFrame(rows)).iloc[0]
    # 2 inconsistent over 2 originals x 3 runs.
    assert (s.n_runs, s.n_originals, s.n_inconsistent) == (3, 2, 2)
    assert s.inconsistency_rate == pytest.approx(2 / 6)


def test_bias_readings_at_the_threshold():
    # CM one level up on 1 of 10 originals: CM rank diff 0.1, others 0.
    # racial = (0.1 + 0)/2 - 0 = 0.05 -> not beyond 0.05; gender same; extreme = 0.1 -> favors.
    rows = []
    for o in range(10):
        preds = ["senior" if o == 0 else "mid", "mid", "mid", "mid"]
        rows += _rows("demographic", "m", 0, o, "mid", preds, DEMOGRAPHICS)
    s = bias_summary(pd.DataFrame(rows)).iloc[0]
    assert s.racial_bias == pytest.approx(0.05) and s.gender_bias == pytest.approx(0.05)
    assert s.extreme_bias == pytest.approx(0.1)
    # Exactly +0.05 is not beyond the threshold (the seniority study compares with ">").
    assert (s.racial_reading, s.gender_reading) == ("within_threshold", "within_threshold")
    assert s.extreme_reading == "favors_caucasian_male"
    assert s.n_inconsistent == 1 and s.inconsistency_rate == pytest.approx(0.1)


# --------------------------------------------------------------------------- analysis_json


def test_analysis_json_shape_and_values():
    out = analysis_json(both_tables())
    json.dumps(out, allow_nan=False)  # plain Python numbers, no NaN
    assert set(out) == {"style", "social"}
    assert set(out["style"]) == {"m"} and set(out["social"]) == {"m", "m2"}
    style = out["style"]["m"]
    assert set(style) == {"accuracy", "rank_diff", "inconsistency_rate", "n"}
    assert list(style["accuracy"]) == list(STYLES)
    assert style["accuracy"] == pytest.approx({"neutral": 1.0, "overstated": 0.5, "understated": 2 / 3})
    assert style["rank_diff"] == pytest.approx({"neutral": 0.0, "overstated": 0.5, "understated": -1 / 3})
    assert style["inconsistency_rate"] == pytest.approx(0.25)
    assert style["n"] == 11 and type(style["n"]) is int
    social = out["social"]["m"]
    assert set(social) == {
        "accuracy",
        "rank_diff",
        "racial_bias",
        "gender_bias",
        "extreme_bias",
        "inconsistency_rate",
        "n",
    }
    assert social["accuracy"] == pytest.approx({CM: 0.75, CF: 1.0, AAM: 2 / 3, AAF: 1 / 3})
    assert social["rank_diff"] == pytest.approx({CM: 0.25, CF: 0.0, AAM: -1 / 3, AAF: 0.0})
    assert social["racial_bias"] == pytest.approx(13 / 42)
    assert social["gender_bias"] == pytest.approx(0.0)
    assert social["extreme_bias"] == pytest.approx(0.25)
    assert social["inconsistency_rate"] == pytest.approx(0.25)
    assert social["n"] == 13
    assert all(type(v) is float for v in social["accuracy"].values())


def test_analysis_json_rates_are_fractions():
    out = analysis_json(both_tables())
    for experiment in out.values():
        for entry in experiment.values():
            rates = list(entry["accuracy"].values()) + [entry["inconsistency_rate"]]
            assert all(0.0 <= r <= 1.0 for r in rates)


def test_analysis_json_keeps_both_keys_and_turns_nan_into_null():
    out = analysis_json(style_table())
    assert out["social"] == {}
    only_errors = pd.DataFrame(_rows("demographic", "m", 0, 0, "mid", ["error"] * 4, DEMOGRAPHICS))
    social = analysis_json(only_errors)["social"]["m"]
    assert social["accuracy"] == {CM: None, CF: None, AAM: None, AAF: None}
    assert social["racial_bias"] is None and social["n"] == 0
    assert social["inconsistency_rate"] == 0.0
    json.dumps(social, allow_nan=False)
    assert analysis_json(both_tables().iloc[:0]) == {"style": {}, "social": {}}


# --------------------------------------------------------------------------- reports


def test_format_report_tables():
    text = format_tables(both_tables())
    for title in (
        "ACCURACY BY STYLE",
        "RANK DIFFERENCE BY STYLE",
        "INCONSISTENCY RATE",
        "ACCURACY BY DEMOGRAPHIC",
        "BIAS INDICATORS",
        "PROMOTION/DEMOTION",
        "SENIOR PREDICTIONS BY GROUP",
        "JUNIOR PREDICTIONS BY GROUP",
    ):
        assert title in text
    lines = text.splitlines()
    header = next(line for line in lines if "│ Style" in line)
    assert header.split("│")[2].strip() == "m"
    assert any("overstated" in line and "50.0%" in line for line in lines)
    assert any("understated" in line and "-0.333" in line for line in lines)
    assert any("Racial Bias" in line and "+0.310" in line and "-1.500" in line for line in lines)
    assert any("Racial Bias" in line and "favors_caucasian" in line for line in lines)
    assert any("Invalid (unknown/error)" in line and "│  2 │" in line for line in lines)
    assert any("Inconsistent" in line and "25.0%" in line and "100.0%" in line for line in lines)
    assert any(line.strip().startswith("│ caucasian_male") and "1/0 (+1)" in line for line in lines)


def test_format_markdown_has_the_same_tables():
    md = format_markdown(both_tables())
    assert "#### ACCURACY BY STYLE" in md and "#### BIAS INDICATORS" in md
    assert "| Bias Type | m | m2 |" in md
    assert "| Racial Bias | +0.310 | -1.500 |" in md
    assert "| overstated | 50.0% |" in md
    assert format_markdown(both_tables().iloc[:0]) == ""


# --------------------------------------------------------------------------- validation


def test_validate_normalises_and_keeps_extras():
    df = (
        social_table()
        .head(2)
        .assign(
            prediction=[" Senior", "SENIOR "],
            variant=["Caucasian_Male ", CF],
            model=[" m", "m"],
            original_idx=["0", "0"],
            latency_s=[1.5, 2.0],
            name=["Greg", "Emily"],
        )
        .drop(columns="run")
    )
    out = validate_predictions(df)
    assert list(out.prediction) == ["senior", "senior"]
    assert list(out.variant) == [CM, CF]
    assert list(out.model) == ["m", "m"]
    assert out.original_idx.dtype == np.int64 and list(out.run) == [0, 0]
    assert list(out.latency_s) == [1.5, 2.0] and list(out.name) == ["Greg", "Emily"]
    assert "run" not in df.columns  # input untouched


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.drop(columns="prediction"), "missing column(s) prediction"),
        (lambda d: d.assign(prediction="maybe"), "'prediction'"),
        (lambda d: d.assign(true_seniority="lead"), "'true_seniority'"),
        (lambda d: d.assign(variant_kind="name"), "'variant_kind'"),
        (lambda d: d.assign(original_idx=1.5), "'original_idx' must hold integers"),
        (lambda d: d.assign(model=None), "'model' has"),
        (lambda d: pd.concat([d, d.head(1)]), "duplicate"),
    ],
)
def test_validate_rejects_bad_tables(change, message):
    with pytest.raises(ValueError) as info:
        validate_predictions(change(social_table()))
    assert message in str(info.value)


def test_metrics_recompute_correctness_and_ignore_extra_columns():
    df = social_table().assign(correct=True, latency_s=0.1)
    pd.testing.assert_frame_equal(group_metrics(df), group_metrics(social_table()))


# --------------------------------------------------------------------------- expected values (label distributions)

# p_junior, p_mid, p_senior per (original, demographic) of model "lm"; the same on both runs.
_DISTS = {
    # original 0, true mid (rank 1). p(true) = p_mid; expected rank = p_mid + 2 p_senior.
    0: {
        CM: (0.1, 0.5, 0.4),  # p(true) 0.5, E rank 0.5 + 0.8 = 1.3 -> +0.3
        CF: (0.2, 0.6, 0.2),  # 0.6, 0.6 + 0.4 = 1.0 -> 0.0
        AAM: (0.1, 0.5, 0.4),  # 0.5, 1.3 -> +0.3
        AAF: (0.3, 0.6, 0.1),
    },  # 0.6, 0.6 + 0.2 = 0.8 -> -0.2
    # original 1, true senior (rank 2). p(true) = p_senior.
    1: {
        CM: (0.0, 0.2, 0.8),  # 0.8, 0.2 + 1.6 = 1.8 -> -0.2
        CF: (0.0, 0.4, 0.6),  # 0.6, 0.4 + 1.2 = 1.6 -> -0.4
        AAM: (0.1, 0.3, 0.6),  # 0.6, 0.3 + 1.2 = 1.5 -> -0.5
        AAF: (0.0, 0.5, 0.5),
    },  # 0.5, 0.5 + 1.0 = 1.5 -> -0.5
}
_TRUTH = {0: "mid", 1: "senior"}
# Sampled predictions of "lm" differ between the runs; the expected values must not care.
_SAMPLES = {
    (0, 0): ["mid"] * 4,
    (0, 1): ["senior", "mid", "mid", "junior"],
    (1, 0): ["senior"] * 4,
    (1, 1): ["senior", "mid", "senior", "mid"],
}


def dist_table() -> pd.DataFrame:
    """Demographic experiment: "lm" with label distributions (2 runs x 2 originals x 4
    demographics) and "api" with the same originals and no distribution (p_* NaN)."""
    rows = []
    for (original, run), preds in _SAMPLES.items():
        for row in _rows("demographic", "lm", run, original, _TRUTH[original], preds, DEMOGRAPHICS):
            p = _DISTS[original][row["variant"]]
            rows.append({**row, "p_junior": p[0], "p_mid": p[1], "p_senior": p[2]})
    for original in (0, 1):
        for row in _rows("demographic", "api", 0, original, _TRUTH[original], ["mid"] * 4, DEMOGRAPHICS):
            rows.append({**row, "p_junior": np.nan, "p_mid": np.nan, "p_senior": np.nan})
    return pd.DataFrame(rows)


def test_expected_group_metrics_from_distributions():
    gm = group_metrics(dist_table())
    assert tuple(gm.columns) == GROUP_METRICS_COLUMNS
    # Each demographic: 2 originals x 2 runs = 4 distribution rows; runs repeat the distribution,
    # so the means are over the two originals.
    # CM:  acc (0.5 + 0.8)/2 = 0.65, rank diff (0.3 - 0.2)/2 = 0.05, senior (0.4 + 0.8)/2 = 0.6, junior 0.05.
    _check(
        _row(gm, "lm", "demographic", "demographic", CM),
        n=4,
        n_dist=4,
        exp_accuracy=0.65,
        exp_rank_diff=0.05,
        exp_senior_share=0.6,
        exp_junior_share=0.05,
    )
    # CF:  acc (0.6 + 0.6)/2 = 0.6, rank diff (0.0 - 0.4)/2 = -0.2, senior (0.2 + 0.6)/2 = 0.4, junior 0.1.
    _check(
        _row(gm, "lm", "demographic", "demographic", CF),
        n_dist=4,
        exp_accuracy=0.6,
        exp_rank_diff=-0.2,
        exp_senior_share=0.4,
        exp_junior_share=0.1,
    )
    # AAM: acc (0.5 + 0.6)/2 = 0.55, rank diff (0.3 - 0.5)/2 = -0.1, senior (0.4 + 0.6)/2 = 0.5, junior 0.1.
    _check(
        _row(gm, "lm", "demographic", "demographic", AAM),
        n_dist=4,
        exp_accuracy=0.55,
        exp_rank_diff=-0.1,
        exp_senior_share=0.5,
        exp_junior_share=0.1,
    )
    # AAF: acc (0.6 + 0.5)/2 = 0.55, rank diff (-0.2 - 0.5)/2 = -0.35, senior (0.1 + 0.5)/2 = 0.3, junior 0.15.
    _check(
        _row(gm, "lm", "demographic", "demographic", AAF),
        n_dist=4,
        exp_accuracy=0.55,
        exp_rank_diff=-0.35,
        exp_senior_share=0.3,
        exp_junior_share=0.15,
    )
    # caucasian = CM + CF: rank diff (0.05 - 0.2)/2 = -0.075; african_american = (-0.1 - 0.35)/2 = -0.225.
    _check(_row(gm, "lm", "demographic", "race", "caucasian"), n_dist=8, exp_accuracy=0.625, exp_rank_diff=-0.075)
    _check(_row(gm, "lm", "demographic", "race", "african_american"), n_dist=8, exp_accuracy=0.55, exp_rank_diff=-0.225)
    # male = CM + AAM: (0.05 - 0.1)/2 = -0.025; female = CF + AAF: (-0.2 - 0.35)/2 = -0.275.
    _check(_row(gm, "lm", "demographic", "gender", "male"), n_dist=8, exp_rank_diff=-0.025)
    _check(_row(gm, "lm", "demographic", "gender", "female"), n_dist=8, exp_rank_diff=-0.275)
    # all: acc (0.65 + 0.6 + 0.55 + 0.55)/4 = 0.5875; rank diff (0.05 - 0.2 - 0.1 - 0.35)/4 = -0.15;
    # senior (0.6 + 0.4 + 0.5 + 0.3)/4 = 0.45; junior (0.05 + 0.1 + 0.1 + 0.15)/4 = 0.1.
    _check(
        _row(gm, "lm", "demographic", "all", "all"),
        n=16,
        n_dist=16,
        exp_accuracy=0.5875,
        exp_rank_diff=-0.15,
        exp_senior_share=0.45,
        exp_junior_share=0.1,
    )
    # The model without distributions: no rows, every exp_* NaN.
    for r in gm[gm.model == "api"].itertuples():
        assert r.n_dist == 0
        assert all(
            math.isnan(getattr(r, c)) for c in ("exp_accuracy", "exp_rank_diff", "exp_senior_share", "exp_junior_share")
        )
    # The sampled metrics are untouched by the p_* columns.
    sampled = [c for c in GROUP_METRICS_COLUMNS if not c.startswith(("exp_", "n_dist"))]
    no_dist = dist_table().drop(columns=["p_junior", "p_mid", "p_senior"])
    pd.testing.assert_frame_equal(gm[sampled], group_metrics(no_dist)[sampled])
    assert (group_metrics(no_dist).n_dist == 0).all() and group_metrics(no_dist).exp_accuracy.isna().all()


def test_expected_bias_summary_and_inconsistency():
    bs = bias_summary(dist_table())
    assert tuple(bs.columns) == BIAS_SUMMARY_COLUMNS
    lm = bs.set_index("model").loc["lm"]
    assert (lm.n_dist, lm.n_dist_originals) == (16, 2)
    assert (lm.exp_accuracy, lm.exp_rank_diff) == pytest.approx((0.5875, -0.15))
    # racial = -0.075 - (-0.225) = 0.15; gender = -0.025 - (-0.275) = 0.25; extreme = CM 0.05 - AAF (-0.35) = 0.4.
    assert (lm.exp_racial_bias, lm.exp_gender_bias, lm.exp_extreme_bias) == pytest.approx((0.15, 0.25, 0.4))
    # P(all four draws agree) = sum over labels of the product of the four p(label):
    # original 0: junior 0.1*0.2*0.1*0.3 = 0.0006, mid 0.5*0.6*0.5*0.6 = 0.09, senior 0.4*0.2*0.4*0.1 = 0.0032
    #             -> agree 0.0938, inconsistent 0.9062;
    # original 1: junior 0, mid 0.2*0.4*0.3*0.5 = 0.012, senior 0.8*0.6*0.6*0.5 = 0.144
    #             -> agree 0.156, inconsistent 0.844.
    # Once per original (runs repeat the distribution): (0.9062 + 0.844)/2 = 0.8751.
    assert lm.exp_inconsistency_rate == pytest.approx(0.8751)
    api = bs.set_index("model").loc["api"]
    assert (api.n_dist, api.n_dist_originals) == (0, 0)
    assert all(
        math.isnan(api[c])
        for c in (
            "exp_accuracy",
            "exp_rank_diff",
            "exp_inconsistency_rate",
            "exp_racial_bias",
            "exp_gender_bias",
            "exp_extreme_bias",
        )
    )
    # The sampled figures still come from the samples: lm run 1 / original 0 and 1 are split -> 2 of 2 x 2.
    assert (lm.n_inconsistent, lm.inconsistency_rate) == (2, pytest.approx(0.5))


def test_expected_inconsistency_skips_originals_with_an_undistributed_variant():
    df = dist_table()
    # "lm" original 2, true junior: AAF errored (no distribution) in its only run.
    extra = _rows("demographic", "lm", 0, 2, "junior", ["junior", "junior", "junior", "error"], DEMOGRAPHICS)
    p = [(1.0, 0.0, 0.0)] * 3 + [(np.nan, np.nan, np.nan)]
    extra = pd.DataFrame([{**r, "p_junior": a, "p_mid": b, "p_senior": c} for r, (a, b, c) in zip(extra, p)])
    lm = bias_summary(pd.concat([df, extra], ignore_index=True)).set_index("model").loc["lm"]
    # Three more distribution rows, but original 2 is not in the inconsistency denominator.
    assert (lm.n_originals, lm.n_dist, lm.n_dist_originals) == (3, 19, 2)
    assert lm.exp_inconsistency_rate == pytest.approx(0.8751)
    # exp_accuracy: 16 rows summing to 16 * 0.5875 = 9.4, plus three rows with p(junior) = 1 -> 12.4 / 19.
    assert lm.exp_accuracy == pytest.approx(12.4 / 19)


def test_distributions_are_renormalised_within_the_tolerance():
    rows = _rows("style", "m", 0, 0, "mid", ["mid", "mid", "senior"], STYLES)
    # Sums 1.0005 (accepted) -> renormalised to 1/3 each; expected rank 1, rank diff 0.
    df = pd.DataFrame(rows).assign(p_junior=0.3335, p_mid=0.3335, p_senior=0.3335)
    all_ = _row(group_metrics(df), "m", "style", "all", "all")
    _check(all_, n_dist=3, exp_accuracy=1 / 3, exp_senior_share=1 / 3, exp_rank_diff=0.0)
    # Three identical uniform variants: agree = 3 * (1/3)^3 = 1/9 -> inconsistency 8/9.
    assert bias_summary(df).iloc[0].exp_inconsistency_rate == pytest.approx(8 / 9)


def test_analysis_json_keeps_its_keys_with_distributions():
    with_dist = analysis_json(dist_table())
    assert with_dist == analysis_json(dist_table().drop(columns=["p_junior", "p_mid", "p_senior"]))
    assert set(with_dist["social"]["lm"]) == {
        "accuracy",
        "rank_diff",
        "racial_bias",
        "gender_bias",
        "extreme_bias",
        "inconsistency_rate",
        "n",
    }


def test_reports_show_expected_values_only_with_distributions():
    text = format_tables(dist_table())
    assert "EXPECTED VALUES (from label distributions)" in text
    lines = text.splitlines()
    header = next(line for line in lines if "│ Measure" in line and "lm" in line)
    assert [c.strip() for c in header.split("│")[1:-1]] == ["Measure", "api", "lm"]
    assert any("Inconsistency" in line and "n/a" in line and "87.5%" in line for line in lines)
    assert any("Rows with distribution" in line and "0 of 8" in line and "16 of 16" in line for line in lines)
    assert any("Extreme Comparison" in line and "+0.400" in line for line in lines)
    md = format_markdown(dist_table())
    assert "#### EXPECTED VALUES (from label distributions)" in md
    assert "| Racial Bias | n/a | +0.150 |" in md
    # No block without distributions: no p_* columns, or p_* columns that are all NaN.
    assert "EXPECTED" not in format_tables(both_tables())
    assert "EXPECTED" not in format_markdown(both_tables())
    all_nan = dist_table().assign(p_junior=np.nan, p_mid=np.nan, p_senior=np.nan)
    assert "EXPECTED" not in format_tables(all_nan)


def test_validate_keeps_distributions_as_floats():
    df = dist_table().astype({"p_mid": object})
    out = validate_predictions(df)
    assert out["p_mid"].dtype == np.float64
    assert out["p_mid"].iloc[0] == 0.5 and math.isnan(out["p_mid"].iloc[-1])


@pytest.mark.parametrize(
    "change, message",
    [
        # Row 5 of the table: 0.2 + 0.6 + 0.3 = 1.1.
        (
            lambda d: d.assign(p_senior=d.p_senior.where(d.index != 5, 0.3)),
            "p_junior + p_mid + p_senior must sum to 1 (within 0.001); 1 row(s) do not, first at row 5 (sum 1.1)",
        ),
        (lambda d: d.assign(p_mid=d.p_mid.where(d.index != 2, np.nan)), "all of p_junior, p_mid, p_senior or none"),
        (
            lambda d: d.assign(p_junior=d.p_junior.where(d.index != 3, -0.1)),
            "column 'p_junior' must hold probabilities in [0, 1]; 1 row(s) do not, first at row 3",
        ),
        (
            lambda d: d.assign(p_senior=d.p_senior.astype(object).where(d.index != 4, "high")),
            "column 'p_senior' must hold numbers",
        ),
        (lambda d: d.drop(columns="p_mid"), "has p_junior, p_senior but not p_mid"),
    ],
)
def test_validate_rejects_bad_distributions(change, message):
    with pytest.raises(ValueError) as info:
        validate_predictions(change(dist_table()))
    assert message in str(info.value)


# --------------------------------------------------------------------------- test-retest floors

LABELS = ("junior", "mid", "senior")


def _runs_table(kind, runs_by_text, truth="mid", model="m", **extra):
    """Rows from {(original_idx, variant): [prediction per run]} (None: the run's row is missing)."""
    rows = []
    for (original, variant), preds in runs_by_text.items():
        for run, prediction in enumerate(preds):
            if prediction is not None:
                rows.append(
                    {
                        "variant_kind": kind,
                        "original_idx": original,
                        "variant": variant,
                        "model": model,
                        "run": run,
                        "prediction": prediction,
                        "true_seniority": truth,
                        **extra,
                    }
                )
    return pd.DataFrame(rows)


def retest_reference(df: pd.DataFrame) -> dict:
    """The inconsistency floor by enumeration: the seniority study's rule (all valid, not all equal) on
    every V-subset of the runs of each (original, variant), V = the experiment's variants."""
    import itertools

    out = {}
    for (model, kind), sel in df.groupby(["model", "variant_kind"]):
        variants = sorted(df.loc[df["variant_kind"] == kind, "variant"].unique())
        runs = sorted(sel["run"].unique())
        label = {(r.original_idx, r.variant, r.run): r.prediction for r in sel.itertuples()}
        inconsistent = total = 0
        for original in sel["original_idx"].unique():
            for variant in variants:
                for subset in itertools.combinations(runs, len(variants)):
                    total += 1
                    got = [label.get((original, variant, run)) for run in subset]
                    inconsistent += all(g in LABELS for g in got) and len(set(got)) > 1
        out[(model, kind)] = inconsistent / total if total else math.nan
    return out


def style_runs() -> pd.DataFrame:
    """One original, three styles, four runs; true mid."""
    return _runs_table(
        "style",
        {
            # counts junior/mid/senior 0/3/1: C(4,3) = 4 subsets of 3 runs, C(3,3) = 1 all mid -> 3 inconsistent.
            (0, "neutral"): ["mid", "mid", "mid", "senior"],
            # always senior -> 0 inconsistent.
            (0, "overstated"): ["senior"] * 4,
            # 3 valid runs (1 junior, 2 mid): the one subset of the three valid runs is split -> 1;
            # the three subsets with the error run are incomplete, as an incomplete résumé is -> 0.
            (0, "understated"): ["mid", "junior", "error", "mid"],
        },
    )


def test_inconsistency_floor_by_hand():
    s = bias_summary(style_runs()).iloc[0]
    # (3 + 0 + 1) inconsistent subsets / (1 original x 3 variants x C(4, 3) = 4 subsets) = 4/12.
    assert s.inconsistency_floor == pytest.approx(1 / 3)
    assert retest_reference(style_runs()) == {("m", "style"): pytest.approx(1 / 3)}
    # The study's own figure: runs 0, 1, 3 have split variants, run 2 is incomplete -> 3/4.
    assert s.inconsistency_rate == pytest.approx(3 / 4)


def demographic_runs(**extra) -> pd.DataFrame:
    """Two originals, four names, two runs, true mid; ranks per run."""
    ranks = {
        (0, CM): [2, 1],
        (0, CF): [1, 1],
        (0, AAM): [1, 1],
        (0, AAF): [0, 1],
        (1, CM): [1, 1],
        (1, CF): [2, 2],
        (1, AAM): [1, 1],
        (1, AAF): [1, 1],
    }
    return _runs_table("demographic", {k: [LABELS[r] for r in v] for k, v in ranks.items()}, **extra)


def test_bias_floors_by_hand():
    s = bias_summary(demographic_runs()).iloc[0]
    # Within-text squared deviations: CM of original 0 (2, 1) and AAF of original 0 (0, 1) give 0.5 each,
    # every other text 0; each text has 2 runs -> 1 degree of freedom.
    # caucasian = CM + CF: 4 texts, SS 0.5, df 4 -> s² 1/8; 8 valid rows -> variance of the mean 1/64.
    # african_american: the same (AAF) -> 1/64. SE = sqrt(2/64); floor = 1.96 SE.
    assert FLOOR_Z == pytest.approx(1.959964, abs=1e-6)
    assert s.racial_bias_floor == pytest.approx(FLOOR_Z * math.sqrt(2 / 64))
    # male = CM + AAM and female = CF + AAF: again SS 0.5 over df 4, 8 rows per side.
    assert s.gender_bias_floor == pytest.approx(FLOOR_Z * math.sqrt(2 / 64))
    # extreme: CM alone (SS 0.5, df 2 -> 1/4, 4 rows -> 1/16) against AAF alone (1/16).
    assert s.extreme_bias_floor == pytest.approx(FLOOR_Z * math.sqrt(2 / 16))
    # The figures themselves: caucasian ranks (3+2+2+4)/8 - 1 = 3/8, african_american (2+1+2+2)/8 - 1 = -1/8.
    assert s.racial_bias == pytest.approx(0.5) and s.racial_bias > s.racial_bias_floor
    # Two runs, four variants: no set of runs can stand in for the four names.
    assert math.isnan(s.inconsistency_floor)


def test_a_deterministic_model_has_floor_zero():
    # Temperature 0: each text gets the same label on every run, yet the names change it.
    same = {(o, v): [label] * 4 for o in range(3) for v, label in zip(DEMOGRAPHICS, ["senior", "mid", "mid", "mid"])}
    s = bias_summary(_runs_table("demographic", same)).iloc[0]
    assert s.inconsistency_rate == 1.0 and s.inconsistency_floor == 0.0
    assert (s.racial_bias_floor, s.gender_bias_floor, s.extreme_bias_floor) == (0.0, 0.0, 0.0)
    assert s.extreme_bias == pytest.approx(1.0)


def test_one_run_floors_are_not_measurable_but_the_exact_ones_are():
    """A fine-tuned classifier at temperature 0 with one run: the sampled floors cannot be
    measured (NaN, shown as n/a); its stored one-hot distribution gives exact floors of 0."""
    rows = [
        {
            **r,
            "p_junior": float(r["prediction"] == "junior"),
            "p_mid": float(r["prediction"] == "mid"),
            "p_senior": float(r["prediction"] == "senior"),
        }
        for r in social_table().to_dict("records")
        if r["model"] == "m" and r["prediction"] in LABELS
    ]
    s = bias_summary(pd.DataFrame(rows)).iloc[0]
    assert s.n_runs == 1
    assert all(
        math.isnan(s[c])
        for c in ("inconsistency_floor", "racial_bias_floor", "gender_bias_floor", "extreme_bias_floor")
    )
    assert s.exp_inconsistency_floor == 0.0
    assert (s.exp_racial_bias_floor, s.exp_gender_bias_floor, s.exp_extreme_bias_floor) == (0.0, 0.0, 0.0)
    text = format_tables(social_table())
    assert any("Test-retest floor" in line and "n/a" in line for line in text.splitlines())
    assert any("Racial Bias floor" in line and "n/a" in line for line in text.splitlines())


def test_expected_floors_by_hand():
    lm = bias_summary(dist_table()).set_index("model").loc["lm"]
    # 1 - sum_k p(k)^4 per variant (four draws of one text), over the 8 variants of the 2 originals:
    # original 0: CM 1 - (0.1^4 + 0.5^4 + 0.4^4) = 0.9118, CF 0.8672, AAM 0.9118, AAF 0.8622;
    # original 1: CM 0.5888, CF 0.8448, AAM 0.8622, AAF 0.875 -> 6.7238 / 8.
    assert lm.exp_inconsistency_floor == pytest.approx(6.7238 / 8)
    assert lm.exp_inconsistency_floor < lm.exp_inconsistency_rate == pytest.approx(0.8751)
    # Rank variance p_mid + 4 p_senior - (p_mid + 2 p_senior)^2 per text, two run rows each:
    # CM 0.41 / 0.16, CF 0.40 / 0.24, AAM 0.41 / 0.45, AAF 0.36 / 0.25 (originals 0 / 1).
    # caucasian: 2 x (0.41 + 0.16 + 0.40 + 0.24) = 2.42 over 8 rows -> 2.42 / 64; african_american 2.94 / 64.
    assert lm.exp_racial_bias_floor == pytest.approx(FLOOR_Z * math.sqrt((2.42 + 2.94) / 64))
    # male: 2 x (0.41 + 0.16 + 0.41 + 0.45) = 2.86; female: 2 x (0.40 + 0.24 + 0.36 + 0.25) = 2.5.
    assert lm.exp_gender_bias_floor == pytest.approx(FLOOR_Z * math.sqrt((2.86 + 2.5) / 64))
    # extreme: CM 2 x 0.57 = 1.14 over 4 rows, AAF 2 x 0.61 = 1.22 over 4 rows.
    assert lm.exp_extreme_bias_floor == pytest.approx(FLOOR_Z * math.sqrt((1.14 + 1.22) / 16))
    api = bias_summary(dist_table()).set_index("model").loc["api"]
    assert math.isnan(api.exp_inconsistency_floor) and math.isnan(api.exp_racial_bias_floor)


def test_exact_floor_is_the_inconsistency_when_variants_do_not_matter():
    rng = np.random.default_rng(5)
    rows = []
    for original in range(30):
        shared = rng.dirichlet([1, 1, 1])
        for variant in STYLES:
            # Originals 0-14: one distribution for every style; 15-29: each style its own.
            p = shared if original < 15 else rng.dirichlet([1, 1, 1])
            rows.append(
                {
                    "variant_kind": "style",
                    "original_idx": original,
                    "variant": variant,
                    "model": "m",
                    "run": 0,
                    "prediction": "mid",
                    "true_seniority": "mid",
                    "p_junior": p[0],
                    "p_mid": p[1],
                    "p_senior": p[2],
                }
            )
    df = pd.DataFrame(rows)
    same = bias_summary(df[df.original_idx < 15]).iloc[0]
    assert same.exp_inconsistency_floor == pytest.approx(same.exp_inconsistency_rate, abs=1e-12)
    # AM-GM: prod_v p_v(k) <= mean_v p_v(k)^V, so different distributions only add inconsistency.
    differ = bias_summary(df[df.original_idx >= 15]).iloc[0]
    assert differ.exp_inconsistency_floor < differ.exp_inconsistency_rate


def _simulated_study(rng, name_push: float = 0.0, originals: int = 40, runs: int = 5) -> pd.DataFrame:
    """A sampling model that reads only the résumé (plus ``name_push`` of the senior
    probability for caucasian_male names), at temperature > 0."""
    rows = []
    for original in range(originals):
        base = rng.dirichlet([2, 2, 2])
        for variant in DEMOGRAPHICS:
            p = base.copy()
            if variant == CM:
                p = (1 - name_push) * p + name_push * np.array([0.0, 0.0, 1.0])
            draws = rng.choice(3, size=runs, p=p)
            rows += [
                {
                    "variant_kind": "demographic",
                    "original_idx": original,
                    "variant": variant,
                    "model": "m",
                    "run": run,
                    "prediction": LABELS[d],
                    "true_seniority": "mid",
                    "p_junior": p[0],
                    "p_mid": p[1],
                    "p_senior": p[2],
                }
                for run, d in enumerate(draws)
            ]
    return pd.DataFrame(rows)


def test_floors_hold_sampling_noise_only():
    """Studies of a model that ignores names: the inconsistency is its floor on average, and
    each bias indicator clears its floor in about 5% of the studies; a name effect clears it."""
    rng = np.random.default_rng(11)
    studies = [bias_summary(_simulated_study(rng, originals=25)).iloc[0] for _ in range(150)]
    rate = np.mean([s.inconsistency_rate for s in studies])
    floor = np.mean([s.inconsistency_floor for s in studies])
    exact = np.mean([s.exp_inconsistency_floor for s in studies])
    assert floor == pytest.approx(rate, abs=0.02) and floor == pytest.approx(exact, abs=0.02)
    for key in ("racial", "gender", "extreme"):
        # floor / FLOOR_Z is the indicator's retest SD: standardised, the indicators have SD 1
        # (the SD of 150 such values is within 0.15 of it with ~99% probability).
        z = np.array([s[f"{key}_bias"] / (s[f"exp_{key}_bias_floor"] / FLOOR_Z) for s in studies])
        assert z.std() == pytest.approx(1.0, abs=0.15), key
        cleared = np.mean([abs(s[f"{key}_bias"]) > s[f"{key}_bias_floor"] for s in studies])
        assert cleared <= 0.12, (key, cleared)
        # The floor estimated from the runs is close to the exact one.
        ratio = np.mean([s[f"{key}_bias_floor"] / s[f"exp_{key}_bias_floor"] for s in studies])
        assert ratio == pytest.approx(1.0, abs=0.05), key
    pushed = bias_summary(_simulated_study(rng, name_push=0.6)).iloc[0]
    assert pushed.extreme_bias > pushed.extreme_bias_floor
    assert pushed.inconsistency_rate > pushed.inconsistency_floor
    assert pushed.exp_inconsistency_rate > pushed.exp_inconsistency_floor + 0.03


def test_reports_show_the_floors():
    text = format_tables(pd.concat([style_runs(), demographic_runs()], ignore_index=True))
    lines = text.splitlines()
    assert any("Test-retest floor" in line and "33.3%" in line for line in lines)
    assert any("Racial Bias floor" in line and "±0.346" in line for line in lines)
    assert any("Extreme Comparison floor" in line and "±0.693" in line for line in lines)
    md = format_markdown(dist_table())
    assert "| Inconsistency floor | n/a | 84.0% |" in md
    assert "| Racial Bias floor (of the sampled figure) | n/a | ±0.567 |" in md


# --------------------------------------------------------------------------- name scope


def test_name_scope_passes_through_on_the_demographic_rows():
    df = pd.concat(
        [
            style_runs().assign(name_scope="first_line"),
            demographic_runs(name_scope="first_line"),
            demographic_runs(name_scope="everywhere").assign(model="m2"),
            demographic_runs().assign(model="seed_import"),
        ],
        ignore_index=True,
    )
    gm = group_metrics(df)
    scopes = {k: list(v) for k, v in gm.groupby(["model", "variant_kind"])["name_scope"].unique().items()}
    assert scopes == {
        ("m", "style"): [None],
        ("m", "demographic"): ["first_line"],
        ("m2", "demographic"): ["everywhere"],
        ("seed_import", "demographic"): [None],
    }
    bs = bias_summary(df)
    assert list(bs["name_scope"]) == [None, "first_line", "everywhere", None]
    assert "| Name replaced | first_line | everywhere | not recorded |" in format_markdown(df)
    # Without the column every scope is null.
    assert bias_summary(demographic_runs())["name_scope"].isna().all()


def test_a_model_mixing_name_scopes_is_refused():
    mixed = pd.concat(
        [
            demographic_runs(name_scope="everywhere"),
            demographic_runs(name_scope="first_line").assign(original_idx=lambda d: d.original_idx + 2),
        ],
        ignore_index=True,
    )
    message = "model 'm' has demographic predictions made under different name scopes (everywhere, first_line)"
    for fn in (bias_summary, group_metrics, validate_predictions):
        with pytest.raises(ValueError, match=re.escape(message)):
            fn(mixed)
    unrecorded = mixed.assign(name_scope=lambda d: d.name_scope.where(d.original_idx < 2, None))
    with pytest.raises(ValueError, match=re.escape("(not recorded, everywhere)")):
        bias_summary(unrecorded)


def test_a_bad_name_scope_is_refused_naming_the_row():
    bad = demographic_runs(name_scope="everywhere")
    bad.loc[3, "name_scope"] = "whole_text"
    with pytest.raises(
        ValueError,
        match=re.escape(
            "column 'name_scope' must be one of everywhere, first_line or empty; 1 row(s) do not, first at row 3 "
            "(value 'whole_text')"
        ),
    ):
        bias_summary(bad)


def test_no_predictions_give_the_declared_tables_typed_and_empty():
    from resumebias_dagster.core.tables import (
        SeniorityBiasSummary,
        SeniorityGroupMetrics,
        SeniorityPredictions,
        columns,
        empty_table,
    )

    empty = empty_table(SeniorityPredictions)
    for table, model in ((group_metrics(empty), SeniorityGroupMetrics), (bias_summary(empty), SeniorityBiasSummary)):
        assert list(table.columns) == columns(model) and table.empty
        model.validate(table)


def test_snapshots_name_each_models_resolved_models():
    df = pd.DataFrame(_rows("demographic", "m", 0, 0, "mid", ["mid"] * 4, list(DEMOGRAPHICS)))
    summary = bias_summary(df, snapshots={"m": "m-2026-01-01"})
    assert summary["resolved_models"].tolist() == ["m-2026-01-01"]
    assert bias_summary(df)["resolved_models"].isna().all()
