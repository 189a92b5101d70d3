"""JSON Lines of rankings made elsewhere (``resumebias analyze-rank``): a hand-computed example,
and every bad input with its message."""

import json

import pytest

from resumebias_dagster.core.ranking.rank_import import (
    RankingFileError,
    format_rank_report,
    rank_json,
    read_ranking_files,
)


def write(tmp_path, lines, name="rank.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def ranking(answer, shown=("Brad McCarthy", "Jamal Booker"), groups=("W_M", "B_M"), **extra):
    def plain(value):
        return list(value) if isinstance(value, tuple) else value

    return {"job": "backend", "model": "gpt", "shown": plain(shown), "groups": plain(groups), "answer": answer, **extra}


def test_a_hand_computed_example(tmp_path):
    path = write(
        tmp_path,
        [
            ranking("1. Jamal Booker\n2. Brad McCarthy"),
            "",
            ranking(
                "Jamal Booker\nBrad McCarthy",
                shown=("Jamal Booker", "Brad McCarthy"),
                groups={"Brad McCarthy": "W_M", "Jamal Booker": "B_M"},
            ),
            ranking("Brad McCarthy is the stronger candidate."),
            ranking(
                "I can't rank these.",
                shown=("Jamal Booker", "Brad McCarthy"),
                groups=({"sex": "male", "race_ethnicity": "black"}, {"sex": "male", "race_ethnicity": "white"}),
            ),
        ],
    )
    rows = read_ranking_files([path])
    assert rows["item_id"].tolist()[1] == f"{path}, line 3"
    out = rank_json(rows, k=1)
    groups = {g["group"]: g for g in out["groups"]}
    assert set(groups) == {"W_M", "B_M"}  # the object groups' ranking gave no rank
    assert groups["B_M"] | {} == {
        "model": "gpt",
        "job": "backend",
        "group": "B_M",
        "n_rankings": 3,
        "shown_first": 1,
        "ranked_first": 2,
        "selection_rate": pytest.approx(2 / 3),
        "chance_rate": 0.5,
        "impact_ratio": 1.0,
        "impact_ratio_ci_low": None,  # no `resume` ids: no unit, no interval
        "impact_ratio_ci_high": None,
        "ci_below_four_fifths": False,
        "below_four_fifths": False,
        "reference_group": "B_M",
        "n_resumes": 0,
        "impact_ratio_p_value": None,
        "n_top_k": 3,
        "top_k_rate": pytest.approx(2 / 3),
        "top_k_impact_ratio": 1.0,
    }
    assert groups["W_M"]["ranked_first"] == 1 and groups["W_M"]["shown_first"] == 2
    assert groups["W_M"]["impact_ratio"] == pytest.approx(0.5) and groups["W_M"]["below_four_fifths"] is True
    positions = [(p["position"], p["ranked_first"], p["n_rankings"]) for p in out["positions"]]
    assert positions == [(1, 2, 3), (2, 1, 3)]  # Jamal shown second then first; Brad shown first
    assert out["answers"] == [
        {
            "model": "gpt",
            "job": "backend",
            "n_answers": 4,
            "n_errors": 1,
            "errors": {"unparsable: names no candidate": 1},
        }
    ]
    json.dumps(out)  # plain JSON: no NaN objects, no numpy scalars
    text = format_rank_report(rows, k=1)
    assert "4 rankings, 1 without a ranking" in text and "B_M" in text and "Position bias" in text


def test_resume_ids_give_the_impact_ratios_intervals(tmp_path):
    """Thirty résumés, each shown twice (both orders) under the same two names: the résumé is the
    unit, and a group ranked first on 6 of the 30 is below the four-fifths line beyond noise."""
    lines = []
    for r in range(30):
        names = (f"Brad McCarthy{r}", f"Jamal Booker{r}")
        winner = names[1] if r >= 6 else names[0]
        for shown in (names, names[::-1]):
            groups = ("W_M", "B_M") if shown == names else ("B_M", "W_M")
            lines.append(ranking(f"1. {winner}", shown=shown, groups=groups, resume=f"cv{r}"))
    rows = read_ranking_files([write(tmp_path, lines)])
    assert rows["resume_id"].nunique() == 30
    groups = {g["group"]: g for g in rank_json(rows, k=1)["groups"]}
    w = groups["W_M"]
    assert w["n_resumes"] == 30 and w["impact_ratio"] == pytest.approx(0.25)
    assert w["impact_ratio_ci_low"] <= w["impact_ratio"] <= w["impact_ratio_ci_high"] < 0.8
    assert w["ci_below_four_fifths"] is True and w["impact_ratio_p_value"] < 0.05
    assert groups["B_M"]["impact_ratio_p_value"] is None  # the reference
    assert "ci_below_four_fifths" in format_rank_report(rows, k=1)


def test_object_groups_are_labelled_race_sex(tmp_path):
    path = write(
        tmp_path,
        [
            ranking(
                "Jamal Booker",
                groups=({"sex": "male", "race_ethnicity": "white"}, {"sex": "male", "race_ethnicity": "black"}),
            )
        ],
    )
    rows = read_ranking_files([path])
    assert json.loads(rows["groups"][0]) == ["white_male", "black_male"]
    assert rows["first"][0] == "Jamal Booker"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON (Expecting property name enclosed in double quotes at column 2)"),
        ("[1, 2]", "line 2: a ranking is a JSON object, got a list"),
        ({"job": "j", "model": "m", "shown": ["A B", "C D"]}, "line 2: missing key(s) groups, answer"),
        (ranking("x", groups=("W_M",)), "line 2: shown has 2 names but groups has 1 (a list parallel to shown)"),
        (ranking("x", shown=("Brad McCarthy", "brad  mccarthy")), "line 2: shown names 'brad  mccarthy' twice"),
        (
            ranking("x", shown=("Brad McCarthy",), groups=("W_M",)),
            "line 2: shown must be a list of two or more names, got a list",
        ),
        (ranking("x", shown="Brad McCarthy"), "line 2: shown must be a list of two or more names, got a string"),
        (ranking("x", shown=("Brad McCarthy", 3)), "line 2: shown[1] must be a non-empty string, got 3"),
        (ranking("x", groups={"Brad McCarthy": "W_M"}), "line 2: groups gives no group for 'Jamal Booker'"),
        (
            ranking("x", groups={"Brad McCarthy": "W_M", "Jamal Booker": "B_M", "Al Bo": "A_M"}),
            "line 2: groups names 'Al Bo', not in shown",
        ),
        (
            ranking("x", groups="W_M"),
            "line 2: groups must be a list parallel to shown or an object name -> group, got a string",
        ),
        (ranking("x", groups=("W_M", {"sex": "male"})), 'line 2: groups[1]: a group is a string such as "W_M"'),
        (ranking("x", groups=("W_M", "")), 'line 2: groups[1]: a group is a string such as "W_M"'),
        (ranking(5), "line 2: answer must be the model's text (a string) or null, got a number"),
        (ranking("x", job=""), 'line 2: job must be a non-empty string, got ""'),
        (ranking("x", model=None), "line 2: model must be a non-empty string, got null"),
        (ranking("x", resume=5), "line 2: resume must be a non-empty string, got 5"),
    ],
)
def test_bad_lines_name_the_file_the_line_and_the_problem(tmp_path, line, message):
    path = write(tmp_path, [ranking("Brad McCarthy"), line])
    with pytest.raises(RankingFileError) as info:
        read_ranking_files([path])
    assert str(info.value).startswith(f"{path}, line 2: ")
    assert message in str(info.value)


def test_bad_files(tmp_path):
    with pytest.raises(RankingFileError, match=r"missing\.jsonl: cannot be read \(No such file or directory\)"):
        read_ranking_files([tmp_path / "missing.jsonl"])
    empty = write(tmp_path, ["", "  "], name="empty.jsonl")
    with pytest.raises(RankingFileError, match=r"empty\.jsonl: no rankings \(one JSON object per line\)"):
        read_ranking_files([empty])
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"job": "caf\xe9"}\n')
    with pytest.raises(
        RankingFileError, match=r"latin1\.jsonl: not UTF-8 text \(invalid continuation byte at byte 12\)"
    ):
        read_ranking_files([latin1])


def test_a_null_answer_is_an_empty_answer(tmp_path):
    rows = read_ranking_files([write(tmp_path, [ranking(None), ranking("Jamal Booker")])])
    assert rows["error"].tolist() == ["unparsable: empty answer", None]
