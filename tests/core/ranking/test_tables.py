"""Selection rates, top-k, impact ratios and position bias of parsed rankings, by hand."""

import json

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.ranking.tables import position_table, selection_table


def row(jd, shown, groups, ranked=None, error=None, p_first=None):
    return {
        "model": "m",
        "jd": jd,
        "shown": json.dumps(shown),
        "groups": groups,  # a list works as well as JSON text
        "ranked": None if ranked is None else json.dumps(ranked),
        "error": error,
        "p_first": p_first,
    }


ROWS = pd.DataFrame(
    [
        row("j", ["a", "b", "c"], ["A", "B", "C"], ranked=["a", "c", "b"]),
        row("j", ["b", "c", "a"], ["B", "C", "A"], ranked=["b", "a"]),  # partial: top 2 known
        row("j", ["c", "a", "b"], ["C", "A", "B"], ranked=["a"]),  # partial: top 1 known
        row("j", ["a", "b", "c"], ["A", "B", "C"], error="unparsable: names no candidate"),
        row("j2", ["a", "b"], ["A", "B"], ranked=["b", "a"]),
    ]
)


def test_selection_and_top_k_rates_and_impact_ratios():
    t = selection_table(ROWS, k=2).set_index(["jd", "group"])
    j = t.loc["j"]
    assert j["n_rankings"].tolist() == [3, 3, 3]  # the failed answer is out
    assert j["shown_first"].tolist() == [1, 1, 1]
    assert j["ranked_first"].tolist() == [2, 1, 0]
    assert j["selection_rate"].tolist() == pytest.approx([2 / 3, 1 / 3, 0])
    assert j["chance_rate"].tolist() == pytest.approx([1 / 3] * 3)
    assert j["impact_ratio"].tolist() == pytest.approx([1.0, 0.5, 0.0])
    assert j["below_four_fifths"].tolist() == [False, True, True]
    assert set(j["reference_group"]) == {"A"}
    # Top 2: only the rankings naming at least 2 candidates say who is in the top 2.
    assert j["n_top_k"].tolist() == [2, 2, 2]
    assert j["in_top_k"].tolist() == [2, 1, 1]
    assert j["top_k_rate"].tolist() == pytest.approx([1.0, 0.5, 0.5])
    assert j["top_k_impact_ratio"].tolist() == pytest.approx([1.0, 0.5, 0.5])
    assert j["n_errors"].tolist() == [1, 1, 1]
    assert j["exp_selection_rate"].isna().all()
    j2 = t.loc["j2"]
    assert j2["selection_rate"].tolist() == [0.0, 1.0]
    assert j2["impact_ratio"].tolist() == [0.0, 1.0]
    assert set(j2["reference_group"]) == {"B"}
    assert j2["n_errors"].tolist() == [0, 0]


def test_position_bias_per_shown_position():
    t = position_table(ROWS).set_index(["jd", "position"])
    assert t.loc["j", "n_rankings"].tolist() == [3, 3, 3]
    assert t.loc["j", "ranked_first"].tolist() == [2, 1, 0]
    assert t.loc["j", "share_first"].tolist() == pytest.approx([2 / 3, 1 / 3, 0])
    assert t.loc["j", "chance_rate"].tolist() == pytest.approx([1 / 3] * 3)
    assert t.loc["j2", "share_first"].tolist() == [0.0, 1.0]


def test_expected_rates_from_the_probability_of_being_ranked_first():
    rows = pd.DataFrame(
        [
            row("j", ["a", "b"], ["A", "B"], ranked=["a"], p_first=json.dumps([0.6, 0.4])),
            row("j", ["b", "a"], ["B", "A"], ranked=["a"], p_first=[0.3, 0.7]),
        ]
    )
    t = selection_table(rows, k=1).set_index("group")
    assert t["exp_selection_rate"].tolist() == pytest.approx([0.65, 0.35])
    assert t["selection_rate"].tolist() == [1.0, 0.0]
    assert t["n_top_k"].tolist() == [2, 2]
    p = position_table(rows)
    assert p["exp_share_first"].tolist() == pytest.approx([0.45, 0.55])


def test_no_group_ranked_first_gives_no_ratio():
    rows = pd.DataFrame([row("j", ["a", "b"], ["A", "B"], ranked=["x"])])  # names no shown candidate
    t = selection_table(rows)
    assert t["ranked_first"].tolist() == [0, 0]
    assert np.isnan(t["impact_ratio"]).all() and t["reference_group"].isna().all()
    assert not t["below_four_fifths"].any()


def test_mismatched_shown_and_groups_are_refused():
    with pytest.raises(ValueError, match="2 shown names but 1 groups"):
        selection_table(pd.DataFrame([row("j", ["a", "b"], ["A"], ranked=["a"])]))
