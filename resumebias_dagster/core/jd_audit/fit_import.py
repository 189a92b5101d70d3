"""Reading existing fit-score runs (study 003 style) and reporting their effects.

A file is a long table, CSV or Parquet, one row per scored run:

* required: ``variant, model, jd, run, score``. ``variant == "baseline"`` marks the
  baseline résumé; any other variant is ``<axis>_<level>`` (``addressCountry_brazil``:
  the axis is the text before the first underscore). ``run`` is a whole number, ``score``
  a number from 1 to 10; an empty score is a failed run (kept as NaN, counted, excluded).
* optional: ``recommend`` (yes/no/maybe), ``justification``, ``resume_id`` (the base
  résumé: with several, the résumé is the unit of every test), ``expected_score`` (the mean
  of the model's 1-10 distribution, 1 to 10, the same on every run of a variant: used instead
  of the runs' mean when every row of a model has one), ``name`` (the name a name variant
  carries: names shared by several résumés are a random effect). Other columns are ignored.

Every problem raises ``FitScoreFileError`` naming the file, the line (CSV, counting the
header as line 1) or row (Parquet, from 1) and what is wrong. Messages quote the file
only as ``core/common/file_errors.py`` allows (plausible header names, short plain values), so
a file that is not a fit-score table at all (a ``.env``, a key) is never echoed. Column
names are compared after trimming spaces, and two that are then the same are an error;
``run`` must be a whole number with ``|run| < 2**53``; a NUL byte is an error.

A Parquet path is read as exactly that file: DuckDB would take ``[``, ``]``, ``*``, ``?``
in it as a glob and ``key=value`` folders as hive partitions, so it is handed a link
with a plain name in a temporary folder, with ``hive_partitioning`` off.
"""

from __future__ import annotations

import io
import math
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.file_errors import (
    PLAIN_NUMBER,
    csv_problem,
    csv_records,
    is_shown_header,
    nul_byte,
    parquet_problem,
    show_columns,
    show_header,
    show_number,
    show_value,
)
from resumebias_dagster.core.inference.verdict_table import format_verdict_table
from resumebias_dagster.core.jd_audit.fit_stats import BASELINE, fit_effects, model_summary, split_variant

REQUIRED_COLUMNS = ("variant", "model", "jd", "run", "score")
OPTIONAL_COLUMNS = ("recommend", "justification", "resume_id", "expected_score", "name")
RECOMMENDATIONS = ("yes", "no", "maybe")
SCORE_RANGE = (1.0, 10.0)
PARQUET_SUFFIXES = (".parquet", ".pq")
KNOWN_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
# Largest |run| accepted: every whole number up to it is exact as a float and fits int64.
MAX_RUN = 2**53 - 1
# DuckDB column types a required or optional column may have (anything else: nested, binary, dates).
_PARQUET_TYPES = frozenset(
    "VARCHAR TINYINT SMALLINT INTEGER BIGINT HUGEINT UTINYINT USMALLINT UINTEGER UBIGINT UHUGEINT "
    "FLOAT DOUBLE DECIMAL NULL".split()  # NULL: a column with no values at all
)
# Keys of one cell object in ``analyze-fit --json``.
JSON_KEYS = (
    "model",
    "jd",
    "variant",
    "n_resumes",
    "n_baseline",
    "n_variant",
    "baseline_mean",
    "variant_mean",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "q_value",
    "test",
    "verdict",
)


class FitScoreFileError(ValueError):
    """A fit-score file cannot be used; the message names the file, where and why."""


class _Source:
    """Where a table's rows came from, to name them in messages."""

    def __init__(self, path: Path, text: str | None, columns: list[str] | None = None):
        self.path = path
        self.text = text  # CSV text, to turn a row number into a line number; None for Parquet
        self.columns = columns or []  # every column name of the file, as written (for messages)
        self._lines: list[int] | None = None

    def where(self, row: int) -> str:
        if self.text is None:
            return f"row {row + 1}"
        if self._lines is None:
            # Line on which each data record starts (quoted fields may span lines).
            self._lines = [start for start, _ in csv_records(self.text, skipinitialspace=True)][1:]
        return f"line {self._lines[row]}" if row < len(self._lines) else f"record {row + 2}"

    def error(self, problem: str, row: int | None = None) -> FitScoreFileError:
        at = "" if row is None else f" {self.where(row)}:"
        return FitScoreFileError(f"{self.path}:{at} {problem}")


