"""Audit snapshots (issue 44): each completed audit's verdicts of one model (and its Local Law 144
rates, from which the published summary is produced), kept as they were, never updated or
deleted, so a re-run adds a snapshot and cannot overwrite one. On one machine they live in a
DuckDB file of their own (``audit_history.duckdb`` under the data directory, ``SnapshotStore``);
at scale in the shared tables (``SharedSnapshotStore``: one Parquet file per table and snapshot
under ``history/``, the listing's row written last, so a snapshot is listed only once all of
it is stored, and a stored snapshot is never written again).

A snapshot is named ``<model>@<UTC time>-<8 hex of its content>``; it holds the model's verdict
rows, its rates, its findings' units (``FindingUnits``: what a later audit of the same résumés
is paired with) and what identifies the audit (the tool's version, the design, a hash of the
prompts, the code version). Adding verdicts identical to the model's latest snapshot adds nothing and returns
that snapshot (a re-materialisation that changed nothing is not a new audit)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from resumebias_dagster.core.common.duckdb_columns import add_missing_columns
from resumebias_dagster.core.common.shared_tables import SharedTables, redact
from resumebias_dagster.core.tables import (
    AuditSnapshots,
    BiasAuditRates,
    FindingUnits,
    Verdicts,
    columns,
    conform,
    empty_table,
)
from resumebias_dagster.core.tables.compliance import RATE_KEYS
from resumebias_dagster.settings import TABLES_URL_ENV

SCHEMA = "history"
# The listing first: a snapshot is what it lists.
TABLES = ("snapshots", "snapshot_verdicts", "snapshot_ll144_rates", "snapshot_units")
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


class _Snapshots:
    """What every store of snapshots does, over two primitives of its storage: ``_read`` (one
    table's rows, of one snapshot or all) and ``_write`` (one new snapshot's tables)."""

    where = ""  # the file or URL, for messages

    def _read(self, table: str, snapshot_id: str | None = None) -> pd.DataFrame | None:
        """The rows of ``table`` (of ``snapshot_id``), or None when the table was never written."""
        raise NotImplementedError

    def _write(self, snapshot_id: str, tables: list[tuple[str, pd.DataFrame]]) -> None:
        """Store a new snapshot's tables, ``snapshots`` (its listing row) among them."""
        raise NotImplementedError

    def exists(self) -> bool:
        """Whether any snapshot was ever stored here."""
        return self._read("snapshots") is not None

    def snapshots(self, model: str | None = None) -> pd.DataFrame:
        """Every snapshot (of ``model``), oldest first."""
        df = self._read("snapshots")
        if df is None or not len(df):
            return empty_table(AuditSnapshots)
        if model is not None:
            df = df[df["model"].astype(str) == model]
        df = df.sort_values(["created_at", "snapshot_id"], kind="stable").reset_index(drop=True)
        return conform(df, AuditSnapshots)

    def _require(self, snapshot_id: str) -> pd.DataFrame:
        """The listing, once ``snapshot_id`` is in it; else a KeyError naming it and the store."""
        listing = self.snapshots()
        if snapshot_id not in set(listing["snapshot_id"]):
            raise KeyError(f"{self.where}: no audit snapshot {snapshot_id!r} (resumebias audits lists them)")
        return listing

    def _kept(self, table: str, snapshot_id: str, schema: type, order: list[str]) -> pd.DataFrame:
        self._require(snapshot_id)
        df = self._read(table, snapshot_id)
        if df is None or not len(df):
            return empty_table(schema)
        df = df.drop(columns=["snapshot_id"], errors="ignore").sort_values(order, kind="stable")
        return conform(df.reset_index(drop=True), schema)

    def verdicts(self, snapshot_id: str) -> pd.DataFrame:
        """The verdict rows of one snapshot; an unknown id is refused, naming it and the store."""
        return self._kept("snapshot_verdicts", snapshot_id, Verdicts, ["study", "finding"])

    def rates(self, snapshot_id: str) -> pd.DataFrame:
        """The Local Law 144 rates kept with one snapshot (an empty table for a snapshot kept
        without them); an unknown id is refused, naming it and the store."""
        return self._kept("snapshot_ll144_rates", snapshot_id, BiasAuditRates, list(RATE_KEYS))

    def units(self, snapshot_id: str) -> pd.DataFrame:
        """The findings' units kept with one snapshot (an empty table for a snapshot kept
        without them); an unknown id is refused, naming it and the store."""
        return self._kept("snapshot_units", snapshot_id, FindingUnits, ["study", "finding", "resume_id", "jd"])

    def previous(self, snapshot_id: str) -> str | None:
        """The snapshot of the same model before ``snapshot_id`` (None: it is the first)."""
        listing = self._require(snapshot_id)
        model = listing.loc[listing["snapshot_id"] == snapshot_id, "model"].iloc[0]
        ids = list(listing.loc[listing["model"] == model, "snapshot_id"])
        at = ids.index(snapshot_id)
        return ids[at - 1] if at else None

    def add(
        self,
        model: str,
        verdicts: pd.DataFrame,
        identity: AuditIdentity,
        rates: pd.DataFrame | None = None,
        units: pd.DataFrame | None = None,
    ) -> tuple[str, bool]:
        """Keep ``model``'s verdicts (and its Local Law 144 ``rates`` and findings' ``units``,
        when given) as a snapshot: its id, and whether it is new (False: the same verdicts and
        rates as the model's latest snapshot, whose id is returned; the units are what those
        verdicts were computed from)."""
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
        if snapshot_id in set(latest["snapshot_id"]):
            # The same content at the same second as an earlier (not the latest) snapshot.
            raise FileExistsError(
                f"{self.where}: audit snapshot {snapshot_id!r} is already stored; it is never replaced"
            )
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
        tables = [("snapshot_verdicts", mine.assign(snapshot_id=snapshot_id))]
        if my_rates is not None and len(my_rates):
            tables.append(("snapshot_ll144_rates", my_rates.assign(snapshot_id=snapshot_id)))
        if units is not None and len(units):
            my_units = conform(units[units["model"].astype(str) == model], FindingUnits)
            tables.append(("snapshot_units", my_units.assign(snapshot_id=snapshot_id)))
        # The listing's row last: a store that cannot commit them together lists a snapshot
        # only once the rest of it is stored.
        tables.append(("snapshots", conform(row, AuditSnapshots)))
        self._write(snapshot_id, tables)
        return snapshot_id, True

    def listed_tables(self) -> dict[str, pd.DataFrame]:
        """Every table's rows of the listed snapshots (rows a stopped write left behind, of a
        snapshot not listed, are left out), by table name; tables never written are absent."""
        listed = set(self.snapshots()["snapshot_id"])
        out = {}
        for table in TABLES:
            df = self._read(table)
            if df is not None:
                out[table] = df[df["snapshot_id"].astype(str).isin(listed)].reset_index(drop=True)
        return out

    def latest_pair(self, model: str, predecessor: str = "") -> tuple[str, str] | None:
        """``latest_pair`` of this store's listing."""
        return latest_pair(self.snapshots(), model, predecessor)


