"""What a screener sees of an audit's item ids (issue 39): ids that say nothing. One
implementation for the two ways a screener is called (``kind: http`` through the fan-out,
``kind: python`` in batches)."""

from __future__ import annotations

import secrets


def opaque_id() -> str:
    """An id that says nothing (16 hex digits from the OS's CSPRNG), new for each call: no id of
    ours (job description, résumé, variant, run) tells the screener it is being audited."""
    return secrets.token_hex(8)
