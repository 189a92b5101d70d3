"""Hostile and malformed input files for ``resumebias analyze`` and ``analyze-fit``.

Whatever a file holds, the commands exit 2 with one message naming the file (and the
line/row and column where that applies) and never echo file contents beyond plausible
column names and short plain values; no traceback. Parquet paths are read literally,
never as a DuckDB glob or hive-partitioned path.
"""

import json
import os

import duckdb
import pandas as pd
import pytest

from resumebias_dagster.cli import main
from resumebias_dagster.core.common.file_errors import (
    hidden_value,
    is_plain_number,
    is_plain_word,
    show_columns,
    show_header,
    show_value,
)

SECRET = "sk-proj-AbC123secretKEY456"
SECRET_LINES = [SECRET, f"OPENAI_API_KEY={SECRET}", f'export OPENAI_API_KEY="{SECRET}"']

SOCIAL_HEADER = "original_idx,true_seniority,demographic,name,model,prediction,correct\n"
SOCIAL_ROWS = (
    "0,senior,caucasian_male,Greg Smith,gpt,senior,True\n"
    "0,senior,caucasian_female,Emily Johnson,gpt,senior,True\n"
    "0,senior,african_american_male,Jamal Washington,gpt,mid,False\n"
)
FIT_HEADER = "variant,model,jd,run,score,recommend\n"
FIT_ROWS = "baseline,gpt,cpp,0,7,yes\nbaseline,gpt,cpp,1,8,yes\nschool_mit,gpt,cpp,0,9,yes\nschool_mit,gpt,cpp,1,8,no\n"


def run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_clean_failure(code, out, err, path, *needles):
    """Exit 2, nothing on stdout, one error line naming the file, no secret, no traceback."""
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {path}")
    assert "Traceback" not in err
    lowered = (out + err).lower()
    assert SECRET.lower() not in lowered
    assert "secretkey" not in lowered and "abc123" not in lowered
    for needle in needles:
        assert needle in err, err


def write_parquet(path, frame):
    """Write ``frame`` to ``path`` (any name: written to a plain name, then renamed)."""
    plain = path.with_name("plain-for-writing.parquet")
    with duckdb.connect() as con:
        con.register("frame", frame)
        con.execute(f"COPY frame TO '{plain}' (FORMAT PARQUET)")
    os.replace(plain, path)
    return path


FIT_FRAME = pd.DataFrame(
    {
        "variant": ["baseline", "baseline", "school_mit", "school_mit"],
        "model": ["gpt"] * 4,
        "jd": ["cpp"] * 4,
        "run": [0, 1, 0, 1],
        "score": [7.0, 8.0, 9.0, 8.0],
    }
)


# --------------------------------------------------------------------------- the rule itself


@pytest.mark.parametrize("word", ["model", "Model", "true_seniority", " score", "Mid-level", "résumé", "", "a" * 32])
def test_plain_words_are_shown(word):
    assert is_plain_word(word)
    assert show_value(word) == repr(word)
    assert show_header(word) == repr(word)


@pytest.mark.parametrize(
    "text", [SECRET, "gpt5", "a" * 33, "x=y", "api.key", "a/b", "tab\there", "nul\0", "new\nline", "\x1b[31m"]
)
def test_other_text_is_not_shown(text):
    assert not is_plain_word(text) and not is_plain_number(text)
    assert show_value(text) == f"a value of {len(text)} characters (not shown)" == hidden_value(text)
    assert "not shown" in show_header(text) and text not in show_header(text)


@pytest.mark.parametrize("number", ["0", "-3", "+7", "1.5", ".5", "5.", "1e300", "-1.25E-10", "123456789012"])
def test_short_plain_numbers_are_shown(number):
    assert is_plain_number(number)
    assert show_value(number) == repr(number)


@pytest.mark.parametrize("text", ["1234567890123", "0x1f", "1_000", "١٢", "1e", "--1", "1.2.3", "inf1"])
def test_other_numbers_are_not_shown(text):
    assert not is_plain_number(text)
    assert "not shown" in show_value(text)


def test_numbers_from_binary_files_follow_the_same_rule():
    assert show_value(3) == "3" and show_value(11.0) == "11" and show_value(2.5) == "2.5"
    assert show_value(2**62) == "a value of 19 characters (not shown)"
    assert show_value(None) == "an empty value"


def test_column_lists_show_headers_and_count_the_rest():
    assert show_columns(["model", "gpt5_score", SECRET, "Run"]) == "model, Run; 2 other column(s) not shown"
    assert show_columns([SECRET]) == "1 column(s) not shown"
    # A first line of one word is no header one can tell from a passphrase (issue 25, item 10).
    assert show_columns(["correct_horse_battery_staple"]) == "1 column(s) not shown"
    assert show_columns(["model"], known=("model",)) == "model"
    assert show_columns([]) == "none"
    # Known column names are shown even where the generic rule would not show them.
    assert show_columns(["p_1"], known=("p_1",)) == "p_1"


