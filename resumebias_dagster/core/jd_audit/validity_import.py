"""Reading validity pairs scored elsewhere (``resumebias analyze-validity FILE``) into the
``pairs`` and ``scores`` frames of ``validity_stats.validity_verdicts``.

A file is a CSV, one row per scored run of one text (a baseline or a twin):

* required: ``resume_id`` (the base résumé: the unit of every interval), ``group`` (the name
  group of the set), ``role`` (``baseline``, ``better``, ``worse`` or ``equal``) and ``score``
  (1 to 10; empty: a failed run, counted out).
* optional, with their defaults: ``model`` (``screener``), ``jd`` (``jd``: one job
  description), ``name`` (the group's own label: one name per group, which the group contrasts
  then say), ``edit`` (the text after the last ``:`` of ``variant``, else the role: one twin per
  role and set), ``variant`` (``<group>:baseline`` or ``<group>:<role>:<edit>``), ``run``
  (0: one run per text), ``expected_score`` (the mean of the model's 1-10 distribution, used
  instead of the runs' mean where every row of a model has one). Other columns are ignored.

A *set* is (jd, resume_id, group): one baseline and its twins, every text carrying one name.
Every problem raises ``ValidityFileError`` in one line naming the file, the line (the header is
line 1) and the column: a missing column, an unknown role, a score out of range or not a
number, a twin whose set has no baseline, a set with two baselines or two names, a text whose
group, name, role or edit differ between its rows, a run given twice, an empty file, a file over
``MAX_BYTES``, a symbolic link, bytes that are not a UTF-8 CSV. Messages quote the file only as
``core/common/file_errors.py`` allows. A text cell written with a leading apostrophe before
``=``, ``+``, ``-``, ``@`` (how the tool's own CSVs and spreadsheets keep a cell from being
read as a formula, ``core/common/csv_files.py``) is read without the apostrophe.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from resumebias_dagster.core.common.csv_files import FORMULA_STARTS
from resumebias_dagster.core.common.file_errors import PLAIN_NUMBER, show_columns, show_number, show_value
from resumebias_dagster.core.jd_audit.fit_import import SCORE_RANGE, FitScoreFileError, _read_csv, _Source
from resumebias_dagster.core.jd_audit.validity_stats import ROLES

REQUIRED_COLUMNS = ("resume_id", "group", "role", "score")
OPTIONAL_COLUMNS = ("model", "jd", "name", "edit", "variant", "run", "expected_score")
KNOWN_COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
DEFAULT_MODEL = "screener"
DEFAULT_JD = "jd"
# A scored validity study is a few thousand rows a model; a file far larger is not one.
MAX_BYTES = 64 * 1024 * 1024


class ValidityFileError(FitScoreFileError):
    """A validity-score file cannot be used; the message names the file, where and why."""


def _cells(df: pd.DataFrame, column: str, source: _Source, *, required: bool) -> pd.Series:
    """A text column, trimmed, its formula apostrophe undone; a required one refuses blanks."""
    values = df[column].astype("string").str.strip().fillna("")
    neutral = values.str.startswith("'") & values.str[1:2].isin([s for s in FORMULA_STARTS if s.strip()])
    values = values.where(~neutral, values.str[1:])
    empty = (values == "").to_numpy()
    if required and empty.any():
        raise _error(source, f"empty {column}", int(np.argmax(empty)))
    return values.astype(object)


def _error(source: _Source, problem: str, row: int | None = None) -> ValidityFileError:
    return ValidityFileError(str(source.error(problem, row)))


def _numbers(df: pd.DataFrame, column: str, source: _Source, *, low: float, high: float) -> np.ndarray:
    """A numeric column (NaN where empty), each given value a plain number in [low, high]."""
    text = df[column].astype("string").str.strip().fillna("")
    value = np.asarray(pd.to_numeric(text.where(text.str.fullmatch(PLAIN_NUMBER), ""), errors="coerce"), float)
    bad = ((text != "").to_numpy() & np.isnan(value)).astype(bool)
    if bad.any():
        i = int(np.argmax(bad))
        raise _error(source, f"column {column}: {show_value(text.iloc[i])} is not a number", i)
    with np.errstate(invalid="ignore"):
        outside = ~np.isnan(value) & ((value < low) | (value > high))
    if outside.any():
        i = int(np.argmax(outside))
        shown = show_number(text.iloc[i], value[i])
        raise _error(source, f"column {column}: {shown} is outside {low:g}–{high:g}", i)
    return value


def _runs(df: pd.DataFrame, source: _Source) -> np.ndarray:
    if "run" not in df.columns:
        return np.zeros(len(df), dtype=np.int64)
    text = _cells(df, "run", source, required=True)
    bad = ~pd.Series(text).str.fullmatch(r"[+-]?[0-9]{1,15}").to_numpy(dtype=bool)
    if bad.any():
        i = int(np.argmax(bad))
        raise _error(source, f"column run: {show_value(text.iloc[i])} is not a whole number", i)
    return text.astype(np.int64).to_numpy()


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _first_row(rows: pd.DataFrame, keys: list) -> np.ndarray:
    """Per row, the position of the first row with the same ``keys``."""
    return pd.Series(np.arange(len(rows)), index=rows.index).groupby(keys, sort=False).transform("first").to_numpy()


def _check_sets(rows: pd.DataFrame, source: _Source) -> None:
    """One group, name, role and edit per text; per model one baseline and one name per set;
    every run once. Messages name the lines, not the keys (which may be anything)."""
    text = [rows["jd"], rows["resume_id"], rows["variant"]]
    first = _first_row(rows, text)
    for column in ("group", "name", "role", "edit"):
        differs = rows[column].to_numpy() != rows[column].to_numpy()[first]
        if differs.any():
            i = _first(differs)
            raise _error(
                source,
                f"column {column}: differs from {source.where(int(first[i]))}, a row of the same text "
                "(jd, resume_id and variant)",
                i,
            )
    run = _first_row(rows, [rows["model"], *text, rows["run"]])
    twice = run != np.arange(len(rows))
    if twice.any():
        i = _first(twice)
        raise _error(
            source,
            f"run {show_value(int(rows['run'].iloc[i]))} of this text (model, jd, resume_id and variant) is "
            f"already on {source.where(int(run[i]))}",
            i,
        )
    sets = [rows["jd"], rows["resume_id"], rows["group"]]
    first = _first_row(rows, sets)
    names = rows["name"].to_numpy() != rows["name"].to_numpy()[first]
    if names.any():
        i = _first(names)
        raise _error(
            source,
            f"column name: differs from {source.where(int(first[i]))}, a row of the same set (jd, resume_id "
            "and group); every text of a set carries one name",
            i,
        )
    has_base = (rows["role"] == "baseline").groupby([rows["model"], *sets], sort=False).transform("any")
    if not has_base.all():
        i = _first(~has_base.to_numpy())
        raise _error(
            source,
            f"column role: the set of this row (jd, resume_id and group) has no baseline row for model "
            f"{show_value(rows['model'].iloc[i])}; each twin is compared with its set's baseline",
            i,
        )
    at = np.flatnonzero(rows["role"].to_numpy() == "baseline")
    bases = rows.iloc[at]
    first_base = at[_first_row(bases, [bases["model"], bases["jd"], bases["resume_id"], bases["group"]])]
    second = rows["variant"].to_numpy()[at] != rows["variant"].to_numpy()[first_base]
    if second.any():
        i = int(at[_first(second)])
        raise _error(
            source,
            f"column role: a second baseline (another variant) of the set of the baseline on "
            f"{source.where(int(first_base[_first(second)]))} (jd, resume_id and group); a set has one",
            i,
        )


def _open(path: Path) -> tuple[pd.DataFrame, _Source]:
    if path.is_symlink():
        raise ValidityFileError(f"{path}: a symbolic link; give the file itself")
    if not path.exists():
        raise ValidityFileError(f"{path}: no such file")
    if not path.is_file():
        raise ValidityFileError(f"{path}: not a regular file")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValidityFileError(f"{path}: {size:,} bytes, more than the {MAX_BYTES:,} a validity-score CSV may have")
    try:
        df, source = _read_csv(path)
    except FitScoreFileError as exc:
        raise ValidityFileError(str(exc)) from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise _error(
            source,
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(required: {', '.join(REQUIRED_COLUMNS)}; found: {show_columns(source.columns, KNOWN_COLUMNS)})",
        )
    if df.empty:
        raise _error(source, "the file has a header but no rows")
    return df, source


def read_validity_file(path: str | os.PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, pairs) of a validity-score CSV (module docstring): ``scores`` with columns
    model, jd, resume_id, variant, run, score (and expected_score where given), ``pairs`` one
    row per text with jd, resume_id, group, name, variant, role, edit."""
    df, source = _open(Path(path))
    rows = pd.DataFrame({c: _cells(df, c, source, required=True) for c in ("resume_id", "group", "role")})
    rows["role"] = rows["role"].str.lower()
    unknown = ~rows["role"].isin(ROLES).to_numpy()
    if unknown.any():
        i = _first(unknown)
        raise _error(source, f"column role: {show_value(rows['role'].iloc[i])} is not one of {', '.join(ROLES)}", i)
    for column, default in (("model", DEFAULT_MODEL), ("jd", DEFAULT_JD)):
        rows[column] = _cells(df, column, source, required=True) if column in df.columns else default
    rows["name"] = _cells(df, "name", source, required=False) if "name" in df.columns else ""
    rows["name"] = rows["name"].where(rows["name"] != "", rows["group"])
    variant = _cells(df, "variant", source, required=False) if "variant" in df.columns else None
    if "edit" in df.columns:
        edit = _cells(df, "edit", source, required=False)
    elif variant is not None:
        edit = variant.str.rsplit(":", n=1).str[-1]
    else:
        edit = rows["role"]
    base = (rows["role"] == "baseline").to_numpy()
    implied = pd.Series(np.where(base, "baseline", rows["role"]), index=rows.index)
    edit = edit.where((edit != "") & ~base, implied)
    rows["edit"] = edit
    made = np.where(base, rows["group"] + ":baseline", rows["group"] + ":" + rows["role"] + ":" + rows["edit"])
    rows["variant"] = made if variant is None else variant.where(variant != "", pd.Series(made, index=rows.index))
    rows["run"] = _runs(df, source)
    low, high = SCORE_RANGE
    rows["score"] = _numbers(df, "score", source, low=low, high=high)
    _check_sets(rows, source)
    scores = rows[["model", "jd", "resume_id", "variant", "run", "score"]].copy()
    if "expected_score" in df.columns:
        scores["expected_score"] = _numbers(df, "expected_score", source, low=low, high=high)
    pairs = rows.drop_duplicates(["jd", "resume_id", "variant"])
    pairs = pairs[["jd", "resume_id", "group", "name", "variant", "role", "edit"]].reset_index(drop=True)
    return scores.reset_index(drop=True), pairs


def analyze_validity_file(path: str | os.PathLike, settings=None, reference: str | None = None) -> pd.DataFrame:
    """The validity ``Verdicts`` of a validity-score CSV (raises ``ValidityFileError`` on bad
    input, a ``reference`` that is no group of the file included)."""
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts

    settings = settings or load_inference_settings()
    scores, pairs = read_validity_file(path)
    groups = list(pd.unique(pairs["group"]))
    if reference is not None and reference not in groups:
        shown = ", ".join(show_value(g) for g in groups[:8]) + (" ..." if len(groups) > 8 else "")
        raise ValidityFileError(f"--reference {show_value(reference)}: not a group of {path} ({shown})")
    try:
        return validity_verdicts(scores, pairs, settings, reference=reference)
    except ValueError as exc:  # a check of validity_stats the file's own checks did not make
        raise ValidityFileError(f"{path}: {str(exc).splitlines()[0][:300]}") from None
