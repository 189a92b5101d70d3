"""The audit report as one self-contained HTML file: the Jinja2 template of
``catalog/report/audit_report.html.j2`` filled from the study's tables. Plots are embedded,
nothing is fetched when the file is opened, and every text from a model is escaped."""

from __future__ import annotations

import base64
import difflib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from resumebias_dagster.catalog import catalog_path
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.reporting.findings import SECTION_TITLES, headline_findings, not_measured
from resumebias_dagster.core.reporting.overview import HEADINGS, tool_overviews
from resumebias_dagster.core.reporting.user_resumes import Redactor, user_resumes_section
from resumebias_dagster.core.reporting.wording import Words, load_words, number, pvalue
from resumebias_dagster.core.tables import (
    AuditChanges,
    FitAxisSummary,
    FitEffects,
    FitImpactRatios,
    FitModelSummary,
    JudgeVerdicts,
    ProbeVariants,
    SeniorityBiasSummary,
    SeniorityGroupMetrics,
    SeniorityImpactRatios,
    Verdicts,
    empty_table,
)
from resumebias_dagster.core.tables.compliance import ALL_JOB_DESCRIPTIONS

TEMPLATE = "report/audit_report.html.j2"
CONTEXT_WORDS = 6  # words shown on each side of a change in a variant's diff
_WORD = re.compile(r"\S+|\s+")


@dataclass(frozen=True)
class Column:
    name: str
    label: str
    fmt: str | Callable[[Any], str] = "{}"  # format of a present value, or a function writing it

    def text(self, value: Any) -> str:
        return self.fmt(value) if callable(self.fmt) else self.fmt.format(value)


def plain(x: float) -> str:
    """A figure without scientific notation (``inf``: none at this size)."""
    return "none at this size" if math.isinf(x) else number(x, 3)


@dataclass
class ReportTables:
    """The study's tables the report is written from (any may be empty)."""

    # Each table defaults to its typed empty table (a study that did not run).
    bias_summary: pd.DataFrame = field(default_factory=lambda: empty_table(SeniorityBiasSummary))
    group_metrics: pd.DataFrame = field(default_factory=lambda: empty_table(SeniorityGroupMetrics))
    seniority_impact: pd.DataFrame = field(default_factory=lambda: empty_table(SeniorityImpactRatios))
    fit_summary: pd.DataFrame = field(default_factory=lambda: empty_table(FitModelSummary))
    fit_axis_summary: pd.DataFrame = field(default_factory=lambda: empty_table(FitAxisSummary))
    fit_effects: pd.DataFrame = field(default_factory=lambda: empty_table(FitEffects))
    fit_impact: pd.DataFrame = field(default_factory=lambda: empty_table(FitImpactRatios))
    probe_variants: pd.DataFrame = field(default_factory=lambda: empty_table(ProbeVariants))
    judge_verdicts: pd.DataFrame = field(default_factory=lambda: empty_table(JudgeVerdicts))
    # Every finding's verdict, both studies (the Verdicts rows of core/inference/).
    verdicts: pd.DataFrame = field(default_factory=lambda: empty_table(Verdicts))
    # What changed since each model's previous audit snapshot (core/history/changes.py).
    changes: pd.DataFrame = field(default_factory=lambda: empty_table(AuditChanges))
    plots: Mapping[str, bytes] = field(default_factory=dict)
    # Local Law 144's published summary and rates, and the EU AI Act test record (core/compliance/).
    bias_audit_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    bias_audit_rates: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Per job description, each table's lowest impact ratio (core/compliance/summary.lowest_ratios).
    ll144_lowest_by_job_description: pd.DataFrame = field(default_factory=pd.DataFrame)
    eu_record: pd.DataFrame = field(default_factory=pd.DataFrame)
    # The user's own résumés and which probe axes apply to each (core/reporting/user_resumes.py):
    # their texts, names and file names are redacted unless show_resume_texts.
    user_resumes: pd.DataFrame = field(default_factory=pd.DataFrame)
    user_resume_probes: pd.DataFrame = field(default_factory=pd.DataFrame)
    show_resume_texts: bool = False
    models: Sequence[Mapping[str, Any]] = ()
    prompts: Mapping[str, str] = field(default_factory=dict)
    generated_at: str = ""
    version: str = ""


def _present(value: Any) -> bool:
    if value is None or value is pd.NA:
        return False
    return not (isinstance(value, float) and math.isnan(value))