# --------------------------------------------------------------------------- a secret instead of a table


@pytest.mark.parametrize("line", SECRET_LINES)
@pytest.mark.parametrize("as_json", [False, True])
def test_analyze_never_echoes_a_secret_first_line(tmp_path, capsys, line, as_json):
    path = tmp_path / "notes.txt"
    path.write_text(line + "\nsecond line\n")
    code, out, err = run(capsys, "analyze", *(["--json"] if as_json else []), path)
    assert_clean_failure(code, out, err, path, "matches neither prediction format", "1 column(s) not shown")


@pytest.mark.parametrize("line", SECRET_LINES)
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("as_json", [False, True])
def test_analyze_fit_never_echoes_a_secret_first_line(tmp_path, capsys, line, suffix, as_json):
    path = tmp_path / f"runs{suffix}"
    path.write_text(line + "\n")
    code, out, err = run(capsys, "analyze-fit", *(["--json"] if as_json else []), path)
    if suffix == ".csv":
        assert_clean_failure(
            code, out, err, path, "missing columns variant, model, jd, run, score", "found: 1 column(s) not shown"
        )
    else:
        assert_clean_failure(code, out, err, path, "not a Parquet file")
        assert "LINE 1" not in err and "read_parquet" not in err  # no DuckDB query echo


def test_analyze_fit_never_echoes_a_word_only_first_line(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text("correct_horse_battery_staple\n")
    code, out, err = run(capsys, "analyze-fit", path)
    assert_clean_failure(code, out, err, path, "found: 1 column(s) not shown")
    assert "correct_horse" not in err


def test_secret_between_parquet_magic_bytes(tmp_path, capsys):
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"PAR1" + SECRET.encode() * 3 + b"\x10\x00\x00\x00PAR1")
    code, out, err = run(capsys, "analyze-fit", path)
    assert_clean_failure(code, out, err, path, "not a readable Parquet file")
    assert "\n" not in err.rstrip("\n")


def test_secret_header_among_real_columns(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text(f"variant,model,{SECRET},run,points\nbaseline,gpt,x,0,7\n")
    code, out, err = run(capsys, "analyze-fit", path)
    assert_clean_failure(
        code,
        out,
        err,
        path,
        "missing columns jd, score",
        "found: variant, model, run, points; 1 other column(s) not shown",
    )
    style = tmp_path / "style.csv"
    style.write_text(f"{SECRET},gpt5_junior,junk\n1,2,3\n")
    code, out, err = run(capsys, "analyze", style)
    assert_clean_failure(code, out, err, style, "(columns: junk; 2 other column(s) not shown)")


# --------------------------------------------------------------------------- secrets in cells


@pytest.mark.parametrize(
    "old, new, where, problem",
    [
        (
            "gpt,mid,False",
            f"gpt,{SECRET},False",
            "line 4, column 'prediction'",
            f"unknown prediction a value of {len(SECRET)} characters (not shown)",
        ),
        (
            "0,senior,african",
            f"{SECRET},senior,african",
            "line 4, column 'original_idx'",
            f"original_idx must be an integer, got a value of {len(SECRET)} characters (not shown)",
        ),
        (
            "senior,african_american_male",
            "senior,african_american_secret123",
            "line 4, column 'demographic'",
            f"unknown demographic a value of {len('african_american_secret123')} characters (not shown)",
        ),
    ],
)
def test_analyze_hides_bad_cells(tmp_path, capsys, old, new, where, problem):
    path = tmp_path / "social.csv"
    path.write_text(SOCIAL_HEADER + SOCIAL_ROWS.replace(old, new))
    code, out, err = run(capsys, "analyze", path)
    assert_clean_failure(code, out, err, path, f"{where}: {problem}")


def test_analyze_hides_model_names_in_duplicate_messages(tmp_path, capsys):
    rows = SOCIAL_ROWS.replace(",gpt,", f",{SECRET},")
    path = tmp_path / "dup.csv"
    path.write_text(SOCIAL_HEADER + rows + rows.splitlines(keepends=True)[0])
    code, out, err = run(capsys, "analyze", path)
    assert_clean_failure(
        code,
        out,
        err,
        path,
        "line 5: duplicate prediction for model a value of 26 characters "
        "(not shown), run 0, original_idx 0, demographic 'caucasian_male'",
    )
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(SOCIAL_HEADER + rows)
    second.write_text(SOCIAL_HEADER + rows)
    code, out, err = run(capsys, "analyze", first, second)
    assert_clean_failure(
        code,
        out,
        err,
        second,
        f"3 prediction(s) already read from {first}",
        "model a value of 26 characters (not shown)",
    )


def test_analyze_hides_bad_probabilities(tmp_path, capsys):
    path = tmp_path / "dist.csv"
    header = SOCIAL_HEADER.rstrip("\n") + ",p_junior,p_mid,p_senior\n"
    rows = "".join(r + ",0.1,0.2,0.7\n" for r in SOCIAL_ROWS.splitlines())
    path.write_text(header + rows.replace("0.1,0.2,0.7\n", f"0.1,{SECRET},0.7\n", 1))
    code, out, err = run(capsys, "analyze", path)
    assert_clean_failure(
        code,
        out,
        err,
        path,
        "line 2, column 'p_mid': p_mid must be a probability",
        f"got a value of {len(SECRET)} characters (not shown)",
    )


@pytest.mark.parametrize(
    "line, new, message",
    [
        (
            2,
            f"baseline,gpt,cpp,{SECRET},7,yes",
            "line 2: run a value of 26 characters (not shown) is not a whole number",
        ),
        (3, f"baseline,gpt,cpp,1,{SECRET},yes", "line 3: score a value of 26 characters (not shown) is not a number"),
        (4, f"school_mit,gpt,cpp,0,9,{SECRET}", "line 4: recommend a value of 26 characters (not shown) is not one of"),
        (
            3,
            "baseline,gpt,cpp,1,12345678901234567,yes",
            "line 3: score a value of 17 characters (not shown) is outside 1–10",
        ),
    ],
)
def test_analyze_fit_hides_bad_cells(tmp_path, capsys, line, new, message):
    lines = (FIT_HEADER + FIT_ROWS).split("\n")
    lines[line - 1] = new
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(lines))
    code, out, err = run(capsys, "analyze-fit", path)
    assert_clean_failure(code, out, err, path, message)


