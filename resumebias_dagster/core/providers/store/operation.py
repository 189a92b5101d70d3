"""What base.py and batches.py share: a store method as one public operation, times, JSON text."""

from __future__ import annotations

import functools
import json
from datetime import datetime, timezone
from typing import Any


def _operation(method):
    """One public operation: under the store's lock, tried once more on a fresh connection
    when the backend says the connection was lost (a server restart, an idle cut)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - re-raised unless the backend reconnected
                if not self._reconnected_after(exc):
                    raise
            return method(self, *args, **kwargs)

    return wrapper


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def json_text(value: Any, sort_keys: bool = False) -> str:
    """``value`` as JSON text that any backend stores: UTF-8 as is, and where a string holds a
    lone surrogate (which no UTF-8 text column takes), ASCII with ``\\uXXXX`` escapes, which
    read back to the same value."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, sort_keys=sort_keys)
    return text
