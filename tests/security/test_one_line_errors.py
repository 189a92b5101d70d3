"""Hostile inputs get one line naming the file or setting, never a traceback (issue 40, item 9):
``analyze-rank`` and ``plan --pilot`` on JSON nested deeper than Python recurses, HTTP body
templates that include another template or divide by zero, ``pull-tables`` on a file that is
not Parquet."""

import pandas as pd
import pytest

from resumebias_dagster.cli import main
from resumebias_dagster.core.common.shared_tables import SharedTables
from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models

DEEP = "[" * 100_000 + "]" * 100_000


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    return lines[0]


def test_analyze_rank_on_deeply_nested_json(tmp_path, capsys):
    path = tmp_path / "rankings.jsonl"
    path.write_text('{"job": ' + DEEP + "}\n")
    assert main(["analyze-rank", str(path)]) != 0
    assert _one_line(capsys.readouterr().err).endswith(f"{path}, line 1: cannot be read (RecursionError)")


def test_plan_on_a_deeply_nested_pilot(tmp_path, capsys):
    path = tmp_path / "pilot.json"
    path.write_text('{"verdicts": ' + DEEP + "}")
    assert main(["plan", "--pilot", str(path)]) != 0
    assert f"--pilot {path}: not a verdicts JSON or CSV (nested too deeply)" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{% include "x" %}', "a template may not include, import or extend another template"),
        ('{% import "x" as y %}{}', "a template may not include, import or extend another template"),
        ('{"a": {{ 1/0 }}}', "body cannot be rendered (ZeroDivisionError: division by zero)"),
    ],
)
def test_a_body_template_that_cannot_render_is_refused_naming_the_model(body, message):
    entry = {"name": "acme", "kind": "http", "url": "https://s.example/x", "body": body, "answer": {"score": "$.s"}}
    with pytest.raises(ModelConfigError) as exc:
        parse_models({"models": [entry]}, "models.yaml")
    assert str(exc.value).startswith("models.yaml: model 'acme': ") and message in str(exc.value)


def test_pull_tables_on_a_file_that_is_not_parquet(tmp_path, capsys, monkeypatch):
    url = f"file://{tmp_path}/shared"
    SharedTables(url).write("audit", "fit_scores", pd.DataFrame({"model": ["a"], "score": [1.0]}), {"model": "a"})
    bad = next((tmp_path / "shared").rglob("data.parquet"))
    bad.write_bytes(b"model,score\na,1\n")
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert main(["pull-tables", "--url", url, "--out", str(tmp_path / "pulled.duckdb")]) != 0
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("error: ") and "not a readable Parquet file" in line and "data.parquet" in line


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{% for a in '" + "x" * 5_000 + "' %}{% for b in 'xy' %}{}{% endfor %}{% endfor %}", "may not loop"),
        ("{% macro m() %}{}{% endmacro %}{{ m() }}", "may not loop or define macros"),
        ('{"r": "' + "x" * 30_000 + '"}', "30,009 characters; a template may have 20,000"),
    ],
)
def test_a_body_template_that_would_work_without_bound_is_refused(body, message):
    # Issue 40, item 12: nested loops over a 60,000-character string rendered for minutes while
    # the models file was read.
    entry = {"name": "acme", "kind": "http", "url": "https://s.example/x", "body": body, "answer": {"score": "$.s"}}
    with pytest.raises(ModelConfigError) as exc:
        parse_models({"models": [entry]}, "models.yaml")
    assert str(exc.value).startswith("models.yaml: model 'acme': body") and message in str(exc.value)
