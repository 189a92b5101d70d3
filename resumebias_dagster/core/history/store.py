"""Audit snapshots (issue 44): each completed audit's verdicts of one model, kept as they were
in a DuckDB file of their own (``audit_history.duckdb`` under the data directory), never
updated or deleted, so a re-run adds a snapshot and cannot overwrite one.

A snapshot is named ``<model>@<UTC time>-<8 hex of its content>``; it holds the model's verdict
rows and what identifies the audit (the tool's version, the design, a hash of the prompts, the
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
from resumebias_dagster.core.tables import AuditSnapshots, Verdicts, columns, conform, empty_table

SCHEMA = "history"
VERDICT_COLUMNS = columns(Verdicts)


def content_sha(verdicts: pd.DataFrame) -> str:
    """SHA-256 of a model's verdict rows, independent of their order (figures to 12 digits)."""
    rows = verdicts[VERDICT_COLUMNS].sort_values(["study", "finding"], kind="stable")
    return hashlib.sha256(rows.to_csv(index=False, float_format="%.12g").encode()).hexdigest()


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

    def verdicts(self, snapshot_id: str) -> pd.DataFrame:
        """The verdict rows of one snapshot; an unknown id is refused, naming it and the file."""
        con = self._connect(read_only=True)
        if con is None or snapshot_id not in set(self.snapshots()["snapshot_id"]):
            raise KeyError(f"{self.path}: no audit snapshot {snapshot_id!r} (resumebias audits lists them)")
        with con:
            df = con.execute(
                f"SELECT * FROM {SCHEMA}.snapshot_verdicts WHERE snapshot_id = ? ORDER BY study, finding", [snapshot_id]
            ).df()
        return conform(df.drop(columns=["snapshot_id"]), Verdicts)

    def add(self, model: str, verdicts: pd.DataFrame, identity: AuditIdentity) -> tuple[str, bool]:
        """Keep ``model``'s verdicts as a snapshot: its id, and whether it is new (False: the
        same verdicts as the model's latest snapshot, whose id is returned)."""
        mine = conform(verdicts[verdicts["model"].astype(str) == model], Verdicts)
        sha = content_sha(mine)
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
        kept = mine.assign(snapshot_id=snapshot_id)
        con = self._connect()
        with con:
            con.execute("BEGIN TRANSACTION")
            for table, frame in (("snapshots", rows), ("snapshot_verdicts", kept)):
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
