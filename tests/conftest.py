import os
from pathlib import Path

import pytest

# Tests never reach a model hub: every weight comes from an installed package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEST_OUTPUT = Path(__file__).resolve().parent.parent / "test-output"


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
