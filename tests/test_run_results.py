"""What ``resumebias run`` prints after the jobs (runner._print_results): the tables the run
has, and nothing it does not. A fit-only, seniority-only or ranking-only tool has only some of
the study's tables; the summary must never fail on the others (issue 39: a fit-only HTTP
screener's run raised ``CatalogException: Table with name seniority_predictions does not
exist`` after writing its report, exited 1 and never printed the ``Report:`` line)."""

import io

import duckdb
import pandas as pd
import pytest

from resumebias_dagster.core.tables import FitModelSummary, Verdicts, empty_table
from resumebias_dagster.run_summary import print_results


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path))
    return tmp_path


def _write(db, tables: dict[str, pd.DataFrame]) -> None:
    with duckdb.connect(str(db)) as con:
        con.execute("create schema if not exists audit")
        for name, frame in tables.items():
            con.register("frame", frame)
            con.execute(f"create table audit.{name} as select * from frame")
            con.unregister("frame")


def test_a_fit_only_run_prints_its_fit_tables_and_never_asks_for_the_others(data):
    verdicts = empty_table(Verdicts)
    _write(
        data / "resumebias.duckdb",
        {
            "fit_verdicts": verdicts,
            "fit_model_summary": empty_table(FitModelSummary),
            "fit_plots": pd.DataFrame({"plot": ["volcano"], "path": ["/tmp/v.png"]}),
        },
    )
    out = io.StringIO()
    print_results(out)
    text = out.getvalue()
    assert "JOB-DESCRIPTION AUDIT" in text and "Plot volcano: /tmp/v.png" in text
    assert "STYLE VALIDATION" not in text and "SENIORITY STUDY" not in text
    assert "Results: DuckDB file" in text


def test_a_run_with_no_tables_says_so(data):
    _write(data / "resumebias.duckdb", {})
    out = io.StringIO()
    print_results(out)
    assert "no study tables" in out.getvalue()


def test_the_fit_verdicts_say_why_a_finding_has_no_interval(data, tmp_path):
    # Issue 41: the run summary's fit verdict table printed "nan" intervals with no reason,
    # where the analyze commands print a line per finding without one.
    from resumebias_dagster.core.inference.verdict_table import HEADER
    from resumebias_dagster.core.jd_audit.fit_import import analyze_fit_file

    scores = tmp_path / "one_resume.csv"
    scores.write_text(
        "variant,model,jd,run,score\n"
        + "".join(f"baseline,m,j1,{run},7\naddressCountry_brazil,m,j1,{run},{5 + run}\n" for run in (1, 2))
    )
    _, verdicts = analyze_fit_file(scores)
    assert verdicts["ci_low"].isna().all()
    _write(data / "resumebias.duckdb", {"fit_verdicts": verdicts, "fit_model_summary": empty_table(FitModelSummary)})
    out = io.StringIO()
    print_results(out)
    lines = out.getvalue().splitlines()
    at = lines.index("VERDICTS")
    assert lines[at + 1].split() == " ".join(HEADER).split()  # the analyze commands' table
    assert "fit_level:addressCountry_brazil" in lines[at + 3] and " none " in lines[at + 3]
    assert (
        "no interval for m: fit_level:addressCountry_brazil: one résumé: the job descriptions are the units, "
        "a claim about that résumé only"
    ) in lines
