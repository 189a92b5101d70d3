"""Read the seed notebooks' prediction CSVs into the normalised predictions table.

Two formats, told apart by their columns:

* style (Test 2): ``idx, true_seniority, style, model, prediction, correct, resume_text``
* social (Test 3): ``original_idx, true_seniority, demographic, name, model, prediction, correct``

``correct`` is ignored (metrics recompute it), ``resume_text`` is dropped, and
``run`` is 0 unless the file has a ``run`` column. Only the columns the metrics
need are required; every other column passes through. The output always has the
optional extras ``name``, ``resolved_model``, ``latency_s`` and ``error`` (null
where a file lacks them) so that files of both formats concatenate into one
schema.

Every problem raises ``PredictionFileError`` naming the file and, where it
applies, the 1-based line (header = line 1) and the column.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from resumebias_dagster.core.labels import DEMOGRAPHICS, PREDICTION_VALUES, SENIORITY_LEVELS, STYLES
from resumebias_dagster.core.metrics import REQUIRED_COLUMNS, validate_predictions

__all__ = ["FORMATS", "PredictionFileError", "read_prediction_file", "read_prediction_files"]

PathLike = str | os.PathLike


class PredictionFileError(ValueError):
    """A prediction file cannot be read; the message names the file and the problem."""

    def __init__(self, path: PathLike | None, problem: str, line: int | None = None, column: str | None = None):
        self.path = None if path is None else str(path)
        self.problem = problem
        self.line = line
        self.column = column
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        prefix = f"{self.path}: " if self.path is not None else ""
        super().__init__(prefix + (", ".join(where) + ": " if where else "") + problem)


@dataclass(frozen=True)
class _Format:
    name: str
    variant_kind: str
    index_column: str
    variant_column: str
    variants: tuple[str, ...]
    columns: tuple[str, ...]  # as written by the seed notebooks
    optional: tuple[str, ...]  # of those, the ones the metrics do not need

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.optional)


FORMATS = (
    _Format(
        "style", "style", "idx", "style", STYLES,
        ("idx", "true_seniority", "style", "model", "prediction", "correct", "resume_text"),
        ("correct", "resume_text"),
    ),
    _Format(
        "social", "demographic", "original_idx", "demographic", DEMOGRAPHICS,
        ("original_idx", "true_seniority", "demographic", "name", "model", "prediction", "correct"),
        ("name", "correct"),
    ),
)
_DROPPED = ("correct", "resume_text")
_KEY = ("variant_kind", "model", "run", "original_idx", "variant")
EXTRA_COLUMNS = {"name": object, "resolved_model": object, "latency_s": float, "error": object}


def _expected() -> str:
    return "; ".join(f"{f.name} format: {', '.join(f.columns)}" for f in FORMATS)


def _detect(path: Path, columns: list[str]) -> _Format:
    present = set(columns)
    matches = [f for f in FORMATS if f.variant_column in present]
    if not matches:
        # No variant column: fall back to the index column to say which format it was meant to be.
        matches = [f for f in FORMATS if f.index_column in present]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise PredictionFileError(
            path, f"ambiguous format: columns fit both the style and the social format; expected {_expected()}"
        )
    raise PredictionFileError(
        path, f"matches neither prediction format (columns: {', '.join(columns) or 'none'}); expected {_expected()}"
    )


def _decode(path: Path, raw: bytes) -> str:
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + bom
        line = raw[:offset].count(b"\n") + 1
        raise PredictionFileError(
            path, f"not valid UTF-8: byte 0x{raw[offset]:02x} at byte offset {offset} ({exc.reason})", line=line
        ) from None


def _records(text: str) -> Iterator[tuple[int, list[str]]]:
    """(1-based start line, fields) of each non-blank CSV record, header first.

    Only used on error paths: quoted fields (résumé texts) may span lines, so
    line numbers come from re-reading the records with the csv module.
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except (StopIteration, csv.Error):
            return
        if fields:  # pandas skips blank lines too
            yield start, fields


def _line_of_row(text: str, row: int) -> int | None:
    """Line where data row ``row`` (0-based) starts, header = line 1."""
    return next((start for i, (start, _) in enumerate(_records(text)) if i == row + 1), None)


def _first_long_record(text: str, width: int) -> tuple[int | None, int]:
    """(line, field count) of the first record with more fields than the header."""
    return next(((start, len(f)) for start, f in _records(text) if len(f) > width), (None, width))


def _fail_rows(path: Path, text: str, bad: np.ndarray, column: str | None, problem: str) -> None:
    """Raise for the first True row of ``bad`` (if any), with its line and the count."""
    if not bad.any():
        return
    first = int(np.flatnonzero(bad)[0])
    count = int(bad.sum())
    extra = f" ({count} bad rows in the file)" if count > 1 else ""
    raise PredictionFileError(path, problem + extra, line=_line_of_row(text, first), column=column)


def _labels(path, text, frame: pd.DataFrame, column: str, allowed: tuple[str, ...], what: str) -> np.ndarray:
    values = frame[column].str.strip().str.lower()
    bad = ~values.isin(allowed).to_numpy()
    if bad.any():
        first = frame[column].iloc[int(np.flatnonzero(bad)[0])]
        _fail_rows(path, text, bad, column, f"unknown {what} {first!r}; expected one of {', '.join(allowed)}")
    return values.to_numpy(dtype=object)


def _integers(path, text, frame: pd.DataFrame, column: str) -> np.ndarray:
    values = frame[column].str.strip()
    # At most 18 digits, so that every accepted value fits in int64.
    bad = ~values.str.fullmatch(r"[+-]?\d{1,18}").fillna(False).to_numpy(dtype=bool)
    if bad.any():
        first = frame[column].iloc[int(np.flatnonzero(bad)[0])]
        _fail_rows(path, text, bad, column, f"{column} must be an integer, got {first!r}")
    return values.astype(np.int64).to_numpy()


