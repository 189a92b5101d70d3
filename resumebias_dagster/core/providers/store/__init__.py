"""The response store: every provider call is written down the moment it returns.

One interface (``base.ResponseStore``: the rules of a row, claims, snapshots), two backends:

- ``sqlite.SQLiteStore``: one file on a local disk, the default
  (``<data dir>/responses.sqlite``); any number of processes of one machine share it.
- ``postgres.PostgresStore``: a PostgreSQL database, selected by a URL
  (``postgresql://user@host:port/database``); workers on any number of machines share it, so
  a partition that moves to another worker never pays the provider again.

``ResponseStore(target)`` (or ``open_store(target)``) opens the one ``target`` names: a URL,
a file path, or nothing: ``$RESUMEBIAS_STORE_URL`` if set, else the default file. Importing
this package imports no database driver (psycopg is imported when a URL is opened).
"""

from __future__ import annotations

import os

from resumebias_dagster.core.providers.store.base import (
    BUSY,
    CLAIMED,
    DONE,
    STORE_FILE,
    STORE_URL_ENV,
    ClaimOwner,
    ResponseStore,
    StoreError,
    backend_class,
    check_store_url,
    default_store_path,
    is_store_url,
    store_target,
)
from resumebias_dagster.core.providers.store.sqlite import APPLICATION_ID, SQLiteStore


def open_store(target: str | os.PathLike | None = None, **options) -> ResponseStore:
    """The store ``target`` names (see the module doc); ``options``: ``durable``,
    ``busy_timeout_s``, ``read_only``, ``setting`` (named in error messages)."""
    return ResponseStore(target, **options)


__all__ = [
    "APPLICATION_ID",
    "BUSY",
    "CLAIMED",
    "DONE",
    "STORE_FILE",
    "STORE_URL_ENV",
    "ClaimOwner",
    "ResponseStore",
    "SQLiteStore",
    "StoreError",
    "backend_class",
    "check_store_url",
    "default_store_path",
    "is_store_url",
    "open_store",
    "store_target",
]
