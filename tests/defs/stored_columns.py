"""Compare what a DuckDB file stores with what `core/tables/` declares, table by table.

Which model declares an asset's table is read off the definitions (each asset's Dagster type
is built from one pandera model), so a new asset is covered without editing this file."""

from __future__ import annotations

import duckdb
import pandera.pandas as pa

from resumebias_dagster.core import tables


def declared_models() -> dict[str, type[pa.DataFrameModel]]:
    """Asset name -> the pandera model its Dagster type was built from."""
    from resumebias_dagster.definitions import defs

    models = {}
    for assets_def in defs.resolve_asset_graph().assets_defs:
        for output_name, key in assets_def.keys_by_output_name.items():
            type_name = assets_def.op.output_def_named(output_name).dagster_type.display_name
            models[key.to_user_string()] = getattr(tables, type_name)
    return models


def stored_columns(database, schema: str = "audit") -> dict[str, list[str]]:
    with duckdb.connect(str(database), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ? "
            "ORDER BY table_name, ordinal_position",
            [schema],
        ).fetchall()
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


def assert_stored_columns_match(database, schema: str = "audit") -> set[str]:
    """Every table in the file has exactly its model's columns, in the declared order.
    Returns the tables checked, so a caller can assert which ones it expected."""
    models = declared_models()
    stored = stored_columns(database, schema)
    for table, cols in stored.items():
        assert table in models, f"{table}: stored, but no asset declares it"
        assert cols == tables.columns(models[table]), (
            f"{table}: stored {cols}, declared {tables.columns(models[table])}"
        )
    return set(stored)
