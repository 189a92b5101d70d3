from collections.abc import Sequence
from pathlib import Path

import duckdb
import pandas as pd
from dagster import Failure, OutputContext
from dagster._core.storage.db_io_manager import DbTypeHandler, TableSlice
from dagster_duckdb_pandas import DuckDBPandasIOManager
from dagster_duckdb_pandas.duckdb_pandas_type_handler import DuckDBPandasTypeHandler

from resumebias_dagster.core.common.filesystems import require_local_disk
from resumebias_dagster.settings import duckdb_path

SCHEMA = "audit"
# Asset metadata of a table filled only on request (imported_predictions): until someone
# materialises it, downstream assets read it as the declared table with no rows. The value
# names its model in core/tables/.
EMPTY_UNTIL_MATERIALISED = "resumebias/empty_until_materialised"


def _typed_select(obj: pd.DataFrame) -> str:
    """SELECT over the DataFrame ``obj`` with text columns typed VARCHAR.

    An object column that is all None (no error yet, no resolved model yet) would otherwise
    become an INTEGER column and refuse the first string written to it later.
    """
    columns = []
    for name, dtype in obj.dtypes.items():
        quoted = '"' + str(name).replace('"', '""') + '"'
        columns.append(f"CAST({quoted} AS VARCHAR) AS {quoted}" if dtype == object else quoted)
    return "SELECT " + ", ".join(columns) + " FROM obj"


class _TypedPandasHandler(DuckDBPandasTypeHandler):
    """Stores empty tables too (downstream assets read them), replaces unpartitioned tables
    whole so a changed schema never clashes with an old one, and inserts partitions by name."""

    def handle_output(self, context: OutputContext, table_slice: TableSlice, obj: pd.DataFrame, connection):
        table = f"{table_slice.schema}.{table_slice.table}"
        select = _typed_select(obj)
        if table_slice.partition_dimensions:
            connection.execute(f"CREATE TABLE IF NOT EXISTS {table} AS {select} LIMIT 0")
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
        if Path(self.database).stem == (self.schema_ or SCHEMA):
            # DuckDB names the catalog after the file: `audit.t` would be ambiguous.
            raise ValueError(f"io_manager: database file {self.database} must not be named like the schema {self.schema_!r}")
        require_local_disk(
            self.database, "the DuckDB file",
            "Keep RESUMEBIAS_DATA_DIR on a local disk; several machines share results through the scale-out "
            "storage, not a mounted folder (deploy/README.md).",
        )
        Path(self.database).parent.mkdir(parents=True, exist_ok=True)
        return super().create_io_manager(context)


def default_io_manager() -> ResumebiasIOManager:
    return ResumebiasIOManager(database=str(duckdb_path()), schema=SCHEMA)
