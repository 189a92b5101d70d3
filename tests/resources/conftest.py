import pytest


@pytest.fixture(autouse=True)
def _tables_in_tmp_path(tmp_path, monkeypatch):
    """These tests keep their DuckDB files and shared tables in ``tmp_path``: the operator's
    allowed folders (run config may name no other) include it here."""
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
