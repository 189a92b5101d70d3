"""The ``kind: http`` entry: every malformed setting refused with a message naming it."""

from __future__ import annotations

import json

import pytest

from resumebias_dagster.core.models.http_endpoint import parse_path, read_path
from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models, tasks_of

BODY = '{"id": {{ id | tojson }}, "resume": {{ resume | tojson }}, "job": {{ job_description | tojson }}}'


def entry(**changes):
    base = {
        "name": "acme",
        "kind": "http",
        "url": "https://screening.example.com/v1/score",
        "body": BODY,
        "answer": {"score": "$.result.score"},
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def parse(**changes):
    return parse_models({"models": [entry(**changes)]}, "models.yaml")[0]


def test_an_entry_loads_with_the_defaults_of_a_scorer():
    spec = parse()
    assert (spec.kind, spec.temperature, spec.runs_per_cell) == ("http", 0.0, 1)
    assert tasks_of(spec) == ("fit",)
    assert tasks_of(parse(answer={"label": "$.seniority"})) == ("seniority",)
    assert tasks_of(parse(answer={"label": "seniority", "score": "s", "recommend": "r"})) == ("seniority", "fit")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"url": "screening.example.com"}, "url must be an http(s) URL"),
        ({"method": "GET"}, "method 'GET' is not one of POST, PUT"),
        ({"body": "{{ resume "}, "body: not a valid Jinja2 template"),
        ({"body": '{"r": {{ candidate | tojson }}}'}, "body uses candidate; it may use id, task, resume"),
        ({"body": '{"r": "{{ resume }}"}'}, "body does not render to JSON"),
        ({"answer": None}, "missing setting(s) answer"),
        ({"answer": {"grade": "$.g"}}, "answer has unknown part(s) grade"),
        ({"answer": {"recommend": "$.r"}}, "answer.recommend needs answer.score"),
        ({"answer": {"score": "$.scores[*]"}}, "answer.score: path '$.scores[*]' is not a dotted path"),
        ({"headers": {"X-Key": "{{ api_key }}"}}, "headers.X-Key uses {{ api_key }} but api_key_env names no"),
        ({"headers": {"X-Key": "{{ token }}"}}, "headers.X-Key uses token; it may use api_key"),
        ({"headers": ["X-Key"]}, "headers must map header names to text"),
        ({"temperature": 3}, "temperature 3 must be a number in [0, 2]"),
        ({"provider": "openai"}, "unknown setting(s) provider for kind http"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_setting(changes, message):
    with pytest.raises(ModelConfigError) as exc:
        parse(**changes)
    assert "models.yaml: model 'acme'" in str(exc.value)
    assert message in str(exc.value)


def test_a_body_of_another_content_type_need_not_be_json():
    spec = parse(body="resume={{ resume | urlencode }}", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert spec.kind == "http"


def test_the_body_renders_each_item_as_json():
    from resumebias_dagster.core.models.http_endpoint import endpoint_of

    endpoint = endpoint_of(parse())
    item = {"id": "x", "task": "fit", "resume": 'A "quoted"\nrésumé', "job_description": None, "run": 0}
    assert json.loads(endpoint.render_body(item)) == {"id": "x", "resume": 'A "quoted"\nrésumé', "job": None}


def test_the_template_sandbox_refuses_python_internals():
    with pytest.raises(
        ModelConfigError, match="body cannot be rendered: access to attribute '__class__' of 'str' object is unsafe"
    ):
        parse(body='{"r": {{ resume.__class__.__mro__ | tojson }}}')


def test_the_key_goes_in_an_authorization_header_unless_a_header_uses_it():
    from resumebias_dagster.core.models.http_endpoint import endpoint_of

    plain = endpoint_of(parse(api_key_env="ACME_KEY"))
    assert plain.render_headers("k-123")["Authorization"] == "Bearer k-123"
    custom = endpoint_of(parse(api_key_env="ACME_KEY", headers={"X-Api-Key": "{{ api_key }}"}))
    assert custom.render_headers("k-123") == {"X-Api-Key": "k-123", "Content-Type": "application/json"}
    # The key is not part of what the request key hashes.
    assert "k-123" not in json.dumps(custom.wire())


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.result.score", ("result", "score")),
        ("result.score", ("result", "score")),
        ("$.scores[0].value", ("scores", 0, "value")),
        ("scores.0.value", ("scores", 0, "value")),
        ("$['a key'].b", ("a key", "b")),
    ],
)
def test_paths(path, expected):
    assert parse_path(path, "answer.score") == expected


def test_reading_a_path_says_where_it_stops():
    document = {"result": {"scores": [1, 2]}}
    assert read_path(document, ("result", "scores", 1)) == 2
    with pytest.raises(KeyError, match=r"\$\.result has no 'score' \(it holds keys \['scores'\]\)"):
        read_path(document, ("result", "score"))
    with pytest.raises(KeyError, match=r"\$\.result\.scores has 2 item\(s\), no \[5\]"):
        read_path(document, ("result", "scores", 5))


def test_answers_are_read_and_held_to_the_contract():
    from resumebias_dagster.core.models.http_endpoint import endpoint_of

    endpoint = endpoint_of(parse(answer={"score": "$.s", "recommend": "$.r", "label": "$.l"}))
    fit = endpoint.read_answer('{"s": 7.5, "r": "Yes", "l": "Senior"}', "fit")
    assert (fit.score, fit.recommend) == (7.5, "yes")
    assert endpoint.read_answer('{"s": 7.5, "r": "Yes", "l": "Senior"}', "seniority").label == "senior"
    dist = endpoint.read_answer('{"l": {"junior": 0.2, "mid": 0.5, "senior": 0.3}}', "seniority")
    assert dist.probs == (0.2, 0.5, 0.3) and dist.label is None
    assert endpoint.read_answer('{"s": 11, "r": "yes"}', "fit") == "score 11 is not a number from 1 to 10"
    assert endpoint.read_answer("<html>", "fit").startswith("the reply is not JSON")
    assert endpoint.read_answer('{"x": 1}', "fit") == "$ has no 's' (it holds keys ['x'])"
