"""Reading existing fit-score runs (seed 003 style) and reporting their effects.

A file is a long table, CSV or Parquet, one row per scored run:

* required: ``variant, model, jd, run, score``. ``variant == "baseline"`` marks the
  baseline résumé; any other variant is ``<axis>_<level>`` (``addressCountry_brazil``:
  the axis is the text before the first underscore). ``run`` is a whole number, ``score``
  a number from 1 to 10; an empty score is a failed run (kept as NaN, counted, excluded).
* optional: ``recommend`` (yes/no/maybe), ``justification``, ``resume_id`` (several base
  résumés; pairs runs by résumé too). Other columns are ignored.

Every problem raises ``FitScoreFileError`` naming the file, the line (CSV, counting the
header as line 1) or row (Parquet, from 1) and what is wrong.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.fit_stats import BASELINE, fit_effects, model_summary, split_variant

REQUIRED_COLUMNS = ("variant", "model", "jd", "run", "score")
OPTIONAL_COLUMNS = ("recommend", "justification", "resume_id")
RECOMMENDATIONS = ("yes", "no", "maybe")
SCORE_RANGE = (1.0, 10.0)
PARQUET_SUFFIXES = (".parquet", ".pq")
# Keys of one cell object in ``analyze-fit --json``.
JSON_KEYS = (
    "model", "jd", "variant", "n_baseline", "n_variant", "baseline_mean", "variant_mean",
    "delta", "ci_low", "ci_high", "p_value", "q_value",
)


class FitScoreFileError(ValueError):
    """A fit-score file cannot be used; the message names the file, where and why."""


class _Source:
    """Where a table's rows came from, to name them in messages."""

    def __init__(self, path: Path, text: str | None):
        self.path = path
        self.text = text  # CSV text, to turn a row number into a line number; None for Parquet
        self._lines: list[int] | None = None

    def where(self, row: int) -> str:
        if self.text is None:
            return f"row {row + 1}"
        if self._lines is None:
            # Line on which each data record starts (quoted fields may span lines).
            reader = csv.reader(io.StringIO(self.text))
            starts, previous = [], 0
            for record in reader:
                if record:
                    starts.append(previous + 1)
                previous = reader.line_num
            self._lines = starts[1:]
        return f"line {self._lines[row]}" if row < len(self._lines) else f"record {row + 2}"

    def error(self, problem: str, row: int | None = None) -> FitScoreFileError:
        at = "" if row is None else f" {self.where(row)}:"
        return FitScoreFileError(f"{self.path}:{at} {problem}")


def _read_csv(path: Path) -> tuple[pd.DataFrame, _Source]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise FitScoreFileError(f"{path}: line {line}: not UTF-8 text (byte {exc.start}: {exc.reason})") from exc
    source = _Source(path, text)
    if not text.strip():
        raise source.error("the file is empty")
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
        raise source.error(f"not a readable CSV table ({exc})") from exc
    return df, source


def _read_parquet(path: Path) -> tuple[pd.DataFrame, _Source]:
    import duckdb

    source = _Source(path, None)
    try:
        with duckdb.connect() as con:
            df = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).df()
    except duckdb.Error as exc:
        raise source.error(f"not a readable Parquet file ({exc})") from exc
    return df, source


def _text(df: pd.DataFrame, column: str, source: _Source, required: bool) -> pd.Series:
    values = df[column].astype("string").str.strip()
    empty = values.isna() | (values == "")
    if required and empty.any():
        raise source.error(f"empty {column}", int(np.argmax(empty.to_numpy())))
    return values.fillna("").astype(object)


