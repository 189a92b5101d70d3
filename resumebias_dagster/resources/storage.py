import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb
import pandas as pd
from dagster import ConfigurableIOManager, Failure, InputContext, MultiPartitionsDefinition, OutputContext
from dagster._core.storage.db_io_manager import DbTypeHandler, TableSlice
from dagster_duckdb_pandas import DuckDBPandasIOManager
from dagster_duckdb_pandas.duckdb_pandas_type_handler import DuckDBPandasTypeHandler
from pydantic import Field

from resumebias_dagster.core.common.duckdb_columns import add_missing_columns
from resumebias_dagster.core.common.filesystems import require_local_disk
from resumebias_dagster.core.common.shared_tables import (
    SCHEMA,
    SharedTables,
    SharedTablesError,
    check_tables_url,
    redact,
)
from resumebias_dagster.settings import TABLES_URL_ENV, ConfigPathError, checked_path, duckdb_path, tables_url

# Asset metadata of a table filled only on request (imported_predictions): until someone
# materialises it, downstream assets read it as the declared table with no rows. The value
# names its model in core/tables/.
EMPTY_UNTIL_MATERIALISED = "resumebias/empty_until_materialised"


# Run config can set every field of an I/O manager, and anyone who reaches the UI writes run
# config. DuckDB splices the schema into its SQL unquoted, so a schema (or a shared table's
# folder) is a plain identifier; files lie under the allowed folders (settings.checked_path);
# DuckDB settings are limited to those that change no file, extension or network access.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
CONNECTION_SETTINGS = frozenset({"threads", "memory_limit", "max_memory", "preserve_insertion_order"})


def check_identifier(value: str, setting: str) -> str:
    """``value`` if it is a plain SQL identifier (and folder name), else ``ConfigPathError``."""
    if not IDENTIFIER.fullmatch(value or ""):
        raise ConfigPathError(
            f"{setting}: {value!r} is not a schema name: use letters, digits and underscores (not starting with a "
            "digit, at most 63)"
        )
    return value


def check_connection_config(config: dict, setting: str) -> None:
    refused = sorted(set(config) - CONNECTION_SETTINGS)
    if refused:
        raise ConfigPathError(
            f"{setting}: {', '.join(refused)} cannot be set from run config (only {', '.join(sorted(CONNECTION_SETTINGS))}): "
            "other DuckDB settings reach files, extensions or the network"
        )


def check_shared_url(url: str, setting: str) -> str:
    """``url`` if it is ``$RESUMEBIAS_TABLES_URL``, a folder under it, or a ``file:///`` folder
    under the allowed folders; else ``SharedTablesError`` naming ``setting``."""
    check_tables_url(url, setting)
    deployed = tables_url().rstrip("/")
    own = url.rstrip("/")
    segments = own.split("://", 1)[1].split("/")
    if ".." not in segments and deployed and (own == deployed or own.startswith(deployed + "/")):
        return url
    parts = urlsplit(url)
    # Only file:///PATH: a host (file://localhost/PATH) was checked as the relative path
    # "localhost/PATH" and written to /PATH (issue 40).
    if parts.scheme == "file" and not parts.netloc and parts.path.startswith("/"):
        try:
            checked_path(unquote(parts.path), setting)
            return url
        except ConfigPathError:
            pass
    raise SharedTablesError(
        f"{setting}: {redact(url)} is neither ${TABLES_URL_ENV} ({redact(deployed) if deployed else 'unset'}) nor a "
        "folder under it, nor a file:/// folder under the data directory or RESUMEBIAS_ALLOWED_ROOTS"
    )


def _typed_select(obj: pd.DataFrame) -> str:
    """SELECT over the DataFrame ``obj`` with text columns typed VARCHAR.

    An object column that is all None (no error yet, no resolved model yet) would otherwise
    become an INTEGER column and refuse the first string written to it later.
    """
    columns = []
    for name, dtype in obj.dtypes.items():
        quoted = '"' + str(name).replace('"', '""') + '"'
        columns.append(f"CAST({quoted} AS VARCHAR) AS {quoted}" if pd.api.types.is_object_dtype(dtype) else quoted)
    return "SELECT " + ", ".join(columns) + " FROM obj"