def latest_pair(listing: pd.DataFrame, model: str, predecessor: str = "") -> tuple[str, str] | None:
    """Of a snapshots listing (``AuditSnapshots``): the model's two latest snapshots (earlier,
    later); with one, and a ``predecessor`` (the model it replaces) that has one, that model's
    latest and this one; else None."""
    ordered = listing.sort_values(["created_at", "snapshot_id"], kind="stable")
    ids, before = (list(ordered.loc[ordered["model"].astype(str) == m, "snapshot_id"]) for m in (model, predecessor))
    if len(ids) >= 2:
        return ids[-2], ids[-1]
    return (before[-1], ids[-1]) if ids and before and predecessor else None


class SnapshotStore(_Snapshots):
    """The snapshots of one DuckDB file (created on first write; reading creates nothing)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.where = str(self.path)

    def _connect(self, read_only: bool = False):
        import duckdb

        if read_only and not self.path.exists():
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(self.path), read_only=read_only)
        if not read_only:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        return con

    def _read(self, table: str, snapshot_id: str | None = None) -> pd.DataFrame | None:
        con = self._connect(read_only=True)
        if con is None:
            return None
        with con:
            if not _has(con, table):
                return None
            where, args = ("WHERE snapshot_id = ?", [snapshot_id]) if snapshot_id is not None else ("", [])
            return con.execute(f"SELECT * FROM {SCHEMA}.{table} {where}", args).df()

    def _write(self, snapshot_id: str, tables: list[tuple[str, pd.DataFrame]]) -> None:
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


class SharedSnapshotStore(_Snapshots):
    """The snapshots in the shared tables at ``url`` (``s3://BUCKET/PREFIX`` or ``file:///FOLDER``):
    ``history/<table>/snapshot_id=<id>/data.parquet``. Each snapshot's files are written once,
    the listing's last (a snapshot whose writing stopped part way is not listed, and its files
    are replaced whole when it is added again)."""

    def __init__(self, url: str, setting: str = TABLES_URL_ENV):
        self.tables = SharedTables(url, setting)
        self.where = redact(url).rstrip("/") + f"/{SCHEMA}"

    def _read(self, table: str, snapshot_id: str | None = None) -> pd.DataFrame | None:
        partitions = None if snapshot_id is None else [{"snapshot_id": snapshot_id}]
        return self.tables.read(SCHEMA, table, partitions)

    def _write(self, snapshot_id: str, tables: list[tuple[str, pd.DataFrame]]) -> None:
        for table, frame in tables:
            self.tables.write(SCHEMA, table, frame.reset_index(drop=True), {"snapshot_id": snapshot_id})


def _has(con, table: str) -> bool:
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?", [SCHEMA, table]
    ).fetchone()
    return bool(found and found[0])
