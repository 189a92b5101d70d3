"""The response store shared by several machines: a PostgreSQL database.

Selected by a URL, ``postgresql://user@host:port/database`` (the providers resource's
``store_url``, or ``$RESUMEBIAS_STORE_URL``); a worker on any machine then reads the answers
every other worker paid for, and claims keep two machines from paying for the same key. The
rules of a row, claims and snapshots are the ones of every store (``base.py``); a claim's
lease is judged by the database's clock, so the machines' clocks need not agree.

Durability: each answer is committed as it arrives, with the server's ``synchronous_commit``
(on by default: a commit survives the server crashing); ``durable=True`` insists on ``on``.
The text of an answer is kept as UTF-8 bytes (``bytea``): PostgreSQL's ``text`` cannot hold
a NUL character, and an answer is stored exactly as it came. Other text columns (names,
error messages) have NUL characters and lone surrogates replaced.

Schema: the tables live in the connection's current schema (the first of its
``search_path``; another one is chosen with ``?options=-csearch_path%3Dname``). The table
``resumebias_store_version`` marks the schema as a store and records each migration
applied; ``MIGRATIONS`` are applied in order at open, in one transaction, under an advisory
lock, so two processes opening a new store at once migrate it once. A schema that holds
tables but no version table is not a store and is refused untouched, as is a store whose
version is newer than this code's.

Claims are coordination, not records: their table is ``UNLOGGED`` (no write-ahead log, so a
claim costs no disk flush; emptied if the server crashes, which only lets the next run claim
those keys again).

A password in the URL is registered with ``guard_logs`` at open, and never appears in a
message of this module: errors show the URL without it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from resumebias_dagster.core.providers.store.base import (
    STORE_URL_ENV,
    ResponseStore,
    StoreError,
    check_store_url,
    store_target,
)
from resumebias_dagster.core.providers.store.schema import (
    ANSWER,
    BATCH_INDEX,
    BATCH_ITEMS,
    BATCHES,
    CACHE_COLUMNS,
    CLAIMS,
    COLUMNS,
    INTEGER,
    REAL,
    RESPONSES_CREATED,
    SNAPSHOT_EPOCHS,
    SNAPSHOTS,
    TEXT,
    UPSERT,
    add_columns,
    create_table,
)
from resumebias_dagster.core.providers.types import redact

VERSION_TABLE = "resumebias_store_version"
# "RBrs": the advisory lock taken while migrating.
MIGRATION_LOCK = 0x52427273
# The portable types of base.py's tables in PostgreSQL's words: an answer is kept as UTF-8
# bytes (text cannot hold NUL).
TYPES = {TEXT: "TEXT", INTEGER: "INTEGER", REAL: "DOUBLE PRECISION", ANSWER: "BYTEA"}
# Applied in order, each once (the version table records them); a store of version n runs
# those after n. Migrations 1 and 3 render schema.py's tables, whose DDL is frozen by
# tests/core/providers/test_store_schema.py: a store created long ago and a new one must end
# up alike, so changing a table there takes a new migration here (and a new SQLite version),
# as migration 4 adds schema.py's CACHE_COLUMNS.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "responses, snapshots and claims",
        "\n".join(
            (
                create_table(RESPONSES_CREATED, TYPES),
                "COMMENT ON COLUMN responses.text IS "
                "'the answer as UTF-8 bytes, exactly as it came (text cannot hold NUL)';",
                create_table(SNAPSHOTS, TYPES),
                # Claims are coordination, not records (the module's doc).
                create_table(CLAIMS, TYPES, prefix="CREATE UNLOGGED TABLE"),
            )
        ),
    ),
    (
        2,
        "indexes: one model's rows, the answers of an alias, the claims of a run",
        """
