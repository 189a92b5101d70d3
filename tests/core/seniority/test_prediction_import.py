"""core/seniority/prediction_import.py: the seniority study's two prediction CSV formats and every way they can be wrong."""

import codecs

import pandas as pd
import pytest

from resumebias_dagster.core.seniority.metrics import group_metrics
from resumebias_dagster.core.seniority.prediction_import import PredictionFileError, read_prediction_files

STYLE_HEADER = "idx,true_seniority,style,model,prediction,correct,resume_text\n"
SOCIAL_HEADER = "original_idx,true_seniority,demographic,name,model,prediction,correct\n"

STYLE_CSV = STYLE_HEADER + (
    '0,mid,neutral,gpt5,mid,True,"Built a data pipeline.\nUsed Python."\n'
    "0,mid,overstated,gpt5,Senior ,False,Architected a pipeline.\n"
    '0,mid,understated,gpt5,junior,False,"Helped,\n\nwith a tool."\n'
    "1,junior,neutral,gpt5,unknown,False,x\n"
)
SOCIAL_CSV = SOCIAL_HEADER + (
    "0,senior,caucasian_male,Greg Smith,sonnet45,senior,True\n"
    "0,senior,caucasian_female,Emily Johnson,sonnet45,senior,True\n"
    "0,senior,african_american_male,Jamal Washington,sonnet45,mid,False\n"
    "0,senior,african_american_female,Lakisha Jefferson,sonnet45,error,False\n"
)


