"""Files the runs write (fine-tuned classifier folders, plots, reports) on the shared object
storage of several machines, beside the shared tables (``<tables url>/files/...``).

A folder is stored under the SHA-256 of its content (``files/<kind>/<digest>/...``) with a
manifest of every file's hash, written last: a folder without its manifest was never finished
and is never fetched. A worker that lacks a folder fetches it by that digest into its own data
directory, checks every file's hash, and only then moves it into place, so a half-copied or
altered folder is never loaded. Single files (plots, the report) are stored by name under
``files/reports/``: the latest one drawn.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import uuid
from pathlib import Path

from resumebias_dagster.core.common.shared_tables import (
    SharedTables,
    SharedTablesError,
    require_pyarrow,
)
from resumebias_dagster.settings import TABLES_URL_ENV

MANIFEST = "MANIFEST.json"
CHUNK = 1 << 20
DIGEST = re.compile(r"[0-9a-f]{64}")


class SharedFileError(RuntimeError):
    """A shared folder that cannot be used: missing, unfinished or altered; the message says which."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def folder_manifest(folder: str | os.PathLike) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder`` (the manifest itself excluded)."""
    root = Path(folder)
    return {
        p.relative_to(root).as_posix(): _sha256(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def manifest_digest(manifest: dict[str, str]) -> str:
    """The folder's content hash: SHA-256 of its manifest in a canonical form."""
    return hashlib.sha256(json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def folder_digest(folder: str | os.PathLike) -> str:
    return manifest_digest(folder_manifest(folder))


class SharedFiles:
    """Folders by content hash and single files by name under ``<url>/files/``."""

    def __init__(self, url: str, setting: str = TABLES_URL_ENV):
        self.tables = SharedTables(url, setting)
        self.url = url.rstrip("/")

    def _root(self):
        fs, root = self.tables._filesystem()
        return fs, f"{root}/files"

    def _output(self, fs, path: str):
        """A stream writing ``path`` (a local folder's parents are made first; S3 has none)."""
        if isinstance(fs, require_pyarrow().fs.LocalFileSystem):
            fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
        return fs.open_output_stream(path)

    def location(self, *parts: str) -> str:
        return "/".join([self.url, "files", *parts])

    # ------------------------------------------------------------------ folders
    def has_folder(self, kind: str, digest: str) -> bool:
        pa = require_pyarrow()
        fs, root = self._root()
        return fs.get_file_info(f"{root}/{kind}/{digest}/{MANIFEST}").type == pa.fs.FileType.File

    def put_folder(self, folder: str | os.PathLike, kind: str) -> str:
        """Upload ``folder`` (once per content); returns its digest."""
        manifest = folder_manifest(folder)
        if not manifest:
            raise SharedFileError(f"{folder}: an empty folder cannot be shared")
        digest = manifest_digest(manifest)
        if self.has_folder(kind, digest):
            return digest
        fs, root = self._root()
        base = f"{root}/{kind}/{digest}"
        for relative in manifest:
            with self._output(fs, f"{base}/{relative}") as out, (Path(folder) / relative).open("rb") as src:
                shutil.copyfileobj(src, out, CHUNK)
        # Written last: its presence says the folder is complete.
        with self._output(fs, f"{base}/{MANIFEST}") as out:
            out.write(json.dumps(manifest, sort_keys=True, indent=1).encode())
        return digest

    def fetch_folder(self, kind: str, digest: str, dest: str | os.PathLike) -> Path:
        """The folder of ``digest`` at ``dest``: already there with that content, or fetched,
        checked file by file, and moved into place."""
        if not DIGEST.fullmatch(digest or ""):
            # It names a folder of the shared files: a table row could otherwise point anywhere.
            raise SharedFileError(f"{self.location(kind)}: {digest[:80]!r} is not a SHA-256 content hash")
        dest = Path(dest)
        if dest.is_dir() and folder_digest(dest) == digest:
            return dest
        fs, root = self._root()
        base = f"{root}/{kind}/{digest}"
        where = self.location(kind, digest)
        try:
            with fs.open_input_stream(f"{base}/{MANIFEST}") as f:
                manifest = json.loads(f.read())
        except (FileNotFoundError, OSError):
            raise SharedFileError(
                f"{where}: no finished folder of that content hash in the shared files "
                f"(its training machine never uploaded it, or the upload was cut off)"
            ) from None
        if manifest_digest(manifest) != digest:
            raise SharedFileError(f"{where}: its manifest does not hash to {digest}; refusing the folder")
        partial = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.partial")
        try:
            for relative, expected in manifest.items():
                target = partial / relative
                if ".." in Path(relative).parts or Path(relative).is_absolute():
                    raise SharedFileError(f"{where}: manifest names {relative!r} outside the folder")
                target.parent.mkdir(parents=True, exist_ok=True)
                with fs.open_input_stream(f"{base}/{relative}") as src, target.open("wb") as out:
                    shutil.copyfileobj(src, out, CHUNK)
                if _sha256(target) != expected:
                    raise SharedFileError(
                        f"{where}/{relative}: content does not match its hash in the manifest; refusing the folder"
                    )
            if dest.exists():
                shutil.rmtree(dest)
            dest.parent.mkdir(parents=True, exist_ok=True)
            partial.rename(dest)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        return dest

    # ------------------------------------------------------------------ single files
    def put_file(self, path: str | os.PathLike, kind: str = "reports") -> str:
        fs, root = self._root()
        with self._output(fs, f"{root}/{kind}/{Path(path).name}") as out, Path(path).open("rb") as src:
            shutil.copyfileobj(src, out, CHUNK)
        return self.location(kind, Path(path).name)

    def get_file(self, name: str, kind: str = "reports") -> bytes | None:
        fs, root = self._root()
        try:
            with fs.open_input_stream(f"{root}/{kind}/{name}") as f:
                return f.read()
        except (FileNotFoundError, OSError):
            return None


__all__ = ["SharedFileError", "SharedFiles", "SharedTablesError", "folder_digest", "folder_manifest"]
