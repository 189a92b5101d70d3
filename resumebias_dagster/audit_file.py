"""The audit file of ``resumebias run --config FILE``: one YAML file that says what to audit.

::

    # audit.yaml (paths are relative to this file)
    models_file: models.yaml     # the models to audit (kind http, python, hf-classifier, provider ...)
    catalog_dir: catalog         # optional: your job descriptions (catalog/job_descriptions/*.md)
    assets:                      # optional: each asset's config, as the UI's launchpad takes it
      user_resumes: {folder: resumes}     # your résumé files (read first, in a run of their own)
      probe_variants: {resumes: user}     # the job-description audit on them
      name_variants: {resumes: user}      # the seniority study's name test on them (labels needed)
      audit_report: {show_resume_texts: false}

``models_file`` and ``catalog_dir`` are set for the whole run, in place of ``RESUMEBIAS_MODELS_FILE``
and ``RESUMEBIAS_CATALOG_DIR`` (``settings.audit_file``). Each asset's config goes to the runs
whose job holds that asset. Every path the file names (relative ones are read from its folder)
must lie in the audit file's folder or a folder the operator allowed (the data directory,
``RESUMEBIAS_CATALOG_DIR``, ``RESUMEBIAS_ALLOWED_ROOTS``): an audit file cannot widen what run
config may read (issue 40). Its folder is added to the folders run config may name. Every
problem names the file and the setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

KEYS = ("models_file", "catalog_dir", "assets")
# Settings that name a file or folder, read relative to the audit file.
PATH_SETTINGS = {"user_resumes": ("folder", "csv")}


class AuditFileError(ValueError):
    """The audit file is malformed; the message names the file and the setting."""


@dataclass(frozen=True)
class AuditFile:
    path: Path
    models_file: Path | None = None
    catalog_dir: Path | None = None
    assets: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def run_config(self, node_names: set[str]) -> dict[str, Any]:
        """The ``ops`` run config of a job whose nodes are ``node_names``."""
        ops = {name: {"config": config} for name, config in self.assets.items() if name in node_names}
        return {"ops": ops} if ops else {}


def _path(value: Any, where: str, folder: Path, *, kind: str, roots: Sequence[Path] = ()) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise AuditFileError(f"{where} must name a {kind}, got {value!r}")
    path = Path(value).expanduser()
    path = path if path.is_absolute() else folder / path
    exists = path.is_dir() if kind == "folder" else path.is_file()
    if not exists:
        raise AuditFileError(f"{where}: {path} is not a {kind}")
    resolved = path.resolve()
    inside = [r for r in (folder, *roots) if resolved == r.resolve() or r.resolve() in resolved.parents]
    if not inside:
        raise AuditFileError(
            f"{where}: {path} lies outside the audit file's folder {folder} and the folders the operator allowed; "
            "move it under the audit file's folder, or add its folder to RESUMEBIAS_ALLOWED_ROOTS"
        )
    return path.absolute()


def _assets(value: Any, file: Path, roots: Sequence[Path]) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AuditFileError(f"{file}: assets must map asset names to their config, got {type(value).__name__}")
    assets: dict[str, dict[str, Any]] = {}
    for name, config in value.items():
        where = f"{file}: assets.{name}"
        if not isinstance(config, dict):
            raise AuditFileError(f"{where} must be a mapping of its settings, got {type(config).__name__}")
        config = dict(config)
        for setting in PATH_SETTINGS.get(str(name), ()):
            if setting in config:
                kind = "folder" if setting == "folder" else "file"
                config[setting] = str(_path(config[setting], f"{where}.{setting}", file.parent, kind=kind, roots=roots))
        assets[str(name)] = config
    return assets


def read_audit_file(path: str | Path, roots: Sequence[Path] = ()) -> AuditFile:
    """The audit file at ``path``, checked, its paths inside its folder or ``roots`` (the
    operator's: ``settings.user_roots``); ``AuditFileError`` naming the file and the setting."""
    file = Path(path).expanduser().absolute()
    if not file.is_file():
        raise AuditFileError(f"audit file {file} does not exist")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise AuditFileError(f"{file}: not a YAML file: {exc}") from None
    if not isinstance(data, dict):
        raise AuditFileError(f"{file}: expected a mapping with {', '.join(KEYS)}")
    unknown = sorted(map(str, set(data) - set(KEYS)))
    if unknown:
        raise AuditFileError(f"{file}: unknown setting(s) {', '.join(unknown)}; the settings are {', '.join(KEYS)}")
    models = data.get("models_file")
    catalog = data.get("catalog_dir")
    return AuditFile(
        path=file,
        models_file=_path(models, f"{file}: models_file", file.parent, kind="file", roots=roots)
        if models is not None
        else None,
        catalog_dir=_path(catalog, f"{file}: catalog_dir", file.parent, kind="folder", roots=roots)
        if catalog is not None
        else None,
        assets=_assets(data.get("assets"), file, roots),
    )


def check_asset_names(audit: AuditFile, known: set[str]) -> None:
    """Refuse config for an asset the definitions do not have."""
    unknown = sorted(set(audit.assets) - known)
    if unknown:
        raise AuditFileError(f"{audit.path}: assets: the definitions have no asset named {', '.join(unknown)}")