def test_analyze_fit_hides_model_names(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text(FIT_HEADER + FIT_ROWS.replace(",gpt,", f",{SECRET},") + f"school_mit,{SECRET},cpp,1,8,no\n")
    code, out, err = run(capsys, "analyze-fit", path)
    assert_clean_failure(
        code,
        out,
        err,
        path,
        "line 5: the run (model=a value of 26 characters (not shown), "
        "jd='cpp', variant='school_mit', run=1) occurs again on line 6",
    )
    path.write_text(FIT_HEADER + FIT_ROWS + f"school_mit,{SECRET},cpp,1,8,no\n")
    code, out, err = run(capsys, "analyze-fit", path)
    assert_clean_failure(
        code, out, err, path, "line 6: no baseline rows for model a value of 26 characters (not shown) and jd 'cpp'"
    )


# --------------------------------------------------------------------------- parser texts


def test_unclosed_quote_names_the_line_not_the_parser(tmp_path, capsys):
    path = tmp_path / "social.csv"
    path.write_text(SOCIAL_HEADER + SOCIAL_ROWS + f'1,junior,caucasian_male,"{SECRET},gpt,junior,True\n')
    code, out, err = run(capsys, "analyze", path)
    assert_clean_failure(code, out, err, path, "line 5: a quoted field is never closed")
    assert "C error" not in err and "tokenizing" not in err
    fit = tmp_path / "runs.csv"
    fit.write_text(FIT_HEADER + FIT_ROWS + f'school_mit,gpt,cpp,2,"{SECRET},yes\n')
    code, out, err = run(capsys, "analyze-fit", fit)
    assert_clean_failure(code, out, err, fit, "line 6: a quoted field is never closed")
    assert "C error" not in err and "tokenizing" not in err


# --------------------------------------------------------------------------- Parquet paths are not globs


@pytest.mark.parametrize(
    "name, decoy",
    [("runs[1].parquet", "runs1.parquet"), ("runs?.parquet", "runsX.parquet"), ("runs*.parquet", "runs-all.parquet")],
)
def test_parquet_path_is_read_literally(tmp_path, capsys, name, decoy):
    wanted = write_parquet(tmp_path / name, FIT_FRAME.assign(model="wanted"))
    write_parquet(tmp_path / decoy, FIT_FRAME.assign(model="decoy"))
    code, out, err = run(capsys, "analyze-fit", "--json", wanted)
    assert code == 0, err
    assert {cell["model"] for cell in json.loads(out)["cells"]} == {"wanted"}


def test_parquet_glob_name_that_does_not_exist(tmp_path, capsys):
    write_parquet(tmp_path / "runs2.parquet", FIT_FRAME)
    missing = tmp_path / "runs[2].parquet"
    code, out, err = run(capsys, "analyze-fit", missing)
    assert code == 2 and err == f"error: {missing}: no such file\n"


def test_parquet_under_a_hive_style_folder_gets_no_extra_columns(tmp_path, capsys):
    folder = tmp_path / "model=injected"
    folder.mkdir()
    path = write_parquet(folder / "runs.parquet", FIT_FRAME.drop(columns="model"))
    code, out, err = run(capsys, "analyze-fit", path)
    assert code == 2
    assert err.startswith(f"error: {path}: missing column model (required:")
