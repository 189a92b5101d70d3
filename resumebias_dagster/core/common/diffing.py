"""Token-level differences between two texts: the check that a variant changed exactly the
signal it was meant to change and nothing else."""

from __future__ import annotations

import difflib
import re

_TOKEN = re.compile(r"[A-Za-z0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-case alphanumeric tokens; punctuation and whitespace are separators."""
    return [t.lower() for t in _TOKEN.findall(text)]


def changed_tokens(a: str, b: str) -> tuple[list[str], list[str]]:
    """Tokens removed from ``a`` and tokens added in ``b`` (in order of appearance)."""
    ta, tb = tokens(a), tokens(b)
    removed: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "equal":
            removed.extend(ta[a0:a1])
            added.extend(tb[b0:b1])
    return removed, added


def unexplained_changes(a: str, b: str, allowed_a: set[str], allowed_b: set[str]) -> list[str]:
    """Changed tokens not accounted for by the allowed sets (empty list = only allowed tokens changed)."""
    removed, added = changed_tokens(a, b)
    return [t for t in removed if t not in allowed_a] + [t for t in added if t not in allowed_b]
