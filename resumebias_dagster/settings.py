"""Locations on disk, from the environment (read when called, never cached at import)."""

import hashlib
import json
import os
import secrets
from pathlib import Path

from resumebias_dagster.catalog import CATALOG_DIR_ENV, is_preset

DATA_DIR_ENV = "RESUMEBIAS_DATA_DIR"
DEFAULT_DATA_DIR = "data"
CREATED_MARK = ".created-by-resumebias"


class UntrustedFolderError(ValueError):
    """A folder or file the tool would read was not made by it, nor named by the operator."""


class UntrustedDataDirError(UntrustedFolderError):
    """``./data`` exists but this tool did not create it."""


def data_dir() -> Path:
    """``$RESUMEBIAS_DATA_DIR`` (the operator's choice), else ``./data`` if this tool created it.

    A ``data/`` folder that came with a clone or a copy can hold an instance config whose
    logging handler runs a command, or a response store of forged answers: the default folder
    is created when missing, and used only if the tool created it (the random token it left
    there is also kept in the per-user state folder, which no clone can write)."""
    chosen = os.environ.get(DATA_DIR_ENV)
    if chosen:
        return Path(chosen).absolute()
    path = Path(DEFAULT_DATA_DIR).absolute()
    try:
        path.mkdir()
        token = secrets.token_hex(16)
        (path / CREATED_MARK).write_text(token + "\n")
        _remember("data-dirs", f"{path}|{token}")
        return path
    except FileExistsError:
        pass
    if not path.is_symlink() and _identity(path) in _remembered("data-dirs"):
        return path
    raise UntrustedDataDirError(
        f"{path} exists but was not created by resumebias on this account: a cloned or copied data folder can carry "
        "an instance config that runs commands, or forged answers in its response store, so it is not read. To use "
        f"it anyway, set {DATA_DIR_ENV}={path}; otherwise run from another folder, or move it away and let "
        "resumebias create its own"
    )


def state_dir() -> Path:
    """Per-user state of the tool (``$XDG_STATE_HOME/resumebias``): what it created and wrote."""
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base).absolute() / "resumebias"


def _identity(path: Path) -> str:
    """The folder's path and the random token the tool left in it when it created it: a
    clone cannot know the token (it is kept in the per-user state folder too), and a folder
    put in place of the created one has none (inode numbers are reused, so they cannot tell)."""
    try:
        token = (path / CREATED_MARK).read_text().strip()
    except (OSError, UnicodeDecodeError):
        token = ""
    return f"{path}|{token}"


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _remembered(kind: str) -> set[str]:
    try:
        return {json.loads(line) for line in (state_dir() / kind).read_text().splitlines() if line.strip()}
    except (FileNotFoundError, ValueError):
        return set()


def _remember(kind: str, entry: str) -> None:
    """Append ``entry`` to the per-user list ``kind`` (one JSON string a line; appends of one
    short line are atomic, so processes starting at once lose none)."""
    folder = state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / kind, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
    except OSError as exc:
        raise UntrustedFolderError(
            f"cannot record in {folder / kind} what resumebias created ({exc.strerror}): make that folder writable, "
            f"set XDG_STATE_HOME to a writable folder, or name the data folder in {DATA_DIR_ENV}"
        ) from None


def remember_file(path: Path) -> None:
    """Record that the tool wrote ``path`` as it is now (its content's digest)."""
    _remember("written-files", f"{Path(path).absolute()}|{file_digest(path)}")


def wrote_file(path: Path) -> bool:
    """Whether the tool wrote ``path`` with its current content."""
    return f"{Path(path).absolute()}|{file_digest(path)}" in _remembered("written-files")


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
