"""Audits over time (issue 44): each completed audit kept as a snapshot per model, and what
changed since the model's previous snapshot."""

from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.common.snapshots import separate_snapshots
from resumebias_dagster.core.compliance.summary import AuditSnapshot
from resumebias_dagster.core.history.changes import snapshot_changes
from resumebias_dagster.core.history.store import AuditIdentity, SharedSnapshotStore, SnapshotStore, latest_pair
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.impact import name_groups, score_cut_of
from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template
from resumebias_dagster.core.jd_audit.verdicts import fit_units
from resumebias_dagster.core.models.model_config import load_models
from resumebias_dagster.core.seniority.verdicts import seniority_units
from resumebias_dagster.core.tables import AuditChanges, BiasAuditRates, Verdicts, conform, empty_table
from resumebias_dagster.defs._metadata import UPDATE_WITH_UPSTREAM, table_metadata
from resumebias_dagster.defs.report._audited import audited_models
from resumebias_dagster.defs.seniority_study.metrics import analysed_predictions
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.storage import EMPTY_UNTIL_MATERIALISED
from resumebias_dagster.schemas import AuditChangesType, AuditSnapshotsType
from resumebias_dagster.settings import data_dir, tables_url

HISTORY_FILE = "audit_history.duckdb"


def history_store() -> SnapshotStore | SharedSnapshotStore:
    """The audit snapshots: in the shared tables when ``$RESUMEBIAS_TABLES_URL`` is set (every
    machine of a deployment sees the same history), else this data directory's
    ``audit_history.duckdb``."""
    url = tables_url()
    return SharedSnapshotStore(url) if url else SnapshotStore(data_dir() / HISTORY_FILE)


def replaced_models(catalog_dir) -> dict[str, str]:
    """Each model of the models file that replaces another (``succeeds``), and that model: its
    first audit is compared with, and its Local Law 144 summary set beside, that model's latest."""
    return {s.name: s.succeeds for s in load_models(catalog_dir=catalog_dir, include_disabled=True) if s.succeeds}


@dataclass(frozen=True)
class LatestAudits:
    """Per model of an audit_snapshots listing, its latest snapshot and the one before it, with
    what they kept: the latest ones' verdicts and Local Law 144 rates, and the prior ones' rates
    (every model's together; a snapshot kept without rates adds none)."""

    audits: dict[str, AuditSnapshot]
    verdicts: pd.DataFrame
    rates: pd.DataFrame
    prior_rates: pd.DataFrame


def latest_audits(audit_snapshots: pd.DataFrame, replaces: dict[str, str] | None = None) -> LatestAudits:
    """Per model of ``audit_snapshots``: its latest snapshot and the prior audit, the one before
    it or, for a model's first, the latest of the model it ``replaces`` (its rates then read as
    this model's)."""
    store = history_store()
    created = dict(zip(audit_snapshots["snapshot_id"].astype(str), audit_snapshots["created_at"].astype(str)))
    audits: dict[str, AuditSnapshot] = {}
    verdicts, latest, prior = [], [], []
    ordered = audit_snapshots.sort_values(["created_at", "snapshot_id"], kind="stable")
    for model in sorted(set(audit_snapshots["model"].astype(str))):
        now = str(ordered.loc[ordered["model"].astype(str) == model, "snapshot_id"].iloc[-1])
        pair = latest_pair(ordered, model, (replaces or {}).get(model, ""))
        before = pair[0] if pair is not None else ""
        audits[model] = AuditSnapshot(
            snapshot_id=now,
            audit_date=created[now][:10],
            prior_snapshot_id=before,
            prior_audit_date=created.get(before, "")[:10],
        )
        verdicts.append(store.verdicts(now))
        latest.append(store.rates(now))
        if before:
            prior.append(store.rates(before).assign(model=model))
    return LatestAudits(audits, _together(verdicts, Verdicts), _together(latest), _together(prior))


def prior_rates(bias_audit_summary: pd.DataFrame) -> pd.DataFrame:
    """The Local Law 144 rates of the prior audits a published summary names (prior_snapshot_id),
    each read as the rates of the model whose summary names it."""
    store = history_store()
    pairs = bias_audit_summary.get("prior_snapshot_id", pd.Series(dtype=str))
    named = sorted({(str(m), str(s)) for m, s in zip(bias_audit_summary.get("model", pairs), pairs) if s})
    return _together([store.rates(s).assign(model=m) for m, s in named])


def _together(frames: list[pd.DataFrame], table: type = BiasAuditRates) -> pd.DataFrame:
    kept = [f for f in frames if len(f)]
    return pd.concat(kept, ignore_index=True) if kept else empty_table(table)


def _design(verdicts: pd.DataFrame, model: str, runs: dict[str, int]) -> dict:
    mine = verdicts[verdicts["model"].astype(str) == model]
    return {
        "studies": sorted(set(mine["study"].astype(str))),
        "resumes": int(mine["n_resumes"].max()) if len(mine) else 0,
        "runs_per_cell": runs.get(model, 0),
        "findings": len(mine),
    }