def _check_names(source: _Source, names: list[str], what: str) -> None:
    """Refuse two columns whose names are the same once surrounding spaces are trimmed."""
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        key = name.strip()
        if not key:
            continue
        if key not in seen:
            seen[key] = i
            continue
        first = names[seen[key]]
        shown = is_shown_header(first, KNOWN_COLUMNS) and is_shown_header(name, KNOWN_COLUMNS)
        which = "names not shown"
        if shown:
            which = f"{show_header(first, KNOWN_COLUMNS)} and {show_header(name, KNOWN_COLUMNS)}"
        raise source.error(
            f"{what}duplicate column: {'header ' if what else ''}fields {seen[key] + 1} and {i + 1} ({which}) "
            "are the same name once surrounding spaces are ignored"
        )


def _parse_csv(text: str, *, header_only: bool) -> pd.DataFrame:
    """The CSV as text values (nothing read as NA); ``header_only``: its first line as a row."""
    return pd.read_csv(
        io.StringIO(text),
        header=None if header_only else "infer",
        nrows=1 if header_only else None,
        dtype=str,
        keep_default_na=False,
        skipinitialspace=True,
        index_col=False,
    )


def _read_csv(path: Path) -> tuple[pd.DataFrame, _Source]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FitScoreFileError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise FitScoreFileError(f"{path}: line {line}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    source = _Source(path, text)
    if not text.strip():
        raise source.error("the file is empty")
    nul = nul_byte(raw)
    if nul is not None:
        raise source.error(f"line {nul[0]}: contains a NUL byte (byte offset {nul[1]}); not a text CSV file")

    try:
        # The header as plain values: pandas renames an exact repeat (score, score.1), hiding it.
        names = _parse_csv(text, header_only=True).iloc[0].tolist()
        with warnings.catch_warnings():
            # With index_col=False pandas only warns about rows longer than the header.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = _parse_csv(text, header_only=False)
    except pd.errors.ParserWarning:
        records = list(csv_records(text, skipinitialspace=True))
        width = records[0][1] if records else 0
        longer = next(((s, n) for s, n in records[1:] if n > width), None)
        if longer is None:
            raise source.error("some row has more fields than the header has columns") from None
        line, n_fields = longer
        raise source.error(f"line {line}: {n_fields} fields, but the header has {width} columns") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, IndexError) as exc:
        # The parser's own message is not quoted: it may carry file contents.
        problem, at = csv_problem(exc, text, skipinitialspace=True)
        raise source.error(problem if at is None else f"line {at}: {problem}") from None
    source.columns = ["" if pd.isna(n) else str(n) for n in names]
    _check_names(source, source.columns, "line 1: ")
    return df, source


def _parquet_type(duckdb_type: str) -> str:
    """The base of a DuckDB type name (``DECIMAL(4,2)`` -> ``DECIMAL``, ``INTEGER[]`` -> ``LIST``)."""
    if duckdb_type.endswith("]"):
        return "LIST"
    match = re.match(r"[A-Z][A-Z ]*", duckdb_type.strip('"'))
    return match.group().strip() if match else "unknown"


def _top_level(schema: list[tuple[str, int | None]]) -> list[str]:
    """Top-level column names from ``parquet_schema`` rows (depth first, the root first)."""
    names, pending = [], 0
    for name, children in schema[1:]:
        if pending == 0:
            names.append(str(name))
        else:
            pending -= 1
        pending += int(children or 0)
    return names


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _read_parquet(path: Path) -> tuple[pd.DataFrame, _Source]:
    import duckdb

    source = _Source(path, None)
    with tempfile.TemporaryDirectory(prefix="resumebias-parquet-") as folder:
        # DuckDB globs the path it is given: give it a plain name linking to exactly this file.
        link = Path(folder) / "input.parquet"
        if any(c in str(link) for c in "*?[]{}"):
            raise source.error(
                f"cannot read it safely: the temporary folder {folder} has glob characters in its path (set TMPDIR)"
            )
        try:
            try:
                link.symlink_to(path.resolve())
            except OSError:
                shutil.copyfile(path, link)
        except OSError as exc:
            raise source.error(f"cannot be read ({exc.strerror or type(exc).__name__})") from None
        query = "read_parquet(?, hive_partitioning = false)"
        try:
            with duckdb.connect() as con:
                schema = con.execute("SELECT name, num_children FROM parquet_schema(?)", [str(link)]).fetchall()
                described = con.execute(f"DESCRIBE SELECT * FROM {query}", [str(link)]).fetchall()
                names = [str(row[0]) for row in described]  # DuckDB renames a repeated name
                written = _top_level(schema)
                source.columns = written if len(written) == len(names) else names
                _check_names(source, source.columns, "")
                wanted = [
                    (name, source.columns[i].strip(), str(described[i][1]))
                    for i, name in enumerate(names)
                    if source.columns[i].strip() in KNOWN_COLUMNS
                ]
                for _, column, kind in wanted:
                    if _parquet_type(kind) not in _PARQUET_TYPES:
                        raise source.error(
                            f"column {column} has Parquet type {_parquet_type(kind)}; expected text or numbers"
                        )
                if not wanted:
                    return pd.DataFrame(), source
                select = ", ".join(f"{_quoted(name)} AS {_quoted(column)}" for name, column, _ in wanted)
                df = con.execute(f"SELECT {select} FROM {query}", [str(link)]).df()
        except duckdb.Error as exc:
            raise source.error(parquet_problem(exc)) from None
    return df, source