def table_view(df: pd.DataFrame, columns: Sequence[Column]) -> dict[str, Any]:
    """Header and rows of an HTML table; each cell carries the stored value (``raw``) beside
    its text, so a test can check the report against the table it came from."""
    shown = [c for c in columns if c.name in df.columns]
    rows = []
    for record in df[[c.name for c in shown]].itertuples(index=False):
        cells = []
        for column, value in zip(shown, record):
            ok = _present(value)
            cells.append(
                {
                    "column": column.name,
                    "text": column.text(value) if ok else "—",
                    "raw": repr(value.item() if hasattr(value, "item") else value) if ok else "",
                }
            )
        rows.append(cells)
    return {"header": [c.label for c in shown], "rows": rows}


F3, F2, PCT, SIGNED = "{:.3f}", "{:.2f}", "{:.1%}", "{:+.3f}"
BIAS_COLUMNS = [
    Column("model", "model"),
    Column("variant_kind", "experiment"),
    Column("n", "predictions"),
    Column("accuracy", "accuracy", PCT),
    Column("rank_diff", "rank difference", SIGNED),
    Column("inconsistency_rate", "inconsistency", PCT),
    Column("inconsistency_floor", "its floor", PCT),
    Column("racial_bias", "racial", SIGNED),
    Column("racial_bias_floor", "floor", F3),
    Column("gender_bias", "gender", SIGNED),
    Column("gender_bias_floor", "floor", F3),
    Column("extreme_bias", "extreme", SIGNED),
    Column("extreme_bias_floor", "floor", F3),
    Column("name_scope", "name scope"),
]
GROUP_COLUMNS = [
    Column("model", "model"),
    Column("group_kind", "grouping"),
    Column("group", "group"),
    Column("n", "n"),
    Column("accuracy", "accuracy", PCT),
    Column("rank_diff", "rank difference", SIGNED),
    Column("senior_share", "senior", PCT),
    Column("junior_share", "junior", PCT),
]
FIT_COLUMNS = [
    Column("model", "model"),
    Column("n_cells", "cells"),
    Column("n_significant", "significant"),
    Column("noise_floor", "placebo floor", F2),
    Column("probe_mean_abs_delta", "probe mean |Δ|", F2),
    Column("placebo_mean_abs_delta", "placebo mean |Δ|", F2),
    Column("bias_index", "bias index", "{:+.2f}"),
    Column("largest_penalty", "largest penalty", "{:+.2f}"),
    Column("largest_penalty_variant", "variant"),
    Column("prompt_injection_mean_delta", "prompt injection Δ", "{:+.2f}"),
    Column("anonymize_mean_delta", "anonymisation Δ", "{:+.2f}"),
]
AXIS_COLUMNS = [
    Column("model", "model"),
    Column("axis", "axis"),
    Column("level", "level"),
    Column("n_jds", "JDs"),
    Column("mean_delta", "mean Δ", "{:+.2f}"),
    Column("pooled_delta", "pooled Δ", "{:+.2f}"),
    Column("pooled_ci_low", "95% low", "{:+.2f}"),
    Column("pooled_ci_high", "95% high", "{:+.2f}"),
    Column("n_significant", "significant JDs"),
]
VERDICT_COLUMNS = [
    Column("readable", "finding"),
    Column("estimate", "estimate", "{:+.3f}"),
    Column("ci_low", "95% low", "{:+.3f}"),
    Column("ci_high", "95% high", "{:+.3f}"),
    Column("unit", "unit"),
    Column("p", "p", pvalue),
    Column("q", "adjusted p", pvalue),
    Column("tost_p", "equivalence p", pvalue),
    Column("margin", "margin", plain),
    Column("mde", "detectable (80%)", plain),
    Column("n_resumes", "résumés"),
    Column("n_names", "names"),
    Column("test", "test"),
    Column("verdict", "verdict"),
]
IMPACT_COLUMNS = [
    Column("model", "model"),
    Column("selection", "selected ="),
    Column("dimension", "dimension"),
    Column("group", "group"),
    Column("n", "n"),
    Column("selected", "selected"),
    Column("rate", "rate", PCT),
    Column("impact_ratio", "impact ratio", F3),
    Column("ci_low", "95% low", F3),
    Column("ci_high", "95% high", F3),
    Column("below_four_fifths", "below 4/5"),
    Column("ci_below_four_fifths", "beyond noise"),
]


