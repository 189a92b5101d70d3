"""Strict parsing of model answers: a seniority label, or one JSON object.

Strict means an answer either names one thing without doubt or is reported as unparsable
with the reason; it is never guessed. The seniority notebook took the first of "junior", "mid",
"senior" found as a substring, so "mid-senior" became "mid" and "not junior" became
"junior"; here both are unparsable.

Labels. Accepted: the label alone in any case, with markdown (``**Senior**``, fences,
backticks, quotes), trailing punctuation ("Senior."), a prefix such as "Seniority level:" or
"Answer:", the suffix "-level" ("Mid-level"), and the synonyms "entry-level" (junior)
and "intermediate" (mid). Prose is accepted when it names exactly one level
("Based on the resume, the level is: mid"); when it names several, a line holding a label
alone decides (reasoning first, answer last, or the reverse) unless such lines disagree.
Refused: several levels ("mid-senior", "junior or mid"), a negated level ("not senior"),
no level at all, and other scales ("lead", "principal").

JSON. Accepted: one JSON object, alone, in a markdown fence, or with prose around it.
Repaired: trailing commas before ``}`` or ``]`` (a common slip that changes no meaning).
Refused: anything else that is not strict JSON (single quotes, comments, NaN, unquoted
keys), duplicate keys, a top-level array or scalar, and two or more objects.

Text. What the parsers hand on is valid UTF-8: a lone surrogate (an answer holding the
JSON escape ``\\ud800``, or a byte that is not UTF-8 kept surrogate-escaped by the store)
becomes U+FFFD (``valid_utf8``), because DuckDB, Parquet and PostgreSQL refuse to write it.
The store keeps the answer exactly as it came.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS

_LABEL_PATTERNS = {
    "junior": r"junior(?:[- ]?level)?|entry[- ]?level",
    "mid": r"mid(?:[- ]?level)?|intermediate",
    "senior": r"senior(?:[- ]?level)?",
}
_MENTION = re.compile(
    # Not inside a word ("seniority", "midst") and not a date ("mid-2019").
    "|".join(f"(?P<{label}>(?<![a-z])(?:{pattern})(?![a-z])(?![- ]?\\d))" for label, pattern in _LABEL_PATTERNS.items())
)
_NEGATION = re.compile(
    r"(?:\bnot|\bno|n't|\bneither|\bnor|\brather than|\binstead of)\s+(?:a\s+|an\s+|the\s+)?(?:quite\s+|yet\s+)?$"
)
_PREFIX = re.compile(
    r"^(?:(?:final\s+)?answer|seniority(?:\s+level)?|level|classification|prediction|label|output|result)\s*[:=\-–]\s*"
)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_DECORATION = str.maketrans({c: " " for c in '*_`"“”#>'})
_QUOTE = re.compile(r"(?<![a-z])'|'(?![a-z])")  # a quote mark, not the apostrophe of "isn't"
_BULLET = re.compile(r"^(?:[-•]|\d+[.)])\s+")
_TRAILING = " \t.!;,:)]}("


def valid_utf8(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so that it encodes as UTF-8.

    Through UTF-16 with ``surrogatepass``: a surrogate pair split over two code points (CESU)
    becomes its character again, and only a truly lone surrogate is replaced.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _valid_strings(value: Any) -> Any:
    """``value`` (parsed JSON) with every string, keys included, made valid UTF-8."""
    if isinstance(value, str):
        return valid_utf8(value)
    if isinstance(value, list):
        return [_valid_strings(v) for v in value]
    if isinstance(value, dict):
        return {valid_utf8(k): _valid_strings(v) for k, v in value.items()}
    return value


# A JSON escape of a surrogate (``\ud800``): only then can a parsed string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


@dataclass(frozen=True)
class Parsed:
    """``value`` when the answer parsed; otherwise ``reason`` says why not."""

    value: Any = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None


def _unfence(text: str) -> str:
    fenced = _FENCE.findall(text)
    return fenced[0] if len(fenced) == 1 else text


def _clean_line(line: str) -> str:
    line = line.replace("\u2019", "'").replace("\u2018", "'").lower().translate(_DECORATION)
    line = _QUOTE.sub(" ", line).strip()
    line = _BULLET.sub("", line)
    line = _PREFIX.sub("", line).strip()
    return line.strip(_TRAILING).strip()


def _alone(line: str) -> str | None:
    """The label if ``line`` (cleaned) is nothing but one label."""
    match = _MENTION.fullmatch(line)
    return match.lastgroup if match else None


def _words_before(text: str, end: int, window: int = 48) -> str:
    """The whole words in the ``window`` characters before ``end``: a negation sits right
    before its level, and looking only there keeps a hostile answer with many mentions linear."""
    start = max(0, end - window)
    while 0 < start < end and text[start - 1].isalnum():
        start += 1
    return text[start:end]


def parse_label(text: str | None, labels: tuple[str, ...] = SENIORITY_LEVELS) -> Parsed:
    """The one seniority label ``text`` gives, or the reason there is none (see module doc)."""
    if text is None or not text.strip():
        return Parsed(reason="empty answer")
    body = _unfence(text)
    lines = [_clean_line(line) for line in body.splitlines()]
    lines = [line for line in lines if line]
    whole = _clean_line(" ".join(lines))
    alone = _alone(whole)
    if alone:
        return Parsed(alone)
    mentions = []
    for match in _MENTION.finditer(whole):
        if _NEGATION.search(_words_before(whole, match.start())):
            return Parsed(reason=f"negated level {match.group(0)!r}")
        mentions.append(str(match.lastgroup))  # every alternative of _MENTION is a named group
    distinct = sorted(set(mentions), key=labels.index)
    if len(distinct) == 1:
        return Parsed(distinct[0])
    if not distinct:
        return Parsed(reason="names no level")
    answer_lines = {label for label in (_alone(line) for line in lines) if label}
    if len(answer_lines) == 1:
        return Parsed(answer_lines.pop())
    return Parsed(reason=f"names several levels ({', '.join(distinct)})")


def _strip_trailing_commas(text: str) -> str:
    """Drop commas that directly precede ``}`` or ``]`` outside strings."""
    out: list[str] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == ",":
            j = i + 1
            while j < len(text) and text[j].isspace():
                j += 1
            if j < len(text) and text[j] in "}]":
                continue
        out.append(ch)
    return "".join(out)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters. Never raises: an answer's
    integer of more than 4,300 digits has no repr, and a reason must always be written."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# What reading a hostile answer can raise (a huge integer, a deep nesting): each becomes the
# row's reason, never an exception, since the answer is already stored as final (issue 40).
UNREADABLE = (ValueError, OverflowError, TypeError, RecursionError, MemoryError)


def parse_json_object(text: str | None) -> Parsed:
    """The one JSON object in ``text``, or the reason there is none (see module doc).

    The object starts at the first ``{``; prose before it must hold no brace, and after it
    no second object may follow.
    """
    if text is None or not text.strip():
        return Parsed(reason="empty answer")
    text = valid_utf8(text)
    body = _strip_trailing_commas(_unfence(text).strip())
    start = body.find("{")
    if start < 0:
        return Parsed(reason="no JSON object")
    if body[:start].rstrip().endswith("["):
        return Parsed(reason="a JSON array, expected one object")
    try:
        value, end = _DECODER.raw_decode(body, start)
    except RecursionError:
        return Parsed(reason="the JSON is nested too deeply to read")
    except (json.JSONDecodeError, ValueError) as exc:
        return Parsed(reason=f"not valid JSON: {exc}")
    rest = body[end:]
    if "{" in rest:
        try:
            _DECODER.raw_decode(rest, rest.index("{"))
            return Parsed(reason="more than one JSON object")
        except (json.JSONDecodeError, ValueError, RecursionError):
            pass
    if _SURROGATE_ESCAPE.search(body, start, end):
        try:
            value = _valid_strings(value)
        except RecursionError:
            return Parsed(reason="the JSON is nested too deeply to read")
    return Parsed(value)