def write(tmp_path, name, content, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def error_of(*paths) -> PredictionFileError:
    with pytest.raises(PredictionFileError) as info:
        read_prediction_files(list(paths))
    assert isinstance(info.value, ValueError)
    return info.value


def test_style_format(tmp_path):
    df = read_prediction_files([write(tmp_path, "test2.csv", STYLE_CSV)])
    assert list(df.columns[:7]) == [
        "variant_kind",
        "original_idx",
        "variant",
        "model",
        "run",
        "prediction",
        "true_seniority",
    ]
    assert set(df.variant_kind) == {"style"}
    assert list(df.original_idx) == [0, 0, 0, 1]
    assert list(df.variant) == ["neutral", "overstated", "understated", "neutral"]
    assert list(df.prediction) == ["mid", "senior", "junior", "unknown"]  # "Senior " normalised
    assert list(df.run) == [0, 0, 0, 0]
    assert "resume_text" not in df.columns and "correct" not in df.columns
    assert {"name", "resolved_model", "latency_s", "error"} <= set(df.columns)


def test_social_format_with_bom_and_run_column(tmp_path):
    content = SOCIAL_CSV.replace("correct\n", "correct,run\n", 1).replace("\n0,", ",3\n0,").rstrip("\n") + ",3\n"
    df = read_prediction_files(write(tmp_path, "test3.csv", codecs.BOM_UTF8 + content.encode()))
    assert set(df.variant_kind) == {"demographic"}
    assert list(df.variant) == [
        "caucasian_male",
        "caucasian_female",
        "african_american_male",
        "african_american_female",
    ]
    assert list(df.name) == ["Greg Smith", "Emily Johnson", "Jamal Washington", "Lakisha Jefferson"]
    assert list(df.run) == [3, 3, 3, 3]


def test_both_formats_together(tmp_path):
    df = read_prediction_files([write(tmp_path, "a.csv", STYLE_CSV), write(tmp_path, "b.csv", SOCIAL_CSV)])
    assert df.groupby("variant_kind").size().to_dict() == {"demographic": 4, "style": 4}


def test_lying_correct_column_is_ignored(tmp_path):
    honest = read_prediction_files(write(tmp_path, "honest.csv", SOCIAL_CSV))
    lying = read_prediction_files(
        write(tmp_path, "lying.csv", SOCIAL_CSV.replace("True", "X").replace("False", "True"))
    )
    pd.testing.assert_frame_equal(group_metrics(lying), group_metrics(honest))
    # senior, senior, mid vs truth senior: 2 of 3 valid predictions correct.
    overall = group_metrics(lying).query("group_kind == 'all'").iloc[0]
    assert overall.accuracy == pytest.approx(2 / 3)


def test_missing_column(tmp_path):
    path = write(tmp_path, "nopred.csv", SOCIAL_CSV.replace(",prediction", ""))
    err = error_of(path)
    assert str(path) in str(err)
    assert "missing column(s) 'prediction'" in str(err)
    assert "original_idx, true_seniority, demographic, name, model, prediction, correct" in str(err)


def test_unknown_seniority_label(tmp_path):
    path = write(
        tmp_path,
        "labels.csv",
        SOCIAL_CSV.replace("0,senior,african_american_male", "0,Senior-level,african_american_male"),
    )
    err = error_of(path)
    assert str(err).startswith(f"{path}: line 4, column 'true_seniority': unknown seniority label 'Senior-level'")


def test_unknown_prediction_names_line_across_multiline_texts(tmp_path):
    # Résumé texts span lines 2-3 and 5-7 (one of them blank), so the 4th data row starts on line 8.
    path = write(tmp_path, "pred.csv", STYLE_CSV.replace(",unknown,", ",maybe,"))
    err = error_of(path)
    assert (err.line, err.column) == (8, "prediction")
    assert "unknown prediction 'maybe'" in str(err)


def test_bad_rows_are_counted(tmp_path):
    path = write(tmp_path, "many.csv", SOCIAL_CSV.replace(",senior,True", ",great,True"))
    err = error_of(path)
    assert "line 2" in str(err) and "(2 bad rows in the file)" in str(err)


def test_non_integer_idx(tmp_path):
    path = write(tmp_path, "idx.csv", STYLE_CSV.replace("\n1,junior", "\n1.5,junior"))
    err = error_of(path)
    assert str(path) in str(err) and "column 'idx'" in str(err) and "'1.5'" in str(err)


def test_empty_file(tmp_path):
    path = write(tmp_path, "empty.csv", b"")
    err = error_of(path)
    assert str(path) in str(err) and "empty file (0 bytes)" in str(err)


def test_header_only_file(tmp_path):
    path = write(tmp_path, "header.csv", SOCIAL_HEADER)
    err = error_of(path)
    assert str(path) in str(err) and "no data rows" in str(err)


def test_non_utf8_file(tmp_path):
    path = write(tmp_path, "latin1.csv", SOCIAL_CSV.replace("Emily", "Émily"), encoding="latin-1")
    err = error_of(path)
    offset = len((SOCIAL_HEADER + SOCIAL_CSV.splitlines(keepends=True)[1]).encode()) + len("0,senior,caucasian_female,")
    assert str(path) in str(err) and "not valid UTF-8" in str(err)
    assert f"byte offset {offset}" in str(err) and err.line == 3


def test_unknown_format(tmp_path):
    path = write(tmp_path, "other.csv", "a,b,c\n1,2,3\n")
    err = error_of(path)
    assert str(path) in str(err) and "matches neither prediction format" in str(err)


def test_nonexistent_path(tmp_path):
    path = tmp_path / "nope.csv"
    err = error_of(write(tmp_path, "ok.csv", SOCIAL_CSV), path)
    assert str(err) == f"{path}: file does not exist"


def test_row_longer_than_header(tmp_path):
    path = write(tmp_path, "long.csv", SOCIAL_CSV.replace("Greg Smith,", "Greg,Smith,"))
    err = error_of(path)
    assert err.line == 2 and "8 fields" in str(err)


def test_same_prediction_in_two_files(tmp_path):
    first, second = write(tmp_path, "a.csv", SOCIAL_CSV), write(tmp_path, "b.csv", SOCIAL_CSV)
    err = error_of(first, second)
    assert str(err).startswith(f"{second}: 4 prediction(s) already read from {first}")


def test_no_paths():
    assert "no prediction files" in str(error_of())


# --------------------------------------------------------------------------- malformed and hostile files

DIST_HEADER = SOCIAL_HEADER.rstrip("\n") + ",p_junior,p_mid,p_senior\n"


def with_dist(*triples, header=DIST_HEADER):
    """SOCIAL_CSV with one ``p_junior,p_mid,p_senior`` triple per data row."""
    rows = SOCIAL_CSV.splitlines()[1:]
    return header + "".join(f"{row},{triple}\n" for row, triple in zip(rows, triples))


def test_label_distribution_is_read_as_numbers(tmp_path):
    path = write(tmp_path, "dist.csv", with_dist("0.1,0.2,0.7", ",,", " 0 , 1 , 0 ", "nan,NaN,NAN"))
    df = read_prediction_files(path)
    assert [df[c].dtype for c in ("p_junior", "p_mid", "p_senior")] == [float] * 3
    assert df["p_senior"].tolist()[:1] == [0.7] and df["p_mid"].tolist()[2] == 1.0
    assert df["p_junior"].isna().tolist() == [False, True, False, True]
    overall = group_metrics(df).query("group_kind == 'all'").iloc[0]
    assert overall.n_dist == 2 and overall.exp_accuracy == pytest.approx((0.7 + 0.0) / 2)


@pytest.mark.parametrize(
    "triples, where, problem",
    [
        (
            ("0.1,0.2,0.7", "high,0.2,0.7"),
            "line 3, column 'p_junior'",
            "p_junior must be a probability (a number from 0 to 1) or empty, got 'high'",
        ),
        (
            ("0.1,0.2,0.7", "0.1,0.2,0x7"),
            "line 3, column 'p_senior'",
            "p_senior must be a probability (a number from 0 to 1) or empty, got a value of 3 characters (not shown)",
        ),
        (
            ("0.1,0.2,0.7", "0.1,inf,0.7"),
            "line 3, column 'p_mid'",
            "p_mid must be a probability (a number from 0 to 1) or empty, got 'inf'",
        ),
        (("1.5,-0.5,0",), "line 2, column 'p_junior'", "p_junior 1.5 is outside 0–1"),
        (("0.5,-0.5,1",), "line 2, column 'p_mid'", "p_mid -0.5 is outside 0–1"),
        (
            ("0.1,0.2,0.7", "0.1,0.9,0.7", "0.5,0.5,0.5"),
            "line 3",
            "p_junior + p_mid + p_senior must sum to 1 (within 0.001), got 1.7 (2 bad rows in the file)",
        ),
        (
            ("0.1,0.2,0.7", "0.5,0.5,"),
            "line 3",
            "a label distribution gives all of p_junior, p_mid, p_senior or none of them; this row gives 2 of the 3",
        ),
    ],
)
def test_bad_label_distribution(tmp_path, triples, where, problem):
    triples = triples + ("0,1,0",) * (4 - len(triples))
    path = write(tmp_path, "dist.csv", with_dist(*triples))
    assert str(error_of(path)) == f"{path}: {where}: {problem}"


def test_some_distribution_columns_but_not_all(tmp_path):
    header = SOCIAL_HEADER.rstrip("\n") + ",p_junior,P_Mid\n"
    path = write(tmp_path, "partial.csv", with_dist("0.5,0.5", "0.5,0.5", "0.5,0.5", "0.5,0.5", header=header))
    assert str(error_of(path)) == (
        f"{path}: the label distribution needs all of p_junior, p_mid, p_senior or none of them; "
        "the file has p_junior, p_mid but not p_senior"
    )


@pytest.mark.parametrize(
    "header, fields, names",
    [
        (SOCIAL_HEADER.rstrip("\n") + ",Model\n", "5 and 8", "'model' and 'Model'"),
        (SOCIAL_HEADER.replace(",model,", ", model ,").rstrip("\n") + ",model\n", "5 and 8", "' model ' and 'model'"),
        (SOCIAL_HEADER.rstrip("\n") + ",PREDICTION \n", "6 and 8", "'prediction' and 'PREDICTION '"),
        (SOCIAL_HEADER.rstrip("\n") + ",model\n", "5 and 8", "'model' and 'model'"),
        (SOCIAL_HEADER.rstrip("\n") + ",extra,Extra\n", "8 and 9", "'extra' and 'Extra'"),
    ],
)
def test_duplicate_columns_ignoring_case_and_spaces(tmp_path, header, fields, names):
    n_extra = header.count(",") - SOCIAL_HEADER.count(",")
    rows = "".join(row + ",x" * n_extra + "\n" for row in SOCIAL_CSV.splitlines()[1:])
    path = write(tmp_path, "dup.csv", header + rows)
    err = error_of(path)
    assert err.line == 1
    assert str(err).startswith(f"{path}: line 1, column ")
    assert f"duplicate column: header fields {fields} ({names}) are the same name" in str(err)
    assert "once case and surrounding spaces are ignored" in str(err)


def test_duplicate_column_with_a_hidden_name(tmp_path):
    path = write(tmp_path, "dup.csv", SOCIAL_HEADER.rstrip("\n") + ",x1,X1\n" + SOCIAL_CSV.split("\n", 1)[1])
    assert str(error_of(path)) == (
        f"{path}: line 1: duplicate column: header fields 8 and 9 (names not shown) are the same name "
        "once case and surrounding spaces are ignored"
    )


def test_nul_byte(tmp_path):
    # pandas would silently cut the field at the NUL ("Jamal\0 Washington" -> "Jamal").
    path = write(tmp_path, "nul.csv", SOCIAL_CSV.replace("Jamal Washington", "Jamal\0 Washington"))
    err = error_of(path)
    offset = SOCIAL_CSV.index("Jamal") + 5
    assert err.line == 4
    assert str(err) == f"{path}: line 4: contains a NUL byte (byte offset {offset}); not a text CSV file"


def test_row_longer_than_header_further_down(tmp_path):
    # pandas reports this one as a parser error with its own line count; the message uses the real line.
    path = write(tmp_path, "long.csv", STYLE_CSV.replace("unknown,False,x", "unknown,False,x,y,z"))
    err = error_of(path)
    assert str(err) == f"{path}: line 8: 9 fields, but the header has 7 columns"


def test_unclosed_quote(tmp_path):
    path = write(tmp_path, "quote.csv", SOCIAL_CSV + '1,junior,caucasian_male,"Greg,sonnet45,junior,True\n')
    err = error_of(path)
    assert str(err) == f"{path}: line 6: a quoted field is never closed (unbalanced double quote)"


def test_huge_field_keeps_line_numbers(tmp_path):
    # Longer than the csv module's default field limit (131072 characters).
    text = STYLE_CSV.replace("Architected a pipeline.", '"' + "Architected a pipeline.\n" * 10000 + '"')
    path = write(tmp_path, "huge.csv", text.replace(",unknown,", ",maybe,"))
    err = error_of(path)
    assert (err.line, err.column) == (10008, "prediction") and "unknown prediction 'maybe'" in str(err)


@pytest.mark.parametrize("idx", ["٣", "３", "1_0", "0x1"])
def test_only_ascii_digits_are_integers(tmp_path, idx):
    path = write(tmp_path, "digits.csv", STYLE_CSV.replace("\n1,junior", f"\n{idx},junior"))
    err = error_of(path)
    assert (err.line, err.column) == (8, "idx") and "idx must be an integer" in str(err)


@pytest.mark.parametrize(
    "content, problem",
    [
        (codecs.BOM_UTF8, "empty file (no header, no rows)"),
        (codecs.BOM_UTF8 + SOCIAL_HEADER.encode(), "has a header but no data rows"),
        (b"\n\n  \n", "empty file (no header, no rows)"),
        (b"\xff\xfeo\x00r\x00", "line 1: not valid UTF-8: byte 0xff at byte offset 0 (invalid start byte)"),
    ],
)
def test_degenerate_files(tmp_path, content, problem):
    path = write(tmp_path, "odd.csv", content)
    assert str(error_of(path)) == f"{path}: {problem}"
