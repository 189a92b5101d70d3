import os
from pathlib import Path

import pytest

# Tests never reach a model hub: every weight comes from an installed package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEST_OUTPUT = Path(__file__).resolve().parent.parent / "test-output"

# Tests that use no private data directory (the `data_dir` fixture) share the repository's
# data/ folder, named here as an operator would: a data/ folder the tool did not create is
# otherwise refused (tests/security/test_data_dir_trust.py).
os.environ.setdefault("RESUMEBIAS_DATA_DIR", str(Path(__file__).resolve().parent.parent / "data"))


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A private data directory (DuckDB file, model caches) for one test."""
    d = tmp_path / "data"
    d.mkdir()
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(d))
    return d


# Converted model weights (e.g. the dequantised Gemma GGUF, ~1 GB) are shared by every test
# and every local test run: converting takes about a minute, reading the cache seconds.
SHARED_MODEL_CACHE = Path(__file__).resolve().parent.parent / "data" / "test-cache"
os.environ.setdefault("RESUMEBIAS_MODEL_CACHE", str(SHARED_MODEL_CACHE))


# ------------------------------------------------------------------ fake provider APIs
# Fake provider APIs on 127.0.0.1 (resumebias_dagster.testing.fake_providers) and models pointing
# the real SDK clients at them, with tiny timeouts and retry delays.

# Imported after the environment above is set (offline hubs, the model cache).
from resumebias_dagster.core.models.model_config import parse_models  # noqa: E402
from resumebias_dagster.core.providers import ProviderSettings, ResponseStore  # noqa: E402
from resumebias_dagster.testing.fake_providers import FakeProviderServer  # noqa: E402

# Recognisable, so a test can search every output for it.
FAKE_KEY = "sk-FAKEKEY-3b9d7c1e5f0a42d8-do-not-leak"
KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
PROVIDER = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
ALIAS = {"openai": "openai/gpt-5", "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-pro"}
WIRES = tuple(PROVIDER)


def model_entry(wire: str, base_url: str, name: str | None = None, **options) -> dict:
    entry = {
        "name": name or f"fake-{wire}",
        "kind": "provider",
        "provider": PROVIDER[wire],
        "model": ALIAS[wire],
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "temperature": 0.7,
        "runs_per_cell": 1,
        "max_retries": 2,
        "timeout_s": 2.0,
        "retry_initial_delay_s": 0.01,
        "max_concurrency": 8,
    }
    entry.update(options)
    return entry


def settings_for(wire: str, base_url: str, **options) -> ProviderSettings:
    return ProviderSettings.from_spec(parse_models({"models": [model_entry(wire, base_url, **options)]}, "test")[0])


@pytest.fixture(name="model_entry")
def model_entry_fixture():
    """``model_entry(wire, base_url, name=None, **options)``: a models-config entry."""
    return model_entry


@pytest.fixture(name="settings_for")
def settings_for_fixture():
    """``settings_for(wire, base_url, **options)``: ProviderSettings of a fake model."""
    return settings_for


@pytest.fixture
def fake_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    return FAKE_KEY


@pytest.fixture
def fake_server():
    """``fake_server(wire, **kwargs)`` starts a server, stopped after the test."""
    servers = []

    def start(wire: str, **kwargs) -> FakeProviderServer:
        server = FakeProviderServer(wire, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def store(tmp_path):
    with ResponseStore(tmp_path / "responses.sqlite") as s:
        yield s


# ------------------------------------------------------------------ a private PostgreSQL server
# Started once per session, only by tests that ask for it (resumebias_dagster.testing.postgres);
# skipped, saying why, where no server binaries are installed.


@pytest.fixture(scope="session")
def postgres_server():
    from resumebias_dagster.testing.postgres import PostgresServer, unavailable_reason

    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    pytest.importorskip("psycopg", reason="psycopg not installed (pip install -e . brings psycopg[binary])")
    try:
        server = PostgresServer().start()
    except RuntimeError as e:
        pytest.fail(str(e))
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a new, empty database of the private server (its superuser, no password)."""
    return postgres_server.url(postgres_server.create_database())


@pytest.fixture(params=["sqlite", "postgres"])
def store_target(request, tmp_path):
    """Where a store of each backend lives: a file path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "responses.sqlite")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def everything_stored():
    """A function giving all a store holds as bytes: the SQLite file with its WAL, or every row
    of every table (to search for a secret, or for bytes that must be kept)."""

    def read(store) -> bytes:
        if store.backend == "sqlite":
            return store.path.read_bytes() + b"".join(p.read_bytes() for p in store.path.parent.glob("*-wal"))
        rows = [
            repr(row)
            for table in ("responses", "snapshots", "claims")
            for row in store._query(f"SELECT * FROM {table}")
        ]
        return "\n".join(rows).encode()

    return read


@pytest.fixture
def any_store(store_target):
    """A store of each backend (the tests of the store's rules run on both)."""
    with ResponseStore(store_target) as s:
        yield s


@pytest.fixture(scope="session")
def s3_server():
    """A private S3-compatible server (moto on 127.0.0.1) for the shared-tables tests."""
    from resumebias_dagster.testing import s3

    reason = s3.unavailable_reason()
    if reason:
        pytest.skip(reason)
    with s3.S3Server() as server:
        yield server


@pytest.fixture(params=["file", "s3"])
def tables_url(request, tmp_path, monkeypatch):
    """A shared-tables URL, once on a local folder and once on the private S3 server (a bucket
    of its own per test module, its credentials in the environment)."""
    if request.param == "file":
        return f"file://{tmp_path}/tables"
    server = request.getfixturevalue("s3_server")
    bucket = request.module.__name__.rsplit(".", 1)[-1].replace("_", "-")
    server.create_bucket(bucket)
    for k, v in server.env().items():
        monkeypatch.setenv(k, v)
    return f"s3://{bucket}/{tmp_path.name}"
