"""CSV text for the files the tool writes for people to open: a text cell that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to a spreadsheet (a
``tool_name`` of ``=HYPERLINK(...)`` ran when the Local Law 144 summary was opened, issue 40),
so it is written with a leading apostrophe, which spreadsheets show as text. Numbers are
written as they are."""

from __future__ import annotations

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutral_cell(value: object) -> object:
    """``value``, or ``'value`` where it is text a spreadsheet would read as a formula."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV, every text cell (and column name) neutralised (``neutral_cell``)."""
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object:
            safe[column] = safe[column].map(neutral_cell)
    safe.columns = [neutral_cell(str(c)) for c in safe.columns]
    return safe.to_csv(index=False)
