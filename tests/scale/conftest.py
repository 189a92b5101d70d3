"""Servers of the scale-out test, each private to it: PostgreSQL (Dagster's storage and the
response store) and Redis (Celery's broker); the S3 server is tests/conftest.py's."""

import pytest

from resumebias_dagster.testing import postgres as pg
from resumebias_dagster.testing import redis as rd


@pytest.fixture(scope="module")
def postgres():
    """Connection settings of a running server with empty databases `dagster` (runs, events)
    and `responses` (the response store), trust auth."""
    reason = pg.unavailable_reason()
    if reason:
        pytest.skip(reason)
    try:
        import psycopg2  # noqa: F401 - what dagster-postgres connects with
    except ImportError:
        pytest.skip("psycopg2 not installed (pip install -e '.[test]' brings dagster-postgres)")
    try:
        server = pg.PostgresServer(superuser="dagster").start()
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        server.create_database("dagster")
        server.create_database("responses")
        yield {
            "host": server.host,
            "port": server.port,
            "user": "dagster",
            "password": "",
            "db": "dagster",
            "log": server.log,
            "store_url": server.url("responses"),
        }
    finally:
        server.stop()


@pytest.fixture(scope="module")
def redis_broker(tmp_path_factory):
    """URLs of a private Redis server, or None where none can be started (the test then uses
    Celery's filesystem transport)."""
    if rd.unavailable_reason():
        yield None
        return
    server = rd.RedisServer(tmp_path_factory.mktemp("redis"))
    try:
        server.start()
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield server
    finally:
        server.stop()
