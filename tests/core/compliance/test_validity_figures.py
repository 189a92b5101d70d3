"""The validity figures in Local Law 144's published summary and in the EU AI Act test record
(issue 42, item 4): per model and study the criterion-validity finding as the verdict tables
state it (the share, its 95% interval, chance, the target, the verdict, the résumés); "not
measured" where a study has none; the EU record's accuracy items and an open risk for every
model not shown valid. Verdict rows are synthetic, built through the table's own ``conform``."""

import functools
import json

import numpy as np
import pandas as pd
import pandera.errors
import pytest

from resumebias_dagster.core.compliance.eu_record import eu_test_record, record_json
from resumebias_dagster.core.compliance.summary import (
    SUMMARY_FIELDS,
    DataSource,
    audit_summary,
    bias_audit_rates,
    summary_csv,
    summary_json,
)
from resumebias_dagster.core.compliance.validity import FIGURE_COLUMNS, LAW_NOTE, validity_figures
from resumebias_dagster.core.jd_audit.validity_stats import CRITERION
from resumebias_dagster.core.seniority.validity import ACCURACY
from resumebias_dagster.core.tables import BiasAuditSummary, Verdicts, conform
from tests.core.compliance.test_ll144 import GROUPS, hand_scores, seniority_frame

SOURCE = DataSource(generator="offline template generator", generator_seed=0, n_base_resumes=12)


def verdict(model, study, finding, kind, estimate, low, high, verdict, *, margin, n=36, **extra):
    """One Verdicts row (the other columns as the estimators fill them)."""
    return {
        "model": model,
        "study": study,
        "finding": finding,
        "family": finding.split(":")[1] if ":" in finding else finding,
        "description": f"{kind} of {model}",
        "kind": kind,
        "unit": "share of pairs" if kind == "criterion_validity" else "share of texts",
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "se": 0.05,
        "df": n - 1.0,
        "p": 0.001,
        "q": 0.002,
        "tost_p": 0.5,
        "margin": margin,
        "mde": 0.1,
        "effect_to_detect": 0.75,
        "power": 0.8,
        "n_resumes": n,
        "n_units": n,
        "n_names": 4,
        "test": "t",
        "verdict": verdict,
        "note": "",
        **extra,
    }


def verdicts() -> pd.DataFrame:
    """Which models of test_ll144's frames (jd_audit: m1, m2; seniority: m1, m2) are valid: the
    fit task's m1 valid, m2 no better than chance; the seniority task's m1 better than chance,
    m2 without a validity finding; and rows that are no criterion-validity finding."""
    rows = [
        verdict("m1", "jd_audit", CRITERION, "criterion_validity", 0.95, 0.91, 0.99, "valid", margin=0.9),
        verdict("m2", "jd_audit", CRITERION, "criterion_validity", 0.52, 0.41, 0.63, "no better than chance", margin=0.9),
        verdict("m1", "seniority", ACCURACY, "seniority_accuracy", 0.6, 0.5, 0.7, "better than chance", margin=0.8, n=12),
        # Not the finding: a group's share, a per-JD share, a bias finding.
        verdict("m1", "jd_audit", f"{CRITERION}:jd-a", "criterion_validity", 0.2, 0.1, 0.3, "worse than chance", margin=0.9),
        verdict("m2", "seniority", f"{ACCURACY}:group:x", "seniority_accuracy", 0.9, 0.85, 0.95, "valid", margin=0.8),
        verdict("m2", "seniority", "name:caucasian-aa", "seniority_bias", 0.1, 0.0, 0.2, "within_noise", margin=0.2),
    ]  # fmt: skip
    return conform(pd.DataFrame(rows), Verdicts)


def _studies() -> dict[str, pd.DataFrame]:
    """test_ll144's frames, answered by two models alike."""
    both = {"jd_audit": hand_scores(), "seniority": seniority_frame()}
    return {s: pd.concat([f.assign(model="m1"), f.assign(model="m2")], ignore_index=True) for s, f in both.items()}


