"""The one module that reads the environment: every variable the package reads is named here,
read when called (never cached at import), and checked where it has a format.

Nothing else in the package reads ``os.environ`` (``tests/test_layout.py`` checks); it imports
nothing of the package but ``audit_file`` (which imports nothing of it), so every layer
(catalog, core, resources, assets) may use it.
The configuration reference (docs/configuration.md) lists every variable named here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "RESUMEBIAS_DATA_DIR"
DEFAULT_DATA_DIR = "data"
CREATED_MARK = ".created-by-resumebias"


class UntrustedFolderError(ValueError):
    """A folder or file the tool would read was not made by it, nor named by the operator."""


class UntrustedDataDirError(UntrustedFolderError):
    """``./data`` exists but this tool did not create it."""


def data_dir(*, checked: bool = True) -> Path:
    """``$RESUMEBIAS_DATA_DIR`` (the operator's choice), else ``./data`` if this tool created it.

    A ``data/`` folder that came with a clone or a copy can hold an instance config whose
    logging handler runs a command, or a response store of forged answers: the default folder
    is created when missing, and used only if the tool created it (the random token it left
    there is also kept in the per-user state folder, which no clone can write)."""
    chosen = os.environ.get(DATA_DIR_ENV)
    if chosen:
        return Path(chosen).absolute()
    path = Path(DEFAULT_DATA_DIR).absolute()
    if not checked:
        # Where it will be, neither created nor checked yet (the definitions' I/O manager at
        # import: importing creates no folder; its run checks it).
        return path
    try:
        path.mkdir()
        token = secrets.token_hex(16)
        (path / CREATED_MARK).write_text(token + "\n")
        _remember("data-dirs", f"{path}|{token}")
        return path
    except FileExistsError:
        pass
    if made_by_resumebias(path):
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


def made_by_resumebias(folder: Path) -> bool:
    """Whether ``folder`` is a data folder this tool created: its token, remembered in this
    account's state (a clone can copy the token file, not the state), and never a link."""
    return not folder.is_symlink() and _identity(folder) in _remembered("data-dirs")


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


def duckdb_path(*, checked: bool = True) -> Path:
    return data_dir(checked=checked) / "resumebias.duckdb"


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


def user_roots(*, checked: bool = True) -> list[Path]:
    """The folders the operator chose: the data directory, ``$RESUMEBIAS_CATALOG_DIR`` and those
    of ``$RESUMEBIAS_ALLOWED_ROOTS`` (not an audit file's: a file may not widen them)."""
    roots = [data_dir(checked=checked)]
    catalog = os.environ.get(CATALOG_DIR_ENV) or ""
    # ``preset:NAME`` names a packaged folder, no folder of the operator's.
    if catalog and not is_preset(catalog):
        roots.append(Path(catalog).expanduser().absolute())
    for entry in os.environ.get(ALLOWED_ROOTS_ENV, "").split(os.pathsep):
        if entry.strip():
            roots.append(Path(entry.strip()).expanduser().absolute())
    return roots


def allowed_roots() -> list[Path]:
    """The folders run config may name: the operator's (``user_roots``) and the audit file's
    own folder, under which an audit file keeps all its paths (``audit_file.read_audit_file``)."""
    roots = user_roots()
    audit = audit_file()
    if audit is not None:
        roots.append(audit.folder)
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


# ------------------------------------------------------------------ the catalog folder
CATALOG_DIR_ENV = "RESUMEBIAS_CATALOG_DIR"
PRESET_PREFIX = "preset:"


def is_preset(value: str | os.PathLike | None) -> bool:
    """Whether a catalog folder setting names a packaged preset rather than a folder."""
    return isinstance(value, str) and value.strip().startswith(PRESET_PREFIX)


def catalog_dir() -> str | None:
    """The audit file's ``catalog_dir`` (``audit_file``), else ``$RESUMEBIAS_CATALOG_DIR``: the
    user's catalog folder or ``preset:NAME`` (None: packaged only)."""
    audit = audit_file()
    if audit is not None and audit.catalog_dir is not None:
        return str(audit.catalog_dir)
    return os.environ.get(CATALOG_DIR_ENV) or None


# ------------------------------------------------------------------ the audit file
# ``resumebias run --config FILE`` and the UI it prints read one audit file: its models file,
# catalog folder and folder (for the paths run config may name) reach every setting through
# ``audit_file()``, nothing else. The CLI chooses it for its own process (``choose_audit_file``,
# before the definitions load); the UI and the runs it launches get ``$RESUMEBIAS_AUDIT_FILE``.
AUDIT_FILE_ENV = "RESUMEBIAS_AUDIT_FILE"
_audit_file_choice: list[Path] = []


def choose_audit_file(path: str | os.PathLike) -> None:
    """The audit file of this process (``resumebias run --config``), over ``$RESUMEBIAS_AUDIT_FILE``."""
    _audit_file_choice[:] = [Path(path).expanduser().absolute()]


def audit_file_path() -> Path | None:
    """The audit file chosen in this process, else ``$RESUMEBIAS_AUDIT_FILE`` (None: none)."""
    if _audit_file_choice:
        return _audit_file_choice[0]
    named = _text(AUDIT_FILE_ENV)
    return Path(named).expanduser().absolute() if named else None


def audit_file():
    """The audit file in use, read and checked (``audit_file.AuditFile``), or None; a bad one
    raises ``AuditFileError`` naming the file and the setting (and ``$RESUMEBIAS_AUDIT_FILE``
    when that is where it came from)."""
    path = audit_file_path()
    if path is None:
        return None
    from resumebias_dagster.audit_file import AuditFileError

    try:
        stat = path.stat()
        # Read again only when the file changes: the catalog asks for its folder at every file.
        return _read_audit_file(path, stat.st_mtime_ns, stat.st_size)
    except (AuditFileError, OSError) as exc:
        message = str(exc) if isinstance(exc, AuditFileError) else f"audit file {path} does not exist"
        raise AuditFileError(message if _audit_file_choice else f"{AUDIT_FILE_ENV}: {message}") from None


@functools.lru_cache(maxsize=4)
def _read_audit_file(path: Path, mtime_ns: int, size: int):
    from resumebias_dagster.audit_file import read_audit_file

    return read_audit_file(path, user_roots(checked=False))


# ------------------------------------------------------------------ models, store, shared tables
MODELS_FILE_ENV = "RESUMEBIAS_MODELS_FILE"
STORE_URL_ENV = "RESUMEBIAS_STORE_URL"
STORE_URLS_ENV = "RESUMEBIAS_STORE_URLS"
TABLES_URL_ENV = "RESUMEBIAS_TABLES_URL"
# Read by pyarrow's S3 filesystem too; named here for the shared tables on S3-compatible storage.
S3_ENDPOINT_ENV = "AWS_ENDPOINT_URL"
S3_REGION_ENV = "AWS_REGION"


def _text(name: str) -> str:
    return os.environ.get(name, "").strip()


def models_file() -> str:
    """The audit file's ``models_file``, else ``$RESUMEBIAS_MODELS_FILE`` (empty: the catalog's models.yaml)."""
    audit = audit_file()
    if audit is not None and audit.models_file is not None:
        return str(audit.models_file)
    return _text(MODELS_FILE_ENV)


def store_url() -> str:
    """``$RESUMEBIAS_STORE_URL``: the response store (empty: the SQLite file in the data folder)."""
    return _text(STORE_URL_ENV)


def store_urls() -> list[str]:
    """The stores run config may choose: ``$RESUMEBIAS_STORE_URL`` and those listed in
    ``$RESUMEBIAS_STORE_URLS`` (separated by spaces or commas). The worker's PGPASSWORD or
    ~/.pgpass goes to whatever server a store URL names, so the deployment, not whoever writes
    run config, decides which servers those are."""
    listed = [store_url()] + _text(STORE_URLS_ENV).replace(",", " ").split()
    return [url for url in listed if url]


def tables_url() -> str:
    """``$RESUMEBIAS_TABLES_URL``: the shared tables and files of several machines (empty: one machine)."""
    return _text(TABLES_URL_ENV)


def s3_endpoint() -> str:
    return _text(S3_ENDPOINT_ENV)


def s3_region() -> str:
    return _text(S3_REGION_ENV) or "us-east-1"


def secret(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of the variable a model entry names for its key (``environ``: the process's)."""
    return (environ if environ is not None else os.environ).get(name, "")


# ------------------------------------------------------------------ automation
ALIAS_SENSOR_ENV = "RESUMEBIAS_ALIAS_SENSOR"
ALIAS_SENSOR_INTERVAL_ENV = "RESUMEBIAS_ALIAS_SENSOR_INTERVAL_S"
REAUDIT_SCHEDULE_ENV = "RESUMEBIAS_REAUDIT_SCHEDULE"
REAUDIT_CRON_ENV = "RESUMEBIAS_REAUDIT_CRON"
REAUDIT_MIN_INTERVAL_ENV = "RESUMEBIAS_REAUDIT_MIN_INTERVAL_S"
DEFAULT_REAUDIT_CRON = "0 3 * * 1"


class SettingError(ValueError):
    """A variable's value has the wrong form; the message names the variable."""


def switched_on(name: str) -> bool:
    """A switch: ``1``, ``on``, ``true`` or ``yes`` (any case) is on; anything else off."""
    return _text(name).lower() in ("1", "on", "true", "yes")


def seconds(name: str, default: int, minimum: int, what: str) -> int:
    """A whole number of seconds from ``name`` (empty or unset: ``default``), at least ``minimum``."""
    raw = _text(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise SettingError(
            f"{name}={raw!r}: give a whole number of seconds, {minimum} or more ({what}; default {default})"
        )
    return value


def reaudit_cron() -> str:
    return os.environ.get(REAUDIT_CRON_ENV, DEFAULT_REAUDIT_CRON)


# ------------------------------------------------------------------ Dagster's instance
DAGSTER_HOME_ENV = "DAGSTER_HOME"


def dagster_home_choice() -> str | None:
    """``$DAGSTER_HOME`` when the operator set it."""
    return os.environ.get(DAGSTER_HOME_ENV) or None


# ------------------------------------------------------------------ a folder's .env
# Dagster's CLI (``dagster dev``, ``dagster asset materialize``) loads the working folder's
# ``.env`` into the environment before any code of ours runs, so a cloned folder can name a
# data folder or an instance of its own there (issue 40). What it ran by then cannot be undone
# (a dagster.yaml's handler runs when the instance loads); the definitions refuse to go on.
DOTENV = ".env"
# The instance config resumebias writes into a DAGSTER_HOME of its own (runner.dagster_home).
INSTANCE_TEMPLATE = Path(__file__).parent / "instance" / "dagster.yaml"


def instance_config_ours(config: Path) -> bool:
    """Whether ``config`` is an instance config resumebias wrote: today's template, or a copy
    it wrote and remembers (a dagster.yaml can run commands, so no other is read)."""
    return config.read_bytes() == INSTANCE_TEMPLATE.read_bytes() or wrote_file(config)


def dotenv_values(folder: Path) -> dict[str, str]:
    """The ``NAME=value`` lines of ``folder/.env`` (``export`` and quotes allowed), as Dagster
    reads them; {} when there is none."""
    try:
        text = (folder / DOTENV).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    values = {}
    for line in text.splitlines():
        line = line.strip().removeprefix("export ").strip()
        name, sep, value = line.partition("=")
        if sep and name.strip() and not name.startswith("#"):
            values[name.strip()] = value.strip().strip("'\"")
    return values


def check_dotenv(folder: Path | None = None) -> None:
    """Refuse a data folder, instance or state folder named by the working folder's ``.env``
    that resumebias did not create: ``UntrustedFolderError`` naming the file and the variable."""
    folder = Path(folder or Path.cwd()).absolute()
    values = dotenv_values(folder)
    came = {k for k in (DATA_DIR_ENV, DAGSTER_HOME_ENV, "XDG_STATE_HOME") if k in values and os.environ.get(k)}
    came = {k for k in came if os.environ[k] == values[k]}
    problem = None
    if "XDG_STATE_HOME" in came:
        problem = "XDG_STATE_HOME (where resumebias remembers the folders it created)"
    elif DATA_DIR_ENV in came:
        data = (folder / values[DATA_DIR_ENV]).absolute()
        if data.is_dir() and any(data.iterdir()) and not made_by_resumebias(data):
            problem = f"{DATA_DIR_ENV}={values[DATA_DIR_ENV]} (a data folder resumebias did not create)"
    if problem is None and DAGSTER_HOME_ENV in came:
        config = (folder / values[DAGSTER_HOME_ENV]).absolute() / "dagster.yaml"
        if config.is_file() and not instance_config_ours(config):
            problem = f"{DAGSTER_HOME_ENV}={values[DAGSTER_HOME_ENV]} (an instance config resumebias did not write)"
    if problem is not None:
        raise UntrustedFolderError(
            f"{folder / DOTENV} sets {problem}: the Dagster CLI reads a folder's .env, so a cloned or copied folder "
            "can point resumebias at a data folder or instance of its own (a dagster.yaml runs commands, a store can "
            "hold forged answers); set the variable in your shell, or remove it from .env. Do not run the Dagster "
            "CLI in a folder you do not trust: what its instance config runs has run already"
        )


def set_for_libraries(values: Mapping[str, str]) -> None:
    """Variables the libraries read at import (e.g. progress bars off in a log)."""
    os.environ.update(values)


ONEDNN_ISA_ENV = "ONEDNN_MAX_CPU_ISA"


def onednn_isa() -> str:
    """oneDNN's instruction-set cap when set (a CPU calibration is valid only under the same)."""
    return os.environ.get(ONEDNN_ISA_ENV, "default")


def command_environment(values: Mapping[str, str], drop_prefixes: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of a command this tool starts (``resumebias demo``'s own audit run):
    this process's, less the variables whose names start with one of ``drop_prefixes``, plus ``values``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(drop_prefixes)}
    environment.update(values)
    return environment