def read_prediction_file(path: PathLike) -> pd.DataFrame:
    """One seed-format CSV as the normalised predictions table (see module docstring)."""
    path = Path(path)
    if not path.exists():
        raise PredictionFileError(path, "file does not exist")
    if not path.is_file():
        raise PredictionFileError(path, "not a regular file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PredictionFileError(path, f"cannot be read: {exc.strerror or exc}") from None
    if not raw:
        raise PredictionFileError(path, "empty file (0 bytes); expected a CSV header and rows")
    text = _decode(path, raw)
    if not text.strip():
        raise PredictionFileError(path, "empty file (no header, no rows)")

    try:
        header = pd.read_csv(io.StringIO(text), nrows=0).columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise PredictionFileError(path, f"not a readable CSV: {exc}") from None
    columns = [str(c).strip().lower() for c in header]
    fmt = _detect(path, columns)
    missing = [c for c in fmt.required if c not in columns]
    if missing:
        raise PredictionFileError(
            path,
            f"missing column(s) {', '.join(repr(c) for c in missing)} for the {fmt.name} format; "
            f"expected columns: {', '.join(fmt.columns)}",
        )
    as_text = set(fmt.required) | {"run", "name", "resolved_model", "error"}
    try:
        with warnings.catch_warnings():
            # With index_col=False pandas only warns about rows longer than the header.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                dtype={orig: str for orig, c in zip(header, columns) if c in as_text},
                keep_default_na=False,
                na_values={orig: [""] for orig, c in zip(header, columns) if c not in as_text},
                index_col=False,
            )
    except pd.errors.ParserWarning:
        line, n_fields = _first_long_record(text, len(columns))
        raise PredictionFileError(
            path, f"{n_fields} fields, but the header has {len(columns)} columns", line=line
        ) from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise PredictionFileError(path, f"not a readable CSV: {exc}") from None
    frame.columns = columns
    if frame.empty:
        raise PredictionFileError(path, "has a header but no data rows")

    for column in fmt.required + (("run",) if "run" in columns else ()):
        blank = frame[column].fillna("").str.strip().eq("").to_numpy()
        _fail_rows(path, text, blank, column, "missing value")

    out = pd.DataFrame(
        {
            "variant_kind": fmt.variant_kind,
            "original_idx": _integers(path, text, frame, fmt.index_column),
            "variant": _labels(path, text, frame, fmt.variant_column, fmt.variants, fmt.variant_column),
            "model": frame["model"].str.strip().to_numpy(dtype=object),
            "run": _integers(path, text, frame, "run") if "run" in columns else np.zeros(len(frame), np.int64),
            "prediction": _labels(path, text, frame, "prediction", PREDICTION_VALUES, "prediction"),
            "true_seniority": _labels(path, text, frame, "true_seniority", SENIORITY_LEVELS, "seniority label"),
        }
    )
    dup = out.duplicated(list(_KEY)).to_numpy()
    if dup.any():
        first = out.iloc[int(np.flatnonzero(dup)[0])]
        _fail_rows(
            path, text, dup, None,
            f"duplicate prediction for model {first['model']!r}, run {first['run']}, "
            f"{fmt.index_column} {first['original_idx']}, {fmt.variant_column} {first['variant']!r}",
        )
    renamed = {fmt.index_column, fmt.variant_column, *REQUIRED_COLUMNS, *_DROPPED}
    for column in columns:
        if column not in renamed:
            out[column] = frame[column].to_numpy()
    for column, dtype in EXTRA_COLUMNS.items():
        if column not in out.columns:
            out[column] = pd.Series(np.nan if dtype is float else None, index=out.index, dtype=dtype)
    return out


def empty_prediction_table() -> pd.DataFrame:
    """The normalised predictions table with no rows (all columns, proper dtypes)."""
    columns = {c: pd.Series(dtype=np.int64 if c in ("original_idx", "run") else object) for c in REQUIRED_COLUMNS}
    columns.update({c: pd.Series(dtype=dtype) for c, dtype in EXTRA_COLUMNS.items()})
    return pd.DataFrame(columns)


def combine_predictions(*frames: pd.DataFrame) -> pd.DataFrame:
    """Stack prediction tables; empty or column-less frames (nothing materialised yet) add nothing."""
    parts = [f for f in frames if len(f)]
    if not parts:
        return empty_prediction_table()
    return pd.concat(parts, ignore_index=True)


def read_prediction_files(paths: PathLike | Iterable[PathLike]) -> pd.DataFrame:
    """Read and concatenate seed-format prediction CSVs into one normalised table.

    Raises ``PredictionFileError`` for an empty list, any unreadable or invalid
    file, and for two files holding a prediction for the same (variant_kind,
    model, run, original_idx, variant).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise PredictionFileError(None, "no prediction files given")
    frames = [read_prediction_file(p) for p in paths]
    table = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    source = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
    # Each file is free of duplicates already, so a repeat here comes from another file.
    repeat = table.duplicated(list(_KEY), keep="first").to_numpy()
    if repeat.any():
        first = table.iloc[int(np.flatnonzero(repeat)[0])]
        same = (table[list(_KEY)] == first[list(_KEY)]).all(axis=1).to_numpy()
        earlier, later = (str(paths[i]) for i in source[same][:2])
        raise PredictionFileError(
            later,
            f"{int(repeat.sum())} prediction(s) already read from {earlier}, first: model {first['model']!r}, "
            f"run {first['run']}, original_idx {first['original_idx']}, {first['variant_kind']} {first['variant']!r}",
        )
    return validate_predictions(table)