CREATE INDEX responses_model ON responses (model);
CREATE INDEX responses_alias ON responses (provider, endpoint, alias, task);
CREATE INDEX claims_owner ON claims (owner);
""",
    ),
    (3, "snapshot_epochs: each snapshot an alias resolved to keeps its epoch", create_table(SNAPSHOT_EPOCHS, TYPES)),
    (
        4,
        "responses: cached_input_tokens and cache_write_tokens (prompt caching)",
        add_columns("responses", CACHE_COLUMNS, TYPES),
    ),
    (
        5,
        "batches and batch_items: provider batches, recorded before they are sent",
        create_table(BATCHES, TYPES) + "\n" + create_table(BATCH_ITEMS, TYPES) + "\n" + BATCH_INDEX,
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]
# The migration creating the batch tables: a store before it, opened read-only, lists no batches.
BATCH_MIGRATION = 5
# The responses columns each later migration adds: a store of READABLE_VERSION or later opened
# read-only (nothing migrated) reads those it lacks as NULL.
ADDED_BY = {4: CACHE_COLUMNS}
READABLE_VERSION = 3
_CREATE_VERSION_TABLE = f"""
CREATE TABLE {VERSION_TABLE} (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
COMMENT ON TABLE {VERSION_TABLE} IS 'resumebias_dagster response store: the schema migrations applied';
"""
# Relations that make a schema "not empty": tables, views, materialised views, foreign
# tables, sequences.
_RELATIONS = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') ORDER BY c.relname
"""
_SECRET_PARAMS = ("password", "sslpassword")
CONNECT_TIMEOUT_S = 10


class StoreURL:
    """A store URL taken apart: what to connect with, what to show, what to redact."""

    def __init__(self, url: str, setting: str):
        check_store_url(url, setting)
        self.url = url.strip()
        parts = urlsplit(self.url)
        userinfo, _, hosts = parts.netloc.rpartition("@")
        user, has_password, password = userinfo.partition(":")
        query = parse_qsl(parts.query, keep_blank_values=True)
        secrets = [password, unquote(password)] if has_password else []
        secrets += [value for name, value in query if name in _SECRET_PARAMS]
        self.secrets = tuple(s for s in dict.fromkeys(secrets) if s)
        self.params = {name for name, _ in query}
        shown_query = "&".join(f"{name}={'***' if name in _SECRET_PARAMS else value}" for name, value in query)
        self.shown = redact(
            f"postgresql://{unquote(user) + '@' if user else ''}{hosts}{parts.path}{'?' + shown_query if query else ''}",
            self.secrets,
        )
        self.has_password = bool(self.secrets)

    def clean(self, text: str) -> str:
        return redact(text, self.secrets)


class PostgresStore(ResponseStore):
    """``read_only``: open an existing store in read-only transactions (nothing is created)."""

    backend = "postgres"
    _for_update = " FOR UPDATE"
    _now_sql = "extract(epoch FROM clock_timestamp())::float8"

    def __init__(
        self,
        target: str | os.PathLike | None = None,
        durable: bool = False,
        busy_timeout_s: float = 120.0,
        read_only: bool = False,
        setting: str | None = None,
    ):
        if not target:
            setting = setting or STORE_URL_ENV
        target = str(store_target(target))
        self.setting = setting or "response store URL"
        self._url = StoreURL(target, self.setting)
        if self._url.secrets:
            from resumebias_dagster.core.providers.base import guard_logs

            guard_logs(*self._url.secrets)
        self.location = self._url.shown
        self.read_only = read_only
        self._durable = durable
        self._busy_timeout_s = busy_timeout_s
        self._lock = threading.RLock()
        self._sql: dict[str, str] = {}
        self._conn = self._connect()
        try:
            self._open()
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ connecting

    def _connect(self) -> Any:
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                f"{self.setting}: a PostgreSQL response store needs psycopg (pip install 'psycopg[binary]')"
            ) from None
        options: dict[str, Any] = {"autocommit": True}
        if "application_name" not in self._url.params:
            options["application_name"] = "resumebias-store"
        if "connect_timeout" not in self._url.params:
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        problem = None
        try:
            conn = psycopg.connect(self._url.url, **options)
        except psycopg.Error as exc:
            problem = self._connect_problem(exc)
        if problem is not None:
            # Raised outside the except block: no chained exception carries libpq's text.
            raise StoreError(problem)
        try:
            conn.execute(f"SET lock_timeout = {int(self._busy_timeout_s * 1000)}")
            if self._durable:
                conn.execute("SET synchronous_commit = on")
            if self.read_only:
                conn.execute("SET default_transaction_read_only = on")
        except BaseException:
            conn.close()
            raise
        self._cursor = conn.cursor()
        return conn

    def _connect_problem(self, exc: Exception) -> str:
        import psycopg

        reason = self._url.clean(" ".join(str(exc).split()) or type(exc).__name__)
        where = f"{self.setting}: the response store at {self.location}"
        lowered = reason.lower()
        if isinstance(exc, psycopg.ProgrammingError) or "invalid" in lowered and "connection option" in lowered:
            return (
                f"{self.setting}: not a valid PostgreSQL URL ({reason}); expected postgresql://user@host:port/database"
            )
        if "password authentication failed" in lowered or "no password supplied" in lowered:
            return (
                f"{where}: the server refused the login ({reason}); check the user and the password (in the URL, "
                "PGPASSWORD or ~/.pgpass)"
            )
        if "does not exist" in lowered and "database" in lowered:
            return f"{where}: {reason}; create the database first (createdb), the store creates its tables itself"
        if "fatal:" in lowered:  # the server answered, and said no (an unknown role, too many connections, ...)
            return f"{where}: the server refused the connection ({reason})"
        return (
            f"{where} cannot be reached ({reason}); check the host and the port, and that the server accepts "
            "connections from this machine"
        )

    def _reconnected_after(self, exc: Exception) -> bool:
        import psycopg

        if not isinstance(exc, psycopg.OperationalError) or not (self._conn.broken or self._conn.closed):
            return False
        if getattr(self, "_closed", False):
            return False
        self._conn.close()
        self._conn = self._connect()
        return True

    # ------------------------------------------------------------------ the schema and its migrations

    def _inspect(self) -> tuple[list[str], int]:
        """The relations of the current schema, and the store version (0: no version table)."""
        schema = self._query("SELECT current_schema()")[0][0]
        if schema is None:
            raise StoreError(
                f"{self.setting}: the response store at {self.location}: its search_path names no schema that "
                "exists; create the schema first (CREATE SCHEMA ...), the store creates its tables itself"
            )
        relations = [r[0] for r in self._query(_RELATIONS)]
        version = 0
        if VERSION_TABLE in relations:
            version = int(self._query(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}")[0][0])
        return relations, version

    def _check(self, relations: list[str], version: int) -> None:
        ours = VERSION_TABLE in relations
        if relations and not ours:
            listed = ", ".join(relations[:8]) + (", ..." if len(relations) > 8 else "")
            raise StoreError(
                f"{self.setting}: {self.location} is not a response store (its schema holds {listed}); give the "
                "response store a database (or a schema, ?options=-csearch_path%3Dname) of its own; nothing was "
                "written to this one"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.setting}: {self.location} is a response store of a newer version ({version}; this code "
                f"knows up to {SCHEMA_VERSION}); upgrade resumebias_dagster on this machine"
            )
        if self.read_only and version < READABLE_VERSION:
            raise StoreError(
                f"{self.setting}: {self.location} is {'a response store of an older version' if ours else 'empty'}; "
                "open it once for writing to create or upgrade it"
            )

    def _open(self) -> None:
        relations, version = self._inspect()
        self._check(relations, version)
        if self.read_only:
            self._absent = frozenset(c.name for n, added in ADDED_BY.items() if n > version for c in added)
            self._batch_tables = version >= BATCH_MIGRATION
        if version == SCHEMA_VERSION or self.read_only:
            return
        import psycopg

        problem = None
        try:
            with self._conn.transaction():
                # Two processes opening a new store at once: the second waits here, then finds
                # the migrations applied.
                self._execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
                relations, version = self._inspect()
                self._check(relations, version)
                if version == 0:
                    self._conn.execute(_CREATE_VERSION_TABLE)
                for number, description, script in MIGRATIONS:
                    if number > version:
                        self._conn.execute(script)
                        self._execute(
                            f"INSERT INTO {VERSION_TABLE} (version, description) VALUES (?, ?)", (number, description)
                        )
        except psycopg.errors.InsufficientPrivilege as exc:
            problem = (
                f"{self.setting}: {self.location}: the user may not create the store's tables "
                f"({self._url.clean(str(exc).strip())}); grant it CREATE on the schema, or run the first "
                "open as the database's owner"
            )
        if problem is not None:
            raise StoreError(problem)

    # ------------------------------------------------------------------ hooks of base.ResponseStore

    def _pg(self, sql: str) -> str:
        converted = self._sql.get(sql)
        if converted is None:
            converted = self._sql[sql] = sql.replace("?", "%s")
        return converted

    def _query(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        self._cursor.execute(self._pg(sql), tuple(args))
        return self._cursor.fetchall()

    def _execute(self, sql: str, args: Iterable[Any] = ()) -> None:
        self._cursor.execute(self._pg(sql), tuple(args))

    def _statements(self, *statements: tuple[str, Iterable[Any]]) -> list[list[tuple] | int]:
        # One round trip each (a claim: five with BEGIN and COMMIT). Pipelined (two) measured
        # 0.22 ms a claim against 0.16 ms on one machine; it wins once a network adds more
        # than about 0.02 ms a round trip.
        results = []
        for sql, args in statements:
            self._cursor.execute(self._pg(sql), tuple(args))
            results.append(self._cursor.fetchall() if self._cursor.description else self._cursor.rowcount)
        return results

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._conn.transaction():
            yield

    def _lock_snapshots(self) -> None:
        self._execute("LOCK TABLE snapshots IN SHARE ROW EXCLUSIVE MODE")

    def _encode(self, values: dict[str, Any]) -> list[Any]:
        encoded = []
        for column in COLUMNS:
            value = values[column]
            if column == "text" and value is not None:
                value = value.encode("utf-8", "surrogatepass")
            elif isinstance(value, str):
                value = _storable(value)
            encoded.append(value)
        return encoded

    def _decode(self, record: dict[str, Any]) -> dict[str, Any]:
        if record["text"] is not None:
            record["text"] = bytes(record["text"]).decode("utf-8", "surrogatepass")
        return record

    def _put_releasing(self, values: list[Any], key: str, owner: Any) -> None:
        # One statement, so one round trip: the answer and the release commit together.
        self._execute(
            "WITH released AS (DELETE FROM claims WHERE key = ? AND owner = ?) " + UPSERT, (key, owner.token, *values)
        )

    def _close(self) -> None:
        self._closed = True
        self._conn.close()


def _storable(value: str) -> str:
    """``value`` as PostgreSQL's text can hold it: NUL and lone surrogates replaced."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode("utf-8")
    return value