@functools.cache
def _rates() -> pd.DataFrame:
    rates, problems = bias_audit_rates(_studies(), groups=GROUPS)
    assert not problems
    return rates


def _published():
    rates = _rates().copy()
    summary = audit_summary(rates, audit_date="2026-11-25", source=SOURCE, validity=verdicts())
    BiasAuditSummary.validate(summary)
    return rates, summary.set_index(["model", "study"], drop=False)


def test_the_figures_are_each_studys_criterion_validity_finding():
    figures = validity_figures(verdicts())
    assert list(figures.columns) == FIGURE_COLUMNS
    got = {(r.model, r.study): (r.share, r.ci_low, r.ci_high, r.chance, r.target, r.verdict, r.n_resumes)
           for r in figures.itertuples()}  # fmt: skip
    assert got == {
        ("m1", "jd_audit"): (0.95, 0.91, 0.99, 0.5, 0.9, "valid", 36),
        ("m2", "jd_audit"): (0.52, 0.41, 0.63, 0.5, 0.9, "no better than chance", 36),
        ("m1", "seniority"): (0.6, 0.5, 0.7, pytest.approx(1 / 3), 0.8, "better than chance", 12),
    }
    assert validity_figures(pd.DataFrame()).empty and validity_figures(verdicts().iloc[3:]).empty


def test_the_published_summary_carries_the_validity_of_every_audit():
    rates, summary = _published()
    valid = summary.loc[("m1", "jd_audit")]
    assert (valid["validity_share"], valid["validity_ci_low"], valid["validity_ci_high"]) == (0.95, 0.91, 0.99)
    assert (valid["validity_chance"], valid["validity_target"], valid["validity_n_resumes"]) == (0.5, 0.9, 36)
    assert valid["validity_verdict"] == "valid" and valid["validity_finding"] == CRITERION
    assert valid["validity_note"].startswith(
        "fit scoring: 0.950 share of better and worse twins scored in the right order (ties half), "
        "95% CI [0.910, 0.990], on 36 résumés; chance 0.500, declared target 0.900: valid; "
    )
    assert valid["validity_note"].endswith(LAW_NOTE) and "impact ratios" in LAW_NOTE and "noise" in LAW_NOTE
    noise = summary.loc[("m2", "jd_audit")]
    assert noise["validity_verdict"] == "no better than chance"
    assert "its bias figures describe noise" in noise["validity_note"]
    seniority = summary.loc[("m1", "seniority")]
    assert seniority["validity_chance"] == pytest.approx(1 / 3) and seniority["validity_target"] == 0.8
    assert "not shown valid" in seniority["validity_note"]
    # A group's share is no figure of the model: m2's seniority validity was not measured.
    unmeasured = summary.loc[("m2", "seniority")]
    assert unmeasured["validity_verdict"] == "not measured" and np.isnan(unmeasured["validity_share"])
    assert unmeasured["validity_note"].startswith(f"no {ACCURACY} finding for this model (seniority_verdicts")
    assert pd.isna(unmeasured["validity_n_resumes"])

    published = summary_json(summary.reset_index(drop=True), rates)
    assert "validity" in SUMMARY_FIELDS.values()
    by = {(a["model"], a["study"]): a for a in published["audits"]}
    assert by[("m1", "jd_audit")]["validity"] == {
        "finding": CRITERION,
        "share": 0.95,
        "ci_low": 0.91,
        "ci_high": 0.99,
        "chance": 0.5,
        "target": 0.9,
        "verdict": "valid",
        "n_resumes": 36,
        "note": valid["validity_note"],
    }
    assert by[("m2", "seniority")]["validity"]["share"] is None
    assert not [k for a in published["audits"] for k in a if k.startswith("validity_")]
    json.dumps(published)
    flat = summary_csv(summary.reset_index(drop=True), rates)
    assert {"validity_share", "validity_verdict", "validity_note"} <= set(flat.columns)
    assert set(flat.loc[(flat["model"] == "m1") & (flat["study"] == "jd_audit"), "validity_verdict"]) == {"valid"}


