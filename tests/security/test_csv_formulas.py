"""Every CSV the tool writes for people neutralises cells a spreadsheet would run as formulas
(issue 40, item 14; the Local Law 144 summary's own check is in tests/defs/test_impact_ratios.py)."""

import io

import pandas as pd

from resumebias_dagster.core.common.csv_files import csv_text


def test_formula_cells_are_written_as_text_and_numbers_as_numbers():
    frame = pd.DataFrame(
        {
            "tool": ['=HYPERLINK("http://x","y")', "+1", "-2+3", "@SUM(A1)", "\tx", "ScreenBot"],
            "ratio": [-0.5, 1.0, 0.25, 0.0, 2.0, 0.9],
        }
    )
    frame["=cmd"] = "a"
    back = pd.read_csv(io.StringIO(csv_text(frame)))
    assert list(back["tool"]) == ['\'=HYPERLINK("http://x","y")', "'+1", "'-2+3", "'@SUM(A1)", "'\tx", "ScreenBot"]
    assert list(back["ratio"]) == [-0.5, 1.0, 0.25, 0.0, 2.0, 0.9]
    assert "'=cmd" in back.columns
