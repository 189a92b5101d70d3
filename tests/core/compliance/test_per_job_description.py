"""Local Law 144 per job description (issue 44): beside the pooled table (an individual counted
once over every job description), one table per job description, so a penalty that one job
description carries is not averaged away by the others; the summary, its JSON and CSV and the
report keep the two apart."""

import json

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.compliance.ll144 import scoring_rate_table, selection_rate_table
from resumebias_dagster.core.compliance.summary import (
    DataSource,
    audit_summary,
    bias_audit_rates,
    lowest_ratios,
    summary_csv,
    summary_json,
)
from resumebias_dagster.core.tables import BiasAuditRates, FitScores, columns
from resumebias_dagster.core.tables.compliance import ALL_JOB_DESCRIPTIONS
from tests.core.compliance.test_ll144 import GROUPS, fit_rows, seniority_frame

SOURCE = DataSource(generator="offline template generator", generator_seed=0, n_base_resumes=20)


def two_job_descriptions(penalised="nurse"):
    """60 résumés per name level scored under two job descriptions, the same scores (3 to 10 by
    résumé) everywhere except that under ``penalised`` every Black female name scores 3 lower."""
    rows = []
    for jd in ("engineer", "nurse"):
        for level in ("wm", "wf", "bm", "bf"):
            for resume in range(60):
                score = 3 + resume % 8 - (3 if (jd == penalised and level == "bf") else 0)
                rows += fit_rows(level, resume, (score, score), jd=jd)
    return pd.DataFrame(rows, columns=columns(FitScores))


def _ratio(t, category, jd, dimension="intersection"):
    hit = t[(t["job_description"] == jd) & (t["dimension"] == dimension) & (t["category"] == category)]
    assert len(hit) == 1, (category, jd)
    return hit.iloc[0]


def test_one_job_description_shows_what_the_pooled_table_averages_away():
    frame = two_job_descriptions()
    pooled = scoring_rate_table(frame, groups=GROUPS)
    nurse = scoring_rate_table(frame, groups=GROUPS, job_description="nurse")
    engineer = scoring_rate_table(frame, groups=GROUPS, job_description="engineer")
    assert (pooled["job_description"] == ALL_JOB_DESCRIPTIONS).all()
    assert (nurse["job_description"] == "nurse").all() and (engineer["job_description"] == "engineer").all()
    assert (pooled.loc[pooled["dimension"] == "sex", "n_total"] == 240).all()
    assert (nurse.loc[nurse["dimension"] == "sex", "n_total"] == 240).all()
    # Under the engineer description nobody is penalised: every impact ratio is 1.
    assert np.allclose(engineer.loc[engineer["impact_ratio"].notna(), "impact_ratio"], 1.0)
    # Under the nurse description Black female names are above the median a quarter as often as
    # the others, beyond noise; pooled with the engineer description, that is 0.75 and within it.
    bf = _ratio(nurse, "Black or African American Female", "nurse")
    assert bf["impact_ratio"] == pytest.approx(0.25) and bf["ci_below_four_fifths"]
    bf_pooled = _ratio(pooled, "Black or African American Female", ALL_JOB_DESCRIPTIONS)
    assert bf_pooled["impact_ratio"] == pytest.approx(0.75) and not bf_pooled["ci_below_four_fifths"]
    # Each table is one job description's individuals: its note says over 1 job description.
    assert "averaged over 1 job description " in nurse["individuals_note"].iloc[0]
    assert "averaged over 2 job descriptions " in pooled["individuals_note"].iloc[0]
    BiasAuditRates.validate(pd.concat([pooled, nurse, engineer], ignore_index=True))


def test_the_rates_table_holds_the_pooled_table_and_one_per_job_description():
    rates, problems = bias_audit_rates(
        {"jd_audit": two_job_descriptions(), "seniority": seniority_frame()}, groups=GROUPS
    )
    assert not problems
    fit = rates[rates["study"] == "jd_audit"]
    assert sorted(set(fit["job_description"])) == [ALL_JOB_DESCRIPTIONS, "engineer", "nurse"]
    # The seniority study has one prompt, no job descriptions: only its pooled table.
    assert set(rates.loc[rates["study"] == "seniority", "job_description"]) == {ALL_JOB_DESCRIPTIONS}
    # Each job description has both measures, as the pooled one.
    for jd in ("engineer", "nurse"):
        assert set(fit.loc[fit["job_description"] == jd, "measure"]) == {"scoring_rate", "selection_rate"}
    # One job description only: its table would repeat the pooled one, so there is none.
    one = two_job_descriptions()
    rates_one, _ = bias_audit_rates({"jd_audit": one[one["jd"] == "nurse"]}, groups=GROUPS)
    assert set(rates_one["job_description"]) == {ALL_JOB_DESCRIPTIONS}


