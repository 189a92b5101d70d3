"""The response store's tables, declared once: each a list of columns that every backend renders
in its own SQL (``create_table``), and the upsert that keeps a row's rules in SQL."""

from __future__ import annotations

from dataclasses import dataclass

from resumebias_dagster.core.providers.types import BILLED_CALL_LIMIT, EMPTY, EMPTY_CALL_LIMIT

# Each table is one list of columns: a name, a portable type, whether it may be null, a
# default; and its key. A backend renders them in the words of its SQL (``create_table``
# with its ``TYPES``): sqlite.py creates them at open, postgres.py in its migrations. The
# DDL they render is the DDL every existing store was created with
# (tests/core/providers/test_store_schema.py holds it): a change here is a new schema version.
# A column added since is declared once below (``CACHE_COLUMNS``), at the end of its table;
# each backend adds it in a migration (``add_columns``), to old and new stores alike, so every
# store ends up with the same table.

# Portable types. ANSWER: the text of an answer, stored exactly as it came (lone surrogates,
# NUL): SQLite's TEXT (a BLOB of its bytes where it cannot be text), PostgreSQL's BYTEA.
TEXT, INTEGER, REAL, ANSWER = "text", "integer", "real", "answer"


@dataclass(frozen=True)
class Column:
    """A column: name, portable type, ``not_null``, and a ``default`` (SQL, as written)."""

    name: str
    type: str
    not_null: bool = False
    default: str | None = None


@dataclass(frozen=True)
class Table:
    """A table: its columns in order and its key. A key of one column is declared with it
    (``key TEXT PRIMARY KEY``, no NOT NULL: as every store has it); a key of several, after them."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _column_sql(c: Column, types: dict[str, str]) -> str:
    line = f"{c.name} {types[c.type]}"
    if c.not_null:
        line += " NOT NULL"
    if c.default is not None:
        line += f" DEFAULT {c.default}"
    return line


def add_columns(table: str, columns: tuple[Column, ...], types: dict[str, str]) -> str:
    """The statements adding ``columns`` to ``table`` (nullable or with a default: a table
    with rows takes them), in a backend's words."""
    return "\n".join(f"ALTER TABLE {table} ADD COLUMN {_column_sql(c, types)};" for c in columns)


def create_table(table: Table, types: dict[str, str], *, prefix: str = "CREATE TABLE") -> str:
    """``table``'s DDL in a backend's words: ``types`` maps each portable type to its SQL type;
    ``prefix`` e.g. ``CREATE TABLE IF NOT EXISTS``, ``CREATE UNLOGGED TABLE``."""
    lines = []
    for c in table.columns:
        line = f"    {c.name} {types[c.type]}"
        if table.key == (c.name,):
            line += " PRIMARY KEY"
        elif c.not_null:
            line += " NOT NULL"
        if c.default is not None:
            line += f" DEFAULT {c.default}"
        lines.append(line)
    if len(table.key) > 1:
        lines.append(f"    PRIMARY KEY ({', '.join(table.key)})")
    body = ",\n".join(lines)
    return f"{prefix} {table.name} (\n{body}\n);"


