"""`resumebias analyze`, `analyze-fit` and `analyze-rank` print their verdicts in one table
(issue 41: three commands printed three styles, a box, Markdown with p as ``4.1e-31``, and none
at all): the same title, header and rule, figures with three decimals, adjusted p never in
scientific notation, and under the legend a line for each finding printed without an interval.
Each command runs on small files this test writes."""

import json
import re

import pytest

from resumebias_dagster.cli import main

HEADER = ["model", "finding", "estimate", "95% interval", "adjusted p", "detectable", "verdict"]
# The bias verdicts, and the words of a share read against chance (validity, issue 42).
VERDICTS = {"beyond_noise", "equivalent", "within_noise", "inconclusive", "valid", "better than chance"}
VERDICTS |= {"no better than chance", "worse than chance"}
FIGURE = re.compile(r"^(n/a|[+-]?\d+\.\d{3})$")
INTERVAL = re.compile(r"^(none|[+-]?\d+\.\d{3} to [+-]?\d+\.\d{3})$")
P_VALUE = re.compile(r"^(n/a|< 0\.0001|1|0|0\.\d{1,7})$")
DETECTABLE = re.compile(r"^(n/a|none|\d+\.\d{3})$")
LEGEND_START = "beyond_noise: adjusted p at most alpha"

DEMOGRAPHICS = ("caucasian_male", "caucasian_female", "african_american_male", "african_american_female")
NAMES = ("Greg Smith", "Emily Johnson", "Jamal Washington", "Lakisha Jefferson")  # one name per group


def social_csv(path):
    """Eight résumés under one name per group, one run: the name contrasts get no interval."""
    lines = ["original_idx,true_seniority,demographic,name,model,prediction,correct"]
    for i in range(8):
        level = ("junior", "mid", "senior")[i % 3]
        for g, (demographic, name) in enumerate(zip(DEMOGRAPHICS, NAMES)):
            said = "mid" if (g >= 2 and level == "senior" and i % 2) else level
            lines.append(f"{i},{level},{demographic},{name},gpt5,{said},{said == level}")
    path.write_text("\n".join(lines) + "\n")
    return path


def fit_csv(path):
    """Twelve résumés scored twice on one JD; a Brazilian address costs two to four points:
    an adjusted p far below 0.0001 (printed ``4.1e-31``-like before). MIT is on one résumé
    only: no interval."""
    lines = ["variant,model,jd,run,score,resume_id"]
    for r in range(12):
        for run in (1, 2):
            base = 7 + (r + run) % 2
            lines.append(f"baseline,gpt5,backend,{run},{base},r{r}")
            lines.append(f"addressCountry_brazil,gpt5,backend,{run},{base - 2 - r % 3},r{r}")
            if r == 0:
                lines.append(f"school_mit,gpt5,backend,{run},{base + 1},r{r}")
    path.write_text("\n".join(lines) + "\n")
    return path


def rankings_jsonl(path):
    """Ten résumés, each ranked under two names per group on one job (intervals), and a job
    whose lines give no ``resume`` id (no interval, and the line saying why)."""
    names = {"W_M": ["Brad Walsh", "Greg Baker"], "B_M": ["Jamal Jones", "Darnell Ross"]}
    lines = []
    for r in range(10):
        white, black = names["W_M"][r % 2], names["B_M"][r % 2]
        for shown, first in (([white, black], white), ([black, white], white if r % 3 else black)):
            groups = ["W_M" if n == white else "B_M" for n in shown]
            answer = f"1. {first}\n2. {shown[1] if shown[0] == first else shown[0]}"
            lines.append(
                {
                    "job": "backend",
                    "model": "gpt5",
                    "shown": shown,
                    "groups": groups,
                    "answer": answer,
                    "resume": f"r{r}",
                }
            )
            lines.append({"job": "nurse", "model": "gpt5", "shown": shown, "groups": groups, "answer": answer})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def verdict_table(out: str):
    """(header cells, rows as cells, lines after the legend) of the verdict table in ``out``."""
    lines = out.splitlines()
    assert lines.count("VERDICTS") == 1, out
    start = lines.index("VERDICTS")
    header, rule = lines[start + 1], lines[start + 2]
    assert set(rule) == {"-", " "}, rule
    spans = [m.span() for m in re.finditer(r"-+", rule)]

    def cells(line: str) -> list[str]:  # the text under each run of dashes, up to the next column
        ends = [b for b, _ in spans[1:]] + [None]
        return [line[a:end].strip() for (a, _), end in zip(spans, ends)]

    rows, at = [], start + 3
    while not lines[at].startswith(LEGEND_START):
        rows.append(cells(lines[at]))
        at += 1
    after = []
    for line in lines[at + 1 :]:
        if not line:  # the table ends with a blank line, or the output with it
            break
        after.append(line)
    return cells(header), rows, [line for line in after if line.startswith("no interval for ")]


