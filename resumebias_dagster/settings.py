"""Locations on disk, from the environment (read when called, never cached at import)."""

import os
from pathlib import Path

from resumebias_dagster.catalog import CATALOG_DIR_ENV, is_preset

DATA_DIR_ENV = "RESUMEBIAS_DATA_DIR"


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or "data").absolute()


def duckdb_path() -> Path:
    return data_dir() / "resumebias.duckdb"


def classifiers_dir() -> Path:
    """Fine-tuned classifier folders, one per model and fingerprint."""
    return data_dir() / "models" / "classifiers"


MODEL_CACHE_ENV = "RESUMEBIAS_MODEL_CACHE"


def model_cache_dir() -> Path:
    """Converted model weights (e.g. dequantised GGUF as safetensors): rebuildable, shareable."""
    return Path(os.environ.get(MODEL_CACHE_ENV) or data_dir() / "model-cache").absolute()


# ------------------------------------------------------------------ paths named in run config
# Anyone who can reach the UI can write run config. A path given there (an import file, a
# models file, a catalog folder, a store file) must lie under a folder the operator chose:
# the data directory, the catalog folder of the environment, and any folder listed in
# RESUMEBIAS_ALLOWED_ROOTS (separated by the OS path separator).
ALLOWED_ROOTS_ENV = "RESUMEBIAS_ALLOWED_ROOTS"


class ConfigPathError(ValueError):
    """A path in run config lies outside the allowed folders; the message names the setting."""


def allowed_roots() -> list[Path]:
    roots = [data_dir()]
    catalog = os.environ.get(CATALOG_DIR_ENV, "")
    # ``preset:NAME`` names a packaged folder, no folder of the operator's.
    if catalog and not is_preset(catalog):
        roots.append(Path(catalog).expanduser().absolute())
    for entry in os.environ.get(ALLOWED_ROOTS_ENV, "").split(os.pathsep):
        if entry.strip():
            roots.append(Path(entry.strip()).expanduser().absolute())
    return roots


def checked_path(value: str | os.PathLike, setting: str) -> Path:
    """``value`` as an absolute path, if it lies under an allowed folder (symbolic links
    resolved, so a link under the data directory cannot point elsewhere); otherwise
    ``ConfigPathError`` naming ``setting``."""
    path = Path(value).expanduser().absolute()
    resolved = path.resolve()
    for root in allowed_roots():
        real_root = root.resolve()
        if resolved == real_root or real_root in resolved.parents:
            return path
    listed = ", ".join(str(r) for r in allowed_roots())
    raise ConfigPathError(
        f"{setting}: {value} is outside the folders run config may name ({listed}); move the file under one of "
        f"them, or have the operator add its folder to {ALLOWED_ROOTS_ENV}"
    )