def read_fit_scores(path: str | os.PathLike) -> pd.DataFrame:
    """The validated rows of a CSV or Parquet fit-score file.

    Columns ``model, jd, variant, axis, level, run, score`` plus the optional ones present
    (``recommend`` lower-cased, ``justification``, ``resume_id``).
    """
    path = Path(path)
    if not path.is_file():
        raise FitScoreFileError(f"{path}: no such file")
    df, source = _read_parquet(path) if path.suffix.lower() in PARQUET_SUFFIXES else _read_csv(path)
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise source.error(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(required: {', '.join(REQUIRED_COLUMNS)}; found: {', '.join(df.columns) or 'none'})"
        )
    if df.empty:
        raise source.error("the file has a header but no rows")

    out = pd.DataFrame({c: _text(df, c, source, True) for c in ("model", "jd", "variant")})
    parts = [split_variant(v) for v in out["variant"]]
    out["axis"] = [BASELINE if v == BASELINE else a for v, (a, _) in zip(out["variant"], parts)]
    out["level"] = [lvl for _, lvl in parts]

    run_text = df["run"].astype("string").str.strip()
    run = pd.to_numeric(run_text, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(run) | (run != np.round(run))
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"run {df['run'].iloc[i]!r} is not a whole number", i)
    out["run"] = run.astype(np.int64)

    score_text = df["score"].astype("string").str.strip()
    score = pd.to_numeric(score_text, errors="coerce").to_numpy(dtype=float)
    given = (score_text.fillna("") != "").to_numpy()
    bad = given & np.isnan(score)
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"score {df['score'].iloc[i]!r} is not a number", i)
    lo, hi = SCORE_RANGE
    bad = ~np.isnan(score) & ((score < lo) | (score > hi))
    if bad.any():
        i = int(np.argmax(bad))
        raise source.error(f"score {score[i]:g} is outside {lo:g}–{hi:g}", i)
    out["score"] = score

    if "recommend" in df.columns:
        rec = _text(df, "recommend", source, False).str.lower().str.rstrip(".")
        bad = ~rec.isin([*RECOMMENDATIONS, ""]).to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise source.error(f"recommend {df['recommend'].iloc[i]!r} is not one of {', '.join(RECOMMENDATIONS)}", i)
        out["recommend"] = rec
    if "justification" in df.columns:
        out["justification"] = _text(df, "justification", source, False)
    if "resume_id" in df.columns:
        out["resume_id"] = _text(df, "resume_id", source, True)

    keys = ["model", "jd", "variant", "run"] + (["resume_id"] if "resume_id" in out.columns else [])
    dup = out.duplicated(keys, keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first = out.iloc[rows[0]]
        twin = next(r for r in rows[1:] if (out.iloc[r][keys] == first[keys]).all())
        raise source.error(
            f"the run ({', '.join(f'{k}={_plain(first[k])!r}' for k in keys)}) "
            f"occurs again on {source.where(int(twin))}",
            int(rows[0]),
        )
    has_base = out.assign(_b=out["variant"] == BASELINE).groupby(["model", "jd"], sort=False)["_b"].transform("any")
    lacking = ~has_base.to_numpy()
    if lacking.any():
        i = int(np.argmax(lacking))
        raise source.error(
            f"no baseline rows for model {out['model'].iloc[i]!r} and jd {out['jd'].iloc[i]!r} "
            f"(variant 'baseline' marks them); first variant row of that pair",
            i,
        )
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


def analyze_fit_file(path: str | os.PathLike) -> pd.DataFrame:
    """``fit_effects`` of a fit-score file (raises ``FitScoreFileError`` on bad input)."""
    scores = read_fit_scores(path)
    return fit_effects(scores)


def format_fit_report(effects: pd.DataFrame, all_cells: bool = False) -> str:
    """Readable tables: the per-model summary, then the significant cells (or all of them)."""
    summary = model_summary(effects)
    cols = ["model", "n_cells", "n_significant", "noise_floor", "bias_index", "largest_penalty",
            "largest_penalty_jd", "largest_penalty_variant"]
    parts = ["FIT-SCORE EFFECTS BY MODEL", summary[cols].to_markdown(index=False, floatfmt=".3f"), ""]
    shown = effects if all_cells else effects[effects["significant"]]
    cell_cols = ["model", "jd", "variant", "n_baseline", "n_variant", "baseline_mean", "variant_mean",
                 "delta", "ci_low", "ci_high", "p_value", "q_value", "clears_floor"]
    title = "ALL CELLS" if all_cells else "SIGNIFICANT CELLS (q < 0.05 and |delta| above the placebo noise floor)"
    parts.append(f"{title}: {len(shown)} of {len(effects)}")
    if len(shown):
        parts.append(shown[cell_cols].to_markdown(index=False, floatfmt=".3g"))
    notes = effects.loc[effects["note"] != "", "note"].value_counts()
    if len(notes):
        parts += ["", "NOTES"] + [f"- {count} cell(s): {note}" for note, count in notes.items()]
    return "\n".join(parts) + "\n"
