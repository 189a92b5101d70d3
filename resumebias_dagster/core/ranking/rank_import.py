"""Rankings made elsewhere, read from JSON Lines, for ``resumebias analyze-rank FILE...``.

One JSON object per line (blank lines are skipped), one ranking each::

    {"job": "backend", "model": "gpt-4o", "shown": ["Brad McCarthy", "Jamal Booker"],
     "groups": ["W_M", "B_M"], "answer": "1. Jamal Booker\\n2. Brad McCarthy"}

``shown``: the candidates' names in the order shown (two or more, distinct). ``groups``: each
name's group, either a list parallel to ``shown`` or an object mapping every shown name to its
group; a group is a string (``"W_M"``) or an object ``{"sex": ..., "race_ethnicity": ...}``,
labelled ``<race_ethnicity>_<sex>`` as the impact tables label an intersection. ``answer``: the
model's raw text (``null``: no answer), parsed by ``parse.parse_ranking`` exactly as the
project's own runs are. Optional ``resume``: the id of the base résumé every candidate of the
ranking is a copy of (the design's unit); with it the impact ratios get intervals and tests
(``tables.py``), without it they have none. Other keys are ignored. Anything else stops the reading with a
``RankingFileError`` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from resumebias_dagster.core.inference import verdict_records
from resumebias_dagster.core.inference.verdict_table import format_verdict_table
from resumebias_dagster.core.ranking.parse import parse_ranking
from resumebias_dagster.core.ranking.tables import DEFAULT_TOP_K, as_json, position_table, selection_table

REQUIRED_KEYS = ("job", "model", "shown", "groups", "answer")


class RankingFileError(ValueError):
    """A rankings file cannot be used; the message names the file, the line and why."""


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _text(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RankingFileError(f"{where}: {key} must be a non-empty string, got {json.dumps(value)}")
    return value.strip()


def group_label(value: Any, where: str) -> str:
    """A group given as a string, or as ``{sex, race_ethnicity}`` (-> ``<race_ethnicity>_<sex>``)."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, dict) and set(value) == {"sex", "race_ethnicity"}:
        if all(isinstance(v, str) and v.strip() for v in value.values()):
            return f"{value['race_ethnicity'].strip()}_{value['sex'].strip()}"
    raise RankingFileError(
        f'{where}: a group is a string such as "W_M" or an object '
        f'{{"sex": ..., "race_ethnicity": ...}} of two non-empty strings, got {json.dumps(value)}'
    )


