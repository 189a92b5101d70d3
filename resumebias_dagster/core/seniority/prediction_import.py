"""Read the seniority notebooks' prediction CSVs into the normalised predictions table.

Two formats, told apart by their columns:

* style (Test 2): ``idx, true_seniority, style, model, prediction, correct, resume_text``
* social (Test 3): ``original_idx, true_seniority, demographic, name, model, prediction, correct``

``correct`` is ignored (metrics recompute it), ``resume_text`` is dropped, and
``run`` is 0 unless the file has a ``run`` column. Only the columns the metrics
need are required; every other column passes through. The output always has the
optional extras ``name``, ``resolved_model``, ``latency_s`` and ``error`` (null
where a file lacks them) so that files of both formats concatenate into one
schema.

The optional label distribution ``p_junior, p_mid, p_senior`` (see
``core/seniority/metrics/``) comes as all three columns or none; each row gives all
three probabilities (numbers from 0 to 1 summing to 1 within ``DIST_TOLERANCE``)
or none (empty or ``nan``). They become float64 columns.

Every problem raises ``PredictionFileError`` naming the file and, where it
applies, the 1-based line (header = line 1) and the column. Messages quote the
file only as ``core/common/file_errors.py`` allows (plausible header names, short plain
values): a file that is not a prediction CSV at all (a ``.env``, a key) is never
echoed. Header names are compared ignoring case and surrounding spaces, and two
that are then the same are an error; a NUL byte is an error (pandas would cut
the field short).
"""

from __future__ import annotations

import codecs
import io
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.file_errors import (
    PLAIN_NUMBER,
    csv_problem,
    csv_records,
    is_shown_header,
    nul_byte,
    show_columns,
    show_header,
    show_number,
    show_value,
)
from resumebias_dagster.core.common.labels import DEMOGRAPHICS, PREDICTION_VALUES, SENIORITY_LEVELS, STYLES
from resumebias_dagster.core.seniority.metrics import (
    DIST_COLUMNS,
    DIST_TOLERANCE,
    REQUIRED_COLUMNS,
    validate_predictions,
)

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
    columns: tuple[str, ...]  # as written by the seniority notebooks
    optional: tuple[str, ...]  # of those, the ones the metrics do not need

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.optional)


FORMATS = (
    _Format(
        "style",
        "style",
        "idx",
        "style",
        STYLES,
        ("idx", "true_seniority", "style", "model", "prediction", "correct", "resume_text"),
        ("correct", "resume_text"),
    ),
    _Format(
        "social",
        "demographic",
        "original_idx",
        "demographic",
        DEMOGRAPHICS,
        ("original_idx", "true_seniority", "demographic", "name", "model", "prediction", "correct"),
        ("name", "correct"),
    ),
)
_DROPPED = ("correct", "resume_text")
_KEY = ("variant_kind", "model", "run", "original_idx", "variant")
EXTRA_COLUMNS = {"name": object, "resolved_model": object, "latency_s": float, "error": object}
# Column names an error message may always quote (see core/common/file_errors.py).
KNOWN_COLUMNS = tuple(
    dict.fromkeys([*(c for f in FORMATS for c in f.columns), "run", *DIST_COLUMNS, *EXTRA_COLUMNS, *REQUIRED_COLUMNS])
)


def _expected() -> str:
    return "; ".join(f"{f.name} format: {', '.join(f.columns)}" for f in FORMATS)


def _detect(path: Path, columns: list[str], names: list[str]) -> _Format:
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
        path,
        f"matches neither prediction format (columns: {show_columns(names, KNOWN_COLUMNS)}); expected {_expected()}",
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


def _line_of_row(text: str, row: int) -> int | None:
    """Line where data row ``row`` (0-based) starts, header = line 1.

    Only used on error paths: quoted fields (résumé texts) may span lines, so
    line numbers come from re-reading the records (``csv_records``).
    """
    return next((start for i, (start, _) in enumerate(csv_records(text)) if i == row + 1), None)


def _first_long_record(text: str, width: int) -> tuple[int | None, int]:
    """(line, field count) of the first record with more fields than the header."""
    return next(((start, n) for start, n in csv_records(text) if n > width), (None, width))


def _fail_rows(path: Path, text: str, bad: np.ndarray, column: str | None, problem: str) -> None:
    """Raise for the first True row of ``bad`` (if any), with its line and the count."""
    if not bad.any():
        return
    first = int(np.flatnonzero(bad)[0])
    count = int(bad.sum())
    extra = f" ({count} bad rows in the file)" if count > 1 else ""
    raise PredictionFileError(path, problem + extra, line=_line_of_row(text, first), column=column)


def _labels(
    path: Path, text: str, frame: pd.DataFrame, column: str, *, allowed: tuple[str, ...], what: str
) -> np.ndarray:
    values = frame[column].str.strip().str.lower()
    bad = ~values.isin(allowed).to_numpy()
    if bad.any():
        first = frame[column].iloc[int(np.flatnonzero(bad)[0])]
        _fail_rows(path, text, bad, column, f"unknown {what} {show_value(first)}; expected one of {', '.join(allowed)}")
    return values.to_numpy(dtype=object)


