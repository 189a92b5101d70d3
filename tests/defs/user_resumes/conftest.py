import pytest

from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.storage import ResumebiasIOManager


@pytest.fixture
def resources(tmp_path, monkeypatch):
    """A DuckDB file and the packaged catalog; the test's folder is one run config may name."""
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    return {
        "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
        "catalog": CatalogResource(),
    }