def diff_hunks(baseline: str, variant: str, context: int = CONTEXT_WORDS) -> list[list[dict[str, str]]]:
    """The changed words of ``variant`` against ``baseline``, with ``context`` words around
    each change: a list of hunks, each a list of ``{"kind": same|removed|added, "text"}``.
    Changes closer than twice the context share one hunk."""
    a, b = _WORD.findall(baseline), _WORD.findall(variant)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    keep = 2 * context  # tokens: a word and the space after it
    hunks: list[list[dict[str, str]]] = []
    current: list[dict[str, str]] | None = None
    for i, (op, a0, a1, b0, b1) in enumerate(ops):
        if op == "equal":
            same = a[a0:a1]
            last = i == len(ops) - 1
            if current is None:
                if not last:
                    current = [{"kind": "same", "text": "".join(same[-keep:])}]
                continue
            if last or len(same) > 2 * keep:
                current.append({"kind": "same", "text": "".join(same[:keep])})
                hunks.append(current)
                current = None if last else [{"kind": "same", "text": "".join(same[-keep:])}]
            else:
                current.append({"kind": "same", "text": "".join(same)})
            continue
        if current is None:
            current = []
        if a1 > a0:
            current.append({"kind": "removed", "text": "".join(a[a0:a1])})
        if b1 > b0:
            current.append({"kind": "added", "text": "".join(b[b0:b1])})
    if current is not None and any(part["kind"] != "same" for part in current):
        hunks.append(current)
    return [[part for part in hunk if part["text"]] for hunk in hunks]


def variant_sections(tables: ReportTables, words: Words | None = None) -> list[dict[str, Any]]:
    """Per probe variant: its diff against its baseline, its score change per job description,
    and the judge's verdicts with their quotes checked verbatim (when a judge ran)."""
    pv = tables.probe_variants
    if not len(pv):
        return []
    baseline = pv[pv["variant"] == "baseline"]
    # A variant of a user's résumé shows its text redacted, as the "Your résumés" section does.
    shown = Redactor.of(tables.user_resumes, show_texts=tables.show_resume_texts)
    for rid, text in zip(baseline["resume_id"], baseline["text"]):
        shown.remember(rid, str(text))
    base = {str(rid): shown(rid, text) for rid, text in zip(baseline["resume_id"], baseline["text"])}
    effects = tables.fit_effects
    verdicts = tables.judge_verdicts
    out = []
    for row in pv[pv["variant"] != "baseline"].itertuples(index=False):
        cells = effects[effects["variant"] == row.variant] if len(effects) else effects
        judged = (
            verdicts[(verdicts["variant"] == row.variant) & (verdicts["resume_id"] == row.resume_id)]
            if len(verdicts)
            else verdicts
        )
        out.append(
            {
                "resume_id": row.resume_id,
                "variant": row.variant,
                "readable": _cap(words.level(str(row.axis), str(row.level)) if words is not None else str(row.variant)),
                "arm": row.arm,
                "axis": row.axis,
                "level": row.level,
                "hunks": diff_hunks(base.get(str(row.resume_id), ""), shown(row.resume_id, row.text)),
                "scores": table_view(
                    cells.sort_values(["model", "jd"]) if len(cells) else cells,
                    [
                        Column("model", "model"),
                        Column("jd", "job description"),
                        Column("baseline_mean", "baseline", F2),
                        Column("variant_mean", "variant", F2),
                        Column("delta", "Δ", "{:+.2f}"),
                        Column("q_value", "q", pvalue),
                        Column("significant", "significant"),
                    ],
                ),
                "verdicts": [
                    {
                        "judge": v.judge,
                        "model": v.model,
                        "jd": v.jd,
                        "verdict": v.verdict_typical,
                        "confidence": v.confidence_typical,
                        "rationale": shown(row.resume_id, v.rationale_typical) or None,
                        "signals": shown(row.resume_id, v.bias_signals_typical) or None,
                        "non_verbatim": v.n_non_verbatim_typical,
                    }
                    for v in judged.itertuples(index=False)
                ]
                if len(judged)
                else [],
            }
        )
    return out


LL144_SUMMARY_COLUMNS = [
    Column("model", "model"),
    Column("study", "study"),
    Column("audit_date", "audit date"),
    Column("audit_due_by", "next audit due by"),
    Column("prior_audit_date", "prior audit"),
    Column("tool", "tool (snapshots)"),
    Column("distribution_date", "distribution date"),
    Column("n_individuals", "individuals"),
    Column("n_missing", "no valid answer"),
    Column("n_unknown_sex", "unknown sex"),
    Column("n_unknown_race_ethnicity", "unknown race/ethnicity"),
    Column("median_score", "median score", F2),
    Column("n_at_median", "at the median"),
    Column("excluded_categories", "left out of the ratios (§5-301(d), auditor's choice)"),
    Column("exclusion_justification", "why left out"),
    Column("untested_categories", "not tested, and why"),
]
LL144_RATE_COLUMNS = [
    Column("model", "model"),
    Column("study", "study"),
    Column("measure", "measure"),
    Column("outcome", "outcome"),
    Column("dimension", "dimension"),
    Column("category", "category"),
    Column("n", "n"),
    Column("rate", "rate", PCT),
    Column("impact_ratio", "impact ratio", F3),
    Column("ci_low", "95% CI low", F3),
    Column("ci_high", "95% CI high", F3),
    Column("prior_impact_ratio", "prior audit's impact ratio", F3),
    Column("below_four_fifths", "under 0.8 (EEOC rule of thumb)"),
    Column("ci_below_four_fifths", "under 0.8 beyond noise"),
    Column("excluded_reason", "left out because"),
]