def _shown(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or len(value) < 2:
        raise RankingFileError(f"{where}: shown must be a list of two or more names, got {_kind(value)}")
    names = [_text(v, f"shown[{i}]", where) for i, v in enumerate(value)]
    seen: set[str] = set()
    for name in names:
        key = " ".join(name.split()).casefold()
        if key in seen:
            raise RankingFileError(f"{where}: shown names {name!r} twice (each candidate once)")
        seen.add(key)
    return names


def _groups(value: Any, shown: list[str], where: str) -> list[str]:
    if isinstance(value, list):
        if len(value) != len(shown):
            raise RankingFileError(
                f"{where}: shown has {len(shown)} names but groups has {len(value)} (a list parallel to shown)"
            )
        return [group_label(g, f"{where}: groups[{i}]") for i, g in enumerate(value)]
    if isinstance(value, dict):
        missing = [n for n in shown if n not in value]
        extra = [n for n in value if n not in shown]
        if missing:
            raise RankingFileError(f"{where}: groups gives no group for {', '.join(map(repr, missing))}")
        if extra:
            raise RankingFileError(f"{where}: groups names {', '.join(map(repr, extra))}, not in shown")
        return [group_label(value[n], f"{where}: groups[{n!r}]") for n in shown]
    raise RankingFileError(
        f"{where}: groups must be a list parallel to shown or an object name -> group, got {_kind(value)}"
    )


def ranking_record(obj: Any, where: str) -> dict[str, Any]:
    """One line's ranking as a row (model, jd, shown, groups, ranked, first, error, answer)."""
    if not isinstance(obj, dict):
        raise RankingFileError(f"{where}: a ranking is a JSON object, got {_kind(obj)}")
    missing = [k for k in REQUIRED_KEYS if k not in obj]
    if missing:
        raise RankingFileError(f"{where}: missing key(s) {', '.join(missing)}")
    shown = _shown(obj["shown"], where)
    groups = _groups(obj["groups"], shown, where)
    answer = obj["answer"]
    if answer is not None and not isinstance(answer, str):
        raise RankingFileError(f"{where}: answer must be the model's text (a string) or null, got {_kind(answer)}")
    parsed = parse_ranking(answer, shown)
    return {
        "model": _text(obj["model"], "model", where),
        "jd": _text(obj["job"], "job", where),
        "item_id": where,
        "resume_id": None if obj.get("resume") is None else _text(obj["resume"], "resume", where),
        "shown": as_json(shown),
        "groups": as_json(groups),
        "ranked": as_json(parsed.ranked) if parsed.ok else None,
        "first": parsed.ranked[0] if parsed.ok else None,
        "error": None if parsed.ok else f"unparsable: {parsed.error}",
        "answer": answer,
    }


def read_ranking_file(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise RankingFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise RankingFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RankingFileError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        except (ValueError, RecursionError) as exc:  # nested too deeply, or an integer of 4,300+ digits
            raise RankingFileError(f"{where}: cannot be read ({type(exc).__name__})") from None
        try:
            records.append(ranking_record(obj, where))
        except (RecursionError, ValueError, TypeError, OverflowError) as exc:
            if isinstance(exc, RankingFileError):
                raise
            raise RankingFileError(f"{where}: cannot be read ({type(exc).__name__})") from None
    if not records:
        raise RankingFileError(f"{path}: no rankings (one JSON object per line)")
    return records


def read_ranking_files(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Every ranking of ``paths``, in order, as rows the tables of ``tables`` read."""
    records = [record for path in paths for record in read_ranking_file(path)]
    return pd.DataFrame.from_records(records).astype(object)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return _clean(value.item())
    return value


def _records(frame: pd.DataFrame, columns: Sequence[str], rename: Mapping[str, str]) -> list[dict[str, Any]]:
    return [{rename.get(c, c): _clean(v) for c, v in zip(columns, row)} for row in frame[list(columns)].to_numpy()]


GROUP_FIELDS = (
    "model",
    "jd",
    "group",
    "n_rankings",
    "shown_first",
    "ranked_first",
    "selection_rate",
    "chance_rate",
    "impact_ratio",
    "impact_ratio_ci_low",
    "impact_ratio_ci_high",
    "ci_below_four_fifths",
    "below_four_fifths",
    "reference_group",
    "n_resumes",
    "impact_ratio_p_value",
    "n_top_k",
    "top_k_rate",
    "top_k_impact_ratio",
)
POSITION_FIELDS = ("model", "jd", "position", "n_rankings", "ranked_first", "share_first", "chance_rate")


def rank_json(rows: pd.DataFrame, k: int = DEFAULT_TOP_K, verdicts: pd.DataFrame | None = None) -> dict[str, Any]:
    """The ``analyze-rank --json`` output: ``groups`` (per model, job, group: counts ranked and
    shown first, selection rate, impact ratio, top-k), ``positions`` (per model, job, shown
    position: share ranked first), ``answers`` (per model, job: rankings, and the errors by
    reason) and, given ``verdicts`` (``verdicts.ranking_verdicts``), one object per finding."""
    rename = {"jd": "job"}
    answers = []
    for (model, job), g in rows.groupby(["model", "jd"], sort=True):
        errors = g["error"].dropna().value_counts()
        answers.append(
            {
                "model": model,
                "job": job,
                "n_answers": len(g),
                "n_errors": int(errors.sum()),
                "errors": {str(reason): int(n) for reason, n in sorted(errors.items())},
            }
        )
    out = {
        "top_k": k,
        "groups": _records(selection_table(rows, k), GROUP_FIELDS, rename),
        "positions": _records(position_table(rows), POSITION_FIELDS, rename),
        "answers": answers,
    }
    if verdicts is not None:
        out["verdicts"] = verdict_records(verdicts)
    return out


def format_rank_report(rows: pd.DataFrame, k: int = DEFAULT_TOP_K, verdicts: pd.DataFrame | None = None) -> str:
    """The tables as text, for ``analyze-rank`` without ``--json``; the ``verdicts`` last, in
    the table every command prints verdicts with."""
    groups = selection_table(rows, k)[list(GROUP_FIELDS[:13])].rename(columns={"jd": "job"})
    positions = position_table(rows)[list(POSITION_FIELDS)].rename(columns={"jd": "job"})
    n_err = int(rows["error"].notna().sum())
    none = "(no valid ranking)"
    lines = [
        f"{len(rows)} rankings, {n_err} without a ranking (see --json for the reasons)",
        "",
        "Selection rate (share ranked first) by group; impact ratio against the highest group, its 95% interval "
        "(rankings that give a `resume` id: the résumé as the unit), whether all of it is below 0.8:",
        groups.round(3).to_string(index=False) if len(groups) else none,
        "",
        "Position bias: share of rankings putting the candidate shown at each position first:",
        positions.round(3).to_string(index=False) if len(positions) else none,
    ]
    if verdicts is not None:
        lines += ["", format_verdict_table(verdicts, empty="(no group below another: no finding)").rstrip("\n")]
    return "\n".join(lines) + "\n"


def rank_report(
    rows: pd.DataFrame, k: int = DEFAULT_TOP_K, *, as_json: bool = False, verdicts: pd.DataFrame | None = None
) -> str:
    """What ``analyze-rank`` prints: ``rank_json`` as indented JSON, or ``format_rank_report``."""
    if as_json:
        return json.dumps(rank_json(rows, k, verdicts), indent=2, ensure_ascii=False) + "\n"
    return format_rank_report(rows, k, verdicts)