def test_without_validity_verdicts_every_audit_says_not_measured():
    rates = _rates().copy()
    summary = audit_summary(rates, audit_date="2026-11-25", source=SOURCE)
    assert set(summary["validity_verdict"]) == {"not measured"}
    fit = summary["study"] == "jd_audit"
    assert summary.loc[fit, "validity_note"].str.contains("validity_pairs, validity_scores and validity_verdicts").all()
    assert summary.loc[~fit, "validity_note"].str.contains(f"no {ACCURACY} finding").all()


def test_the_summary_table_refuses_a_share_without_a_verdict_and_a_verdict_without_a_share():
    _, summary = _published()
    summary = summary.reset_index(drop=True)
    for bad in (
        summary.assign(validity_verdict="not measured"),
        summary.assign(validity_share=np.nan, validity_verdict="valid"),
    ):
        with pytest.raises(pandera.errors.SchemaError, match="bias_audit_summary_validity_measured_or_not"):
            BiasAuditSummary.validate(bad)
    with pytest.raises(pandera.errors.SchemaError, match="validity_verdict"):
        BiasAuditSummary.validate(summary.assign(validity_verdict="good enough"))


def _record(table: pd.DataFrame) -> pd.DataFrame:
    rates = _rates().copy()
    return eu_test_record(
        generated_at="2026-11-25 10:00 UTC",
        version="0",
        models=[{"name": "m1", "kind": "python"}, {"name": "m2", "kind": "http"}],
        source=SOURCE,
        verdicts=table,
        rates=rates,
        store={"response store": "responses.sqlite"},
    )


def test_the_eu_record_declares_each_models_accuracy_and_the_models_not_shown_valid():
    record = _record(verdicts())
    items = dict(zip(record["item"], record["value"]))
    results = set(record.loc[record["section"] == "results", "item"])
    assert {"m1 / jd_audit / accuracy", "m2 / jd_audit / accuracy", "m1 / seniority / accuracy"} <= results
    assert items["m1 / jd_audit / accuracy"] == (
        "fit scoring: 0.950 share of better and worse twins scored in the right order (ties half), "
        "95% CI [0.910, 0.990], on 36 résumés; chance 0.500, declared target 0.900: valid "
        "(EU AI Act Art. 15(3): accuracy level and metric declared; Annex IV 2(g), 3)"
    )
    assert items["m1 / seniority / accuracy"].startswith(
        "seniority labelling: 0.600 share of a résumé's texts labelled at their true level, 95% CI [0.500, 0.700], "
        "on 12 résumés; chance 0.333, declared target 0.800: better than chance"
    )
    # m2's seniority verdicts hold no validity:accuracy finding: not measured, an open risk.
    assert items["m2 / seniority / accuracy"].startswith(f"seniority labelling: no {ACCURACY} finding")
    risks = record[record["section"] == "open_risks"].set_index("item")["value"]
    assert "its bias figures describe noise" in risks["not shown valid: m2 / jd_audit"]
    assert "not shown valid" in risks["not shown valid: m1 / seniority"]
    assert "not shown valid: m1 / jd_audit" not in risks.index  # valid
    assert (
        "whether its bias figures describe more than noise is unknown" in risks["accuracy not measured: m2 / seniority"]
    )
    # Every validity row is a result too, as every other finding.
    assert f"m1 / jd_audit / {CRITERION}:jd-a" in results
    written = record_json(record)
    assert any(r["item"] == "m1 / jd_audit / accuracy" for r in written["results"])
    json.dumps(written)


def test_a_share_without_an_interval_is_not_read_as_noise():
    one = verdicts().iloc[[1]].assign(ci_low=np.nan, ci_high=np.nan, n_resumes=1)
    record = _record(conform(one, Verdicts))
    items = dict(zip(record["item"], record["value"]))
    assert "no interval, on 1 résumés" in items["m2 / jd_audit / accuracy"]
    risk = items["not shown valid: m2 / jd_audit"]
    assert "no interval on this design (too few résumés): not shown valid" in risk and "noise" not in risk