@dg.asset(
    dagster_type=AuditSnapshotsType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
    metadata={EMPTY_UNTIL_MATERIALISED: "AuditSnapshots"},
)
def audit_snapshots(
    context: dg.AssetExecutionContext,
    catalog: CatalogResource,
    seniority_verdicts: pd.DataFrame,
    fit_verdicts: pd.DataFrame,
    validity_verdicts: pd.DataFrame,
    seniority_bias_summary: pd.DataFrame,
    fit_model_summary: pd.DataFrame,
    bias_audit_rates: pd.DataFrame,
    fit_scores: pd.DataFrame,
    seniority_predictions: pd.DataFrame,
    imported_predictions: pd.DataFrame,
) -> pd.DataFrame:
    """Every audit snapshot (``audit_history.duckdb`` of the data directory, or the shared
    tables' ``history/`` at scale): materialising it
    keeps each model's current verdicts (both studies and validity), its Local Law 144 rates and
    its findings' units (each résumé's level changes, group contrasts, style shifts, name
    contrasts and shares of each impact ratio, which a later audit of the same résumés is paired
    with) as a new, immutable snapshot with the tool's version, the design, the prompts' hash and the
    code version, unless they equal the model's latest snapshot. A re-run adds a snapshot; none
    is ever overwritten. The published Local Law 144 summary is produced from these snapshots."""
    folder = catalog.folder()
    verdicts = pd.concat(
        [t for t in (validity_verdicts, seniority_verdicts, fit_verdicts) if len(t)] or [seniority_verdicts],
        ignore_index=True,
    )
    models = audited_models(folder, seniority_bias_summary, fit_model_summary)
    versions = {m["name"]: m["resolved"] or m["source"] for m in models}
    runs = {m["name"]: int(m["runs_per_cell"]) for m in models}
    prompts = {"seniority": load_prompt(SENIORITY_PROMPT, folder), "fit": load_fit_template(folder)}
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    scores = separate_snapshots(fit_scores, partition=("model", "jd")) if len(fit_scores) else None
    kinds = [seniority_units(analysed_predictions(seniority_predictions, imported_predictions))]
    if scores is not None:
        # The impact ratios' units at the score cut the fit verdicts were computed with.
        kinds.append(fit_units(scores, name_groups(folder), score_cut_of(fit_verdicts)))
    units = pd.concat([u for u in kinds if len(u)], ignore_index=True) if any(len(u) for u in kinds) else None
    store = history_store()
    added: list[str] = []
    kept: list[str] = []
    for model in sorted(set(verdicts["model"].astype(str))):
        identity = AuditIdentity(
            created, version("resumebias_dagster"), versions, _design(verdicts, model, runs), prompts
        )
        snapshot_id, new = store.add(model, verdicts, identity, rates=bias_audit_rates, units=units)
        (added if new else kept).append(snapshot_id)
    listing = store.snapshots()
    context.add_output_metadata(
        {
            "added": dg.MetadataValue.md("\n".join(f"- {s}" for s in added) or "(none: every model as its latest)"),
            "unchanged": len(kept),
            "history": dg.MetadataValue.path(store.where),
            **table_metadata(listing),
        }
    )
    return listing


@dg.asset(
    dagster_type=AuditChangesType,
    kinds={"python", "duckdb"},
    automation_condition=UPDATE_WITH_UPSTREAM,
    # The report reads it; before a second audit there is nothing to compare.
    metadata={EMPTY_UNTIL_MATERIALISED: "AuditChanges"},
)
def audit_changes(
    context: dg.AssetExecutionContext, catalog: CatalogResource, audit_snapshots: pd.DataFrame
) -> pd.DataFrame:
    """Per model with two snapshots or more: every finding of its latest audit against the one
    before (core/history/changes.py): the difference with its 95% interval and verdict, beyond
    noise (changed), equivalent (unchanged within the kind's margin) or not decided; résumé by
    résumé (paired) where both snapshots kept units of the same résumés."""
    folder = catalog.folder()
    settings = load_inference_settings(folder)
    replaces = replaced_models(folder)
    store = history_store()
    frames = []
    for model in sorted(set(audit_snapshots["model"].astype(str))):
        pair = latest_pair(audit_snapshots, model, replaces.get(model, ""))
        if pair is not None:
            frames.append(snapshot_changes(store, *pair, settings))
    out = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else None
    table = conform(out, AuditChanges) if out is not None else empty_table(AuditChanges)
    changed = table[table["verdict"] == "beyond_noise"]
    context.add_output_metadata(
        {
            "changed_beyond_noise": len(changed),
            "unchanged": int((table["verdict"] == "equivalent").sum()),
            **table_metadata(table),
        }
    )
    return table
