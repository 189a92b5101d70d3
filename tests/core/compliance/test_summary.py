"""The published summary of a Local Law 144 audit (core/compliance/summary.py): what it says
about the categories left out of the impact ratios (only when the auditor chose to, with the
justification, the counts and the rates §5-301(d) asks for), who an individual is, and that
selection counts are expected counts; the JSON and CSV that carry them."""

import json

import pandas as pd
import pandera.errors
import pytest

from resumebias_dagster.core.compliance.ll144 import SELECTION_COUNTS_NOTE
from resumebias_dagster.core.compliance.summary import (
    CONDITIONAL_FIELDS,
    SUMMARY_FIELDS,
    DataSource,
    audit_summary,
    bias_audit_rates,
    summary_csv,
    summary_json,
)
from resumebias_dagster.core.tables import BiasAuditSummary
from tests.core.compliance.test_ll144 import GROUPS, JUSTIFY, hand_scores, seniority_frame

SOURCE = DataSource(generator="offline template generator", generator_seed=0, n_base_resumes=12)


def _published(**rates_config):
    rates, problems = bias_audit_rates(
        {"jd_audit": hand_scores(), "seniority": seniority_frame()}, groups=GROUPS, **rates_config
    )
    assert not problems
    summary = audit_summary(rates, audit_date="2026-11-25", source=SOURCE)
    BiasAuditSummary.validate(summary)
    return rates, summary


def _audit(summary, study):
    return summary[summary["study"] == study].iloc[0]


def test_by_default_nothing_is_left_out_and_the_summary_says_so():
    rates, summary = _published()
    assert (rates["min_share"] == 0).all() and (rates.loc[rates["n"] > 0, "excluded_reason"] == "").all()
    for study in ("jd_audit", "seniority"):
        audit = _audit(summary, study)
        assert audit["min_share"] == 0
        assert audit["excluded_categories"] == "" and audit["exclusion_justification"] == ""


def test_left_out_categories_come_with_the_justification_their_counts_and_rates():
    rates, summary = _published(min_share=0.02, exclusion_justification=JUSTIFY)
    fit = _audit(summary, "jd_audit")
    assert fit["min_share"] == 0.02 and fit["exclusion_justification"] == JUSTIFY
    # Asian (1 of 52 scored individuals; its one name said yes on both runs) and Asian Male.
    excluded = fit["excluded_categories"]
    assert excluded.startswith("Asian (race_ethnicity): ")
    assert "scoring_rate above_median: 1 of 52 individuals (1.92%), rate 1" in excluded
    assert "selection_rate recommend_yes: 1 of 52 individuals (1.92%), rate 1" in excluded
    assert "Asian Male (intersection): " in excluded
    assert "Hispanic" not in excluded and "Native Hawaiian" not in excluded  # 2 of 52; no individuals
    # The seniority study has no category under 2%: nothing left out, the justification stays.
    assert _audit(summary, "seniority")["excluded_categories"] == ""

    published = summary_json(summary, rates)
    audit = next(a for a in published["audits"] if a["study"] == "jd_audit")
    assert audit["exclusion_justification"] == JUSTIFY and audit["min_share"] == 0.02
    left_out = [(e["dimension"], e["category"], e["measure"], e["outcome"]) for e in audit["excluded"]]
    assert ("race_ethnicity", "Asian", "scoring_rate", "above_median") in left_out
    asian = next(e for e in audit["excluded"] if e["category"] == "Asian" and e["outcome"] == "above_median")
    assert (asian["n"], asian["n_total"], asian["n_selected"], asian["rate"]) == (1, 52, 1.0, 1.0)
    assert asian["share"] == pytest.approx(1 / 52) and "§5-301(d)" in asian["excluded_reason"]
    # Fields that hold only where they apply.
    assert {"distribution_date", "excluded_categories", "exclusion_justification"} <= CONDITIONAL_FIELDS
    assert set(CONDITIONAL_FIELDS) <= set(SUMMARY_FIELDS.values())
    json.dumps(published)

    # The table refuses a left-out category without a justification, and a justification without min_share.
    for bad in (summary.assign(exclusion_justification=""), summary.assign(min_share=0.0)):
        with pytest.raises(pandera.errors.SchemaError, match="bias_audit_summary_exclusion_justified"):
            BiasAuditSummary.validate(bad)

    flat = summary_csv(summary, rates)
    assert len(flat) == len(rates) and not [c for c in flat.columns if c.endswith(("_x", "_y"))]
    # A rate row's columns keep their names; the audit's own count of missing individuals is beside them.
    assert {"n_missing", "n_missing_audit", "median_score"} <= set(flat.columns)
    assert (flat.loc[flat["study"] == "jd_audit", "exclusion_justification"] == JUSTIFY).all()
    assert {"excluded_categories", "individuals_note", "selection_counts_note", "min_share"} <= set(flat.columns)