def run(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.fixture
def outputs(tmp_path, capsys):
    return {
        "analyze": run(capsys, "analyze", str(social_csv(tmp_path / "social.csv"))),
        "analyze-fit": run(capsys, "analyze-fit", str(fit_csv(tmp_path / "fit.csv"))),
        "analyze-rank": run(capsys, "analyze-rank", str(rankings_jsonl(tmp_path / "rankings.jsonl"))),
    }


def test_the_three_commands_print_one_verdict_table(outputs):
    for command, out in outputs.items():
        header, rows, missing = verdict_table(out)
        assert header == HEADER, command
        assert rows, command
        for model, finding, estimate, interval, p, detectable, verdict in rows:
            where = f"{command}: {finding}"
            assert FIGURE.match(estimate), where
            assert INTERVAL.match(interval), where
            assert P_VALUE.match(p), (where, p)
            assert DETECTABLE.match(detectable), (where, detectable)
            assert verdict in VERDICTS, where
            if interval == "none":  # said why, under the table
                assert any(line.startswith(f"no interval for {model}: ") and finding in line for line in missing), (
                    where,
                    missing,
                )
        assert any(r[3] == "none" for r in rows), f"{command}: the files give a finding without an interval"
        assert not re.search(r"\d[eE][+-]?\d", "\n".join(" ".join(r) for r in rows)), command


def test_a_tiny_p_is_printed_as_below_a_bound(outputs):
    _, rows, _ = verdict_table(outputs["analyze-fit"])
    brazil = next(r for r in rows if r[1] == "fit_level:addressCountry_brazil")
    assert brazil[2] == "-3.000" and brazil[4] == "< 0.0001" and brazil[6] == "beyond_noise"


def test_analyze_rank_gives_a_verdict_per_group_below_its_reference(outputs):
    _, rows, missing = verdict_table(outputs["analyze-rank"])
    by_finding = {r[1]: r for r in rows}
    assert set(by_finding) == {
        "impact_ratio:ranked_first:backend:B_M",
        "impact_ratio:ranked_first:nurse:B_M",
        "validity:ranking:abstention",
    }
    # Abstention on equals (backend: the only job with résumé ids): W_M first in both orders on
    # 6 résumés (evenness 0), split on 4 (evenness 1): 0.4, shown minus a name-blind ranker's 1.
    assert by_finding["validity:ranking:abstention"][2] == "-0.600"
    backend = by_finding["impact_ratio:ranked_first:backend:B_M"]
    # B_M ranked first in 4 of 20 rankings (résumés 0, 3, 6, 9 shown first), W_M in 16: a ratio of 1/4.
    assert backend[2] == "0.250" and backend[3] != "none"
    assert by_finding["impact_ratio:ranked_first:nurse:B_M"][3] == "none"
    assert missing == [
        "no interval for gpt5: impact_ratio:ranked_first:nurse:B_M: the rankings give no `resume` id "
        "(the base résumé every candidate of a ranking is a copy of): give each line its `resume` for an interval"
    ]


def test_analyze_rank_json_gives_the_verdicts_the_schema_admits(tmp_path, capsys):
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.ranking.rank_import import read_ranking_files
    from resumebias_dagster.core.ranking.verdicts import ranking_verdicts
    from resumebias_dagster.core.tables import Verdicts

    path = rankings_jsonl(tmp_path / "rankings.jsonl")
    Verdicts.validate(ranking_verdicts(read_ranking_files([path]), load_inference_settings()))
    out = json.loads(run(capsys, "analyze-rank", "--json", str(path)))
    by_finding = {v["finding"]: v for v in out["verdicts"]}
    nurse = by_finding["impact_ratio:ranked_first:nurse:B_M"]
    assert nurse["ci_low"] is None and "no `resume` id" in nurse["note"] and nurse["study"] == "ranking"
    assert by_finding["impact_ratio:ranked_first:backend:B_M"]["verdict"] == "beyond_noise"