class _TypedPandasHandler(DuckDBPandasTypeHandler):
    """Stores empty tables too (downstream assets read them), replaces unpartitioned tables
    whole so a changed schema never clashes with an old one, and inserts partitions by name."""

    def handle_output(self, context: OutputContext, table_slice: TableSlice, obj: pd.DataFrame, connection):
        table = f"{table_slice.schema}.{table_slice.table}"
        select = _typed_select(obj)
        if table_slice.partition_dimensions:
            connection.execute(f"CREATE TABLE IF NOT EXISTS {table} AS {select} LIMIT 0")
            # A column added to the table's model since its first partitions (fit_scores' `name`);
            # registered by name: the helper's frame cannot see this one's `obj`.
            connection.register("obj", obj)
            add_missing_columns(connection, table_slice.schema, table_slice.table, select)
            connection.unregister("obj")
            connection.execute(f"INSERT INTO {table} BY NAME {select}")
        else:
            connection.execute(f"CREATE OR REPLACE TABLE {table} AS {select}")
        context.add_output_metadata({"dagster/storage_kind": "duckdb"})

    def load_input(self, context, table_slice: TableSlice, connection) -> pd.DataFrame:
        try:
            return super().load_input(context, table_slice, connection)
        except duckdb.CatalogException:
            # A partitioned upstream with no partition materialised yet has no table: no rows
            # (the metric tables combine the model partitions that exist). Any other missing
            # table is an upstream never materialised here: say which, never pass on an
            # empty frame that fails downstream with a KeyError.
            if table_slice.partition_dimensions:
                return pd.DataFrame()
            optional = _empty_until_materialised(context)
            if optional is not None:
                return optional
            upstream = context.asset_key.to_user_string() if context.has_asset_key else table_slice.table
            raise Failure(
                f"the upstream asset {upstream!r} has not been materialised in {table_slice.schema}.{table_slice.table} "
                f"of this database yet: materialise {upstream} first (or the whole graph)"
            ) from None


def _empty_until_materialised(context) -> pd.DataFrame | None:
    """The typed empty table of an upstream asset marked ``EMPTY_UNTIL_MATERIALISED``, else None."""
    upstream = context.upstream_output if context.has_asset_key else None
    name = (upstream.definition_metadata or {}).get(EMPTY_UNTIL_MATERIALISED) if upstream is not None else None
    if name is None:
        return None
    from resumebias_dagster.core import tables

    return tables.empty_table(getattr(tables, str(name)))


class ResumebiasIOManager(DuckDBPandasIOManager):
    """DuckDB tables, one per asset, in one database file under the data directory."""

    @staticmethod
    def type_handlers() -> Sequence[DbTypeHandler]:
        return [_TypedPandasHandler()]

    def create_io_manager(self, context):
        if self.database == str(duckdb_path(checked=False)):
            # The data directory's file: the folder is checked (and ./data created) when a run
            # opens it, not when the definitions are imported.
            duckdb_path()
        check_identifier(self.schema_ or SCHEMA, "io_manager.schema")
        checked_path(self.database, "io_manager.database")
        check_connection_config(self.connection_config or {}, "io_manager.connection_config")
        if Path(self.database).stem == (self.schema_ or SCHEMA):
            # DuckDB names the catalog after the file: `audit.t` would be ambiguous.
            raise ValueError(
                f"io_manager: database file {self.database} must not be named like the schema {self.schema_!r}"
            )
        require_local_disk(
            self.database,
            "the DuckDB file",
            "Keep RESUMEBIAS_DATA_DIR on a local disk; several machines share results through the scale-out "
            "storage, not a mounted folder (deploy/README.md).",
        )
        Path(self.database).parent.mkdir(parents=True, exist_ok=True)
        return super().create_io_manager(context)