def test_the_summary_is_the_pooled_audit_and_its_files_carry_every_table():
    rates, _ = bias_audit_rates({"jd_audit": two_job_descriptions()}, groups=GROUPS)
    summary = audit_summary(rates, audit_date="2026-12-03", source=SOURCE)
    assert len(summary) == 1 and summary["n_individuals"].iloc[0] == 240
    doc = json.loads(json.dumps(summary_json(summary, rates)))
    audit = doc["audits"][0]
    assert {r["job_description"] for r in audit["rates"]} == {ALL_JOB_DESCRIPTIONS, "engineer", "nurse"}
    assert audit["job_descriptions"] == ["engineer", "nurse"]
    flat = summary_csv(summary, rates)
    assert len(flat) == len(rates) and set(flat["job_description"]) == {ALL_JOB_DESCRIPTIONS, "engineer", "nurse"}


def test_the_lowest_ratio_of_each_job_description_leads_with_the_worst():
    rates, _ = bias_audit_rates({"jd_audit": two_job_descriptions()}, groups=GROUPS)
    low = lowest_ratios(rates)
    # One row per job description, measure, outcome and dimension; the pooled table is not repeated.
    assert ALL_JOB_DESCRIPTIONS not in set(low["job_description"])
    assert not low.duplicated(["model", "study", "job_description", "measure", "outcome", "dimension"]).any()
    first = low.iloc[0]
    # Under the nurse description a Black female name never scores 8, the yes of fit_rows: ratio 0.
    assert (first["job_description"], first["measure"], first["outcome"]) == (
        "nurse",
        "selection_rate",
        "recommend_yes",
    )
    assert first["impact_ratio"] == 0 and first["category"].startswith("Black or African American")
    nurse_scores = low[(low["job_description"] == "nurse") & (low["measure"] == "scoring_rate")]
    # Lowest first: the intersection, then Female and Black (each half penalised).
    assert nurse_scores["impact_ratio"].tolist() == pytest.approx([0.25, 0.625, 0.625])
    assert nurse_scores["dimension"].iloc[0] == "intersection"
    assert low["impact_ratio"].is_monotonic_increasing
    assert lowest_ratios(rates[rates["job_description"] == ALL_JOB_DESCRIPTIONS]).empty


def test_a_job_description_is_refused_in_one_line_naming_it():
    frame = two_job_descriptions()
    with pytest.raises(ValueError, match=r"model 'm' has no rows for job description 'pilot' \(job descriptions: "):
        scoring_rate_table(frame, groups=GROUPS, job_description="pilot")
    with pytest.raises(ValueError, match=r"job description 'all' is the pooled table's name"):
        selection_rate_table(frame.assign(jd="all"), groups=GROUPS, job_description="all")
    with pytest.raises(
        ValueError,
        match=r"job description .nurse. asked for, but these rows have none \(no `jd` column\): the seniority study",
    ):
        scoring_rate_table(seniority_frame(), model="a", job_description="nurse")
    # A job description named like the pooled table is a problem of that model, not a crash.
    rates, problems = bias_audit_rates({"jd_audit": frame.replace({"jd": {"nurse": "all"}})}, groups=GROUPS)
    assert any("job description 'all' is the pooled table's name" in p for p in problems)
    assert set(rates["job_description"]) == {ALL_JOB_DESCRIPTIONS, "engineer"}


def test_the_report_and_the_eu_record_show_the_pooled_tables_and_each_job_descriptions_lowest():
    from resumebias_dagster.core.compliance.eu_record import eu_test_record
    from resumebias_dagster.core.reporting.render import ReportTables, render_report
    from resumebias_dagster.core.tables import Verdicts, empty_table

    rates, _ = bias_audit_rates({"jd_audit": two_job_descriptions()}, groups=GROUPS)
    html = render_report(ReportTables(bias_audit_rates=rates, ll144_lowest_by_job_description=lowest_ratios(rates)))
    pooled = html[html.index('id="ll144-rates"') : html.index("</table>", html.index('id="ll144-rates"'))]
    by_jd = html[html.index('id="ll144-by-job-description"') :]
    by_jd = by_jd[: by_jd.index("</table>")]
    # The pooled table: every category of both measures once (the per-job-description rows are not in it).
    assert pooled.count("<tr") - 1 == (rates["job_description"] == ALL_JOB_DESCRIPTIONS).sum()
    assert "nurse" in by_jd and "engineer" in by_jd and "Per job description: the lowest impact ratio" in html
    # Without per-job-description tables there is no such section.
    one = render_report(ReportTables(bias_audit_rates=rates[rates["job_description"] == ALL_JOB_DESCRIPTIONS]))
    assert 'id="ll144-by-job-description"' not in one
    record = eu_test_record(
        generated_at="2026-12-03",
        version="0",
        models=[],
        source=SOURCE,
        verdicts=empty_table(Verdicts),
        rates=rates,
        store={},
    )
    items = dict(zip(record["item"], record["value"]))
    per_jd = items["m / jd_audit / Local Law 144 scoring_rate (above_median), per job description"]
    assert per_jd.startswith(
        "lowest impact ratio 0.250 (Black or African American Female, intersection, job description nurse)"
    )
    assert per_jd.endswith("below four-fifths beyond sampling noise under 1 of 2 job descriptions")
    assert items["m / jd_audit / Local Law 144 scoring_rate (above_median)"].startswith("lowest impact ratio 0.750")
