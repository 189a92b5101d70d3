"""Packaged configuration data (name pools, lexicons, occupations, job descriptions, models).

Every file can be overridden by a file of the same relative name in a user-supplied
folder (``RESUMEBIAS_CATALOG_DIR`` or a resource/asset setting); the packaged copy is the
default.

A packaged overlay folder, a *preset*, is named ``preset:NAME`` wherever a catalog folder is:
``presets/NAME/`` holds the files that differ from the packaged catalog (``preset:study003``:
study 003's design), and every other file falls back to the packaged one.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from resumebias_dagster.settings import CATALOG_DIR_ENV as CATALOG_DIR_ENV  # re-exported
from resumebias_dagster.settings import PRESET_PREFIX, is_preset
from resumebias_dagster.settings import catalog_dir as catalog_dir_setting

PACKAGED_DIR = Path(__file__).parent
PRESETS_DIR = PACKAGED_DIR / "presets"


class CatalogError(ValueError):
    """A catalog file is missing or malformed; the message names the file."""


def presets() -> list[str]:
    """The names of the packaged presets (``preset:NAME``)."""
    return sorted(p.name for p in PRESETS_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def preset_dir(value: str) -> Path:
    """The packaged folder of ``preset:NAME``; an unknown name is refused, listing the presets."""
    name = value.strip()[len(PRESET_PREFIX) :].strip()
    known = presets()
    if name not in known:
        raise CatalogError(
            f"catalog preset {name!r} (from {value.strip()!r}) does not exist; the presets are "
            f"{', '.join(PRESET_PREFIX + p for p in known) or 'none'}"
        )
    return PRESETS_DIR / name


def resolve_catalog_dir(catalog_dir: str | os.PathLike | None) -> Path | None:
    """The folder a catalog setting names: ``preset:NAME`` resolved, a path as given, None for none."""
    if not catalog_dir:
        return None
    if is_preset(catalog_dir):
        return preset_dir(str(catalog_dir))
    return Path(catalog_dir)


def catalog_path(name: str, catalog_dir: str | os.PathLike | None = None) -> Path:
    """Resolve ``name`` in the user folder (or preset) first, then in the packaged catalog."""
    setting = catalog_dir if catalog_dir is not None else catalog_dir_setting()
    user_dir = resolve_catalog_dir(setting)
    if user_dir is not None:
        if not user_dir.is_dir():
            raise CatalogError(f"catalog folder {user_dir} does not exist or is not a folder")
        candidate = user_dir / name
        if candidate.exists():
            return candidate
    packaged = PACKAGED_DIR / name
    if not packaged.exists():
        raise CatalogError(f"catalog file {name!r} is neither in {user_dir or 'the user folder'} nor packaged")
    return packaged


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What is wrong with a YAML file and where, without quoting its lines (a file named by
    mistake, say a key file, must not be echoed into an error)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}"


@lru_cache(maxsize=64)
def _load_yaml_file(path: str, mtime: float) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: not valid YAML: {yaml_problem(exc)}") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def load_yaml(name: str, catalog_dir: str | os.PathLike | None = None) -> Any:
    """Load a YAML catalog file (cached while the file is unchanged)."""
    path = catalog_path(name, catalog_dir)
    return _load_yaml_file(str(path), path.stat().st_mtime)
