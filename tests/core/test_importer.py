"""core/importer.py: the seed's two prediction CSV formats and every way they can be wrong."""

import codecs

import pandas as pd
import pytest

from resumebias_dagster.core.importer import PredictionFileError, read_prediction_files
from resumebias_dagster.core.metrics import group_metrics

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
    assert list(df.columns[:7]) == ["variant_kind", "original_idx", "variant", "model", "run", "prediction",
                                    "true_seniority"]
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
    assert list(df.variant) == ["caucasian_male", "caucasian_female", "african_american_male",
                                "african_american_female"]
    assert list(df.name) == ["Greg Smith", "Emily Johnson", "Jamal Washington", "Lakisha Jefferson"]
    assert list(df.run) == [3, 3, 3, 3]


def test_both_formats_together(tmp_path):
    df = read_prediction_files([write(tmp_path, "a.csv", STYLE_CSV), write(tmp_path, "b.csv", SOCIAL_CSV)])
    assert df.groupby("variant_kind").size().to_dict() == {"demographic": 4, "style": 4}


def test_lying_correct_column_is_ignored(tmp_path):
    honest = read_prediction_files(write(tmp_path, "honest.csv", SOCIAL_CSV))
    lying = read_prediction_files(write(tmp_path, "lying.csv", SOCIAL_CSV.replace("True", "X").replace("False", "True")))
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
    path = write(tmp_path, "labels.csv", SOCIAL_CSV.replace("0,senior,african_american_male", "0,Senior-level,"
                                                            "african_american_male"))
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
