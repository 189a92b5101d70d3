"""Abstention on equals for the ranking task (core/ranking/evenness.py): the evenness of the
first choices over one résumé's equal candidates, by hand and on planted rankers."""

import json

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.ranking.evenness import ABSTENTION, item_evenness
from resumebias_dagster.core.ranking.tables import candidate_rows
from resumebias_dagster.core.ranking.verdicts import ranking_verdicts
from resumebias_dagster.testing.ranking_simulation import simulate_rankings

SETTINGS = InferenceSettings()
NAMES = ("w", "b", "a")


def rankings(resumes, runs, ranker, names=NAMES, p_first=None):
    """Rows of every rotation of ``names`` per résumé: ``ranker(shown, resume, run)`` gives the
    ranking; ``p_first(shown)`` an embedded LLM's P(first) of each shown name."""
    rows = []
    for r in range(resumes):
        for k in range(len(names)):
            shown = list(names[k:] + names[:k])
            for run in range(runs):
                rows.append(
                    {
                        "model": "m",
                        "jd": "j",
                        "resume_id": f"r{r}",
                        "shown": json.dumps(shown),
                        "groups": json.dumps([n.upper() for n in shown]),
                        "ranked": json.dumps(ranker(shown, r, run)),
                        "error": None,
                        "p_first": None if p_first is None else json.dumps(p_first(shown)),
                    }
                )
    return pd.DataFrame(rows)


def finding(rows):
    v = ranking_verdicts(rows, SETTINGS)
    return v[v["finding"] == ABSTENTION].iloc[0]


def penalise_b(shown, r, run):
    """Ranks in the order shown, but puts "b" last."""
    return [n for n in shown if n != "b"] + ["b"]


def test_a_hand_computed_evenness():
    # Rotations (w b a), (b a w), (a w b): first w, a, a, so shares 1/3, 0, 2/3 and
    # E = 1 - (3 (1/9 + 4/9) - 1) / 2 = 2/3, the same with one run or two (a deterministic ranker).
    for runs in (1, 2):
        e = item_evenness(candidate_rows(rankings(4, runs, penalise_b)))
        assert e["evenness"].tolist() == pytest.approx([2 / 3] * 4)
    row = finding(rankings(4, 2, penalise_b))
    assert row["estimate"] == pytest.approx(-1 / 3) and row["kind"] == "validity_gap"
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]


def test_a_ranker_that_always_picks_position_one_is_name_blind_by_rotation():
    e = item_evenness(candidate_rows(rankings(5, 3, lambda shown, r, run: shown)))
    assert e["evenness"].tolist() == pytest.approx([1.0] * 5)
    row = finding(rankings(40, 3, lambda shown, r, run: shown))
    assert row["estimate"] == pytest.approx(0.0) and row["verdict"] != "beyond_noise"
    assert row["ci_low"] <= 0 <= row["ci_high"]


def test_the_exact_probability_of_being_first_gives_the_exact_evenness():
    uniform = rankings(3, 1, lambda shown, r, run: shown, p_first=lambda shown: [1 / 3] * 3)
    assert item_evenness(candidate_rows(uniform))["evenness"].tolist() == pytest.approx([1.0] * 3)
    # P(first) 0.8 for "w" wherever shown, 0.1 each other: E = 1 - (3 (0.64 + 0.02) - 1) / 2 = 0.51.
    leaning = rankings(3, 1, lambda shown, r, run: shown, p_first=lambda s: [0.8 if n == "w" else 0.1 for n in s])
    assert item_evenness(candidate_rows(leaning))["evenness"].tolist() == pytest.approx([0.51] * 3)


def test_a_planted_name_blind_ranker_splits_evenly_and_one_group_first_does_not():
    blind = finding(simulate_rankings(np.random.default_rng(3), resumes=40, quirk_sd=0.0, position_bias=0.5))
    assert blind["verdict"] in ("equivalent", "within_noise") and abs(blind["estimate"]) < 0.05
    first = finding(simulate_rankings(np.random.default_rng(3), resumes=40, effects={"A": 6.0}, quirk_sd=0.0))
    assert first["verdict"] == "beyond_noise" and first["estimate"] + 1 < 0.05  # evenness near 0


def test_the_sampled_evenness_is_unbiased_for_a_name_blind_ranker():
    # Plugging the 20 sampled first choices of a résumé into E reads 0.95 on average (sampling
    # noise looks like unevenness); the estimate's mean over 20 fixed seeds of 10 résumés is
    # within 0.004 of 1, and few of the studies find unevenness.
    rows = [
        finding(simulate_rankings(np.random.default_rng(seed), resumes=10, quirk_sd=0.0, position_bias=0.5))
        for seed in range(20)
    ]
    assert abs(np.mean([r["estimate"] for r in rows])) < 0.01
    assert sum(r["verdict"] == "beyond_noise" for r in rows) <= 3


def test_unbalanced_rotations_are_left_out_and_rankings_without_a_resume_give_no_finding():
    rows = rankings(4, 2, penalise_b)
    # Résumé r0 lost every ranking of one rotation: not every name was shown first.
    lost = rows[~((rows["resume_id"] == "r0") & rows["shown"].str.startswith('["a"'))]
    e = item_evenness(candidate_rows(lost)).set_index("resume")
    assert np.isnan(e.loc["r0", "evenness"]) and e.loc["r1", "evenness"] == pytest.approx(2 / 3)
    assert "1 résumé(s) left out: their valid rankings do not cover every rotation" in finding(lost)["note"]
    v = ranking_verdicts(rows.assign(resume_id=None), SETTINGS)
    assert ABSTENTION not in set(v["finding"])
