"""The pairwise task's parser and verdicts (core/jd_audit/pairwise_parse.py, pairwise_stats.py):
answers read as A, B or equal; abstention on equals as its docstring defines it; bad input
refused in one line."""

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.pairwise_parse import DECLINES, EMPTY_ANSWER, NAMES_NO_CANDIDATE, parse_choice
from resumebias_dagster.core.jd_audit.pairwise_stats import abstention_rows, pairwise_verdicts


@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ("A", "A"),
        ("**B**", "B"),
        ("Answer: A", "A"),
        ("Equal", "equal"),
        ("A. Candidate A lists Kubernetes, which B lacks.", "A"),
        ("A strong case can be made for B.", "B"),
        ("A is more qualified.", "A"),
        ("Both candidates are equally qualified.", "equal"),
        ("Candidate B is more qualified than A.", "B"),
        ("candidate a", "A"),
    ],
)
def test_answers_are_read(answer, choice):
    assert parse_choice(answer).choice == choice


@pytest.mark.parametrize(
    ("answer", "error"),
    [("", EMPTY_ANSWER), ("I need more information.", NAMES_NO_CANDIDATE), ("I cannot compare people.", DECLINES)],
)
def test_answers_without_a_choice_say_why(answer, error):
    assert parse_choice(answer).error == error


def _rows(picks_by_order, role="equal"):
    """One model, one résumé, one equal twin: ``picks_by_order`` per run, (twin at A, twin at B)."""
    rows = []
    for run, picks in enumerate(picks_by_order):
        for position, picked in zip("AB", picks):
            rows.append(("m", "j", "r", "g", "n", f"{role}:reorder", role, position, run, picked))
    cols = ["model", "jd", "resume_id", "group", "name", "twin", "role", "twin_position", "run", "picked"]
    return pd.DataFrame(rows, columns=cols)


def test_abstention_counts_equal_answers_and_choices_that_cancel_over_the_two_orders():
    # Both equal; the same position twice (split); one equal; the same résumé twice; one missing.
    rows = _rows([("equal", "equal"), ("twin", "baseline"), ("equal", "twin"), ("twin", "twin"), ("twin", None)])
    got = abstention_rows(rows)["right"].tolist()
    assert got == [1.0, 1.0, 0.5, 0.0]


def test_bad_choices_are_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^pairwise choices: missing columns \['picked'\]"):
        pairwise_verdicts(_rows([("twin", "twin")]).drop(columns=["picked"]))
    with pytest.raises(ValueError, match=r"^pairwise choices: role 'same' \(twin 'same:reorder'\) is not better"):
        pairwise_verdicts(_rows([("twin", "twin")], role="same"))
    twice = pd.concat([_rows([("twin", "twin")])] * 2)
    with pytest.raises(ValueError, match=r"^pairwise choices: the same answer occurs twice \(model='m'"):
        pairwise_verdicts(twice)
    with pytest.raises(ValueError, match=r"^pairwise: reference group 'x' is not a group of the choices \(g\)"):
        pairwise_verdicts(_rows([("twin", "twin")]), reference="x")
