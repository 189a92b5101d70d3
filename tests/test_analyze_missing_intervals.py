"""`resumebias analyze` and `analyze-fit` say why a finding has no interval (issue 41): with one
name per group a name contrast and the intersection impact ratios printed "n/a to n/a" with no
reason (the impact ratios' notes were dropped on the way to the verdicts), and one run left
inconsistency inconclusive without saying what would measure it."""

import numpy as np
import pandas as pd

from resumebias_dagster.cli import main
from resumebias_dagster.core.inference import load_inference_settings, missing_interval_lines
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions, write_study_files


def one_name_per_group():
    return simulate_seniority_predictions(40, runs=1, exact=False, names_per_group=1, seed=3)


def test_every_finding_without_an_interval_has_its_reason():
    verdicts = seniority_verdicts(one_name_per_group(), load_inference_settings())
    blank = verdicts[~np.isfinite(verdicts["ci_low"].astype(float))]
    assert len(blank) >= 5
    assert blank["note"].fillna("").str.len().gt(0).all(), blank[["finding", "note"]]
    contrasts = blank[blank["finding"].str.startswith("seniority_bias:")]
    assert contrasts["note"].str.contains("each group has one name").all()
    impact = blank[blank["finding"].str.startswith("impact_ratio:")]
    assert len(impact) and impact["note"].str.contains("give each group two names or more").all()
    lines = missing_interval_lines(verdicts)
    assert all(line.startswith("no interval for sim: ") for line in lines)
    assert sum(line.count(":") > 2 for line in lines) == len(lines)


def test_the_analyze_table_prints_the_reasons(tmp_path, capsys):
    files = write_study_files(one_name_per_group(), tmp_path)
    assert main(["analyze", *[str(tmp_path / f) for f in files]]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # Under the one verdict table every analyze command prints (tests/test_verdict_tables.py).
    assert any(
        line.startswith("no interval for sim: seniority_bias:racial, seniority_bias:gender, seniority_bias:extreme")
        for line in lines
    )
    assert any(line.startswith("no interval for sim: inconsistency:") for line in lines)
    assert "run each prompt twice or more" in out
    assert "equivalent: the 95% interval inside the margin" in out and "90%" not in out


def test_a_finding_without_a_note_still_gets_a_line():
    verdicts = pd.DataFrame({"model": ["m"], "finding": ["x"], "ci_low": [np.nan], "note": [None]})
    assert missing_interval_lines(verdicts) == [
        "no interval for m: x: no interval could be computed (the note of its table row says no more)"
    ]
