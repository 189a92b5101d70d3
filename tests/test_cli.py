"""The ``resumebias`` command line."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from resumebias_dagster.cli import COMMANDS, main
from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.plan_command import default_structure

SOCIAL_CSV = (
    "original_idx,true_seniority,demographic,name,model,prediction,correct\n"
    "0,senior,caucasian_male,Greg Smith,gpt5,senior,True\n"
    "0,senior,caucasian_female,Emily Johnson,gpt5,senior,True\n"
    "0,senior,african_american_male,Jamal Washington,gpt5,mid,False\n"
    "0,senior,african_american_female,Lakisha Jefferson,gpt5,mid,False\n"
    "1,junior,caucasian_male,Greg Smith,gpt5,junior,True\n"
    "1,junior,caucasian_female,Emily Johnson,gpt5,junior,True\n"
    "1,junior,african_american_male,Jamal Washington,gpt5,junior,True\n"
    "1,junior,african_american_female,Lakisha Jefferson,gpt5,error,False\n"
)
STYLE_CSV = (
    "idx,true_seniority,style,model,prediction,correct,resume_text\n"
    "0,mid,neutral,gpt5,mid,True,a\n"
    "0,mid,overstated,gpt5,senior,False,b\n"
    "0,mid,understated,gpt5,mid,True,c\n"
)


@pytest.fixture
def files(tmp_path):
    social = tmp_path / "test3_llm_predictions.csv"
    social.write_text(SOCIAL_CSV)
    style = tmp_path / "test2_llm_predictions.csv"
    style.write_text(STYLE_CSV)
    return style, social


def test_analyze_prints_report(files, capsys):
    assert main(["analyze", *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert "ACCURACY BY STYLE" in out and "BIAS INDICATORS" in out
    # Caucasian: 4 valid, diffs 0 0 0 0; african_american: 3 valid, diffs -1 -1 0 -> racial +0.667.
    assert any("Racial Bias" in line and "+0.667" in line for line in out.splitlines())
    assert any("Invalid (unknown/error)" in line and "1" in line for line in out.splitlines())


def test_analyze_json(files, capsys):
    assert main(["analyze", "--json", *map(str, files)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"style", "social", "verdicts"}
    findings = {v["finding"]: v for v in out["verdicts"] if v["kind"] != "impact_ratio"}
    assert any(v["kind"] == "impact_ratio" for v in out["verdicts"])  # as seniority_verdicts lists them
    validity = {f: v for f, v in findings.items() if f.startswith("validity:")}
    # Does it read seniority at all (issue 42): accuracy and rank difference, per name group too.
    assert {"validity:accuracy", "validity:rank_difference", "validity:accuracy:group:caucasian_male"} <= set(validity)
    assert validity["validity:accuracy"]["kind"] == "seniority_accuracy"
    findings = {f: v for f, v in findings.items() if f not in validity}
    assert set(findings) == {
        "style_shift:overstated",
        "style_shift:understated",
        "seniority_bias:racial",
        "seniority_bias:gender",
        "seniority_bias:extreme",
        "inconsistency:style",
        "inconsistency:demographic",
    }
    bias = [v for v in out["verdicts"] if not v["finding"].startswith("validity:")]
    for v in bias:
        assert {"finding", "model", "estimate", "ci_low", "ci_high", "p", "verdict", "mde"} <= set(v)
        assert v["verdict"] in {"beyond_noise", "equivalent", "within_noise", "inconclusive"}
    # Two résumés, one run: nothing can be decided, and the table says why rather than guessing.
    assert {v["verdict"] for v in bias} <= {"within_noise", "inconclusive"}
    assert {v["verdict"] for v in validity.values()} <= {"no better than chance", "within_noise", "inconclusive"}
    social = out["social"]["gpt5"]
    assert social["n"] == 7
    assert social["racial_bias"] == pytest.approx(2 / 3)
    # Original 0 is split, original 1 has an error: 1 of 2.
    assert social["inconsistency_rate"] == pytest.approx(0.5)
    assert out["style"]["gpt5"]["accuracy"] == {"neutral": 1.0, "overstated": 0.0, "understated": 1.0}


def test_analyze_json_on_null_studies_flags_few_of_them(tmp_path, capsys):
    from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions, write_study_files

    flagged = 0
    for seed in range(25):
        folder = tmp_path / str(seed)
        folder.mkdir()
        paths = write_study_files(
            simulate_seniority_predictions(n_resumes=60, exact=seed % 2 == 0, seed=seed, name_sd=0.0), folder
        )
        assert main(["analyze", "--json", *paths]) == 0
        verdicts = json.loads(capsys.readouterr().out)["verdicts"]
        flagged += any(v["verdict"] == "beyond_noise" for v in verdicts)
    assert flagged <= 4  # 5% of 25 is 1.25; 4 or more has probability 4% under a calibrated test


def test_analyze_bad_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text(SOCIAL_CSV.replace("gpt5,mid,False", "gpt5,Mid-level,False", 1))
    assert main(["analyze", str(bad)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {bad}: line 4, column 'prediction': unknown prediction 'Mid-level'")


def test_analyze_missing_file_exits_2(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "missing.csv")]) == 2
    assert "file does not exist" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["analyze"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main([])
    assert "COMMAND" in capsys.readouterr().err


def test_commands_are_a_registry():
    assert "analyze" in COMMANDS and callable(COMMANDS["analyze"].handler)


def test_console_script(files):
    script = shutil.which("resumebias") or str(Path(sys.executable).with_name("resumebias"))
    done = subprocess.run([script, "analyze", "--json", str(files[1])], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["social"]["gpt5"]["n"] == 7
    failed = subprocess.run([script, "analyze", str(files[1]) + ".nope"], capture_output=True, text=True, timeout=120)
    assert failed.returncode == 2
    assert failed.stderr.startswith("error: ") and "file does not exist" in failed.stderr


def test_analyze_does_not_import_dagster(files):
    code = (
        "import sys; from resumebias_dagster.cli import main; "
        f"main(['analyze', {str(files[1])!r}]); "
        "assert 'dagster' not in sys.modules and 'torch' not in sys.modules, 'heavy import'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _social_with(header_extra: str, row_extra: str) -> str:
    lines = SOCIAL_CSV.splitlines()
    return "\n".join([lines[0] + header_extra] + [line + row_extra for line in lines[1:]]) + "\n"


@pytest.mark.parametrize(
    "header_extra, row_extra, message",
    [
        (
            ",p_junior,p_mid,p_senior",
            ",low,0.5,0.5",
            "line 2, column 'p_junior': p_junior must be a probability (a number from 0 to 1) or empty, got 'low' "
            "(8 bad rows in the file)",
        ),
        (
            ",p_junior,p_senior",
            ",0.5,0.5",
            "the label distribution needs all of p_junior, p_mid, p_senior or none of them; "
            "the file has p_junior, p_senior but not p_mid",
        ),
        (
            ",p_junior,p_mid,p_senior",
            ",0.5,0.25,0.5",
            "line 2: p_junior + p_mid + p_senior must sum to 1 (within 0.001), got 1.25 (8 bad rows in the file)",
        ),
        (
            ",Model",
            ",gpt5",
            "line 1, column 'model': duplicate column: header fields 5 and 8 ('model' and 'Model') are the same name "
            "once case and surrounding spaces are ignored",
        ),
    ],
)
def test_analyze_bad_columns_exit_2(tmp_path, capsys, header_extra, row_extra, message):
    bad = tmp_path / "bad.csv"
    bad.write_text(_social_with(header_extra, row_extra))
    for extra in ([], ["--json"]):
        assert main(["analyze", *extra, str(bad)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == f"error: {bad}: {message}\n"


def test_pull_tables_writes_a_duckdb_file_of_the_shared_tables(tmp_path, capsys, monkeypatch):
    import duckdb
    import pandas as pd

    from resumebias_dagster.core.common.shared_tables import SharedTables

    url = f"file://{tmp_path}/shared"
    shared = SharedTables(url)
    for model in ("a", "b"):
        shared.write("audit", "fit_scores", pd.DataFrame({"model": [model] * 2, "score": [1.0, 2.0]}), {"model": model})
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", url)
    out = tmp_path / "pulled.duckdb"
    assert main(["pull-tables", "--out", str(out)]) == 0
    assert "audit.fit_scores: 4 rows" in capsys.readouterr().out
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("select count(distinct model) from audit.fit_scores").fetchone() == (2,)


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["pull-tables"], None, "no shared tables to pull: give --url or set RESUMEBIAS_TABLES_URL"),
        (["pull-tables", "--url", "s3://k:hunter2@b/p"], None, "--url: s3://b/p carries credentials"),
        (["pull-tables", "--url", "file:///nonexistent-folder-xyz"], None, "no tables under audit/ at that URL"),
    ],
)
def test_pull_tables_refusals(argv, env, message, capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("RESUMEBIAS_TABLES_URL", raising=False)
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "hunter2" not in err


def test_plan_prints_a_design_and_its_cost(tmp_path, capsys):
    assert main(["plan", "--kind", "seniority_bias", "--sd", "0.3", "--run-share", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    designs = out["designs"]
    assert out["effect"] == 0.05 and out["power"] == 0.8
    # No run noise: more runs do not help, every design needs the same résumés.
    assert len({d["resumes"] for d in designs}) == 1

    g = designs[0]["resumes"]
    # The power of the verdict printed (beyond noise among the default study's 17 findings in 8
    # families) reaches 80% with g résumés, not with g - 1; a t test at alpha alone would take far fewer.
    from resumebias_dagster.core.inference import Estimate
    from resumebias_dagster.core.inference.power import power_at

    assert out["multiplicity"] == {"findings": 17, "families": 8, "source": "the default study's"}
    c = default_structure("seniority_bias").thresholds(load_inference_settings())[None, :]

    def power(n, threshold=c):
        est = Estimate(np.zeros(1), np.array([0.3 / n**0.5]), np.array([n - 1.0]), np.array([n]))
        return power_at(est, 0.05, threshold)[0]

    assert power(g) >= 0.8 > power(g - 1)
    assert power(g // 2, np.full((1, 1), 0.05)) > 0.8  # planning at alpha would have asked for under half
    assert designs[0]["calls"] == g * 7 * designs[0]["runs"]
    pilot = tmp_path / "pilot.json"
    pilot.write_text(json.dumps({"verdicts": [{"kind": "fit_delta", "se": 0.2, "n_resumes": 12}]}))
    assert main(["plan", "--pilot", str(pilot)]) == 0
    text = capsys.readouterr().out
    assert "from pilot" in text and "one résumé's difference has SD 0.693" in text and "| runs" in text


def test_plan_refuses_bad_settings_naming_them(tmp_path, capsys):
    assert main(["plan", "--kind", "impact_ratio", "--effect", "1.2"]) == 2
    assert "--effect of an impact ratio must lie in (0, 1), got 1.2" in capsys.readouterr().err
    assert main(["plan", "--run-share", "2"]) == 2
    assert "--run-share must lie in [0, 1], got 2.0" in capsys.readouterr().err
    empty = tmp_path / "pilot.json"
    empty.write_text(json.dumps({"verdicts": []}))
    assert main(["plan", "--pilot", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "not a verdicts JSON" in err or "the pilot has no fit_delta finding" in err
    assert main(["plan", "--model", "no-such-model", "--sd", "1"]) == 2
    assert "--model: no provider model named 'no-such-model'" in capsys.readouterr().err


def test_analyze_fit_json_on_null_studies_flags_few_of_them(tmp_path, capsys):
    from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

    variants = [
        "baseline",
        "placebo_blank_line",
        "placebo_trailing_space",
        "addressCountry_nigeria",
        "addressCountry_india",
        "school_mit",
        "school_iit_bombay",
        "promptInjection_explicit",
    ]
    flagged = 0
    for seed in range(20):
        path = tmp_path / f"null-{seed}.csv"
        scores = simulate_fit_scores(
            ["m"], ["j1", "j2"], variants, 3, resumes=10, sd=1.5, effect_sd=0.2, integer=True, seed=seed
        )
        scores.to_csv(path, index=False)
        assert main(["analyze-fit", "--json", str(path)]) == 0
        verdicts = json.loads(capsys.readouterr().out)["verdicts"]
        assert {v["n_resumes"] for v in verdicts} == {10}
        flagged += any(v["verdict"] == "beyond_noise" for v in verdicts)
    assert flagged <= 3  # 5% of 20 is 1; 3 or more has probability 8% under a calibrated test


def _rankings_file(tmp_path, lines) -> Path:
    path = tmp_path / "rankings.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def _ranking(shown, groups, answer, job="backend", model="gpt"):
    return {"job": job, "model": model, "shown": shown, "groups": groups, "answer": answer}


BRAD, JAMAL = "Brad McCarthy", "Jamal Booker"


def test_analyze_rank_json_reproduces_a_hand_computed_example(tmp_path, capsys):
    path = _rankings_file(
        tmp_path,
        [
            # shown first: white_male; ranked first: black_male (a numbered list)
            _ranking([BRAD, JAMAL], ["white_male", "black_male"], f"1. {JAMAL}\n2. {BRAD}"),
            # shown first: black_male; ranked first: black_male (groups as an object)
            _ranking([JAMAL, BRAD], {BRAD: "white_male", JAMAL: "black_male"}, f"{JAMAL}\n{BRAD}"),
            "",
            # shown first: white_male; ranked first: white_male (prose, first mention)
            _ranking([BRAD, JAMAL], ["white_male", "black_male"], f"{BRAD} is the stronger candidate."),
            # declines, though it names them: no ranking, left out of the rates
            _ranking([JAMAL, BRAD], ["black_male", "white_male"], f"I cannot rank {JAMAL} and {BRAD} by name."),
        ],
    )
    assert main(["analyze-rank", "--json", "--top-k", "1", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["top_k"] == 1
    groups = {(g["model"], g["job"], g["group"]): g for g in out["groups"]}
    assert set(groups) == {("gpt", "backend", "black_male"), ("gpt", "backend", "white_male")}
    black, white = groups["gpt", "backend", "black_male"], groups["gpt", "backend", "white_male"]
    # 3 valid rankings: black_male ranked first in 2 (rate 2/3), white_male in 1 (1/3): ratio 1/2.
    assert (black["ranked_first"], black["shown_first"], black["n_rankings"]) == (2, 1, 3)
    assert (white["ranked_first"], white["shown_first"], white["n_rankings"]) == (1, 2, 3)
    assert black["selection_rate"] == pytest.approx(2 / 3) and white["selection_rate"] == pytest.approx(1 / 3)
    assert black["impact_ratio"] == 1.0 and white["impact_ratio"] == pytest.approx(0.5)
    assert white["below_four_fifths"] is True and black["below_four_fifths"] is False
    assert {black["reference_group"], white["reference_group"]} == {"black_male"}
    assert white["top_k_rate"] == pytest.approx(1 / 3)  # top 1 = first
    # Position bias: the candidate shown first was ranked first in rankings 2 and 3, not 1.
    positions = {p["position"]: p for p in out["positions"]}
    assert positions[1]["ranked_first"] == 2 and positions[2]["ranked_first"] == 1
    assert positions[1]["share_first"] == pytest.approx(2 / 3) and positions[1]["chance_rate"] == 0.5
    assert out["answers"] == [
        {
            "model": "gpt",
            "job": "backend",
            "n_answers": 4,
            "n_errors": 1,
            "errors": {"unparsable: declines to rank or calls the candidates equal": 1},
        }
    ]
    # The verdict: white_male at half black_male's rate; no `resume` ids, so no interval, said why.
    (verdict,) = out["verdicts"]
    assert verdict["finding"] == "impact_ratio:ranked_first:backend:white_male"
    assert verdict["estimate"] == pytest.approx(0.5) and verdict["ci_low"] is None
    assert main(["analyze-rank", str(path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("4 rankings, 1 without a ranking") and "black_male" in text
    assert "\nVERDICTS\n" in text
    assert "no interval for gpt: impact_ratio:ranked_first:backend:white_male: the rankings give no `resume` id" in text


def test_analyze_rank_bad_input_exits_2_naming_the_file_and_line(tmp_path, capsys):
    path = _rankings_file(
        tmp_path,
        [
            _ranking([BRAD, JAMAL], ["white_male", "black_male"], BRAD),
            {"job": "backend", "model": "gpt", "shown": [BRAD, JAMAL], "groups": ["white_male"], "answer": BRAD},
        ],
    )
    for extra in ([], ["--json"]):
        assert main(["analyze-rank", *extra, str(path)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            f"error: {path}, line 2: shown has 2 names but groups has 1 (a list parallel to shown)\n"
        )
    assert main(["analyze-rank", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: cannot be read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["analyze-rank", "--top-k", "0", str(path)])
    assert info.value.code == 2


def test_analyze_rank_does_not_import_dagster(tmp_path):
    path = _rankings_file(tmp_path, [_ranking([BRAD, JAMAL], ["white_male", "black_male"], BRAD)])
    code = (
        "import sys; from resumebias_dagster.cli import main; "
        f"assert main(['analyze-rank', {str(path)!r}]) == 0; "
        "assert 'dagster' not in sys.modules and 'torch' not in sys.modules, 'heavy import'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_plan_takes_its_kind_from_the_pilot_and_its_help_prints_percent(tmp_path, capsys):
    # Issue 41: `plan --pilot analyze.json` of a seniority study stopped at "no fit_delta finding"
    # (--kind defaulted to fit_delta whatever the pilot measured), and `plan --help` printed "80%%".
    pilot = tmp_path / "analyze.json"
    rows = [{"kind": "seniority_bias", "se": 0.02, "n_resumes": 120}] * 3 + [{"kind": "style", "se": None}]
    pilot.write_text(json.dumps({"verdicts": rows}))
    assert main(["plan", "--pilot", str(pilot)]) == 0
    assert capsys.readouterr().out.startswith("To detect seniority_bias = 0.05")
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    shown = capsys.readouterr().out
    assert "80% power" in shown and "%%" not in shown
