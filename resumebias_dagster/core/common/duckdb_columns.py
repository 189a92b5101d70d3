"""A DuckDB table whose model gained columns since it was created: the new columns are added
(older rows hold NULL there), so inserting by name keeps working. The IO manager's partitioned
tables and the audit history both use it."""

from __future__ import annotations


def add_missing_columns(con, schema: str, table: str, select: str) -> None:
    """Add to ``schema.table`` every column ``select`` (a SELECT statement) has and it lacks."""
    stored = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ?",
            [schema, table],
        ).fetchall()
    }
    for column, kind, *_ in con.execute(f"DESCRIBE {select}").fetchall():
        if column not in stored:
            quoted = '"' + str(column).replace('"', '""') + '"'
            con.execute(f"ALTER TABLE {schema}.{table} ADD COLUMN {quoted} {kind}")
