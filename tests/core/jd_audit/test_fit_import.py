"""Importing existing fit-score runs (core/jd_audit/fit_import.py) and ``resumebias analyze-fit``."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.cli import COMMANDS, main
from resumebias_dagster.core.jd_audit.fit_import import JSON_KEYS, FitScoreFileError, read_fit_scores
from resumebias_dagster.core.jd_audit.fit_stats import fit_effects

HEADER = "variant,model,jd,run,score,recommend,justification\n"
GOOD = HEADER + (
    "baseline,gpt,cpp,0,7,yes,Strong C++\n"
    "baseline,gpt,cpp,1,8,yes,Good\n"
    "baseline,gpt,cpp,2,7,maybe,\n"
    'addressCountry_brazil,gpt,cpp,0,5,no,"Location\nconcerns"\n'
    "addressCountry_brazil,gpt,cpp,1,6,maybe,ok\n"
    "addressCountry_brazil,gpt,cpp,2,,,\n"
    "addressCountry_brazil,gpt,cpp,3,5,No.,x\n"
    "placebo_blank_line,gpt,cpp,0,7,yes,\n"
    "placebo_blank_line,gpt,cpp,1,8,yes,\n"
    "school_mit,gpt,cpp,0,9,yes,\n"
)


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "fit_runs.csv"
    path.write_text(GOOD, encoding="utf-8")
    return path


def test_reads_a_valid_csv(good):
    df = read_fit_scores(good)
    assert list(df.columns) == ["model", "jd", "variant", "axis", "level", "run", "score", "recommend", "justification"]
    assert len(df) == 10
    brazil = df[df["variant"] == "addressCountry_brazil"]
    assert set(brazil["axis"]) == {"addressCountry"} and set(brazil["level"]) == {"brazil"}
    assert set(df.loc[df["variant"] == "baseline", "axis"]) == {"baseline"}
    assert brazil["score"].isna().sum() == 1  # empty score: a failed run
    assert brazil["recommend"].tolist() == ["no", "maybe", "", "no"]
    assert brazil["justification"].iloc[0] == "Location\nconcerns"
    assert df["run"].dtype == np.int64 and df["score"].dtype == float


def test_reads_parquet_through_duckdb(tmp_path):
    import duckdb

    frame = pd.read_csv(pd.io.common.StringIO(GOOD), keep_default_na=True)
    path = tmp_path / "runs.parquet"
    with duckdb.connect() as con:
        con.register("frame", frame)
        con.execute(f"COPY frame TO '{path}' (FORMAT PARQUET)")
    df = read_fit_scores(path)
    assert len(df) == 10 and df["score"].isna().sum() == 1
    bad = tmp_path / "bad.parquet"
    with duckdb.connect() as con:
        con.register("frame", frame.assign(score=frame["score"].fillna(5).replace({9: 11})))
        con.execute(f"COPY frame TO '{bad}' (FORMAT PARQUET)")
    with pytest.raises(FitScoreFileError, match=r"bad\.parquet: row 10: score 11 is outside 1–10"):
        read_fit_scores(bad)


def replace_line(text, number, new):
    lines = text.split("\n")
    lines[number - 1] = new
    return "\n".join(lines)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", r"the file is empty"),
        (HEADER, r"the file has a header but no rows"),
        (GOOD.replace("score,", "points,"), r"missing column score \(required: .*found: .*points"),
        (GOOD.replace(",jd,", ",job,").replace(",run,", ",trial,"), r"missing columns jd, run"),
        (replace_line(GOOD, 3, "baseline,gpt,cpp,1,high,yes,Good"), r"line 3: score 'high' is not a number"),
        (replace_line(GOOD, 10, "placebo_blank_line,gpt,cpp,1,0,yes,"), r"line 10: score 0 is outside 1–10"),
        (replace_line(GOOD, 11, "school_mit,gpt,cpp,0,10.5,yes,"), r"line 11: score 10.5 is outside 1–10"),
        (replace_line(GOOD, 4, "baseline,gpt,cpp,2.5,7,maybe,"), r"line 4: run '2.5' is not a whole number"),
        (
            replace_line(GOOD, 4, "baseline,gpt,cpp,1,7,maybe,"),
            r"line 3: the run \(model='gpt', jd='cpp', variant='baseline', run=1\) occurs again on line 4",
        ),
        (
            replace_line(GOOD, 11, "school_mit,gpt,cpp,0,9,absolutely,"),
            r"line 11: recommend 'absolutely' is not one of",
        ),
        (replace_line(GOOD, 11, "school_mit,gpt,,0,9,yes,"), r"line 11: empty jd"),
        # Line 13: the quoted justification on lines 5-6 spans two lines.
        (GOOD + "school_mit,claude,cpp,0,9,yes,\n", r"line 13: no baseline rows for model 'claude' and jd 'cpp'"),
    ],
)
def test_errors_name_the_file_line_and_problem(tmp_path, text, message):
    path = tmp_path / "runs.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FitScoreFileError, match=rf"runs\.csv: (?:{message})"):
        read_fit_scores(path)


def test_non_utf8_and_missing_file(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes((HEADER + "baseline,gpt,cpp,0,7,yes,ok\nbaseline,gpt,cpp,1,7,yes,caf").encode() + b"\xe9\n")
    with pytest.raises(FitScoreFileError, match=r"latin\.csv: line 3: not UTF-8"):
        read_fit_scores(path)
    with pytest.raises(FitScoreFileError, match=r"nothing\.csv: no such file"):
        read_fit_scores(tmp_path / "nothing.csv")


def test_cli_json_has_exactly_the_cell_keys(good, capsys):
    assert "analyze-fit" in COMMANDS
    assert main(["analyze-fit", "--json", str(good)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"cells", "verdicts"}
    cells = out["cells"]
    assert isinstance(cells, list) and len(cells) == 3
    # One finding per variant over the JDs (one résumé here: the JDs are the units).
    assert {v["finding"] for v in out["verdicts"]} == {f"fit_level:{c['variant']}" for c in cells}
    for v in out["verdicts"]:
        assert {"finding", "model", "estimate", "ci_low", "ci_high", "p", "verdict", "mde"} <= set(v)
    for c in cells:
        assert tuple(c) == JSON_KEYS
    by = {c["variant"]: c for c in cells}
    brazil = by["addressCountry_brazil"]
    expected = fit_effects(read_fit_scores(good)).set_index("variant").loc["addressCountry_brazil"]
    assert brazil["n_baseline"] == 3 and brazil["n_variant"] == 3
    assert brazil["delta"] == pytest.approx(16 / 3 - 22 / 3)
    assert brazil["p_value"] == pytest.approx(expected["p_value"]) and brazil["q_value"] is not None
    # One MIT run: no permutation of one run, so no p-value: null, not NaN.
    mit = by["school_mit"]
    assert mit["p_value"] is None and mit["ci_low"] is None and mit["delta"] == pytest.approx(9 - 22 / 3)


def test_cli_tables_and_input_errors(good, tmp_path, capsys):
    assert main(["analyze-fit", str(good)]) == 0
    out = capsys.readouterr().out
    assert "FIT-SCORE EFFECTS BY MODEL" in out and "CELLS BEYOND NOISE" in out and "VERDICTS" in out
    assert "one résumé: a claim about that résumé only" in out
    assert main(["analyze-fit", "--all", str(good)]) == 0
    assert "addressCountry_brazil" in capsys.readouterr().out
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER)
    assert main(["analyze-fit", str(bad)]) == 2
    assert "bad.csv: the file has a header but no rows" in capsys.readouterr().err


def test_analyze_fit_stays_light(good):
    code = (
        "import sys; from resumebias_dagster.cli import main; "
        f"main(['analyze-fit', {str(good)!r}]); "
        "heavy = [m for m in ('dagster', 'torch', 'matplotlib') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------- malformed and hostile files


def write_parquet(path, frame):
    import duckdb

    with duckdb.connect() as con:
        con.register("frame", frame)
        con.execute(f"COPY frame TO '{path}' (FORMAT PARQUET)")
    return path


FRAME = pd.DataFrame(
    {
        "variant": ["baseline", "baseline", "school_mit"],
        "model": ["gpt"] * 3,
        "jd": ["cpp"] * 3,
        "run": [0, 1, 0],
        "score": [7.0, 8.0, 9.0],
    }
)


def error_text(path) -> str:
    with pytest.raises(FitScoreFileError) as info:
        read_fit_scores(path)
    return str(info.value)


@pytest.mark.parametrize(
    "header, fields, names",
    [
        ("variant,model,jd,run, score,score\n", "5 and 6", "'score' and 'score'"),
        ("variant,model,jd,run,score,score \n", "5 and 6", "'score' and 'score '"),
        ("variant,model,jd,run,score,model\n", "2 and 6", "'model' and 'model'"),
        ("variant,model,jd,run,score,note,note\n", "6 and 7", "'note' and 'note'"),
    ],
)
def test_duplicate_columns_after_trimming(tmp_path, header, fields, names):
    n = header.count(",") + 1
    path = tmp_path / "runs.csv"
    path.write_text(header + "baseline,gpt,cpp,0,7" + ",1" * (n - 5) + "\n")
    assert error_text(path) == (
        f"{path}: line 1: duplicate column: header fields {fields} ({names}) are the same name "
        "once surrounding spaces are ignored"
    )


@pytest.mark.parametrize("run", ["1e300", "9007199254740992", "-9007199254740992", "1e16", "inf", "-inf"])
def test_run_must_be_a_whole_number_that_fits(tmp_path, run):
    path = tmp_path / "runs.csv"
    path.write_text(replace_line(GOOD, 3, f"baseline,gpt,cpp,{run},8,yes,Good"))
    shown = repr(run) if len(run) <= 12 else f"a value of {len(run)} characters (not shown)"
    assert error_text(path) == (
        f"{path}: line 3: run {shown} is not a whole number from -9007199254740991 to 9007199254740991"
    )


def test_largest_accepted_run(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(replace_line(GOOD, 3, "baseline,gpt,cpp,9007199254740991,8,yes,Good"))
    assert read_fit_scores(path)["run"].max() == 2**53 - 1


@pytest.mark.parametrize(
    "text, message",
    [
        (
            GOOD.replace("gpt,cpp,0,5,no", "g\0pt,cpp,0,5,no"),
            r"line 5: contains a NUL byte \(byte offset \d+\); not a text CSV file",
        ),
        (
            replace_line(GOOD, 4, "baseline,gpt,cpp,2,7,maybe,,extra,more"),
            r"line 4: 9 fields, but the header has 7 columns",
        ),
        (
            replace_line(GOOD, 2, "baseline,gpt,cpp,0,7,yes,Strong C++,extra"),
            r"line 2: 8 fields, but the header has 7 columns",
        ),
        (
            GOOD + 'school_mit,gpt,cpp,1,"9,yes,\n',
            r"line 13: a quoted field is never closed \(unbalanced double quote\)",
        ),
        (replace_line(GOOD, 3, "baseline,gpt,cpp,1,1e400,yes,Good"), r"line 3: score inf is outside 1–10"),
        (replace_line(GOOD, 3, "baseline,gpt,cpp,1,-1e400,yes,Good"), r"line 3: score -inf is outside 1–10"),
        ("\ufeff", r"the file is empty"),
        ("\ufeff" + HEADER, r"the file has a header but no rows"),
        ("\n\n\n", r"the file is empty"),
    ],
)
def test_malformed_csv(tmp_path, text, message):
    path = tmp_path / "runs.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FitScoreFileError, match=rf"^{path}: (?:{message})$"):
        read_fit_scores(path)


def test_huge_field_keeps_line_numbers(tmp_path):
    # Longer than the csv module's default field limit (131072 characters).
    text = GOOD.replace("Strong C++", '"' + "Strong C++\n" * 20000 + '"')
    path = tmp_path / "runs.csv"
    path.write_text(replace_line(text, 20003, "baseline,gpt,cpp,1,high,yes,Good"))
    assert error_text(path) == f"{path}: line 20003: score 'high' is not a number"


def test_unreadable_file_and_directory(tmp_path, monkeypatch):
    folder = tmp_path / "runs.csv"
    folder.mkdir()
    assert error_text(folder) == f"{folder}: not a regular file"
    path = tmp_path / "locked.csv"
    path.write_text(GOOD)

    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "read_bytes", refuse)
    assert error_text(path) == f"{path}: cannot be read (Permission denied)"


def test_empty_parquet(tmp_path):
    path = write_parquet(tmp_path / "empty.parquet", FRAME.iloc[:0])
    assert error_text(path) == f"{path}: the Parquet file has no rows"


def test_parquet_with_nested_columns(tmp_path):
    import duckdb

    path = tmp_path / "nested.parquet"
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT 'baseline' AS variant, {{'secret_field': 1}} AS model, [1, 2] AS jd, 0 AS run, "
            f"'\\x41'::BLOB AS score) TO '{path}' (FORMAT PARQUET)"
        )
    text = error_text(path)
    assert text == f"{path}: column model has Parquet type STRUCT; expected text or numbers"
    assert "secret_field" not in text


def test_parquet_with_duplicate_column_names(tmp_path):
    # DuckDB renames a repeated name on reading ("score_1"); the file's own names are checked.
    path = write_parquet(tmp_path / "dup.parquet", FRAME.assign(scorX=5.0))
    path.write_bytes(path.read_bytes().replace(b"scorX", b"score"))
    assert error_text(path) == (
        f"{path}: duplicate column: fields 5 and 6 ('score' and 'score') are the same name "
        "once surrounding spaces are ignored"
    )
    spaced = write_parquet(tmp_path / "spaced.parquet", FRAME.assign(**{" score": 5.0}))
    assert error_text(spaced) == (
        f"{spaced}: duplicate column: fields 5 and 6 ('score' and ' score') are the same name "
        "once surrounding spaces are ignored"
    )


def test_parquet_run_out_of_range_and_text_numbers(tmp_path):
    path = write_parquet(tmp_path / "big.parquet", FRAME.assign(run=[0, 2**62, 1]))
    assert error_text(path) == (
        f"{path}: row 2: run a value of 19 characters (not shown) is not a whole number "
        "from -9007199254740991 to 9007199254740991"
    )
    text = write_parquet(tmp_path / "text.parquet", FRAME.astype({"run": str, "score": str}))
    assert read_fit_scores(text)["score"].tolist() == [7.0, 8.0, 9.0]
