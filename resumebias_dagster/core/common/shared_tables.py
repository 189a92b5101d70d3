"""Tables shared by several machines: one Parquet file per table and partition on object storage.

Why Parquet on object storage (deploy/README.md says more): every worker can write its own
partitions at once without a database server or a lock (one object per partition, replaced
whole by one PUT), any S3-compatible service serves it, the files keep their column types,
and DuckDB, pandas or Spark read them as they are. DuckDB's own remote storage (DuckLake,
httpfs) needs extensions downloaded at run time, which a locked-down worker cannot do; here
pyarrow speaks S3 itself.

Layout under the URL (``s3://bucket/prefix`` or a local folder, ``file:///...``)::

    <schema>/<table>/data.parquet                           an unpartitioned table
    <schema>/<table>/<dim>=<value>[/<dim>=<value>]/data.parquet  one partition (dimensions by name)

Values are percent-encoded so a JD id or a model name with ``/`` stays one folder level.
Credentials never go in the URL: S3 keys come from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``), the endpoint of a non-AWS service from ``AWS_ENDPOINT_URL``.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import pandas as pd

from resumebias_dagster.settings import S3_ENDPOINT_ENV, TABLES_URL_ENV, s3_endpoint, s3_region

SCHEMA = "audit"  # the schema (and folder) of the study's tables, in DuckDB and shared
DATA_FILE = "data.parquet"
READ_THREADS = 16  # object storage answers many small GETs at once far faster than in turn


class SharedTablesError(ValueError):
    """A shared-tables URL or file that cannot be used; the message names the setting."""


Partition = Mapping[str, str]


def require_pyarrow():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.fs  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise SharedTablesError("shared tables need pyarrow: pip install 'resumebias_dagster[scale]'") from None
    return pyarrow


def check_tables_url(url: str, setting: str) -> str:
    """``url`` if it names a usable place for shared tables, else ``SharedTablesError``."""
    parts = urlsplit(url)
    if parts.scheme == "s3":
        if not parts.hostname:
            raise SharedTablesError(f"{setting}: {redact(url)} names no bucket (expected s3://BUCKET/PREFIX)")
        if parts.username or parts.password or parts.query:
            raise SharedTablesError(
                f"{setting}: {redact(url)} carries credentials or a query; give S3 keys in AWS_ACCESS_KEY_ID / "
                f"AWS_SECRET_ACCESS_KEY and a non-AWS endpoint in {S3_ENDPOINT_ENV}"
            )
        return url
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise SharedTablesError(f"{setting}: {url} must name an absolute folder (file:///...)")
        return url
    raise SharedTablesError(
        f"{setting}: {redact(url)} is not a shared-tables URL: expected s3://BUCKET/PREFIX (or file:///FOLDER on "
        f"one machine)"
    )


def redact(url: str) -> str:
    """``url`` without user info or query, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else url


@dataclass(frozen=True)
class SharedTables:
    """Read and write pandas tables as Parquet files under ``url`` (see the module doc)."""

    url: str
    setting: str = TABLES_URL_ENV

    def __post_init__(self):
        check_tables_url(self.url, self.setting)

    # ---------------------------------------------------------------- places
    def _filesystem(self):
        pa = require_pyarrow()
        parts = urlsplit(self.url)
        if parts.scheme == "file":
            return pa.fs.LocalFileSystem(), parts.path.rstrip("/")
        endpoint = s3_endpoint()
        options = {"region": s3_region()}
        if endpoint:
            ep = urlsplit(endpoint)
            if ep.scheme not in ("http", "https") or not ep.hostname:
                raise SharedTablesError(f"{S3_ENDPOINT_ENV}: {redact(endpoint)} is not an http(s) endpoint")
            options.update(endpoint_override=ep.netloc.rsplit("@", 1)[-1], scheme=ep.scheme)
        return pa.fs.S3FileSystem(**options), (parts.hostname + parts.path).rstrip("/")

    @staticmethod
    def partition_folder(partition: Partition | None) -> str:
        if not partition:
            return ""
        return "/".join(
            f"{quote(str(dim), safe='')}={quote(str(value), safe='')}" for dim, value in sorted(partition.items())
        )

    @staticmethod
    def _partition_of(relative: str) -> dict[str, str] | None:
        folders = relative.split("/")[:-1]
        if not folders:
            return None
        out = {}
        for folder in folders:
            dim, sep, value = folder.partition("=")
            if not sep:
                return None
            out[unquote(dim)] = unquote(value)
        return out

    def location(self, schema: str, table: str, partition: Partition | None = None) -> str:
        """The URL of one table's or partition's file (for metadata and messages)."""
        folder = self.partition_folder(partition)
        return "/".join(p for p in (self.url.rstrip("/"), schema, table, folder, DATA_FILE) if p)

    # ---------------------------------------------------------------- write
    def write(self, schema: str, table: str, frame: pd.DataFrame, partition: Partition | None = None) -> str:
        """Replace the table (or one partition of it) with ``frame``; returns its URL."""
        pa = require_pyarrow()
        fs, root = self._filesystem()
        folder = "/".join(p for p in (root, schema, table, self.partition_folder(partition)) if p)
        target = f"{folder}/{DATA_FILE}"
        data = pa.Table.from_pandas(frame, preserve_index=False)
        if isinstance(fs, pa.fs.LocalFileSystem):
            # A reader never sees half a file: write beside it, then rename over it.
            fs.create_dir(folder, recursive=True)
            partial = f"{folder}/.{uuid.uuid4().hex}.partial"
            pa.parquet.write_table(data, partial, filesystem=fs)
            fs.move(partial, target)
        else:
            # One PUT: the object appears whole or not at all.
            pa.parquet.write_table(data, target, filesystem=fs)
        return self.location(schema, table, partition)

    # ---------------------------------------------------------------- read
    def partitions(self, schema: str, table: str) -> dict[str, dict[str, str] | None]:
        """Every stored file of the table: path -> its partition (None for an unpartitioned table)."""
        pa = require_pyarrow()
        fs, root = self._filesystem()
        base = f"{root}/{schema}/{table}"
        try:
            infos = fs.get_file_info(pa.fs.FileSelector(base, recursive=True, allow_not_found=True))
        except FileNotFoundError:
            return {}
        found = {}
        for info in infos:
            if info.type != pa.fs.FileType.File or not info.path.endswith("/" + DATA_FILE):
                continue
            relative = info.path[len(base) + 1 :]
            found[info.path] = self._partition_of(relative)
        return dict(sorted(found.items()))

    def exists(self, schema: str, table: str) -> bool:
        return bool(self.partitions(schema, table))

    def read(self, schema: str, table: str, partitions: Iterable[Partition] | None = None) -> pd.DataFrame | None:
        """The table's rows: of the given partitions that are stored (all stored ones when None);
        ``None`` when the table has no file at all."""
        pa = require_pyarrow()
        fs, _ = self._filesystem()
        files = self.partitions(schema, table)
        if not files:
            return None
        if partitions is not None:
            wanted = {tuple(sorted((str(k), str(v)) for k, v in p.items())) for p in partitions}
            files = {path: p for path, p in files.items() if p is not None and tuple(sorted(p.items())) in wanted}
            if not files:
                return pd.DataFrame()

        def read_one(path: str):
            try:
                return pa.parquet.read_table(path, filesystem=fs)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
                # A file that is not Parquet (a bucket is written by many hands): one line naming it.
                raise SharedTablesError(f"{path}: not a readable Parquet file ({str(exc)[:200]})") from None

        with ThreadPoolExecutor(max_workers=min(READ_THREADS, len(files))) as pool:
            pieces = list(pool.map(read_one, files))
        kept = [(path, p) for path, p in zip(files, pieces) if p.num_rows] or [(next(iter(files)), pieces[0])]
        try:
            data = pa.concat_tables([p for _, p in kept], promote_options="permissive") if len(kept) > 1 else kept[0][1]
        except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:
            raise SharedTablesError(f"{schema}/{table}: {_type_clash(kept)}; ({exc})") from None
        return data.to_pandas()

    def tables(self, schema: str) -> list[str]:
        """Names of the tables stored under ``schema``."""
        pa = require_pyarrow()
        fs, root = self._filesystem()
        infos = fs.get_file_info(pa.fs.FileSelector(f"{root}/{schema}", recursive=False, allow_not_found=True))
        return sorted(Path(i.path).name for i in infos if i.type == pa.fs.FileType.Directory)