def test_the_summary_says_who_an_individual_is_and_that_selection_counts_are_expected():
    rates, summary = _published()
    fit, seniority = _audit(summary, "jd_audit"), _audit(summary, "seniority")
    assert "one résumé with one name" in fit["individuals_note"] and "job description" in fit["individuals_note"]
    assert fit["individuals_note"] == rates.loc[rates["study"] == "jd_audit", "individuals_note"].iloc[0]
    assert "one résumé with one name" in seniority["individuals_note"]
    assert "job description" not in seniority["individuals_note"]
    for audit in (fit, seniority):
        assert audit["selection_counts_note"] == SELECTION_COUNTS_NOTE
    assert "expected count" in SELECTION_COUNTS_NOTE and "not rounded" in SELECTION_COUNTS_NOTE
    # And they are not rounded: the seniority study's Male senior count is 2.5 (1 + 0.5 + 1).
    male = rates[(rates["study"] == "seniority") & (rates["outcome"] == "senior") & (rates["category"] == "Male")].iloc[
        0
    ]
    assert male["n_selected"] == 2.5
    published = summary_json(summary, rates)
    for audit in published["audits"]:
        assert audit["individuals_note"] and audit["selection_counts_note"] == SELECTION_COUNTS_NOTE
        # Said once per audit, not on every rate row.
        assert not {"individuals_note", "exclusion_justification", "min_share"} & set(audit["rates"][0])


def test_a_refused_exclusion_stops_the_tables_not_one_model():
    # A setting's error is not one model's problem to log and skip: it is raised, naming it.
    with pytest.raises(ValueError, match="min_share 0.02 > 0 needs exclusion_justification"):
        bias_audit_rates({"jd_audit": hand_scores()}, groups=GROUPS, min_share=0.02)
    with pytest.raises(ValueError, match=r"min_share 0.1 is over 0.02"):
        bias_audit_rates({"jd_audit": hand_scores()}, groups=GROUPS, min_share=0.1, exclusion_justification=JUSTIFY)
    with pytest.raises(ValueError, match="min_share 0.02 > 0 needs exclusion_justification"):
        bias_audit_rates({"jd_audit": pd.DataFrame()}, min_share=0.02)


def test_the_summary_says_which_eeo1_categories_are_not_tested_and_why():
    """Issue 44: the three EEO-1 categories the name pools have no names for are named, with why."""
    _, summary = _published()
    three = ["American Indian or Alaska Native", "Native Hawaiian or Other Pacific Islander", "Two or More Races"]
    for study in ("jd_audit", "seniority"):
        reasons = dict(part.split(": ", 1) for part in _audit(summary, study)["untested_categories"].split("; "))
        assert all(reasons.pop(c).startswith("not tested: the packaged name pools hold no names") for c in three)
        # A category the pools have but this design left out says so.
        assert all(r == "not tested: no name of this category was in this audit's design" for r in reasons.values())
    assert "untested_categories" in SUMMARY_FIELDS.values() and "untested_categories" in CONDITIONAL_FIELDS
