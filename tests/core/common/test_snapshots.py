import pandas as pd

from resumebias_dagster.core.common.snapshots import separate_snapshots, snapshots_of


def _rows():
    return pd.DataFrame(
        {
            "model": ["moving"] * 4 + ["pinned"] * 2,
            "jd": ["a", "a", "b", "b", "a", "b"],
            "resolved_model": ["large-2511", None, "large-2512", "large-2512", "small-2603", "small-2603"],
            "score": [5.0, float("nan"), 7.0, 6.0, 4.0, 4.0],
        }
    )


def test_a_model_with_two_snapshots_becomes_two_analysis_units():
    out = separate_snapshots(_rows(), partition=("model", "jd"))
    assert out["model"].tolist() == [
        "moving@large-2511",
        "moving@large-2511",
        "moving@large-2512",
        "moving@large-2512",
        "pinned",
        "pinned",
    ]


def test_one_snapshot_leaves_rows_alone_and_summaries_name_it():
    rows = _rows()
    rows.loc[:3, "resolved_model"] = "large-2512"
    assert separate_snapshots(rows, partition=("model", "jd")).equals(rows)
    assert snapshots_of(_rows()) == {"moving": "large-2511; large-2512", "pinned": "small-2603"}
