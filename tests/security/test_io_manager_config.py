"""What run config can do through the I/O managers and the response store's URL (issue 25,
items 1 and 2). Anyone who reaches the UI writes run config: a schema name spliced into SQL,
a database file or a table folder outside the data directory, or a store URL pointing at
their own server must each be refused before anything is written or sent. Each test failed on
the code before issue 25."""

from __future__ import annotations

import socket
import struct
import threading

import dagster as dg
import pandas as pd
import pytest

from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.storage import ResumebiasIOManager, SharedTablesIOManager


@dg.asset
def table() -> pd.DataFrame:
    return pd.DataFrame({"a": [1, 2]})


def _failure(result) -> str:
    texts = []
    for event in result.all_events:
        error = getattr(event.event_specific_data, "error", None)
        if error is not None:
            texts.append(error.to_string())
    return " ".join(texts)


def _run(io_manager, config: dict) -> tuple[bool, str]:
    try:
        result = dg.materialize(
            [table],
            resources={"io_manager": io_manager},
            raise_on_error=False,
            run_config={"resources": {"io_manager": {"config": config}}},
        )
    except Exception as exc:  # a resource refused at set-up raises out of materialize
        chain, error = [], exc
        while error is not None:
            chain.append(str(error))
            error = error.__cause__ or error.__context__
        return False, " ".join(chain)
    return result.success, _failure(result)


@pytest.mark.parametrize(
    "schema",
    [
        "audit; COPY (SELECT 42 AS pwned) TO '{target}'; CREATE SCHEMA IF NOT EXISTS audit2",
        "audit\"; COPY (SELECT 42) TO '{target}'; --",
        "../x",
        "a b",
    ],
)
def test_a_schema_from_run_config_is_an_identifier_never_sql(schema, data_dir, tmp_path):
    target = tmp_path / "pwned.csv"
    database = str(data_dir / "resumebias.duckdb")
    ok, text = _run(
        ResumebiasIOManager(database=database, schema="audit"),
        {"database": database, "schema": schema.format(target=target)},
    )
    assert not ok
    assert "io_manager.schema" in text and "letters, digits and underscores" in text
    assert not target.exists()


def test_a_plain_schema_from_run_config_still_works(data_dir):
    database = str(data_dir / "resumebias.duckdb")
    ok, text = _run(ResumebiasIOManager(database=database, schema="audit"), {"database": database, "schema": "audit_2"})
    assert ok, text


def test_a_database_file_outside_the_data_directory_is_refused(data_dir, tmp_path):
    outside = tmp_path / "elsewhere" / "planted.duckdb"
    ok, text = _run(
        ResumebiasIOManager(database=str(data_dir / "resumebias.duckdb"), schema="audit"),
        {"database": str(outside), "schema": "audit"},
    )
    assert not ok and "io_manager.database" in text and "outside the folders run config may name" in text
    assert not outside.exists() and not outside.parent.exists()


def test_duckdb_connection_settings_from_run_config_are_limited(data_dir, tmp_path):
    # custom_extension_repository + autoinstall would load code from the caller's server.
    database = str(data_dir / "resumebias.duckdb")
    ok, text = _run(
        ResumebiasIOManager(database=database, schema="audit"),
        {
            "database": database,
            "schema": "audit",
            "connection_config": {
                "custom_extension_repository": "http://127.0.0.1:9/x",
                "allow_unsigned_extensions": True,
            },
        },
    )
    assert not ok and "io_manager.connection_config" in text and "allow_unsigned_extensions" in text
    ok, text = _run(
        ResumebiasIOManager(database=database, schema="audit"),
        {"database": database, "schema": "audit", "connection_config": {"threads": 1}},
    )
    assert ok, text


@pytest.mark.parametrize("table_schema", ["../../x", "a/b", "audit;x", ".."])
def test_a_shared_table_folder_from_run_config_stays_under_the_shared_root(table_schema, tmp_path, monkeypatch):
    root = tmp_path / "tables"
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", f"file://{root}")
    ok, text = _run(
        SharedTablesIOManager(url=f"file://{root}"), {"url": f"file://{root}", "table_schema": table_schema}
    )
    assert not ok and "io_manager.table_schema" in text
    assert not any(p.suffix == ".parquet" for p in tmp_path.rglob("*"))


def test_a_shared_tables_url_from_run_config_lies_under_the_deployments(tmp_path, monkeypatch, data_dir):
    root, other = tmp_path / "tables", tmp_path / "elsewhere"
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", f"file://{root}")
    ok, text = _run(SharedTablesIOManager(url=f"file://{root}"), {"url": f"file://{other}"})
    assert not ok and "io_manager.url" in text and "RESUMEBIAS_TABLES_URL" in text
    assert not other.exists()
    # A folder under the deployment's URL, or under the data directory, is fine.
    ok, text = _run(SharedTablesIOManager(url=f"file://{root}"), {"url": f"file://{root}/study-b"})
    assert ok, text
    ok, text = _run(SharedTablesIOManager(url=f"file://{root}"), {"url": f"file://{data_dir}/tables"})
    assert ok, text


