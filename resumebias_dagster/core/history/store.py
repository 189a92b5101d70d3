"""Audit snapshots (issue 44): each completed audit's verdicts of one model (and its Local Law 144
rates, from which the published summary is produced), kept as they were
in a DuckDB file of their own (``audit_history.duckdb`` under the data directory), never
updated or deleted, so a re-run adds a snapshot and cannot overwrite one.

A snapshot is named ``<model>@<UTC time>-<8 hex of its content>``; it holds the model's verdict
rows, its rates and what identifies the audit (the tool's version, the design, a hash of the prompts, the
code version). Adding verdicts identical to the model's latest snapshot adds nothing and returns
that snapshot (a re-materialisation that changed nothing is not a new audit)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from resumebias_dagster.core.common.duckdb_columns import add_missing_columns
from resumebias_dagster.core.tables import AuditSnapshots, BiasAuditRates, Verdicts, columns, conform, empty_table
from resumebias_dagster.core.tables.compliance import RATE_KEYS

SCHEMA = "history"
VERDICT_COLUMNS = columns(Verdicts)


RATE_COLUMNS = columns(BiasAuditRates)


def content_sha(verdicts: pd.DataFrame, rates: pd.DataFrame | None = None) -> str:
    """SHA-256 of a model's verdict rows and (when it has some) its Local Law 144 rates,
    independent of their order (figures to 12 digits)."""
    rows = verdicts[VERDICT_COLUMNS].sort_values(["study", "finding"], kind="stable")
    text = rows.to_csv(index=False, float_format="%.12g")
    if rates is not None and len(rates):
        text += (
            rates[RATE_COLUMNS].sort_values(list(RATE_KEYS), kind="stable").to_csv(index=False, float_format="%.12g")
        )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class AuditIdentity:
    """What identifies an audit beside its verdicts."""

    created_at: str  # ISO 8601, UTC
    code_version: str
    tool_versions: Mapping[str, str]  # model -> its resolved snapshot(s) or version ("" if none)
    design: Mapping[str, object]
    prompts: Mapping[str, str]

    def prompts_sha(self) -> str:
        return hashlib.sha256(json.dumps(dict(self.prompts), sort_keys=True).encode()).hexdigest()


class SnapshotStore:
    """The snapshots of one DuckDB file (created on first write)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def _connect(self, read_only: bool = False):
        import duckdb

        if read_only and not self.path.exists():
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(self.path), read_only=read_only)
        if not read_only:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        return con

    def snapshots(self, model: str | None = None) -> pd.DataFrame:
        """Every snapshot (of ``model``), oldest first."""
        con = self._connect(read_only=True)
        if con is None:
            return empty_table(AuditSnapshots)
        with con:
            if not _has(con, "snapshots"):
                return empty_table(AuditSnapshots)
            where, args = ("WHERE model = ?", [model]) if model is not None else ("", [])
            df = con.execute(f"SELECT * FROM {SCHEMA}.snapshots {where} ORDER BY created_at, snapshot_id", args).df()
        return conform(df, AuditSnapshots)

    def _known(self, snapshot_id: str):
        """A read-only connection, once ``snapshot_id`` is known; else a KeyError naming it and the file."""
        con = self._connect(read_only=True)
        if con is None or snapshot_id not in set(self.snapshots()["snapshot_id"]):
            if con is not None:
                con.close()
            raise KeyError(f"{self.path}: no audit snapshot {snapshot_id!r} (resumebias audits lists them)")
        return con

    def verdicts(self, snapshot_id: str) -> pd.DataFrame:
        """The verdict rows of one snapshot; an unknown id is refused, naming it and the file."""
        with self._known(snapshot_id) as con:
            df = con.execute(
                f"SELECT * FROM {SCHEMA}.snapshot_verdicts WHERE snapshot_id = ? ORDER BY study, finding", [snapshot_id]
            ).df()
        return conform(df.drop(columns=["snapshot_id"]), Verdicts)

    def rates(self, snapshot_id: str) -> pd.DataFrame:
        """The Local Law 144 rates kept with one snapshot (an empty table for a snapshot kept
        without them); an unknown id is refused, naming it and the file."""
        with self._known(snapshot_id) as con:
            if not _has(con, "snapshot_ll144_rates"):
                return empty_table(BiasAuditRates)
            df = con.execute(f"SELECT * FROM {SCHEMA}.snapshot_ll144_rates WHERE snapshot_id = ?", [snapshot_id]).df()
        if not len(df):
            return empty_table(BiasAuditRates)
        return conform(df.drop(columns=["snapshot_id"]).sort_values(list(RATE_KEYS), kind="stable"), BiasAuditRates)

    def previous(self, snapshot_id: str) -> str | None:
        """The snapshot of the same model before ``snapshot_id`` (None: it is the first)."""
        listing = self.snapshots()
        if snapshot_id not in set(listing["snapshot_id"]):
            raise KeyError(f"{self.path}: no audit snapshot {snapshot_id!r} (resumebias audits lists them)")
        model = listing.loc[listing["snapshot_id"] == snapshot_id, "model"].iloc[0]
        ids = list(listing.loc[listing["model"] == model, "snapshot_id"])
        at = ids.index(snapshot_id)
        return ids[at - 1] if at else None

    def add(
        self, model: str, verdicts: pd.DataFrame, identity: AuditIdentity, rates: pd.DataFrame | None = None
    ) -> tuple[str, bool]:
        """Keep ``model``'s verdicts (and its Local Law 144 ``rates``, when given) as a snapshot:
        its id, and whether it is new (False: the same verdicts and rates as the model's latest
        snapshot, whose id is returned)."""
        mine = conform(verdicts[verdicts["model"].astype(str) == model], Verdicts)
        my_rates = None
        if rates is not None and len(rates):
            my_rates = conform(rates[rates["model"].astype(str) == model], BiasAuditRates)
        sha = content_sha(mine, my_rates)
        latest = self.snapshots(model)
        if len(latest) and latest["content_sha"].iloc[-1] == sha:
            return str(latest["snapshot_id"].iloc[-1]), False
        stamp = identity.created_at.replace("-", "").replace(":", "").split(".")[0]
        snapshot_id = f"{model}@{stamp}-{sha[:8]}"
        row = pd.DataFrame(
            [
                {
                    "model": model,
                    "snapshot_id": snapshot_id,
                    "created_at": identity.created_at,
                    "tool_version": identity.tool_versions.get(model, ""),
                    "design": json.dumps(dict(identity.design), sort_keys=True, default=str),
                    "prompts_sha": identity.prompts_sha(),
                    "code_version": identity.code_version,
                    "content_sha": sha,
                    "n_findings": len(mine),
                    "n_beyond_noise": int((mine["verdict"] == "beyond_noise").sum()),
                }
            ]
        )
        rows = conform(row, AuditSnapshots)
        tables = [("snapshots", rows), ("snapshot_verdicts", mine.assign(snapshot_id=snapshot_id))]
        if my_rates is not None and len(my_rates):
            tables.append(("snapshot_ll144_rates", my_rates.assign(snapshot_id=snapshot_id)))
        con = self._connect()
        with con:
            con.execute("BEGIN TRANSACTION")
            for table, frame in tables:
                con.register("incoming", frame)
                if not _has(con, table):
                    con.execute(f"CREATE TABLE {SCHEMA}.{table} AS SELECT * FROM incoming WHERE false")
                # Columns declared since the file's first snapshot (Verdicts.unit_low): NULL in older rows.
                add_missing_columns(con, SCHEMA, table, "SELECT * FROM incoming")
                con.execute(f"INSERT INTO {SCHEMA}.{table} BY NAME SELECT * FROM incoming")
                con.unregister("incoming")
            con.execute("COMMIT")
        return snapshot_id, True

    def latest_pair(self, model: str) -> tuple[str, str] | None:
        """The model's two latest snapshots (earlier, later), or None with fewer than two."""
        ids = list(self.snapshots(model)["snapshot_id"])
        return (ids[-2], ids[-1]) if len(ids) >= 2 else None


def _has(con, table: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?", [SCHEMA, table]
    ).fetchone()
    return bool(found and found[0])
