"""The response store's tables are declared once (store/base.py) and rendered per backend:
the DDL each backend renders is, word for word, the DDL every existing store was created
with (frozen below), and a fresh store of each backend has exactly the schema that DDL gives.

A change to a table in schema.py fails here: it is a new schema version of both backends (a
SQLite version and a PostgreSQL migration), and the frozen DDL of the old one stays as it is;
a column added since (the prompt-cache columns) is added by a migration to every store.
"""

import sqlite3
import uuid

import pytest

from resumebias_dagster.core.providers.store import ResponseStore
from resumebias_dagster.core.providers.store import postgres as pg
from resumebias_dagster.core.providers.store import schema as store_schema
from resumebias_dagster.core.providers.store import sqlite as lite

RESPONSES_COLUMNS = """
    key {text} PRIMARY KEY,
    model {text} NOT NULL,
    provider {text} NOT NULL,
    endpoint {text} NOT NULL,
    alias {text} NOT NULL,
    resolved_model {text},
    task {text},
    request_json {text} NOT NULL,
    text {answer},
    finish_reason {text},
    input_tokens INTEGER,
    output_tokens INTEGER,
    reasoning_tokens INTEGER,
    cost_usd {real},
    latency_s {real},
    attempts INTEGER,
    billed_attempts INTEGER,
    logprobs_json {text},
    error_kind {text},
    error_message {text},
    done INTEGER NOT NULL,
    calls INTEGER NOT NULL DEFAULT 1,
    created_at {text} NOT NULL,
    updated_at {text} NOT NULL
"""
SNAPSHOTS_COLUMNS = """
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    alias TEXT NOT NULL,
    resolved_model TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (provider, endpoint, alias)
"""
SNAPSHOT_EPOCHS_COLUMNS = """
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    alias TEXT NOT NULL,
    resolved_model TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (provider, endpoint, alias, resolved_model)
"""
CLAIMS_COLUMNS = """
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires_at {real} NOT NULL
"""
# SQLite: the tables created at open (version 4), then version 5's columns.
SQLITE_DDL = f"""
CREATE TABLE IF NOT EXISTS responses ({RESPONSES_COLUMNS.format(text="TEXT", answer="TEXT", real="REAL")});
CREATE INDEX IF NOT EXISTS responses_model ON responses (model);
CREATE TABLE IF NOT EXISTS snapshots ({SNAPSHOTS_COLUMNS});
CREATE TABLE IF NOT EXISTS snapshot_epochs ({SNAPSHOT_EPOCHS_COLUMNS});
CREATE TABLE IF NOT EXISTS claims ({CLAIMS_COLUMNS.format(real="REAL")});
"""
# Version 5 (SQLite), migration 4 (PostgreSQL): the prompt-cache columns.
ADD_CACHE_COLUMNS = """
ALTER TABLE responses ADD COLUMN cached_input_tokens INTEGER;
ALTER TABLE responses ADD COLUMN cache_write_tokens INTEGER;
"""
# Version 6 (SQLite), migration 5 (PostgreSQL): the provider batches.
BATCHES_COLUMNS = """
    submission_id TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    alias TEXT NOT NULL,
    batch_id TEXT,
    state TEXT NOT NULL,
    provider_state TEXT,
    requests INTEGER NOT NULL,
    succeeded INTEGER,
    errored INTEGER,
    message TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
"""
BATCH_ITEMS_COLUMNS = """
    key TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    task TEXT,
    request_json TEXT NOT NULL,
    PRIMARY KEY (key, submission_id)
"""
BATCH_INDEX = "CREATE INDEX IF NOT EXISTS batch_items_submission ON batch_items (submission_id);"
SQLITE_BATCH_DDL = f"""
CREATE TABLE IF NOT EXISTS batches ({BATCHES_COLUMNS});
CREATE TABLE IF NOT EXISTS batch_items ({BATCH_ITEMS_COLUMNS});
{BATCH_INDEX}
"""
POSTGRES_MIGRATION_5 = f"""
CREATE TABLE batches ({BATCHES_COLUMNS});
CREATE TABLE batch_items ({BATCH_ITEMS_COLUMNS});
{BATCH_INDEX}
"""
# PostgreSQL: migrations 1 and 3 (2 adds indexes), then 4.
POSTGRES_MIGRATION_1 = f"""
CREATE TABLE responses ({RESPONSES_COLUMNS.format(text="TEXT", answer="BYTEA", real="DOUBLE PRECISION")});
COMMENT ON COLUMN responses.text IS 'the answer as UTF-8 bytes, exactly as it came (text cannot hold NUL)';
CREATE TABLE snapshots ({SNAPSHOTS_COLUMNS});
CREATE UNLOGGED TABLE claims ({CLAIMS_COLUMNS.format(real="DOUBLE PRECISION")});
"""
POSTGRES_MIGRATION_3 = f"CREATE TABLE snapshot_epochs ({SNAPSHOT_EPOCHS_COLUMNS});"


