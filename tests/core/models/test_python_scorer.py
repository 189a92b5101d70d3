"""``kind: python``: a function of the user's environment answers the seniority and fit tasks
through the same dispatchers and rows as every other kind; anything outside its contract stops
the run with a message naming the model, the entry point and the item."""

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.fit_task import PYTHON_NOTE, predict_fit
from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models
from resumebias_dagster.core.models.python_scorer import load_entry_point
from resumebias_dagster.core.models.runtime import ModelRuntime
from resumebias_dagster.core.ranking.task import predict_rankings
from resumebias_dagster.core.seniority.task import predict_seniority
from resumebias_dagster.core.tables import FitScores, SeniorityPredictions, columns

USER_PACKAGE = """
CALLS = []


def by_keyword(items):
    CALLS.append(len(items))
    return ["senior" if "Nine years" in i["resume"] else "junior" for i in items]


def distribution(items):
    return [{"junior": 0.1, "mid": 0.2, "senior": 0.7} for _ in items]


def fit_numbers(items):
    assert all(i["task"] == "fit" and i["job_description"] == "A job." for i in items)
    return [8 if "Greg" in i["resume"] else 6.5 for i in items]


def fit_dicts(items):
    return [{"score": 7, "recommend": "yes"} for _ in items]


def wrong_length(items):
    return items[:-1]


def bad_label(items):
    return ["principal" for _ in items]


def bad_sum(items):
    return [{"junior": 0.5, "mid": 0.5, "senior": 0.5} for _ in items]


def score_11(items):
    return [11 for _ in items]


def raising(items):
    raise RuntimeError("model file missing")


not_callable = 3
"""