def test_a_file_url_with_a_host_is_refused(tmp_path, monkeypatch, data_dir):
    # Issue 40: file://localhost/<outside> was checked as the relative path "localhost/..."
    # (under the working directory) and written to /<outside>.
    root, other = tmp_path / "tables", tmp_path / "elsewhere"
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", f"file://{root}")
    monkeypatch.chdir(data_dir)
    (data_dir / "localhost").mkdir()
    for url in (f"file://localhost{other}", f"file://localhost{data_dir}/x", f"file://{data_dir.name}{other}"):
        ok, text = _run(SharedTablesIOManager(url=f"file://{root}"), {"url": url})
        assert not ok and "io_manager.url" in text, url
    assert not other.exists()


# ------------------------------------------------------------------ item 2: the store URL


class PasswordCatcher:
    """A server on 127.0.0.1 that speaks just enough of PostgreSQL's protocol to ask for a
    cleartext password, and records what it is sent."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(5)
                    length, code = struct.unpack("!ii", conn.recv(8))
                    if code in (80877103, 80877104):  # SSL / GSS request: no
                        conn.sendall(b"N")
                        length, code = struct.unpack("!ii", conn.recv(8))
                    conn.recv(length - 8)
                    conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
                    self.received.append(conn.recv(4096))
                except (OSError, struct.error):
                    pass

    def close(self):
        self.sock.close()


def test_a_store_url_from_run_config_must_be_one_the_deployment_lists(tmp_path, monkeypatch, data_dir):
    pytest.importorskip("psycopg")
    catcher = PasswordCatcher()
    monkeypatch.setenv("PGPASSWORD", "worker-db-secret-77")
    monkeypatch.delenv("RESUMEBIAS_STORE_URL", raising=False)
    monkeypatch.delenv("RESUMEBIAS_STORE_URLS", raising=False)

    @dg.asset
    def answers(providers: ProvidersResource) -> None:
        providers.store()

    url = f"postgresql://audit@127.0.0.1:{catcher.port}/responses?connect_timeout=3"
    try:
        with pytest.raises(Exception) as raised:
            dg.materialize(
                [answers],
                resources={"providers": ProvidersResource()},
                run_config={"resources": {"providers": {"config": {"store_url": url}}}},
            )
    finally:
        catcher.close()
    chain, error = [], raised.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    text = " ".join(chain)
    assert "providers.store_url" in text and "RESUMEBIAS_STORE_URLS" in text
    assert "worker-db-secret-77" not in text
    assert not any(b"worker-db-secret-77" in r for r in catcher.received)


def test_a_store_url_the_deployment_lists_is_accepted(monkeypatch):
    from resumebias_dagster.core.providers.store import StoreError
    from resumebias_dagster.resources.providers import check_store_url_allowed

    listed = "postgresql://audit@db.internal:5432/responses"
    monkeypatch.setenv("RESUMEBIAS_STORE_URLS", " ".join(["postgresql://x@other:5432/db", listed]))
    check_store_url_allowed("postgresql://audit@db.internal/responses", "providers.store_url")  # default port
    monkeypatch.delenv("RESUMEBIAS_STORE_URLS")
    monkeypatch.setenv("RESUMEBIAS_STORE_URL", "postgresql://audit:pw@db.internal:5432/responses")
    check_store_url_allowed(listed, "providers.store_url")
    with pytest.raises(StoreError, match="providers.store_url: .*not a store this deployment lists"):
        check_store_url_allowed("postgresql://audit@db.internal:5432/other", "providers.store_url")


@pytest.mark.parametrize(
    "query",
    ["?host=127.0.0.1&port=6543", "?hostaddr=127.0.0.1", "?port=6543", "?sslmode=disable", "?service=elsewhere"],
)
def test_a_listed_store_url_with_its_own_query_is_not_the_listed_store(monkeypatch, query):
    # Issue 40: libpq honours ?host=, ?hostaddr= and ?port= over the URL's host, so the listed
    # URL plus such a query sent the worker's PGPASSWORD to a listener of the run config's choosing.
    from resumebias_dagster.core.providers.store import StoreError
    from resumebias_dagster.resources.providers import check_store_url_allowed

    listed = "postgresql://audit@db.internal:5432/responses"
    monkeypatch.delenv("RESUMEBIAS_STORE_URL", raising=False)
    monkeypatch.setenv("RESUMEBIAS_STORE_URLS", listed)
    with pytest.raises(StoreError, match="providers.store_url: not a store this deployment lists"):
        check_store_url_allowed(listed + query, "providers.store_url")
    # The deployment may list a URL with a query; the same query (in any order) is that store.
    monkeypatch.setenv(
        "RESUMEBIAS_STORE_URLS", "postgresql://audit@db.internal/responses?sslmode=require&connect_timeout=5"
    )
    check_store_url_allowed(
        "postgresql://audit@db.internal:5432/responses?connect_timeout=5&sslmode=require", "providers.store_url"
    )
    with pytest.raises(StoreError):
        check_store_url_allowed("postgresql://audit@db.internal:5432/responses", "providers.store_url")
