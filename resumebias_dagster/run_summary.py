"""What ``resumebias run`` prints about its results: the per-file table of the user's résumés
after they are read (``user_resumes_report``), and the study's tables after the jobs
(``print_results``), each only as far as the run has them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from resumebias_dagster.settings import duckdb_path

if TYPE_CHECKING:
    import pandas as pd


def user_resumes_report(database: str, not_read: str, out) -> None:
    """Per file of the user's folder: read or not (why), the name found, and which probe axes
    apply (each that does not, with its reason), from the ``user_resumes`` and
    ``user_resume_probes`` tables and the files ``user_resumes`` could not read (its
    ``not_read`` metadata: ``- file: reason`` lines)."""
    import duckdb

    with duckdb.connect(database, read_only=True) as con:
        resumes = con.execute("select resume_id, source, name from audit.user_resumes order by source").df()
        probes = con.execute("select resume_id, axis, applies, reason from audit.user_resume_probes").df()
    problems = [line[2:].partition(": ") for line in not_read.splitlines() if line.startswith("- ")]
    width = max([len(s) for s in resumes["source"]] + [len(f) for f, _, _ in problems] + [4]) + 2
    print("\nYOUR RÉSUMÉS (user_resumes; the probes each admits: user_resume_probes)", file=out)
    print(f"{'file':<{width}}{'name':<28}probe axes", file=out)
    n_axes = probes["axis"].nunique()
    for row in resumes.itertuples(index=False):
        mine = probes[probes["resume_id"] == row.resume_id]
        skipped = mine[~mine["applies"].astype(bool)]
        share = f"{len(mine) - len(skipped)} of {n_axes} apply"
        print(f"{row.source:<{width}}{row.name:<28}{share}", file=out)
        for axis in skipped.itertuples(index=False):
            print(f"{'':<{width}}  does not apply: {axis.axis} ({axis.reason})", file=out)
    for source, _, reason in problems:
        print(f"{source:<{width}}not read: {reason}", file=out)
    if not len(resumes) and not problems:
        print("(no résumé)", file=out)


def print_results(out) -> None:
    """The study's tables as text, from the DuckDB file, and where the files are: only the
    tables this run has (a fit-only, seniority-only or ranking-only tool has some of them)."""
    import duckdb

    db = duckdb_path()
    with duckdb.connect(str(db), read_only=True) as con:
        names = {
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = 'audit'"
            ).fetchall()
        }
        tables = {name: con.execute(f"select * from audit.{name}").df() for name in sorted(names & _SUMMARY_TABLES)}
    if not tables:
        print("\n(no study tables: no job of this run wrote one)", file=out)
    _print_overview(tables, out)
    _print_seniority(tables, out)
    _print_fit(tables, out)
    _print_impact(tables, out)
    print(f"\nResults: DuckDB file {db} (schema 'audit', one table per asset)", file=out)
    for name in ("fit_plots", "seniority_plots"):
        if name in tables:
            for plot in tables[name].itertuples(index=False):
                print(f"Plot {plot.plot}: {plot.path}", file=out)


_SUMMARY_TABLES = {
    "style_validation",
    "seniority_predictions",
    "seniority_verdicts",
    "fit_verdicts",
    "validity_verdicts",
    "fit_model_summary",
    "seniority_impact_ratios",
    "fit_impact_ratios",
    "fit_plots",
    "seniority_plots",
}
_FIT_SUMMARY_COLUMNS = [
    "model",
    "n_cells",
    "n_significant",
    "noise_floor",
    "bias_index",
    "placebo_index",
    "largest_penalty",
    "largest_penalty_jd",
    "largest_penalty_variant",
    "prompt_injection_mean_delta",
    "anonymize_mean_delta",
]
_IMPACT_COLUMNS = [
    "model",
    "selection",
    "dimension",
    "group",
    "n",
    "selected",
    "rate",
    "impact_ratio",
    "ci_low",
    "ci_high",
    "below_four_fifths",
    "ci_below_four_fifths",
]


def _print_overview(tables: dict[str, pd.DataFrame], out) -> None:
    """Per tool, the report's first screen in plain words (core/reporting/overview.py)."""
    import pandas as pd

    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.reporting.overview import overview_text, tool_overviews
    from resumebias_dagster.core.reporting.wording import load_words

    frames = [tables[n] for n in ("validity_verdicts", "seniority_verdicts", "fit_verdicts") if len(tables.get(n, ()))]
    if not frames:
        return
    screens = tool_overviews(pd.concat(frames, ignore_index=True), load_words(), load_inference_settings())
    print("\nIN PLAIN WORDS (the report's first screen per tool)\n", file=out)
    out.write(overview_text(screens))


def _print_seniority(tables: dict[str, pd.DataFrame], out) -> None:
    from resumebias_dagster.core.seniority.tables_text import format_tables

    if "style_validation" in tables:
        print("\nSTYLE VALIDATION (notebook 004)", file=out)
        print(tables["style_validation"].round(3).to_string(index=False), file=out)
    predictions = tables.get("seniority_predictions")
    if predictions is not None:
        print(file=out)
        verdicts = tables.get("seniority_verdicts")
        if verdicts is None:
            from resumebias_dagster.core.tables import Verdicts, empty_table

            verdicts = empty_table(Verdicts)
        out.write(format_tables(predictions, verdicts) if len(predictions) else "No predictions yet.\n")


def _print_fit(tables: dict[str, pd.DataFrame], out) -> None:
    summary, verdicts = tables.get("fit_model_summary"), tables.get("fit_verdicts")
    if summary is None and verdicts is None:
        return
    print("\nJOB-DESCRIPTION AUDIT (study 003): per model", file=out)
    shown = (
        summary[_FIT_SUMMARY_COLUMNS].round(3).to_string(index=False) if summary is not None and len(summary) else None
    )
    print(shown or "(no fit scores)", file=out)
    # The analyze commands' table, with its line per finding without an interval (issue 41).
    from resumebias_dagster.core.inference.verdict_table import format_verdict_table
    from resumebias_dagster.core.tables import Verdicts, empty_table

    print("\nJOB-DESCRIPTION AUDIT: the résumé the unit, inference.yaml's margins", file=out)
    out.write(format_verdict_table(verdicts if verdicts is not None else empty_table(Verdicts), "(no fit scores)"))


def _print_impact(tables: dict[str, pd.DataFrame], out) -> None:
    for name, title in (
        ("seniority_impact_ratios", "SENIORITY STUDY (name experiment)"),
        ("fit_impact_ratios", "JOB-DESCRIPTION AUDIT (names)"),
    ):
        table = tables.get(name)
        if table is None:
            continue
        print(
            f"\nSELECTION RATES AND IMPACT RATIOS, {title}: groups by name, a proxy for perceived group; "
            "flag = ratio under 0.8 (four-fifths rule); ci_below_four_fifths = its whole 95% interval under 0.8 "
            "(beyond sampling noise)",
            file=out,
        )
        print(table[_IMPACT_COLUMNS].round(3).to_string(index=False) if len(table) else "(no predictions)", file=out)
