"""The choice read from a chat model's answer to the pairwise prompt (``prompts/pairwise.txt``:
"A", "B" or "Equal"), in the ranking parser's manner (``core/ranking/parse.py``): the label a
line begins with first, else what the prose says.

Reading. Accents and curly quotes are folded, and markdown, bullets and quotes before a word
are read past. A candidate is "A" or "B" as a word written in capitals ("A", "**B**",
"Candidate B"; a lower-case "a" is the article), or "candidate a" in any case. "Equal" is
``equal``, ``equally``, ``tie``, ``neither`` or ``same`` (as in "the same"), in any case.

Order. When the answer's first word is one of the three (its form as asked), that is the
choice, whatever follows ("A. Candidate A lists Kubernetes, which B lacks"), except a bare
"A" followed by a lower-case word other than a verb or "because" (``_AFTER_A``): that is the
article ("A strong case can be made for B"). Otherwise the
prose: a word of "Equal" anywhere makes it equal ("Both candidates are equally qualified");
else the first candidate named ("Candidate B is more qualified than A": B).

Errors, never choices: an empty answer; an answer that names neither candidate nor equality
("I would need more information"); one that declines ("I cannot compare candidates").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

EMPTY_ANSWER = "empty answer"
NAMES_NO_CANDIDATE = "names neither candidate nor equal"
DECLINES = "declines to choose"
EQUAL = "equal"

_LEAD = re.compile(r"^[\s>*_#`|•·+\-–—\"'(\[]*(?:answer\s*[:\-–—]\s*[*_\"']*)?", re.IGNORECASE)
_FIRST = re.compile(r"(?:candidate\s+)?(A|B|equal(?:ly)?)(?![^\W_])", re.IGNORECASE)
_EQUAL = re.compile(r"(?<![^\W_])(?:equal(?:ly)?|tie|tied|neither|same)(?![^\W_])", re.IGNORECASE)
_CANDIDATE = re.compile(r"(?<![^\W_])(?:candidate\s+([AaBb])|((?-i:[AB])))(?![^\W_])", re.IGNORECASE)
_DECLINE = re.compile(
    r"\b(?:i\s+(?:can\s*not|can't|cannot|won't|will\s+not|am\s+(?:unable|not\s+able)|must\s+decline|decline)"
    r"|i'm\s+(?:unable|not\s+able)|unable\s+to\s+(?:choose|compare|determine|decide))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedChoice:
    """ "A", "B" or "equal", or the reason there is none."""

    choice: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _fold(text: str) -> str:
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return plain.replace("’", "'").replace("‘", "'")


# Words that follow a candidate A opening a sentence ("A is more qualified"); any other
# lower-case word after a bare "A" makes it the article ("A strong case can be made for B").
_AFTER_A = frozenset({"is", "has", "because", "seems", "appears", "would", "should", "since", "clearly", "as"})


def _article(text: str, first: re.Match) -> bool:
    """Whether the bare "A" that opens ``text`` is the article: a lower-case word not in
    ``_AFTER_A`` follows it after one space."""
    if first.group(0) != "A":
        return False
    after = re.match(r" ([a-z]+)\b", text[first.end() :])
    return after is not None and after.group(1) not in _AFTER_A


def _label(word: str) -> str:
    return EQUAL if word.lower().startswith("equal") else word.upper()


def parse_choice(answer: str | None) -> ParsedChoice:
    """The choice ``answer`` makes between candidates A and B (module docstring)."""
    if answer is None or not answer.strip():
        return ParsedChoice(error=EMPTY_ANSWER)
    text = _fold(answer).strip()
    lead = _LEAD.match(text)
    first = _FIRST.match(text, lead.end() if lead else 0)
    article = first is not None and _article(text, first)
    if first and first.group(0) not in ("a", "b") and not article:
        return ParsedChoice(choice=_label(first.group(1)))
    if _DECLINE.search(text):
        return ParsedChoice(error=DECLINES)
    if _EQUAL.search(text):
        return ParsedChoice(choice=EQUAL)
    named = _CANDIDATE.search(text, first.end() if first is not None and article else 0)
    if named is None:
        return ParsedChoice(error=NAMES_NO_CANDIDATE)
    return ParsedChoice(choice=(named.group(1) or named.group(2)).upper())