# The responses table as every store was created (migration 1, SQLite's tables up to version 4).
RESPONSES_CREATED = Table(
    "responses",
    (
        Column("key", TEXT),
        Column("model", TEXT, not_null=True),
        Column("provider", TEXT, not_null=True),
        Column("endpoint", TEXT, not_null=True),
        Column("alias", TEXT, not_null=True),
        Column("resolved_model", TEXT),
        Column("task", TEXT),
        Column("request_json", TEXT, not_null=True),
        Column("text", ANSWER),
        Column("finish_reason", TEXT),
        Column("input_tokens", INTEGER),
        Column("output_tokens", INTEGER),
        Column("reasoning_tokens", INTEGER),
        Column("cost_usd", REAL),
        Column("latency_s", REAL),
        Column("attempts", INTEGER),
        Column("billed_attempts", INTEGER),
        Column("logprobs_json", TEXT),
        Column("error_kind", TEXT),
        Column("error_message", TEXT),
        Column("done", INTEGER, not_null=True),
        Column("calls", INTEGER, not_null=True, default="1"),
        Column("created_at", TEXT, not_null=True),
        Column("updated_at", TEXT, not_null=True),
    ),
    key=("key",),
)
# Columns added to responses since: of an answer's input tokens, those read from the provider's
# prompt cache and those written to it (SQLite version 5, PostgreSQL migration 4).
CACHE_COLUMNS = (Column("cached_input_tokens", INTEGER), Column("cache_write_tokens", INTEGER))
# The responses table as it is now: as created, then the columns added since.
RESPONSES = Table("responses", RESPONSES_CREATED.columns + CACHE_COLUMNS, key=RESPONSES_CREATED.key)
# What each alias resolved to when last probed, and that snapshot's epoch.
SNAPSHOTS = Table(
    "snapshots",
    (
        Column("provider", TEXT, not_null=True),
        Column("endpoint", TEXT, not_null=True),
        Column("alias", TEXT, not_null=True),
        Column("resolved_model", TEXT, not_null=True),
        Column("epoch", INTEGER, not_null=True),
        Column("seen_at", TEXT, not_null=True),
    ),
    key=("provider", "endpoint", "alias"),
)
# Each snapshot an alias resolved to, with the epoch it keeps.
SNAPSHOT_EPOCHS = Table(
    "snapshot_epochs",
    (
        Column("provider", TEXT, not_null=True),
        Column("endpoint", TEXT, not_null=True),
        Column("alias", TEXT, not_null=True),
        Column("resolved_model", TEXT, not_null=True),
        Column("epoch", INTEGER, not_null=True),
        Column("first_seen", TEXT, not_null=True),
        Column("last_seen", TEXT, not_null=True),
    ),
    key=("provider", "endpoint", "alias", "resolved_model"),
)
# The keys being called now, by whom, until when (epoch seconds on the database's clock).
CLAIMS = Table(
    "claims",
    (
        Column("key", TEXT),
        Column("owner", TEXT, not_null=True),
        Column("host", TEXT, not_null=True),
        Column("pid", INTEGER, not_null=True),
        Column("expires_at", REAL, not_null=True),
    ),
    key=("key",),
)
# Provider batches (core/providers/batch.py): one row per submission, recorded before it is sent
# (batch_id NULL until the provider confirms it), and the requests each holds (a key may be in an
# expired batch and later in another one). SQLite version 6, PostgreSQL migration 5.
BATCHES = Table(
    "batches",
    (
        Column("submission_id", TEXT),
        Column("model", TEXT, not_null=True),
        Column("provider", TEXT, not_null=True),
        Column("endpoint", TEXT, not_null=True),
        Column("alias", TEXT, not_null=True),
        Column("batch_id", TEXT),
        Column("state", TEXT, not_null=True),
        Column("provider_state", TEXT),
        Column("requests", INTEGER, not_null=True),
        Column("succeeded", INTEGER),
        Column("errored", INTEGER),
        Column("message", TEXT),
        Column("created_at", TEXT, not_null=True),
        Column("updated_at", TEXT, not_null=True),
    ),
    key=("submission_id",),
)
BATCH_ITEMS = Table(
    "batch_items",
    (
        Column("key", TEXT, not_null=True),
        Column("submission_id", TEXT, not_null=True),
        Column("task", TEXT),
        Column("request_json", TEXT, not_null=True),
    ),
    key=("key", "submission_id"),
)
BATCH_INDEX = "CREATE INDEX IF NOT EXISTS batch_items_submission ON batch_items (submission_id);"
COLUMNS = RESPONSES.names
CLAIM_COLUMNS = CLAIMS.names
_UPDATABLE = [
    c for c in COLUMNS if c not in ("key", "calls", "created_at", "attempts", "billed_attempts", "cost_usd", "done")
]
# A row that is not final takes the new call's outcome; its counters and its cost add up (the
# ledger is what every call of the key was billed, issue 40). An empty answer
# is final once its key has had EMPTY_CALL_LIMIT calls, any outcome once its key's calls were
# billed BILLED_CALL_LIMIT times.
UPSERT = (
    f"INSERT INTO responses ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)}) "
    f"ON CONFLICT (key) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in _UPDATABLE)}, "
    "calls = responses.calls + 1, "
    "attempts = COALESCE(responses.attempts, 0) + COALESCE(excluded.attempts, 0), "
    "billed_attempts = COALESCE(responses.billed_attempts, 0) + COALESCE(excluded.billed_attempts, 0), "
    "cost_usd = CASE WHEN responses.cost_usd IS NULL AND excluded.cost_usd IS NULL THEN NULL "
    "ELSE COALESCE(responses.cost_usd, 0) + COALESCE(excluded.cost_usd, 0) END, "
    "done = CASE WHEN excluded.done = 1 THEN 1 "
    f"WHEN excluded.error_kind = '{EMPTY}' AND responses.calls + 1 >= {EMPTY_CALL_LIMIT} THEN 1 "
    "WHEN COALESCE(responses.billed_attempts, 0) + COALESCE(excluded.billed_attempts, 0) "
    f">= {BILLED_CALL_LIMIT} THEN 1 "
    "ELSE 0 END "
    "WHERE responses.done = 0"
)
