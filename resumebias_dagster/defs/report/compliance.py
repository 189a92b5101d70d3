"""What a regulator asks an audit to publish: Local Law 144's rate tables and published summary,
and an EU AI Act test record, as tables and as files under data/reports/."""

import json
from datetime import datetime, timezone
from importlib.metadata import version

import dagster as dg
import pandas as pd
from pydantic import Field

from resumebias_dagster.core.common.csv_files import csv_text
from resumebias_dagster.core.common.snapshots import separate_snapshots
from resumebias_dagster.core.compliance.eu_record import eu_test_record, record_json
from resumebias_dagster.core.compliance.ll144 import MAX_MIN_SHARE, check_exclusion
from resumebias_dagster.core.compliance.summary import (
    DataSource,
    audit_summary,
    snapshot_rates,
    summary_csv,
    summary_json,
    with_prior,
)
from resumebias_dagster.core.compliance.summary import (
    bias_audit_rates as compute_rates,
)
from resumebias_dagster.core.jd_audit.impact import name_groups
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, table_metadata
from resumebias_dagster.defs.report._audited import audited_models
from resumebias_dagster.defs.report.history import latest_audits, replaced_models
from resumebias_dagster.defs.seniority_study.metrics import analysed_predictions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.schemas import BiasAuditRatesType, BiasAuditSummaryType, EuTestRecordType
from resumebias_dagster.settings import data_dir

SUMMARY_FILE = "bias_audit_summary"
RECORD_FILE = "eu_ai_act_test_record.json"
NAME_LISTS = (
    "name_pools.yaml (seniority study: Bertrand & Mullainathan 2004, Table A1, and the study's surnames)",
    "probe_axes.yaml firstName levels (job-description audit: Bertrand & Mullainathan 2004; Fryer & Levitt 2004; "
    "Tzioumis 2018, Scientific Data 5:180025, CC0)",
)


class BiasAuditRatesConfig(dg.Config):
    min_share: float = Field(
        default=0.0,
        description="the auditor's choice under 6 RCNY §5-301(d), which must be justified (exclusion_justification): "
        f"a category under this share of the individuals (at most {MAX_MIN_SHARE:g}, i.e. 2%) is left out of the "
        "impact ratios, with the reason; its counts and rate are still reported, and the published summary gives "
        "them with the justification. 0 (the default): no category is left out",
    )
    exclusion_justification: str = Field(
        default="",
        description="why categories under min_share are left out of the impact ratios (6 RCNY §5-301(d)), published "
        "in the summary; required when min_share > 0, refused when it is 0",
    )