# The lowest ratio under each job description: the rate table's columns, with the job
# description for the study and without the prior audit's and the rule-of-thumb columns.
_LOWEST_LEFT_OUT = {"study", "prior_impact_ratio", "below_four_fifths", "excluded_reason"}
LL144_LOWEST_COLUMNS = [
    LL144_RATE_COLUMNS[0],
    Column("job_description", "job description"),
    *(
        replace(c, label="lowest category") if c.name == "category" else c
        for c in LL144_RATE_COLUMNS[1:]
        if c.name not in _LOWEST_LEFT_OUT
    ),
]


def pooled_rates(rates: pd.DataFrame) -> pd.DataFrame:
    """The pooled tables of Local Law 144's rates (every job description's individuals, each
    once), without the prior audit's column when no model has a prior audit."""
    if "job_description" in rates.columns:
        rates = rates[rates["job_description"] == ALL_JOB_DESCRIPTIONS]
    if "prior_impact_ratio" in rates.columns and rates["prior_impact_ratio"].isna().all():
        rates = rates.drop(columns=["prior_impact_ratio"])
    return rates


def eu_record_sections(record: pd.DataFrame) -> list[dict[str, Any]]:
    """The EU AI Act test record's sections, each with its (item, value) rows."""
    if not len(record):
        return []
    return [
        {"section": section, "rows": list(zip(rows["item"], rows["value"]))}
        for section, rows in record.groupby("section", sort=False)
    ]


# The "Your résumés" section goes before this one (or, should the template lose it, at the end).
_USER_RESUMES_BEFORE = '<section id="variants">'


def _with_user_resumes(page: str, tables: ReportTables) -> str:
    section = user_resumes_section(tables.user_resumes, tables.user_resume_probes, show_texts=tables.show_resume_texts)
    if not section:
        return page
    at = page.find(_USER_RESUMES_BEFORE)
    at = at if at >= 0 else page.rfind("</body>")
    return page[:at] + section + "\n" + page[at:]