def _type_clash(pieces: list[tuple[str, Any]]) -> str:
    """Which column has which types in which files, for a message."""
    types: dict[str, dict[str, str]] = {}
    for path, piece in pieces:
        for field in piece.schema:
            types.setdefault(field.name, {}).setdefault(str(field.type), path)
    clashes = [
        f"{name} is {' in '.join(f'{t} ({p})' for t, p in seen.items())}"
        for name, seen in types.items()
        if len(seen) > 1
    ]
    return (
        "column types differ between partitions: "
        + ("; ".join(clashes) or "see below")
        + "; re-materialise the partitions written by an older version"
    )


def unreadable(setting: str, url: str, exc: BaseException) -> str:
    """The one-line error of shared tables that could not be read (object storage unreachable,
    refused, the bucket missing): the setting, the URL without credentials, the first line of
    the reason."""
    reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return f"{setting}: cannot read {redact(url)}: {reason}"


# A table's folder name becomes a DuckDB identifier when pulled: only asset-like names.
TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def pull_into_duckdb(
    shared: SharedTables, schema: str, database: str | os.PathLike, tables: Collection[str] | None = None
) -> tuple[dict[str, int], list[str]]:
    """Copy the shared tables into ``schema.<table>`` of the DuckDB file ``database`` (replaced
    whole), so ``duckdb FILE "select ..."`` inspects them; returns rows per table, and the
    folders skipped: a folder whose name is not in ``tables`` (the project's asset names), or
    not a plain identifier, is no table of ours (a bucket is written by many hands)."""
    if not TABLE_NAME.fullmatch(schema):
        raise SharedTablesError(f"schema {schema!r} is not a plain identifier")
    found = shared.tables(schema)
    wanted = [t for t in found if TABLE_NAME.fullmatch(t) and (tables is None or t in tables)]
    skipped = [t for t in found if t not in wanted]
    frames = {}
    for table in wanted:  # read (and check) everything before the file is touched
        frame = shared.read(schema, table)
        if frame is not None:
            frames[table] = frame
    if not frames:
        return {}, skipped
    return write_into_duckdb(frames, schema, database), skipped


def write_into_duckdb(frames: Mapping[str, pd.DataFrame], schema: str, database: str | os.PathLike) -> dict[str, int]:
    """Replace ``schema.<table>`` of the DuckDB file ``database`` by each frame (the table
    names plain identifiers); returns rows per table."""
    import duckdb

    for name in (schema, *frames):
        if not TABLE_NAME.fullmatch(name):
            raise SharedTablesError(f"{name!r} is not a plain identifier")
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(database)) as con:
        con.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        for table, frame in frames.items():
            con.register("pulled", frame)
            con.execute(f'CREATE OR REPLACE TABLE "{schema}"."{table}" AS SELECT * FROM pulled')
            con.unregister("pulled")
    return {t: len(f) for t, f in frames.items()}