def _text(df: pd.DataFrame, column: str, source: _Source, required: bool) -> pd.Series:
    values = df[column].astype("string").str.strip()
    empty = values.isna() | (values == "")
    if required and empty.any():
        raise source.error(f"empty {column}", int(np.argmax(empty.to_numpy())))
    return values.fillna("").astype(object)


def _open_table(path: Path) -> tuple[pd.DataFrame, _Source]:
    """The file's rows, column names trimmed, refused without a required column or a row."""
    if not path.exists():
        raise FitScoreFileError(f"{path}: no such file")
    if not path.is_file():
        raise FitScoreFileError(f"{path}: not a regular file")
    df, source = _read_parquet(path) if path.suffix.lower() in PARQUET_SUFFIXES else _read_csv(path)
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise source.error(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(required: {', '.join(REQUIRED_COLUMNS)}; found: {show_columns(source.columns, KNOWN_COLUMNS)})"
        )
    if df.empty:
        raise source.error("the file has a header but no rows" if source.text else "the Parquet file has no rows")
    return df, source


def _runs(df: pd.DataFrame, source: _Source) -> np.ndarray:
    run_text = _text(df, "run", source, True)
    run = np.asarray(pd.to_numeric(run_text, errors="coerce"), dtype=float)
    # Whole numbers only, and only where every one is exact as a float and fits int64.
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(run) | (run != np.round(run)) | (np.abs(run) > MAX_RUN)
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"run {show_value(run_text.iloc[i])} is not a whole number from {-MAX_RUN} to {MAX_RUN}", i)
    return run.astype(np.int64)


def _scores(df: pd.DataFrame, source: _Source) -> np.ndarray:
    """The scores (NaN: a failed run), each a number within ``SCORE_RANGE``."""
    score_text = df["score"].astype("string").str.strip().fillna("")
    score = np.asarray(pd.to_numeric(score_text, errors="coerce"), dtype=float)
    # pandas gives up on plain numbers beyond the float range (1e400); Python reads them as inf.
    overflow = np.isnan(score) & score_text.str.fullmatch(PLAIN_NUMBER).to_numpy(dtype=bool)
    score[overflow] = [float(t) for t in score_text[overflow]]
    given = (score_text != "").to_numpy()
    bad = given & np.isnan(score)
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"score {show_value(score_text.iloc[i])} is not a number", i)
    lo, hi = SCORE_RANGE
    bad = ~np.isnan(score) & ((score < lo) | (score > hi))
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"score {show_number(score_text.iloc[i], score[i])} is outside {lo:g}–{hi:g}", i)
    return score


def _recommendations(df: pd.DataFrame, source: _Source) -> pd.Series:
    rec = _text(df, "recommend", source, False).str.lower().str.rstrip(".")
    bad = ~rec.isin([*RECOMMENDATIONS, ""]).to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(
            f"recommend {show_value(df['recommend'].iloc[i])} is not one of {', '.join(RECOMMENDATIONS)}", i
        )
    return rec


def _expected_scores(df: pd.DataFrame, source: _Source) -> np.ndarray:
    lo, hi = SCORE_RANGE
    text = df["expected_score"].astype("string").str.strip().fillna("")
    expected = np.asarray(pd.to_numeric(text, errors="coerce"), dtype=float)
    bad = ((text != "").to_numpy() & np.isnan(expected)) | (~np.isnan(expected) & ((expected < lo) | (expected > hi)))
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"expected_score {show_value(text.iloc[i])} is not a number from {lo:g} to {hi:g}", i)
    return expected


def _add_optional_columns(out: pd.DataFrame, df: pd.DataFrame, source: _Source) -> None:
    """The optional columns ``df`` has, validated, added to ``out`` in ``OPTIONAL_COLUMNS``' order."""
    if "recommend" in df.columns:
        out["recommend"] = _recommendations(df, source)
    if "justification" in df.columns:
        out["justification"] = _text(df, "justification", source, False)
    if "resume_id" in df.columns:
        out["resume_id"] = _text(df, "resume_id", source, True)
    if "name" in df.columns:
        out["name"] = _text(df, "name", source, False).replace("", None)
    if "expected_score" in df.columns:
        out["expected_score"] = _expected_scores(df, source)


