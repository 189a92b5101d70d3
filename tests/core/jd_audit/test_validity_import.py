"""``resumebias analyze-validity FILE``: validity pairs scored elsewhere, as a CSV, read into the
validity verdicts (``core/jd_audit/validity_import.py``).

The real check: the planted screeners of issue 42's tests (``testing/planted_validity.py``)
score the validity pairs of 36 generated résumés, the scores are written as a user's CSV, and the
command reads them: the screener that ignores qualification is no better than chance, the one
that follows the job description's requirements valid, the one blind to one group's candidates
shows that group's gap. Every bad input stops with one line naming the file, the line and the
column."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from resumebias_dagster.cli import main
from resumebias_dagster.core.jd_audit import validity_import
from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions, load_job_requirements
from resumebias_dagster.core.jd_audit.probes import select_probe_resumes
from resumebias_dagster.core.jd_audit.validity import validity_pairs
from resumebias_dagster.core.jd_audit.validity_import import read_validity_file
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.testing import planted_validity

JD = "staff-software-engineer"
GROUPS = ["white_male", "black_female"]
COLUMNS = ["model", "jd", "resume_id", "group", "name", "variant", "role", "edit", "run", "score"]


@pytest.fixture(scope="module")
def pairs():
    base = select_probe_resumes(generate_resumes(n_per_level=160, seed=0), per_level=12)
    built, _ = validity_pairs(base, {JD: load_job_requirements()[JD]}, GROUPS)
    return built


def _scored_csv(pairs: pd.DataFrame, function: str, path) -> str:
    """The pairs scored by a planted screener, one row per text, as a user writes them."""
    text = dict(zip(*load_job_descriptions()[["jd", "text"]].to_numpy().T))
    items = [{"resume": r.text, "job_description": text[r.jd]} for r in pairs.itertuples()]
    scores = getattr(planted_validity, function)(items)
    pairs.assign(model=function, run=0, score=scores)[COLUMNS].to_csv(path, index=False)
    return str(path)


def _json(path, capsys, *extra) -> dict:
    assert main(["analyze-validity", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _finding(out: dict, finding: str) -> dict:
    return next(v for v in out["verdicts"] if v["finding"] == finding)


def test_the_design_is_the_planted_tests_one(pairs):
    assert pairs["resume_id"].nunique() == 36 and set(pairs["role"]) == {"baseline", "better", "worse", "equal"}


def test_a_screener_that_ignores_qualification_is_no_better_than_chance(pairs, tmp_path, capsys):
    out = _json(_scored_csv(pairs, "ignores", tmp_path / "ignores.csv"), capsys)
    criterion = _finding(out, "validity:criterion")
    assert out["summary"] == {"ignores": "no better than chance"}
    assert criterion["ci_low"] <= 0.5 <= criterion["ci_high"] and criterion["n_resumes"] == 36


def test_a_screener_that_follows_the_requirements_is_valid(pairs, tmp_path, capsys):
    out = _json(_scored_csv(pairs, "follows", tmp_path / "follows.csv"), capsys)
    criterion = _finding(out, "validity:criterion")
    assert out["summary"] == {"follows": "valid"}
    assert criterion["verdict"] == "valid" and criterion["ci_low"] >= 0.9
    # The power column is finish's, at the declared effect (0.75): a perfect scorer's 36 résumés reach it.
    assert criterion["power"] > 0.99 and 0.5 < criterion["mde"] < 0.75


def test_a_screener_blind_to_one_group_shows_that_groups_gap(pairs, tmp_path, capsys):
    planted_validity.UNSEEN.update(pairs.loc[pairs["group"] == "black_female", "name"])
    try:
        path = _scored_csv(pairs, "follows_but_not_for_some", tmp_path / "blind.csv")
    finally:
        planted_validity.UNSEEN.clear()
    out = _json(path, capsys)
    gap = _finding(out, "validity:group_gap:black_female")
    assert gap["verdict"] == "beyond_noise" and gap["estimate"] < 0
    assert _finding(out, "validity:group:black_female")["verdict"] == "no better than chance"
    # With the other group as the reference, the gap is white_male's, and of the other sign.
    flipped = _finding(_json(path, capsys, "--reference", "black_female"), "validity:group_gap:white_male")
    assert flipped["verdict"] == "beyond_noise" and flipped["estimate"] == pytest.approx(-gap["estimate"])


def test_the_table_is_the_verdict_table_of_every_analyze_command(pairs, tmp_path, capsys):
    assert main(["analyze-validity", _scored_csv(pairs, "follows", tmp_path / "f.csv")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("DOES IT MEASURE QUALIFICATION?\nfollows: valid\n\nVERDICTS\n")
    assert "criterion validity: the share of better / worse twins" in out


def test_the_optional_columns_default_as_documented(tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("resume_id,group,role,score\nr1,a,baseline,5\nr1,a,better,7\nr1,a,worse,3\nr1,a,equal,5\n")
    scores, pairs = read_validity_file(path)
    assert set(scores["model"]) == {"screener"} and set(scores["jd"]) == {"jd"} and set(scores["run"]) == {0}
    assert pairs["variant"].tolist() == ["a:baseline", "a:better:better", "a:worse:worse", "a:equal:equal"]
    assert pairs["name"].tolist() == ["a"] * 4 and pairs["edit"].tolist() == ["baseline", "better", "worse", "equal"]
    # The edit comes from the variant where there is no edit column.
    path.write_text("resume_id,group,variant,role,score\nr1,a,a:baseline,baseline,5\nr1,a,a:better:skill,better,7\n")
    assert read_validity_file(path)[1]["edit"].tolist() == ["baseline", "skill"]


def test_a_cell_kept_from_being_a_formula_is_read_without_its_apostrophe(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text("model,resume_id,group,role,score\n'=tool,r1,a,baseline,5\n'=tool,r1,a,better,7\n")
    assert set(read_validity_file(path)[0]["model"]) == {"=tool"}


HEADER = "resume_id,group,role,edit,score\n"
GOOD = "r1,a,baseline,,5\nr1,a,better,skill,7\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        (HEADER, "the file has a header but no rows"),
        ("resume_id,group,score\nr1,a,5\n", "missing column role (required: resume_id, group, role, score; found: "),
        (HEADER + "r1,a,baseline,,5\nr1,a,superior,skill,7\n", "line 3: column role: 'superior' is not one of"),
        (
            HEADER + "r1,a,better,skill,7\nr2,a,baseline,,5\n",
            "line 2: column role: the set of this row (jd, resume_id and group) has no baseline row for model 'screener'",
        ),
        (
            HEADER + GOOD + "r1,a,baseline,,6\n",
            "line 4: run 0 of this text (model, jd, resume_id and variant) is already on line 2",
        ),
        (HEADER + "r1,a,baseline,,5\nr1,a,better,skill,11\n", "line 3: column score: 11 is outside 1–10"),
        (HEADER + "r1,a,baseline,,5\nr1,a,better,skill,high\n", "line 3: column score: 'high' is not a number"),
        (HEADER + "r1,a,baseline,,5\nr1,a,better,skill,inf\n", "line 3: column score: 'inf' is not a number"),
        (HEADER + "r1,,baseline,,5\n", "line 2: empty group"),
        ("resume_id,group,role,score,run\nr1,a,baseline,5,first\n", "line 2: column run: 'first' is not a whole"),
        (
            "resume_id,group,role,score,name\nr1,a,baseline,5,Ann\nr1,a,better,7,Bo\n",
            "line 3: column name: differs from line 2, a row of the same set",
        ),
        (
            "resume_id,group,role,variant,score\nr1,a,baseline,v0,5\nr1,a,baseline,v1,5\n",
            "line 3: column role: a second baseline (another variant) of the set of the baseline on line 2",
        ),
        (
            "resume_id,group,role,variant,score,run\nr1,a,baseline,v,5,0\nr1,a,better,v,7,1\n",
            "line 3: column role: differs from line 2, a row of the same text",
        ),
        (HEADER + "r1,a,baseline,,5,9\n", "line 2: 6 fields, but the header has 5 columns"),
        (HEADER + 'r1,a,"baseline,,5\n', "a quoted field is never closed"),
    ],
)
def test_a_bad_file_stops_with_one_line_naming_where(tmp_path, capsys, text, message):
    path = tmp_path / "scores.csv"
    path.write_text(text, encoding="utf-8")
    assert main(["analyze-validity", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: ") and message in err, err


def test_bytes_that_are_no_csv_are_refused(tmp_path, capsys):
    for name, raw, message in [
        ("a.parquet", b"PAR1\x00\x15\x04", "contains a NUL byte (byte offset 4); not a text CSV file"),
        ("b.csv", b"resume_id,group\n\xff\xfe", "line 2: not UTF-8 text"),
    ]:
        path = tmp_path / name
        path.write_bytes(raw)
        assert main(["analyze-validity", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and str(path) in err, err


def test_a_file_too_large_a_link_or_none_is_refused(tmp_path, capsys, monkeypatch):
    path = tmp_path / "scores.csv"
    path.write_text(HEADER + GOOD)
    monkeypatch.setattr(validity_import, "MAX_BYTES", 10)
    assert main(["analyze-validity", str(path)]) == 2
    assert (
        capsys.readouterr().err
        == f"error: {path}: {len(HEADER + GOOD)} bytes, more than the 10 a validity-score CSV may have\n"
    )
    monkeypatch.undo()
    link = tmp_path / "link.csv"
    link.symlink_to(path)
    assert main(["analyze-validity", str(link)]) == 2
    assert capsys.readouterr().err == f"error: {link}: a symbolic link; give the file itself\n"
    assert main(["analyze-validity", str(tmp_path / "none.csv")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'none.csv'}: no such file\n"
    assert main(["analyze-validity", str(path), "--reference", "zz"]) == 2
    assert capsys.readouterr().err == f"error: --reference 'zz': not a group of {path} ('a')\n"


def test_analyze_validity_does_not_import_dagster_or_torch(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(HEADER + GOOD)
    code = (
        "import sys; from resumebias_dagster.cli import main; "
        f"assert main(['analyze-validity', {str(path)!r}]) == 0; "
        "assert 'dagster' not in sys.modules and 'torch' not in sys.modules, 'heavy import'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