def _integers(path: Path, text: str, frame: pd.DataFrame, column: str) -> np.ndarray:
    values = frame[column].str.strip()
    # ASCII digits only, at most 18 of them, so that every accepted value fits in int64.
    bad = ~values.str.fullmatch(r"[+-]?[0-9]{1,18}").fillna(False).to_numpy(dtype=bool)
    if bad.any():
        first = frame[column].iloc[int(np.flatnonzero(bad)[0])]
        _fail_rows(path, text, bad, column, f"{column} must be an integer, got {show_value(first)}")
    return values.astype(np.int64).to_numpy()


def _distribution(path: Path, text: str, frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The ``p_*`` columns as float arrays (NaN: no distribution on that row), checked
    the way ``metrics.validate_predictions`` requires: numbers in [0, 1], all three or
    none on each row, summing to 1 within ``DIST_TOLERANCE``."""
    dist: dict[str, np.ndarray] = {}
    for column in DIST_COLUMNS:
        cells = frame[column].fillna("").str.strip()
        empty = (cells.eq("") | cells.str.lower().eq("nan")).to_numpy(dtype=bool)
        number = cells.str.fullmatch(PLAIN_NUMBER).to_numpy(dtype=bool)
        bad = ~(empty | number)
        if bad.any():
            first = frame[column].iloc[int(np.flatnonzero(bad)[0])]
            _fail_rows(
                path,
                text,
                bad,
                column,
                f"{column} must be a probability (a number from 0 to 1) or empty, got {show_value(first)}",
            )
        values = np.full(len(frame), np.nan)
        values[number] = cells[number].astype(float).to_numpy()
        outside = (values < 0.0) | (values > 1.0)  # NaN compares False
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            shown = show_number(cells.iloc[first], values[first])
            _fail_rows(path, text, outside, column, f"{column} {shown} is outside 0–1")
        dist[column] = values
    given = np.vstack([~np.isnan(v) for v in dist.values()])
    given_per_row = given.sum(axis=0)
    partial = (given_per_row > 0) & (given_per_row < len(DIST_COLUMNS))
    if partial.any():
        n_given = int(given[:, int(np.flatnonzero(partial)[0])].sum())
        _fail_rows(
            path,
            text,
            partial,
            None,
            f"a label distribution gives all of {', '.join(DIST_COLUMNS)} or none of them; "
            f"this row gives {n_given} of the {len(DIST_COLUMNS)}",
        )
    total = sum(dist.values(), np.zeros(len(frame)))
    off = np.abs(total - 1.0) > DIST_TOLERANCE  # NaN (no distribution) compares False
    if off.any():
        first = int(np.flatnonzero(off)[0])
        _fail_rows(
            path,
            text,
            off,
            None,
            f"{' + '.join(DIST_COLUMNS)} must sum to 1 (within {DIST_TOLERANCE:g}), got {total[first]:.6g}",
        )
    return dist


def _check_header(path: Path, text: str, fallback: list[str]) -> None:
    """Refuse two header fields that name the same column once case and surrounding spaces are ignored.

    Reads the header row as plain values: pandas renames an exact repeat
    (``model``, ``model.1``), which would hide it.
    """
    try:
        names = (
            pd.read_csv(io.StringIO(text), header=None, nrows=1, dtype=str, keep_default_na=False, index_col=False)
            .iloc[0]
            .tolist()
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, IndexError):
        names = fallback
    seen: dict[str, int] = {}
    for i, name in enumerate("" if pd.isna(n) else str(n) for n in names):
        key = name.strip().lower()
        if not key:
            continue
        if key not in seen:
            seen[key] = i
            continue
        first = str(names[seen[key]])
        shown = is_shown_header(first, KNOWN_COLUMNS) and is_shown_header(name, KNOWN_COLUMNS)
        which = "names not shown"
        if shown:
            which = f"{show_header(first, KNOWN_COLUMNS)} and {show_header(name, KNOWN_COLUMNS)}"
        raise PredictionFileError(
            path,
            f"duplicate column: header fields {seen[key] + 1} and {i + 1} ({which}) are the same name "
            "once case and surrounding spaces are ignored",
            line=1,
            column=key if shown else None,
        )


def _read_text(path: Path) -> str:
    """The file's text; refuses a missing, unreadable, empty or non-UTF-8 file and NUL bytes."""
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
    nul = nul_byte(raw)
    if nul is not None:
        raise PredictionFileError(path, f"contains a NUL byte (byte offset {nul[1]}); not a text CSV file", line=nul[0])
    return text


def _read_header(path: Path, text: str) -> pd.Index:
    """The header fields as pandas reads them (exact repeats already renamed)."""
    try:
        return pd.read_csv(io.StringIO(text), nrows=0).columns
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        problem, line = csv_problem(exc, text)
        raise PredictionFileError(path, problem, line=line) from None


def _dist_columns(path: Path, fmt: _Format, columns: list[str]) -> list[str]:
    """The label distribution columns present (all or none), once the format's required ones are."""
    missing = [c for c in fmt.required if c not in columns]
    if missing:
        raise PredictionFileError(
            path,
            f"missing column(s) {', '.join(repr(c) for c in missing)} for the {fmt.name} format; "
            f"expected columns: {', '.join(fmt.columns)}",
        )
    dist_columns = [c for c in DIST_COLUMNS if c in columns]
    if dist_columns and len(dist_columns) < len(DIST_COLUMNS):
        raise PredictionFileError(
            path,
            f"the label distribution needs all of {', '.join(DIST_COLUMNS)} or none of them; the file has "
            f"{', '.join(dist_columns)} but not {', '.join(c for c in DIST_COLUMNS if c not in columns)}",
        )
    return dist_columns


def _read_rows(path: Path, text: str, header: pd.Index, columns: list[str], as_text: set[str]) -> pd.DataFrame:
    """The data rows under the normalised column names; ``as_text`` columns stay strings."""
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
        problem, line = csv_problem(exc, text)
        raise PredictionFileError(path, problem, line=line) from None
    frame.columns = pd.Index(columns)
    if frame.empty:
        raise PredictionFileError(path, "has a header but no data rows")
    return frame


def _key_columns(path: Path, text: str, frame: pd.DataFrame, fmt: _Format, columns: list[str]) -> pd.DataFrame:
    """The checked metric columns under their normalised names; refuses blanks and duplicate keys."""
    for column in fmt.required + (("run",) if "run" in columns else ()):
        blank = frame[column].fillna("").str.strip().eq("").to_numpy()
        _fail_rows(path, text, blank, column, "missing value")
    out = pd.DataFrame(
        {
            "variant_kind": fmt.variant_kind,
            "original_idx": _integers(path, text, frame, fmt.index_column),
            "variant": _labels(path, text, frame, fmt.variant_column, allowed=fmt.variants, what=fmt.variant_column),
            "model": frame["model"].str.strip().to_numpy(dtype=object),
            "run": _integers(path, text, frame, "run") if "run" in columns else np.zeros(len(frame), np.int64),
            "prediction": _labels(path, text, frame, "prediction", allowed=PREDICTION_VALUES, what="prediction"),
            "true_seniority": _labels(
                path, text, frame, "true_seniority", allowed=SENIORITY_LEVELS, what="seniority label"
            ),
        }
    )
    dup = out.duplicated(list(_KEY)).to_numpy()
    if dup.any():
        first = out.iloc[int(np.flatnonzero(dup)[0])]
        _fail_rows(
            path,
            text,
            dup,
            None,
            f"duplicate prediction for model {show_value(first['model'])}, run {show_value(first['run'])}, "
            f"{fmt.index_column} {show_value(first['original_idx'])}, "
            f"{fmt.variant_column} {show_value(first['variant'])}",
        )
    return out


def read_prediction_file(path: PathLike) -> pd.DataFrame:
    """One prediction CSV in the seniority study's format as the normalised predictions table (see module docstring)."""
    path = Path(path)
    text = _read_text(path)
    header = _read_header(path, text)
    columns = [str(c).strip().lower() for c in header]
    _check_header(path, text, [str(c) for c in header])
    fmt = _detect(path, columns, [str(c) for c in header])
    dist_columns = _dist_columns(path, fmt, columns)
    as_text = set(fmt.required) | {"run", "name", "resolved_model", "error"} | set(dist_columns)
    frame = _read_rows(path, text, header, columns, as_text)
    out = _key_columns(path, text, frame, fmt, columns)
    if dist_columns:
        for column, values in _distribution(path, text, frame).items():
            out[column] = values
    renamed = {fmt.index_column, fmt.variant_column, *REQUIRED_COLUMNS, *_DROPPED, *DIST_COLUMNS}
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
    """Read and concatenate prediction CSVs in the seniority study's format into one normalised table.

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
            f"{int(repeat.sum())} prediction(s) already read from {earlier}, first: model "
            f"{show_value(first['model'])}, run {show_value(first['run'])}, original_idx "
            f"{show_value(first['original_idx'])}, {first['variant_kind']} {show_value(first['variant'])}",
        )
    try:
        return validate_predictions(table)
    except ValueError:
        # Every check of validate_predictions is made per file above, with lines; this is a
        # safety net, and its message (which may quote values) is not passed on.
        raise PredictionFileError(
            paths[0] if len(paths) == 1 else None,
            "the predictions do not pass the metrics' validation (core/seniority/metrics/ validate_predictions)"
            + ("" if len(paths) == 1 else f" in {', '.join(map(str, paths))}"),
        ) from None