def render_report(tables: ReportTables, catalog_dir=None) -> str:
    """The report's HTML. The template may come from a user's catalog folder, so it renders in
    Jinja2's sandbox (no attribute path reaches Python's internals: issue 40 ran a shell command
    through ``cycler.__init__.__globals__``); a template that breaks the sandbox or does not
    render is refused, naming its file."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    template_file = catalog_path(TEMPLATE, catalog_dir)
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(template_file.parent)),
        autoescape=True,  # model answers and résumé text are untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    try:
        page = env.get_template(template_file.name).render(**_template_values(tables, catalog_dir))
    except jinja2.TemplateError as exc:
        kind = "reaches outside the sandbox" if isinstance(exc, jinja2.exceptions.SecurityError) else "does not render"
        raise ReportTemplateError(f"report template {template_file}: it {kind}: {exc}") from None
    return _with_user_resumes(page, tables)


class ReportTemplateError(ValueError):
    """The report template of a catalog folder is refused; the message names the file."""


# The report's parts after the tools' sections: (HTML id, title), as the table of contents lists them.
PARTS = (
    ("methods", "How to read the findings"),
    ("seniority", "Seniority study"),
    ("fit", "Job-description audit"),
    ("ll144", "Local Law 144 bias audit summary"),
    ("eu-record", "EU AI Act test record"),
    ("variants", "Each variant against its baseline"),
    ("reproduce", "How to reproduce"),
)


# A table of more rows opens on a click (its summary says how many): the report stays readable.
LONG_TABLE = 25


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, what: str) -> str:
    if what.endswith(" cop"):  # "edited copy", "edited copies"
        return f"{n:,} {what}{'y' if n == 1 else 'ies'}"
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def asked_paragraph(tables: ReportTables, words: Words) -> str:
    """What the tools were asked, in one paragraph: the résumés (how many, from where), the job
    descriptions, the runs and the models."""
    parts = []
    users = tables.user_resumes
    if len(users):
        kinds = users["file_type"].astype(str).str.upper().value_counts() if "file_type" in users.columns else None
        how = "" if kinds is None else " (" + ", ".join(f"{n} {k}" for k, n in kinds.items()) + ")"
        parts.append(f"{_count(len(users), 'résumé')} of your own, read from files{how}")
    generated = int(tables.bias_summary["n_originals"].max()) if len(tables.bias_summary) else 0
    if generated:
        parts.append(f"{_count(generated, 'generated résumé')} with known seniority for the seniority labels")
    pv = tables.probe_variants
    if len(pv):
        n = pv["resume_id"].nunique()
        parts.append(f"{_count(len(pv) - n, 'edited cop')} of {_count(n, 'résumé')}, each changing one signal")
    jds = sorted(set(tables.fit_effects["jd"].astype(str))) if len(tables.fit_effects) else []
    if jds:
        parts.append(f"{_count(len(jds), 'job description')} ({', '.join(words.jd(j) for j in jds)})")
    runs = sorted({int(m["runs_per_cell"]) for m in tables.models if m.get("runs_per_cell")})
    if runs:
        parts.append(f"{' or '.join(map(str, runs))} run{'s' if runs[-1] > 1 else ''} of every prompt")
    tools = [f"{m['name']} ({m['kind']})" for m in tables.models]
    asked = "; ".join(parts) if parts else "nothing yet"
    return f"{_count(len(tools), 'tool')} ({', '.join(tools) or 'none'}) were given {asked}."


def design_line(tables: ReportTables) -> str:
    studies = [
        s for s, rows in (("seniority labels", tables.bias_summary), ("fit scores", tables.fit_summary)) if len(rows)
    ]
    n = int(tables.verdicts["n_resumes"].max()) if len(tables.verdicts) else 0
    return f"{' and '.join(studies) or 'no study run yet'}; up to {_count(n, 'résumé')} behind a finding"


def _readable(verdicts: pd.DataFrame, words: Words) -> pd.DataFrame:
    """The verdicts with each finding's readable name (column ``readable``)."""
    return verdicts.assign(readable=[words.finding(r) for r in verdicts.itertuples(index=False)])


def _tool_tables(tables: ReportTables, words: Words) -> dict[str, dict[str, Any]]:
    if not len(tables.verdicts):
        return {}
    shown = _readable(tables.verdicts, words)
    return {str(m): table_view(rows, VERDICT_COLUMNS) for m, rows in shown.groupby("model", sort=True)}


def _template_values(tables: ReportTables, catalog_dir=None) -> dict:
    words = load_words(catalog_dir)
    settings = load_inference_settings(catalog_dir)
    findings = headline_findings(tables.verdicts, words)
    group_rows = (
        tables.group_metrics[tables.group_metrics["group_kind"] != "all"]
        if len(tables.group_metrics)
        else tables.group_metrics
    )
    return dict(
        overviews=tool_overviews(tables.verdicts, words, settings, tables.changes),
        headings=HEADINGS,
        parts=PARTS,
        asked=asked_paragraph(tables, words),
        identity={"design": design_line(tables)},
        tool_tables=_tool_tables(tables, words),
        # Every model's findings in one table, for a catalog's own template (the packaged one shows them per tool).
        verdicts=table_view(_readable(tables.verdicts, words), VERDICT_COLUMNS),
        findings=findings,
        section_titles=SECTION_TITLES,
        not_measured=not_measured(tables.bias_summary, tables.fit_summary, tables.judge_verdicts),
        bias=table_view(tables.bias_summary, BIAS_COLUMNS),
        groups=table_view(group_rows, GROUP_COLUMNS),
        seniority_impact=table_view(tables.seniority_impact, IMPACT_COLUMNS),
        fit=table_view(tables.fit_summary, FIT_COLUMNS),
        axes=table_view(tables.fit_axis_summary, AXIS_COLUMNS),
        fit_impact=table_view(tables.fit_impact, IMPACT_COLUMNS),
        plots={name: base64.b64encode(png).decode() for name, png in tables.plots.items()},
        variants=variant_sections(tables, words),
        long_table=LONG_TABLE,
        ll144_summary=table_view(tables.bias_audit_summary, LL144_SUMMARY_COLUMNS),
        ll144_rates=table_view(pooled_rates(tables.bias_audit_rates), LL144_RATE_COLUMNS),
        ll144_by_job_description=table_view(tables.ll144_lowest_by_job_description, LL144_LOWEST_COLUMNS),
        eu_record=eu_record_sections(tables.eu_record),
        models=list(tables.models),
        prompts=dict(tables.prompts),
        generated_at=tables.generated_at,
        version=tables.version,
    )