def words(sql: str) -> str:
    """``sql`` with its whitespace normalised (and none inside parentheses' edges)."""
    return " ".join(sql.split()).replace("( ", "(").replace(" )", ")")


def test_the_sqlite_ddl_is_the_ddl_of_every_store():
    assert words(lite._TABLES) == words(SQLITE_DDL)
    assert words(lite._BATCH_TABLES) == words(SQLITE_BATCH_DDL)
    assert lite._SCHEMA_VERSION == 6
    assert words(store_schema.add_columns("responses", store_schema.CACHE_COLUMNS, lite.TYPES)) == words(
        ADD_CACHE_COLUMNS
    )


def test_the_postgres_migrations_are_the_ddl_of_every_store():
    assert [(n, words(sql)) for n, _, sql in pg.MIGRATIONS if n != 2] == [
        (1, words(POSTGRES_MIGRATION_1)),
        (3, words(POSTGRES_MIGRATION_3)),
        (4, words(ADD_CACHE_COLUMNS)),
        (5, words(POSTGRES_MIGRATION_5)),
    ]


def test_the_row_columns_follow_the_tables():
    assert store_schema.COLUMNS == (
        *(line.split()[0] for line in RESPONSES_COLUMNS.strip().splitlines()),
        "cached_input_tokens",
        "cache_write_tokens",
    )
    assert store_schema.CLAIM_COLUMNS == ("key", "owner", "host", "pid", "expires_at")
    assert all(table.names == tuple(dict.fromkeys(table.names)) for table in _tables())


def _tables():
    return (
        store_schema.RESPONSES,
        store_schema.SNAPSHOTS,
        store_schema.SNAPSHOT_EPOCHS,
        store_schema.CLAIMS,
        store_schema.BATCHES,
        store_schema.BATCH_ITEMS,
    )


def _sqlite_schema(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {
            name: (
                conn.execute(f"PRAGMA table_xinfo({name})").fetchall(),
                conn.execute(f"PRAGMA index_list({name})").fetchall(),
            )
            for name in names
        }
    finally:
        conn.close()


def test_a_new_sqlite_store_has_the_schema_of_the_frozen_ddl(tmp_path):
    ResponseStore(tmp_path / "new.sqlite").close()
    frozen = tmp_path / "frozen.sqlite"
    conn = sqlite3.connect(frozen)
    conn.executescript(SQLITE_DDL + ADD_CACHE_COLUMNS + SQLITE_BATCH_DDL)
    conn.close()
    assert _sqlite_schema(tmp_path / "new.sqlite") == _sqlite_schema(frozen)


_PG_COLUMNS = (
    "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, column_default "
    "FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'resumebias_store_version' "
    "ORDER BY 1, 2"
)
_PG_KEYS = (
    "SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint "
    "WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'resumebias_store_version' ORDER BY 1"
)
_PG_TABLES = (
    "SELECT relname, relkind, relpersistence FROM pg_class "
    "WHERE relnamespace = 'public'::regnamespace AND relname NOT LIKE 'resumebias_store_version%' ORDER BY 1"
)


def test_a_new_postgres_store_has_the_schema_of_the_frozen_ddl(postgres_server):
    new = postgres_server.create_database(f"new_{uuid.uuid4().hex[:8]}")
    ResponseStore(postgres_server.url(new)).close()
    frozen = postgres_server.create_database(f"frozen_{uuid.uuid4().hex[:8]}")
    postgres_server.admin(
        POSTGRES_MIGRATION_1 + pg.MIGRATIONS[1][2] + POSTGRES_MIGRATION_3 + ADD_CACHE_COLUMNS + POSTGRES_MIGRATION_5,
        frozen,
    )
    for sql in (_PG_COLUMNS, _PG_KEYS, _PG_TABLES):
        assert postgres_server.admin(sql, new) == postgres_server.admin(sql, frozen), sql


@pytest.mark.parametrize("table", _tables(), ids=lambda t: t.name)
def test_a_key_is_made_of_columns_of_its_table(table):
    assert table.key and set(table.key) <= set(table.names)
