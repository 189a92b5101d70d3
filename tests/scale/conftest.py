"""A private PostgreSQL server for the scale-out tests (``resumebias_dagster.testing.postgres``):
its own cluster in a temporary folder, on a free port, started with the server binaries (no
system service)."""

import pytest

from resumebias_dagster.testing.postgres import PostgresServer, unavailable_reason


@pytest.fixture(scope="module")
def postgres():
    """Connection settings of a running server with an empty database `dagster` (trust auth)."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    try:
        import psycopg2  # noqa: F401 - what dagster-postgres connects with
    except ImportError:
        pytest.skip("psycopg2 not installed (pip install -e '.[test]' brings dagster-postgres)")
    try:
        server = PostgresServer(superuser="dagster").start()
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        server.create_database("dagster")
        yield {"host": server.host, "port": server.port, "user": "dagster", "password": "", "db": "dagster",
               "log": server.log}
    finally:
        server.stop()