def _check_runs_unique(out: pd.DataFrame, source: _Source) -> None:
    """Refuse a run (model, jd, variant, run and résumé) written twice, naming both places."""
    keys = ["model", "jd", "variant", "run"] + (["resume_id"] if "resume_id" in out.columns else [])
    dup = out.duplicated(keys, keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first = out.iloc[rows[0]]
        twin = next(r for r in rows[1:] if (out.iloc[r][keys] == first[keys]).all())
        raise source.error(
            f"the run ({', '.join(f'{k}={show_value(_plain(first[k]))}' for k in keys)}) "
            f"occurs again on {source.where(int(twin))}",
            int(rows[0]),
        )


def _check_baselines(out: pd.DataFrame, source: _Source) -> None:
    """Refuse a (model, jd) without baseline rows: its variants have nothing to differ from."""
    has_base = out.assign(_b=out["variant"] == BASELINE).groupby(["model", "jd"], sort=False)["_b"].transform("any")
    lacking = ~has_base.to_numpy()
    if lacking.any():
        i = int(np.argmax(lacking))
        raise source.error(
            f"no baseline rows for model {show_value(out['model'].iloc[i])} and jd {show_value(out['jd'].iloc[i])} "
            f"(variant 'baseline' marks them); first variant row of that pair",
            i,
        )


def read_fit_scores(path: str | os.PathLike) -> pd.DataFrame:
    """The validated rows of a CSV or Parquet fit-score file.

    Columns ``model, jd, variant, axis, level, run, score`` plus the optional ones present
    (``recommend`` lower-cased, ``justification``, ``resume_id``).
    """
    df, source = _open_table(Path(path))
    out = pd.DataFrame({c: _text(df, c, source, True) for c in ("model", "jd", "variant")})
    parts = [split_variant(v) for v in out["variant"]]
    out["axis"] = [BASELINE if v == BASELINE else a for v, (a, _) in zip(out["variant"], parts)]
    out["level"] = [lvl for _, lvl in parts]
    out["run"] = _runs(df, source)
    out["score"] = _scores(df, source)
    _add_optional_columns(out, df, source)
    _check_runs_unique(out, source)
    _check_baselines(out, source)
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(value) else float(value)
    return value


def effects_json(effects: pd.DataFrame) -> list[dict[str, Any]]:
    """One object per cell with ``JSON_KEYS``; NaN (and infinity) become null."""
    return [{k: _plain(v) for k, v in zip(JSON_KEYS, row)} for row in effects[list(JSON_KEYS)].itertuples(index=False)]


def analyze_fit_file(path: str | os.PathLike, settings=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``fit_effects``, the fit audit's ``Verdicts``) of a fit-score file (raises
    ``FitScoreFileError`` on bad input). Arms and name groups come from the catalog's
    ``probe_axes.yaml``; a file whose levels are not declared there gets no group findings."""
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.jd_audit.impact import name_groups
    from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts

    settings = settings or load_inference_settings()
    scores = read_fit_scores(path)
    effects = fit_effects(scores, settings=settings)
    groups = name_groups()
    declared = {(a, lv) for a, levels in groups.items() for lv in levels}
    named = scores[scores["axis"].isin(list(groups))]
    if not len(named) or not all((a, lv) in declared for a, lv in zip(named["axis"], named["level"])):
        groups = {}
    return effects, fit_verdicts(scores, settings, groups)


def format_fit_report(effects: pd.DataFrame, all_cells: bool = False, verdicts: pd.DataFrame | None = None) -> str:
    """Readable tables: the per-model summary, the verdicts, then the cells beyond noise (or all)."""
    summary = model_summary(effects)
    cols = [
        "model",
        "n_cells",
        "n_significant",
        "n_equivalent",
        "noise_floor",
        "bias_index",
        "placebo_index",
        "largest_penalty",
        "largest_penalty_jd",
        "largest_penalty_variant",
    ]
    parts = ["FIT-SCORE EFFECTS BY MODEL", summary[cols].to_markdown(index=False, floatfmt=".3f"), ""]
    if verdicts is not None and len(verdicts):
        parts += [format_verdict_table(verdicts)]  # the table every command prints verdicts with
    shown = effects if all_cells else effects[effects["significant"]]
    cell_cols = [
        "model",
        "jd",
        "variant",
        "n_resumes",
        "baseline_mean",
        "variant_mean",
        "delta",
        "ci_low",
        "ci_high",
        "p_value",
        "q_value",
        "test",
        "verdict",
    ]
    title = "ALL CELLS" if all_cells else "CELLS BEYOND NOISE (adjusted p at most alpha within their arm and axis)"
    parts.append(f"{title}: {len(shown)} of {len(effects)}")
    if len(shown):
        parts.append(shown[cell_cols].to_markdown(index=False, floatfmt=".3g"))
    notes = effects.loc[effects["note"] != "", "note"].value_counts()
    if len(notes):
        parts += ["", "NOTES"] + [f"- {count} cell(s): {note}" for note, count in notes.items()]
    return "\n".join(parts) + "\n"