@pytest.fixture
def userscorer(tmp_path, monkeypatch):
    package = tmp_path / "userscorer"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(USER_PACKAGE))
    (tmp_path / "brokenscorer.py").write_text("import no_such_module_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "userscorer", raising=False)
    return tmp_path


def _variants():
    return pd.DataFrame(
        {
            "variant_kind": ["style", "demographic", "style"],
            "original_idx": [0, 0, 1],
            "variant": ["neutral", "caucasian_male", "neutral"],
            "true_seniority": ["senior", "senior", "junior"],
            "name": [None, "Greg Baker", None],
            "text": [
                "Nine years building payment systems.",
                "Greg Baker. Nine years building payment systems.",
                "One internship.",
            ],
        }
    )


def _fit_variants():
    return pd.DataFrame(
        {
            "resume_id": ["r1", "r1"],
            "variant": ["baseline", "name_x"],
            "arm": ["control", "probe"],
            "axis": [None, "firstName"],
            "level": [None, "x"],
            "name": [None, "Greg Baker"],
            "text": ["Nine years of Python.", "Greg Baker. Nine years of Python."],
        }
    )


def _no_compute():
    raise AssertionError("a python model must not resolve the torch device")


RUNTIME = ModelRuntime(resolve_compute=_no_compute, cache_dir=Path("."))


def _spec(function, **extra):
    entry = {"name": "userfn", "kind": "python", "entry_point": f"userscorer:{function}", **extra}
    return parse_models({"models": [entry]}, "test")[0]


def _fit(spec):
    return predict_fit(
        spec, _fit_variants(), jd="jd-1", jd_text="A job.", template="{job_description} {resume}", runtime=RUNTIME
    )


def test_a_label_is_every_runs_prediction_in_batches(userscorer):
    import userscorer as module

    df, stats = predict_seniority(_spec("by_keyword", batch_size=2, runs_per_cell=3), _variants(), RUNTIME, "{resume}")
    assert stats is None and module.CALLS == [2, 1]
    assert list(df.columns) == columns(SeniorityPredictions)
    assert df["prediction"].tolist() == ["senior"] * 6 + ["junior"] * 3
    assert df["run"].tolist() == [0, 1, 2] * 3 and set(df["model"]) == {"userfn"}
    assert set(df["resolved_model"]) == {"python:userscorer:by_keyword"}
    assert df[["p_junior", "p_mid", "p_senior"]].isna().all().all() and df["error"].isna().all()
    assert (df["latency_s"] >= 0).all() and df["latency_s"].notna().all()
    assert df["name"].tolist()[3:6] == ["Greg Baker"] * 3


def test_a_distribution_is_sampled_as_a_classifiers(userscorer):
    df, _ = predict_seniority(_spec("distribution", runs_per_cell=200, temperature=1), _variants(), RUNTIME, "{resume}")
    assert list(df.columns) == columns(SeniorityPredictions)
    assert np.allclose(df[["p_junior", "p_mid", "p_senior"]].to_numpy(), [0.1, 0.2, 0.7])
    share = df["prediction"].value_counts(normalize=True)
    assert set(share.index) <= {"junior", "mid", "senior"} and 0.6 < share["senior"] < 0.8
    cold, _ = predict_seniority(_spec("distribution", temperature=0), _variants(), RUNTIME, "{resume}")
    assert set(cold["prediction"]) == {"senior"} and (cold["p_senior"] == 1).all()


def test_fit_numbers_and_dicts(userscorer):
    df, stats = _fit(_spec("fit_numbers", runs_per_cell=2))
    assert stats is None and list(df.columns) == columns(FitScores)
    assert df["score"].tolist() == [6.5, 6.5, 8.0, 8.0] and df["recommend"].isna().all()
    assert df[["justification", "strengths", "concerns", "score_distribution", "error"]].isna().all().all()
    assert set(df["note"]) == {PYTHON_NOTE} and df["expected_score"].isna().all()
    assert set(df["resolved_model"]) == {"python:userscorer:fit_numbers"} and df["latency_s"].notna().all()
    assert df["jd"].unique().tolist() == ["jd-1"] and df["run"].tolist() == [0, 1, 0, 1]
    dicts, _ = _fit(_spec("fit_dicts", runs_per_cell=1))
    assert dicts["score"].tolist() == [7.0, 7.0] and dicts["recommend"].tolist() == ["yes", "yes"]


WHERE = "models.userfn (kind python, entry_point 'userscorer:{}')"
# The items go to the function in a shuffled order (seed 0); the messages name ours, first of the batch first.
BATCH = "'style:1:neutral', 'demographic:0:caucasian_male', 'style:0:neutral'"


@pytest.mark.parametrize(
    ("function", "problem"),
    [
        ("wrong_length", f": returned 2 results for a batch of 3 item(s) {BATCH}; "),
        ("bad_label", ": item 'style:1:neutral' (task seniority): label 'principal' is not one of junior, mid, senior"),
        ("bad_sum", ": item 'style:1:neutral' (task seniority): the probabilities sum to 1.5, not 1"),
        ("raising", f": raised RuntimeError: model file missing on the batch of item(s) {BATCH}"),
    ],
)
def test_a_seniority_answer_outside_the_contract_stops_the_run(userscorer, function, problem):
    with pytest.raises(ValueError) as caught:
        predict_seniority(_spec(function), _variants(), RUNTIME, "{resume}")
    assert str(caught.value).startswith(WHERE.format(function) + problem)


def test_a_fit_score_outside_1_to_10_stops_the_run(userscorer):
    with pytest.raises(ValueError) as caught:
        _fit(_spec("score_11"))
    assert str(caught.value) == WHERE.format("score_11") + (
        ": item 'jd-1:r1:name_x' (task fit): score 11 is not a number from 1 to 10"
    )


@pytest.mark.parametrize(
    ("entry_point", "problem"),
    [
        (
            "userscorer.by_keyword",
            "entry_point must have the form package.module:function, got 'userscorer.by_keyword'",
        ),
        (
            "brokenscorer:score",
            "module 'brokenscorer' does not import: ModuleNotFoundError: No module named 'no_such_module_here'",
        ),
        ("userscorer:nothing", "module 'userscorer' has no attribute 'nothing'"),
        ("userscorer:not_callable", "'not_callable' is a int, not a callable"),
    ],
)
def test_an_entry_point_that_does_not_load_is_named(userscorer, entry_point, problem):
    with pytest.raises(ValueError) as caught:
        load_entry_point(entry_point, "userfn")
    assert str(caught.value) == f"models.userfn (kind python, entry_point {entry_point!r}): {problem}"


def test_the_models_config_checks_a_python_entry():
    with pytest.raises(ModelConfigError, match=r"test: model 'fn': missing setting\(s\) entry_point for kind python"):
        parse_models({"models": [{"name": "fn", "kind": "python"}]}, "test")
    with pytest.raises(ModelConfigError, match=r"test: model 'fn': unknown setting\(s\) source for kind python"):
        parse_models({"models": [{"name": "fn", "kind": "python", "entry_point": "a:b", "source": "x"}]}, "test")
    with pytest.raises(ModelConfigError, match=r"entry_point must have the form package.module:function, got 'a.b'"):
        parse_models({"models": [{"name": "fn", "kind": "python", "entry_point": "a.b"}]}, "test")
    with pytest.raises(ModelConfigError, match=r"batch_size 0 must be a positive integer"):
        parse_models({"models": [{"name": "fn", "kind": "python", "entry_point": "a:b", "batch_size": 0}]}, "test")
    spec = parse_models({"models": [{"name": "fn", "kind": "python", "entry_point": "a.b:c.d"}]}, "test")[0]
    assert spec.option("entry_point") == "a.b:c.d" and spec.temperature == 0.7 and spec.runs_per_cell == 5


def test_a_python_model_does_not_rank(userscorer):
    with pytest.raises(ValueError, match=r"models.userfn.kind: 'python' cannot rank candidates"):
        predict_rankings(_spec("by_keyword"), [], jd="jd-1", jd_text="A job.", template="{x}", runtime=RUNTIME)
