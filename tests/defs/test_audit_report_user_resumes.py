"""The audit_report asset with the user's own résumés: it reads user_resumes and
user_resume_probes (both empty until someone reads résumé files), shows them redacted in the
report file it writes unless its config's show_resume_texts opts in, and with none shows no
section."""

import re

import dagster as dg
import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.probes.applicability import probe_applicability
from resumebias_dagster.core.reporting.user_resumes import REDACTED_NOTE, SHOWN_NOTE
from resumebias_dagster.core.resumes.user_files import read_resume_folder
from resumebias_dagster.core.tables import (
    AuditChanges,
    BiasAuditRates,
    BiasAuditSummary,
    EuTestRecord,
    FitAxisSummary,
    FitEffects,
    FitImpactRatios,
    FitModelSummary,
    JudgeVerdicts,
    ProbeApplicability,
    ProbeVariants,
    SeniorityBiasSummary,
    SeniorityGroupMetrics,
    SeniorityImpactRatios,
    UserResumes,
    Verdicts,
    conform,
    empty_table,
)
from resumebias_dagster.defs.report.audit_report import REPORT_FILE, AuditReportConfig, audit_report
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import EMPTY_UNTIL_MATERIALISED

NAME, EMAIL, PHONE = "Jane Doe", "jane.doe@example.com", "+1 (555) 123-4567"


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("RESUMEBIAS_TABLES_URL", raising=False)
    return tmp_path / "data"


def _inputs(rows, probes) -> dict:
    plots = pd.DataFrame({"plot": [], "path": [], "bytes": []})  # no plot drawn
    return {
        "seniority_bias_summary": empty_table(SeniorityBiasSummary),
        "seniority_group_metrics": empty_table(SeniorityGroupMetrics),
        "seniority_impact_ratios": empty_table(SeniorityImpactRatios),
        "fit_model_summary": empty_table(FitModelSummary),
        "fit_axis_summary": empty_table(FitAxisSummary),
        "fit_effects": empty_table(FitEffects),
        "fit_impact_ratios": empty_table(FitImpactRatios),
        "probe_variants": empty_table(ProbeVariants),
        "judge_verdicts": empty_table(JudgeVerdicts),
        "seniority_verdicts": empty_table(Verdicts),
        "fit_verdicts": empty_table(Verdicts),
        "validity_verdicts": empty_table(Verdicts),
        "seniority_plots": plots,
        "fit_plots": plots,
        "bias_audit_rates": empty_table(BiasAuditRates),
        "bias_audit_summary": empty_table(BiasAuditSummary),
        "eu_ai_act_record": empty_table(EuTestRecord),
        "user_resumes": rows,
        "user_resume_probes": probes,
        "audit_changes": empty_table(AuditChanges),
    }


def _report(data, rows, probes, **config) -> str:
    context = dg.build_asset_context()
    out = audit_report(
        context,
        config=AuditReportConfig(**config),
        catalog=CatalogResource(),
        shared_files=SharedFilesResource(),
        **_inputs(rows, probes),
    )
    assert out["path"].iloc[0] == str(data / "reports" / REPORT_FILE)
    return (data / "reports" / REPORT_FILE).read_text(encoding="utf-8")


@pytest.fixture
def resumes(tmp_path):
    folder = tmp_path / "cvs"
    folder.mkdir()
    (folder / "Jane_Doe_CV.txt").write_text(
        f"{NAME}\n{EMAIL} | {PHONE}\n\nI have built payment systems for ten years.\n", encoding="utf-8"
    )
    rows, problems = read_resume_folder(folder)
    assert not problems
    rows = conform(rows, UserResumes)
    return rows, conform(probe_applicability(rows), ProbeApplicability)


def test_the_report_shows_the_users_resumes_redacted_unless_opted_in(data, resumes):
    rows, probes = resumes
    html = _report(data, rows, probes)
    assert '<section id="your-resumes">' in html and REDACTED_NOTE in html
    for secret in ("Jane", "Doe", EMAIL, PHONE):
        # As a word: the report's own words ("Does it measure qualification?") hold "Doe".
        assert not re.search(rf"(?<!\w){re.escape(secret)}(?!\w)", html), secret
    assert rows["resume_id"].iloc[0] in html and "[name]_CV.txt" in html
    assert "no school found in an Education section" in html  # why its probe axes do not apply

    shown = _report(data, rows, probes, show_resume_texts=True)
    assert SHOWN_NOTE in shown and NAME in shown and EMAIL in shown and PHONE in shown
    assert "Jane_Doe_CV.txt" in shown


def test_without_user_resumes_the_report_has_no_such_section(data):
    html = _report(data, empty_table(UserResumes), empty_table(ProbeApplicability))
    assert "your-resumes" not in html and "Your résumés" not in html


def test_the_asset_reads_both_tables_and_its_setting_warns_that_texts_are_shared():
    keys = {key.to_user_string() for key in audit_report.dependency_keys}
    assert {"user_resumes", "user_resume_probes"} <= keys
    field = AuditReportConfig.model_fields["show_resume_texts"]
    assert field.default is False and "unredacted" in field.description and "shared" in field.description
    # Never materialised, either reads as its empty table (no résumé), so the report still builds.
    for asset, table in ((user_resumes, "UserResumes"), (user_resume_probes, "ProbeApplicability")):
        assert asset.specs_by_key[asset.key].metadata.get(EMPTY_UNTIL_MATERIALISED) == table


def test_the_ui_summary_says_the_first_screen_in_readable_words(data):
    """The asset's `summary` metadata (the Dagster UI) is the report's first screen: readable
    names (catalog/report/readable_names.yaml), no identifier (issue 43)."""
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
    from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

    scores = simulate_fit_scores(
        ["acme"],
        ["j0"],
        ["baseline", "careerGap_caregiving"],
        1,
        resumes=40,
        sd=0.0,
        effects={"careerGap_caregiving": -1.5},
    )
    scores["axis"] = scores["variant"].str.split("_").str[0]
    scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
    scores["arm"] = scores["variant"].map({"baseline": "baseline"}).fillna("probe")
    verdicts = fit_verdicts(scores, load_inference_settings())
    context = dg.build_asset_context()
    audit_report(
        context,
        config=AuditReportConfig(),
        catalog=CatalogResource(),
        shared_files=SharedFilesResource(),
        **{**_inputs(empty_table(UserResumes), empty_table(ProbeApplicability)), "fit_verdicts": verdicts},
    )
    summary = context.get_output_metadata("result")["summary"].value
    assert "**acme**" in summary
    assert "A two-year caregiving gap in the career lowers the score by 1.5 points on the 1–10 fit scale" in summary
    assert "careerGap" not in summary and "fit_level" not in summary
