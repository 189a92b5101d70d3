"""Locations on disk, from the environment (read when called, never cached at import)."""

import os
from pathlib import Path

DATA_DIR_ENV = "RESUMEBIAS_DATA_DIR"


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or "data").absolute()


def duckdb_path() -> Path:
    return data_dir() / "resumebias.duckdb"
