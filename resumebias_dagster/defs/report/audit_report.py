"""The audit report: one self-contained HTML file for readers who never open Dagster."""

from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.common.shared_files import SharedFiles
from resumebias_dagster.core.compliance.summary import lowest_ratios, with_prior
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template
from resumebias_dagster.core.reporting.overview import overview_markdown, tool_overviews
from resumebias_dagster.core.reporting.render import ReportTables, render_report
from resumebias_dagster.core.reporting.wording import load_words
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM
from resumebias_dagster.defs.report._audited import audited_models
from resumebias_dagster.defs.report.history import prior_rates
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.schemas import ReportFilesType
from resumebias_dagster.settings import data_dir

REPORT_FILE = "audit_report.html"


def _plots(*tables: pd.DataFrame, shared: SharedFiles | None) -> dict[str, bytes]:
    """Each plot's PNG: from this machine's disk, else (drawn on another worker) from the shared files."""
    out: dict[str, bytes] = {}
    for table in tables:
        for row in table.itertuples(index=False):
            path = Path(str(row.path))
            if path.is_file():
                out[str(row.plot)] = path.read_bytes()
            elif shared is not None and (png := shared.get_file(path.name)) is not None:
                out[str(row.plot)] = png
    return out


def _summary(tables: ReportTables, folder) -> str:
    """The first screens in Markdown: the asset's `summary` metadata in the UI."""
    words, settings = load_words(folder), load_inference_settings(folder)
    return overview_markdown(tool_overviews(tables.verdicts, words, settings, tables.changes))


class AuditReportConfig(dg.Config):
    show_resume_texts: bool = Field(
        default=False,
        description="show your own résumés (user_resumes) in the report as extracted: their texts and file names "
        "then appear unredacted, with the candidate's name, e-mail and phone, in a file that is often shared; "
        "false (default): name, e-mail and phone replaced",
    )


@dg.asset(dagster_type=ReportFilesType, kinds={"python", "html"}, automation_condition=UPDATE_WITH_UPSTREAM)
def audit_report(
    context: dg.AssetExecutionContext,
    config: AuditReportConfig,
    catalog: CatalogResource,
    shared_files: SharedFilesResource,
    seniority_bias_summary: pd.DataFrame,
    seniority_group_metrics: pd.DataFrame,
    seniority_impact_ratios: pd.DataFrame,
    fit_model_summary: pd.DataFrame,
    fit_axis_summary: pd.DataFrame,
    fit_effects: pd.DataFrame,
    fit_impact_ratios: pd.DataFrame,
    probe_variants: pd.DataFrame,
    judge_verdicts: pd.DataFrame,
    seniority_verdicts: pd.DataFrame,
    fit_verdicts: pd.DataFrame,
    validity_verdicts: pd.DataFrame,
    seniority_plots: pd.DataFrame,
    fit_plots: pd.DataFrame,
    bias_audit_rates: pd.DataFrame,
    bias_audit_summary: pd.DataFrame,
    eu_ai_act_record: pd.DataFrame,
    user_resumes: pd.DataFrame,
    user_resume_probes: pd.DataFrame,
    audit_changes: pd.DataFrame,
) -> pd.DataFrame:
    """One self-contained HTML file under data/reports/: per model, first whether it tells better
    from worse candidates at all (validity), then what was found, ruled out
    and left undecided (with what the study could detect), the metric and impact-ratio tables, the plots, each variant's diff against its
    baseline with its scores (and the judge's verdicts when a judge ran), and what it takes to
    reproduce the run (models, snapshots, prompts). After a model's second audit, its first
    screen says what changed since the last one (audit_changes), worse first. With your own résumés (user_resumes): each
    with its text, redacted unless `show_resume_texts`, and the probe axes that did not apply."""
    folder = catalog.folder()
    shared = shared_files.files()
    tables = ReportTables(
        bias_summary=seniority_bias_summary,
        group_metrics=seniority_group_metrics,
        seniority_impact=seniority_impact_ratios,
        fit_summary=fit_model_summary,
        fit_axis_summary=fit_axis_summary,
        fit_effects=fit_effects,
        fit_impact=fit_impact_ratios,
        probe_variants=probe_variants,
        judge_verdicts=judge_verdicts,
        verdicts=pd.concat(
            [t for t in (validity_verdicts, seniority_verdicts, fit_verdicts) if len(t)] or [seniority_verdicts],
            ignore_index=True,
        ),
        plots=_plots(seniority_plots, fit_plots, shared=shared),
        bias_audit_summary=bias_audit_summary,
        bias_audit_rates=with_prior(bias_audit_rates, prior_rates(bias_audit_summary)),
        ll144_lowest_by_job_description=lowest_ratios(bias_audit_rates),
        eu_record=eu_ai_act_record,
        user_resumes=user_resumes,
        user_resume_probes=user_resume_probes,
        changes=audit_changes,
        show_resume_texts=config.show_resume_texts,
        models=audited_models(folder, seniority_bias_summary, fit_model_summary),
        prompts={"seniority": load_prompt(SENIORITY_PROMPT, folder), "fit": load_fit_template(folder)},
        generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=version("resumebias_dagster"),
    )
    html = render_report(tables, folder)
    path = data_dir() / "reports" / REPORT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)  # a reader never opens half a report
    summary = _summary(tables, folder)
    if shared is not None:
        context.add_output_metadata({"report_shared": dg.MetadataValue.text(shared.put_file(path))})
    context.add_output_metadata(
        {
            "report": dg.MetadataValue.path(str(path)),
            "summary": dg.MetadataValue.md(summary or "(no results yet)"),
        }
    )
    size = path.stat().st_size
    return pd.DataFrame({"plot": [REPORT_FILE], "path": [str(path)], "bytes": [size]}).astype({"bytes": "int64"})