@dg.asset(dagster_type=BiasAuditRatesType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def bias_audit_rates(
    context: dg.AssetExecutionContext,
    config: BiasAuditRatesConfig,
    catalog: CatalogResource,
    seniority_predictions: pd.DataFrame,
    imported_predictions: pd.DataFrame,
    fit_scores: pd.DataFrame,
) -> pd.DataFrame:
    """Local Law 144's tables for every model of both studies: scoring rates (share above the
    sample's median score) and selection rates per outcome, with impact ratios and their 95%
    intervals, per EEO-1 sex, race/ethnicity and intersection, with the individuals (one résumé
    with one name, counted once) and unknowns. Every non-empty category is in the ratios unless
    the auditor sets min_share with a justification (§5-301(d))."""
    check_exclusion(config.min_share, config.exclusion_justification)  # refused before any table is computed
    studies = {
        "seniority": analysed_predictions(seniority_predictions, imported_predictions),
        "jd_audit": separate_snapshots(fit_scores, partition=("model", "jd")),
    }
    df, problems = compute_rates(
        studies,
        groups=name_groups(catalog.folder()),
        min_share=config.min_share,
        exclusion_justification=config.exclusion_justification,
    )
    for problem in problems:
        context.log.warning(f"bias_audit_rates: left out: {problem}")
    context.add_output_metadata(
        table_metadata(df, preview_rows=30, left_out=dg.MetadataValue.md("\n".join(f"- {p}" for p in problems)))
    )
    return df


class BiasAuditSummaryConfig(dg.Config):
    tool_name: str = Field(
        default="", description="the automated employment decision tool's name as published (empty: each model's name)"
    )
    distribution_date: str = Field(
        default="",
        pattern=r"^(\d{4}-\d{2}-\d{2})?$",
        description="the date the tool was distributed (YYYY-MM-DD), which a published summary states (§5-303); "
        "empty: not stated",
    )


def data_source(context: dg.AssetExecutionContext, base_resumes: pd.DataFrame) -> DataSource:
    """How the test résumés were made: the generator and seed of base_resumes' latest run."""
    config: dict = {}
    event = context.instance.get_latest_materialization_event(dg.AssetKey("base_resumes"))
    if event is not None and (run := context.instance.get_run_by_id(event.run_id)) is not None:
        config = ((run.run_config or {}).get("ops", {}).get("base_resumes") or {}).get("config") or {}
    writer = config.get("generator_model") or ""
    return DataSource(
        generator=f"provider model {writer}" if writer else "offline template generator (core/seniority/generation.py)",
        generator_seed=int(config.get("seed", 0)) if event is not None else None,
        n_base_resumes=len(base_resumes),
        name_lists=NAME_LISTS,
    )


def _verdicts(*tables: pd.DataFrame) -> pd.DataFrame:
    """Verdict tables as one (the non-empty ones; else the first, empty)."""
    return pd.concat([t for t in tables if len(t)] or [tables[0]], ignore_index=True)


def _write(context: dg.AssetExecutionContext, name: str, text: str) -> str:
    path = data_dir() / "reports" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # a reader never opens half a file
    context.add_output_metadata({name: dg.MetadataValue.path(str(path))})
    return str(path)


@dg.asset(dagster_type=BiasAuditSummaryType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def bias_audit_summary(
    context: dg.AssetExecutionContext,
    config: BiasAuditSummaryConfig,
    bias_audit_rates: pd.DataFrame,
    base_resumes: pd.DataFrame,
    seniority_predictions: pd.DataFrame,
    fit_scores: pd.DataFrame,
    seniority_verdicts: pd.DataFrame,
    validity_verdicts: pd.DataFrame,
    audit_snapshots: pd.DataFrame,
    catalog: CatalogResource,
) -> pd.DataFrame:
    """The published summary of a Local Law 144 bias audit, one row per model and study,
    produced from each model's latest audit snapshot (audit_snapshots): the audit's date (the
    snapshot's) and the date the next is due, data source and its explanation, individuals and
    unknowns, the tool and its snapshots, its distribution date when given, and beyond the law
    its validity (the snapshot's criterion-validity finding). Written with every rate and
    impact ratio, pooled and per job description, each beside the prior audit's (for a model's
    first audit, the latest of the model it replaces: ``succeeds``), to
    data/reports/bias_audit_summary.json and .csv. A model without a snapshot is summarised
    from bias_audit_rates, dated today."""
    kept = latest_audits(audit_snapshots, replaced_models(catalog.folder()))
    rates, stale = snapshot_rates(bias_audit_rates, kept.rates)
    for model in stale:
        context.log.warning(
            f"bias_audit_summary: model {model!r}: bias_audit_rates differ from its latest audit snapshot "
            f"{kept.audits[model].snapshot_id}; the summary gives the snapshot's (materialise audit_snapshots to keep "
            "the new audit)"
        )
    current = _verdicts(seniority_verdicts, validity_verdicts)
    validity = _verdicts(current[~current["model"].astype(str).isin(list(kept.audits))], kept.verdicts)
    df = audit_summary(
        rates,
        audit_date=datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        source=data_source(context, base_resumes),
        rows={"seniority": seniority_predictions, "jd_audit": fit_scores},
        tool_name=config.tool_name,
        distribution_date=config.distribution_date,
        validity=validity,
        snapshots=kept.audits,
    )
    rates = with_prior(rates, kept.prior_rates)
    _write(context, f"{SUMMARY_FILE}.json", json.dumps(summary_json(df, rates), indent=2, ensure_ascii=False))
    _write(context, f"{SUMMARY_FILE}.csv", csv_text(summary_csv(df, rates)))
    context.add_output_metadata(
        table_metadata(
            df.drop(
                columns=["data_explanation", "four_fifths_note", "not_stated", "selection_counts_note", "validity_note"]
            )
        )
    )
    return df


@dg.asset(dagster_type=EuTestRecordType, kinds={"python", "duckdb"}, automation_condition=UPDATE_WITH_UPSTREAM)
def eu_ai_act_record(
    context: dg.AssetExecutionContext,
    catalog: CatalogResource,
    providers: ProvidersResource,
    bias_audit_rates: pd.DataFrame,
    seniority_verdicts: pd.DataFrame,
    fit_verdicts: pd.DataFrame,
    validity_verdicts: pd.DataFrame,
    base_resumes: pd.DataFrame,
    seniority_bias_summary: pd.DataFrame,
    fit_model_summary: pd.DataFrame,
) -> pd.DataFrame:
    """A test record in the EU AI Act's spirit (Art. 10(2)(f-g), Art. 11, Annex IV): what was
    tested and for what purpose, the data and how they were built, every result with its
    interval (validity_verdicts' too), each model's accuracy per task (Art. 15(3)), the open
    risks, and the logs kept; also data/reports/eu_ai_act_test_record.json."""
    store = providers.store()
    verdicts = _verdicts(seniority_verdicts, fit_verdicts, validity_verdicts)
    df = eu_test_record(
        generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        version=version("resumebias_dagster"),
        models=audited_models(catalog.folder(), seniority_bias_summary, fit_model_summary),
        source=data_source(context, base_resumes),
        verdicts=verdicts.reset_index(drop=True),
        rates=bias_audit_rates,
        store={
            "response store": store.location,
            "stored answers (every provider call, raw, with its request key and snapshot)": store.count(),
            "of those final": store.count(done=True),
            "asset tables": "the DuckDB file of the data directory (schema audit), one table per asset",
        },
    )
    _write(context, RECORD_FILE, json.dumps(record_json(df), indent=2, ensure_ascii=False))
    context.add_output_metadata(table_metadata(df, preview_rows=40))
    return df