class SharedTablesIOManager(ConfigurableIOManager):
    """Tables for several machines: one Parquet file per asset and partition under ``url`` on
    object storage (core/common/shared_tables.py says why). A run that covers several
    partitions writes one file per partition, split by the asset's ``partition_expr`` columns."""

    url: str = Field(
        description=f"s3://BUCKET/PREFIX (or file:///FOLDER); default ${TABLES_URL_ENV}. S3 keys and a "
        f"non-AWS endpoint come from the environment (AWS_*), never from here"
    )
    table_schema: str = Field(default=SCHEMA, description="folder (and DuckDB schema when pulled) of the tables")

    def _shared(self) -> SharedTables:
        check_identifier(self.table_schema, "io_manager.table_schema")
        return SharedTables(check_shared_url(self.url, "io_manager.url"), setting="io_manager.url")

    def handle_output(self, context: OutputContext, obj: pd.DataFrame) -> None:
        if not isinstance(obj, pd.DataFrame):
            raise Failure(
                f"{_asset_name(context)}: the shared tables store pandas DataFrames, got {type(obj).__name__}"
            )
        shared, table = self._shared(), context.asset_key.path[-1]
        if not context.has_asset_partitions:
            location = shared.write(self.table_schema, table, obj)
            context.add_output_metadata({"dagster/storage_kind": "parquet", "path": location})
            return
        columns = _partition_columns(context.definition_metadata, context.asset_partitions_def, context)
        partitions = [
            _partition_values(context.asset_partitions_def, key, columns) for key in context.asset_partition_keys
        ]
        names = list(columns.values())
        groups = (
            {tuple(str(v) for v in k): rows for k, rows in obj.groupby(names, sort=False, dropna=False)}
            if len(obj)
            else {}
        )
        stray = sorted(set(groups) - {tuple(p[c] for c in names) for p in partitions})
        if stray:
            # Checked before anything is written: rows of a partition outside this run would be lost.
            raise Failure(
                f"{_asset_name(context)}: rows for partitions outside this run ({stray[:3]}); nothing written"
            )
        for partition in partitions:
            rows = groups.get(tuple(partition[c] for c in names), obj.iloc[0:0])
            shared.write(self.table_schema, table, rows, partition)
        context.add_output_metadata(
            {
                "dagster/storage_kind": "parquet",
                "path": shared.location(self.table_schema, table, partitions[0] if len(partitions) == 1 else None),
            }
        )

    def load_input(self, context: InputContext) -> pd.DataFrame:
        shared, table = self._shared(), context.asset_key.path[-1]
        wanted = None
        if context.has_asset_partitions:
            upstream = context.upstream_output.definition_metadata if context.upstream_output else {}
            columns = _partition_columns(upstream, context.asset_partitions_def, context)
            wanted = [
                _partition_values(context.asset_partitions_def, key, columns) for key in context.asset_partition_keys
            ]
        frame = shared.read(self.table_schema, table, wanted)
        if frame is not None:
            return frame
        if context.has_asset_partitions:
            return pd.DataFrame()  # no partition materialised yet: no rows, as in DuckDB
        optional = _empty_until_materialised(context)
        if optional is not None:
            return optional
        raise Failure(
            f"the upstream asset {_asset_name(context)!r} has not been materialised in the shared tables "
            f"({shared.location(self.table_schema, table)}) yet: materialise it first (or the whole graph)"
        )


def _asset_name(context) -> str:
    return context.asset_key.to_user_string() if context.has_asset_key else "output"


def _partition_columns(metadata, partitions_def, context) -> dict[str, str]:
    """Partition dimension -> the column holding it, from the asset's ``partition_expr``."""
    expr = (metadata or {}).get("partition_expr")
    if isinstance(partitions_def, MultiPartitionsDefinition):
        dims = [d.name for d in partitions_def.partitions_defs]
        if not isinstance(expr, dict) or set(expr) != set(dims):
            raise Failure(
                f"{_asset_name(context)}: partition_expr metadata must map each dimension {dims} to its column"
            )
        return {d: str(expr[d]) for d in dims}
    if not isinstance(expr, str):
        raise Failure(f"{_asset_name(context)}: partition_expr metadata must name the column holding the partition")
    return {"": expr}


def _partition_values(partitions_def, key: str, columns: dict[str, str]) -> dict[str, str]:
    if isinstance(partitions_def, MultiPartitionsDefinition):
        dims = partitions_def.get_partition_key_from_str(key).keys_by_dimension
        return {columns[d]: dims[d] for d in columns}
    return {columns[""]: key}


def default_io_manager() -> ResumebiasIOManager | SharedTablesIOManager:
    """DuckDB on this machine; Parquet on shared object storage when ``$RESUMEBIAS_TABLES_URL`` is set."""
    url = tables_url()
    if url:
        check_tables_url(url, TABLES_URL_ENV)
        return SharedTablesIOManager(url=url)
    return ResumebiasIOManager(database=str(duckdb_path(checked=False)), schema=SCHEMA)
