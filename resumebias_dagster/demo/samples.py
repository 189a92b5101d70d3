"""Sample files for the analyze commands, written from the demo's own tables.

``resumebias analyze``, ``analyze-fit`` and ``analyze-rank`` read results made elsewhere
(``docs/howto/analyze.md``). The demo writes its own results in those formats, so each command
can be tried on real data at once:

- ``seniority_styles.csv`` and ``seniority_names.csv``: the seniority study's predictions in the
  notebooks' style and social formats (with the runs and the label distributions);
- ``fit_runs.csv``: the fit scores, one row per run, with the résumé and the name of each variant;
- ``rankings.jsonl``: for each résumé and job description, the candidates of the first-name
  probe (the same résumé under one name of each group) ranked by the screener's fit scores,
  shown in an order that rotates from résumé to résumé (ties keep the order shown);
- ``validity_scores.csv``: the fit scores of the validity pairs (each baseline and its twins),
  one row per run with the set's group and name and the twin's role and edit, for
  ``analyze-validity`` (written where the run scored validity pairs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

SENIORITY_COLUMNS = ["true_seniority", "model", "run", "prediction", "correct", "p_junior", "p_mid", "p_senior"]
FIT_COLUMNS = ["variant", "model", "jd", "run", "score", "resume_id", "name", "recommend"]
VALIDITY_COLUMNS = ["model", "jd", "resume_id", "group", "name", "variant", "role", "edit", "run", "score"]


def _read(database: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    import duckdb

    with duckdb.connect(str(database), read_only=True) as con:
        predictions = con.execute("select * from audit.seniority_predictions").df()
        fit = con.execute("select * from audit.fit_scores order by model, jd, resume_id, variant, run").df()
        tables = {
            row[0]
            for row in con.execute("select table_name from duckdb_tables() where schema_name = 'audit'").fetchall()
        }
        validity = pd.DataFrame()
        if {"validity_scores", "validity_pairs"} <= tables:
            validity = con.execute(
                'select s.model, s.jd, s.resume_id, p."group", p.name, s.variant, p.role, p.edit, s.run, s.score '
                "from audit.validity_scores s join audit.validity_pairs p using (jd, resume_id, variant) "
                'order by s.model, s.jd, s.resume_id, p."group", s.variant, s.run'
            ).df()
    return predictions, fit, validity


def seniority_files(predictions: pd.DataFrame, folder: Path) -> list[Path]:
    """The style rows in the style format, the name rows in the social format."""
    rows = predictions.assign(correct=predictions["prediction"] == predictions["true_seniority"])
    style = rows[rows["variant_kind"] == "style"].rename(columns={"original_idx": "idx", "variant": "style"})
    names = rows[rows["variant_kind"] == "demographic"].rename(columns={"variant": "demographic"})
    paths = [folder / "seniority_styles.csv", folder / "seniority_names.csv"]
    style[["idx", "style", *SENIORITY_COLUMNS]].to_csv(paths[0], index=False)
    names[["original_idx", "demographic", "name", *SENIORITY_COLUMNS]].to_csv(paths[1], index=False)
    return paths


def fit_file(fit: pd.DataFrame, folder: Path) -> Path:
    path = folder / "fit_runs.csv"
    fit[FIT_COLUMNS].to_csv(path, index=False)
    return path


def validity_file(validity: pd.DataFrame, folder: Path) -> Path:
    path = folder / "validity_scores.csv"
    validity[VALIDITY_COLUMNS].to_csv(path, index=False)
    return path


def rankings_file(fit: pd.DataFrame, folder: Path) -> Path:
    """One ranking per résumé and job description of the first-name probe's candidates."""
    names = fit[(fit["axis"] == "firstName") & (fit["run"] == 0)]
    lines = []
    for k, ((model, jd, resume), cell) in enumerate(names.groupby(["model", "jd", "resume_id"], sort=True)):
        cell = cell.sort_values("variant")
        shift = k % len(cell)
        shown = pd.concat([cell.iloc[shift:], cell.iloc[:shift]])  # a cyclic rotation: each group leads in turn
        ranked = shown.assign(order=range(len(shown))).sort_values(["score", "order"], ascending=[False, True])
        answer = "\n".join(f"{i}. {name}" for i, name in enumerate(ranked["name"], start=1))
        lines.append(
            {
                "job": jd,
                "model": model,
                "resume": resume,
                "shown": shown["name"].tolist(),
                "groups": shown["level"].tolist(),
                "answer": answer,
            }
        )
    path = folder / "rankings.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_samples(database: Path, folder: Path) -> dict[str, list[Path]]:
    """The sample files, by the command that reads them."""
    folder.mkdir(parents=True, exist_ok=True)
    predictions, fit, validity = _read(database)
    samples = {
        "analyze": seniority_files(predictions, folder),
        "analyze-fit": [fit_file(fit, folder)],
        "analyze-rank": [rankings_file(fit, folder)],
    }
    if len(validity):
        samples["analyze-validity"] = [validity_file(validity, folder)]
    return samples
