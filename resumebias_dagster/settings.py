"""Locations on disk, from the environment (read when called, never cached at import)."""

import os
from pathlib import Path

DATA_DIR_ENV = "RESUMEBIAS_DATA_DIR"


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or "data").absolute()


def duckdb_path() -> Path:
    return data_dir() / "resumebias.duckdb"


MODEL_CACHE_ENV = "RESUMEBIAS_MODEL_CACHE"


def model_cache_dir() -> Path:
    """Converted model weights (e.g. dequantised GGUF as safetensors): rebuildable, shareable."""
    return Path(os.environ.get(MODEL_CACHE_ENV) or data_dir() / "model-cache").absolute()
