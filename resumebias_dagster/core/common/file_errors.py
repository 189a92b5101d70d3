"""What an error message about a user's file may quote from it, and where in it a problem is.

A file handed to ``resumebias analyze`` or ``analyze-fit`` may be anything: a
``.env`` file, a key pasted into a CSV, a binary. Error messages end up in
terminals, CI logs and bug reports, so they quote only what is plausibly harmless:

* a header name when it is a known column name, or looks like a header: at most
  ``MAX_WORD`` characters, each a letter, underscore, space or hyphen (no digits,
  no other symbols), in a header of more than one column (a lone word such as
  ``correct_horse_battery_staple`` could be a passphrase);
* a cell value when it is such a short word, or a short plain number (at most
  ``MAX_NUMBER`` characters of ``[+-]digits[.digits][e[+-]digits]``, like ``-3``,
  ``1.5``, ``1e300``).

Anything else is described by its length only ("a value of 47 characters (not
shown)"); the line/row and column still say where it is. Parser exception texts
(pandas, csv, DuckDB) are never quoted: ``csv_problem`` and ``parquet_problem``
reduce them to a fixed phrase.

No pandas, DuckDB or Dagster import: this module is plain Python.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "MAX_NUMBER",
    "MAX_WORD",
    "csv_problem",
    "csv_records",
    "hidden_value",
    "is_plain_number",
    "is_plain_word",
    "is_shown_header",
    "nul_byte",
    "parquet_problem",
    "PLAIN_NUMBER",
    "show_columns",
    "show_header",
    "show_number",
    "show_value",
]

MAX_WORD = 32
MAX_NUMBER = 12
# A plain decimal number (ASCII digits; no inf/nan, hex, underscores or spaces), any length.
PLAIN_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER = re.compile(PLAIN_NUMBER)


def is_plain_word(text: str) -> bool:
    """At most ``MAX_WORD`` characters, each a letter, ``_``, space or ``-``."""
    return len(text) <= MAX_WORD and all(c.isalpha() or c in "_ -" for c in text)


def is_plain_number(text: str) -> bool:
    """At most ``MAX_NUMBER`` characters of a plain decimal number (ASCII digits)."""
    return len(text) <= MAX_NUMBER and _NUMBER.fullmatch(text) is not None


def hidden_value(text: str) -> str:
    return f"a value of {len(text)} characters (not shown)"


def show_value(value: Any) -> str:
    """``value`` quoted (``'mid'``, ``'1.5'``) if it is a short word or plain number, else its length.

    Numbers that are not text (read from Parquet, or parsed already) are shown
    unquoted when short: ``3``, ``11`` (for 11.0), ``2.5``.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "an empty value"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        text = str(int(value))
        return text if is_plain_number(text) else hidden_value(text)
    if isinstance(value, numbers.Real):
        text = repr(float(value))  # the rule applies to the exact value; it is shown rounded (11.0 as 11)
        return f"{float(value):g}" if is_plain_number(text) or is_plain_word(text) else hidden_value(text)
    text = str(value)
    return repr(text) if is_plain_word(text) or is_plain_number(text) else hidden_value(text)


def show_number(raw: Any, value: float) -> str:
    """``value`` (parsed from the cell ``raw``) as ``1.5``/``inf``, if ``show_value`` would show ``raw``."""
    shown = show_value(raw)
    return f"{value:g}" if not shown.endswith("(not shown)") else shown


def is_shown_header(name: str, known: Iterable[str] = ()) -> bool:
    """Whether a header name may be quoted: a known column name, or a plain word."""
    return name in known or name.strip() in known or is_plain_word(name)


def show_header(name: str, known: Iterable[str] = ()) -> str:
    """A header name quoted if it is known or looks like a header, else its length."""
    known = tuple(known)
    if is_shown_header(name, known):
        return repr(name)
    return f"a column name of {len(name)} characters (not shown)"


def show_columns(names: Iterable[str], known: Iterable[str] = ()) -> str:
    """``a, b; 2 other column(s) not shown``: the header names that may be shown, and a count of the rest."""
    known = tuple(known)
    names = [str(n) for n in names]
    if len(names) == 1 and names[0] not in known and names[0].strip() not in known:
        # A first line of one word is no header one can tell from a passphrase.
        return "1 column(s) not shown"
    shown = [n.strip() or repr(n) for n in names if is_shown_header(n, known)]
    hidden = len(names) - len(shown)
    if not names:
        return "none"
    if not hidden:
        return ", ".join(shown)
    if not shown:
        return f"{hidden} column(s) not shown"
    return f"{', '.join(shown)}; {hidden} other column(s) not shown"


def nul_byte(raw: bytes) -> tuple[int, int] | None:
    """(1-based line, byte offset) of the first NUL byte, or None.

    pandas' CSV parser silently ends a field at a NUL, so a file holding one is
    refused rather than read wrong.
    """
    offset = raw.find(b"\0")
    if offset < 0:
        return None
    return raw.count(b"\n", 0, offset) + 1, offset


# Field contents do not change where records start or how many fields they have:
# reduce them to one character so that no field hits the csv module's size limit.
_CONTENT = re.compile(r'[^",\r\n ]+')


def csv_records(text: str, skipinitialspace: bool = False) -> Iterator[tuple[int, int]]:
    """(1-based start line, field count) of each non-blank CSV record, header first.

    Quoted fields (résumé texts) may span lines, so this re-reads the records
    with the csv module, on a copy of the text whose field contents are shrunk
    (no field is too large for it). Stops at a record the csv module cannot read.
    """
    reader = csv.reader(io.StringIO(_CONTENT.sub("x", text), newline=""), skipinitialspace=skipinitialspace)
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except (StopIteration, csv.Error):
            return
        if fields:  # pandas skips blank lines too
            yield start, len(fields)


_EXPECTED_FIELDS = re.compile(r"Expected \d+ fields in line \d+, saw \d+")


def csv_problem(exc: BaseException, text: str, skipinitialspace: bool = False) -> tuple[str, int | None]:
    """(problem, line or None) for a pandas/csv parser exception, without its text.

    The exception's message is matched against the few known parser errors and
    replaced by a fixed phrase; anything else becomes "not a readable CSV file".
    """
    message = str(exc)
    records = list(csv_records(text, skipinitialspace))
    if "EOF inside string" in message or "unexpected end of data" in message:
        # The csv module reads an unclosed quote up to the end: the last record is the one.
        return "a quoted field is never closed (unbalanced double quote)", records[-1][0] if records else None
    if _EXPECTED_FIELDS.search(message) and records:
        width = records[0][1]
        line, n_fields = next(((s, n) for s, n in records[1:] if n > width), (None, None))
        if line is not None:
            return f"{n_fields} fields, but the header has {width} columns", line
    if "No columns to parse" in message:
        return "no header (no columns to parse)", None
    return "not a readable CSV file (the CSV parser rejected it)", None


def parquet_problem(exc: BaseException) -> str:
    """A DuckDB error on reading a Parquet file, as a fixed phrase (DuckDB quotes paths and queries)."""
    message = str(exc)
    if "magic bytes" in message or "too small to be a Parquet file" in message:
        return "not a Parquet file (no Parquet magic bytes)"
    return f"not a readable Parquet file (DuckDB: {type(exc).__name__})"
