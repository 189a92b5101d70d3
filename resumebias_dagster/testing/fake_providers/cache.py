"""A fake server's prompt cache: which part of a prompt's input a provider would report as read
from its cache, or written to it.

As the providers do: OpenAI and Gemini cache long prefixes by themselves (``automatic``: a
prompt's longest prefix, in whole blocks, that an earlier prompt to the same model began
with); Anthropic caches only what ``cache_control`` marks (``marked``: the marked prefix is
read when sent before, else written). Nothing shorter than ``min_tokens`` is cached. Only the
last user message counts (the fakes' prompts have no system part to speak of). Tokens are
characters / 4 here, as everywhere in the fake servers.
"""

from __future__ import annotations

import hashlib
import threading

CHARS_PER_TOKEN = 4
# OpenAI's cache grows in steps of 128 tokens, from 1024 tokens (Anthropic's and Gemini's
# shortest cached prompts are of that order too).
BLOCK_TOKENS = 128
MIN_TOKENS = 1024
# Remembered prefixes before the cache forgets them all (a real one evicts too).
MAX_ENTRIES = 1_000_000


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class PrefixCache:
    """The prefixes one server has seen, per model; thread-safe."""

    def __init__(self, min_tokens: int = MIN_TOKENS):
        self.min_chars = max(1, min_tokens) * CHARS_PER_TOKEN
        self.block_chars = BLOCK_TOKENS * CHARS_PER_TOKEN
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def _remember(self, digests: list[bytes]) -> None:
        if len(self._seen) + len(digests) > MAX_ENTRIES:
            self._seen.clear()
        self._seen.update(digests)

    def automatic(self, model: str, text: str) -> int:
        """Characters of ``text`` read from the cache (0, or ``min_tokens`` or more in whole
        blocks); every block-long prefix of ``text`` is remembered."""
        state = hashlib.blake2b(_encoded(model) + b"\x00", digest_size=16)
        ends: list[tuple[int, bytes]] = []
        start = 0
        for end in range(self.block_chars, len(text) + 1, self.block_chars):
            state.update(_encoded(text[start:end]))
            start = end
            if end >= self.min_chars:
                ends.append((end, state.copy().digest()))
        with self._lock:
            cached = max((end for end, digest in ends if digest in self._seen), default=0)
            self._remember([digest for _, digest in ends])
        return cached

    def marked(self, model: str, prefix: str) -> tuple[int, int]:
        """(characters read from the cache, characters written to it) for a prefix marked
        with ``cache_control``: read if the same model was sent it before, else written."""
        if len(prefix) < self.min_chars:
            return 0, 0
        digest = hashlib.blake2b(_encoded(model) + b"\x00" + _encoded(prefix), digest_size=16).digest()
        with self._lock:
            if digest in self._seen:
                return len(prefix), 0
            self._remember([digest])
        return 0, len(prefix)
