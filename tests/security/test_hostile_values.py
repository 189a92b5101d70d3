"""A hostile value in a paid answer never blocks a partition (issue 40, item 6): a score of
5,000 digits in a fit answer raised ``ValueError`` (Python's integer-digit limit) and a score
of 10**400 from a ``kind: http`` screener raised ``OverflowError``; the answers were stored as
final, so every re-run made no call and failed again. Every value that cannot be read is now
the row's reason, and the parsers are fed arbitrary JSON values."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resumebias_dagster.core.jd_audit.fit_task import parse_fit_answer, predict_fit_with_provider
from resumebias_dagster.core.jd_audit.judge.verdicts import parse_verdict
from resumebias_dagster.core.models.http_endpoint import endpoint_from_entry
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.models.scorer_answers import validate
from resumebias_dagster.core.providers import ChatResult, run_requests
from resumebias_dagster.testing import fake_providers as fp
from tests.security.fit_answers import one_baseline_variant, openai_fit_spec

HUGE = "9" * 5000
ENDPOINT = endpoint_from_entry(
    {
        "name": "acme",
        "kind": "http",
        "url": "https://scorer.example/score",
        "body": "{}",
        "answer": {"score": "$.score", "recommend": "$.recommend", "label": "$.label"},
    },
    "model 'acme'",
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**500), max_value=10**500)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["8", " 7 ", "yes", "junior", HUGE, "1e999"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
answers = json_values | st.fixed_dictionaries(
    {"score": json_values}, optional={"recommend": json_values, "justification": json_values, "label": json_values}
)


def _reason_ok(reason: str | None) -> None:
    assert isinstance(reason, str) and reason and len(reason) < 600


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers)
def test_the_parsers_read_any_json_value_or_say_why(value):
    fields, reason = parse_fit_answer(value)
    assert (fields is None) != (reason is None)
    if reason is not None:
        _reason_ok(reason)
    for task in ("fit", "seniority"):
        checked = validate(value, task)
        if isinstance(checked, str):
            _reason_ok(checked)
    verdict, why = parse_verdict(ChatResult(key="k", text=None, parsed_json=value))
    assert verdict is None or why is None
    try:
        body = json.dumps({"score": value, "recommend": value, "label": value})
    except ValueError:  # a float Python cannot write: no reply can hold it either
        return
    for task in ("fit", "seniority"):
        read = ENDPOINT.read_answer(body, task)
        if isinstance(read, str):
            _reason_ok(read)


@pytest.mark.parametrize(
    "value",
    [{"score": HUGE}, {"score": 10**400}, {"score": 10**5000}, {"score": 7, "justification": 10**5000}],
    ids=["digits", "overflow", "huge-int", "huge-justification"],
)
def test_each_reported_value_is_a_reason_not_an_exception(value):
    fields, reason = parse_fit_answer(value)
    if "justification" in value:
        assert reason is not None and "cannot be read" in reason
    else:
        assert fields is None and "is not an integer from 1 to 10" in reason and len(reason) < 200
    assert "is not a number from 1 to 10" in validate(value if "justification" not in value else 10**400, "fit")
    # A reply body of 10**400 or 5,000 digits, as an http screener would send it.
    assert "is not a number from 1 to 10" in ENDPOINT.read_answer(
        '{"recommend": "yes", "score": 1' + "0" * 400 + "}", "fit"
    )
    assert "cannot be read" in ENDPOINT.read_answer('{"recommend": "yes", "score": ' + HUGE + "}", "fit")


def test_a_stored_hostile_answer_does_not_block_the_partition(fake_server, settings_for, store, fake_key):
    # The OpenAI wire answers {"score": "<5,000 digits>"}: the row says why, and the re-run reads
    # the stored answer without a call and without failing.
    server = fake_server("openai")
    server.script(fp.answer(json.dumps({"score": HUGE, "recommend": "yes"})))
    settings = settings_for("openai", server.base_url)
    spec = openai_fit_spec(server.base_url)
    variants = one_baseline_variant()
    for _ in range(2):
        rows, _ = predict_fit_with_provider(
            lambda reqs: run_requests(settings, reqs, store),
            variants,
            jd="jd",
            jd_text="A job.",
            template="{job_description}\n{resume_text}",
            spec=spec,
        )
        assert rows["score"].isna().all()
        assert rows["error"].str.contains("is not an integer from 1 to 10").all()
    assert server.count == 1


def test_a_huge_scorer_reply_is_cut_and_stored_once(fake_server, store):
    # Issue 40, item 12: a 100 MB kind: http reply was read and stored whole (516 MB peak).
    from resumebias_dagster.core.providers import ProviderSettings
    from resumebias_dagster.core.providers.http_client import MAX_REPLY_BYTES
    from resumebias_dagster.core.providers.http_scorer import http_requests

    server = fake_server("scorer", answer=lambda r: json.dumps({"result": {"score": 5}, "pad": "x" * 3_000_000}))
    entry = {
        "name": "acme",
        "kind": "http",
        "url": server.base_url,
        "body": '{"resume": {{ resume | tojson }}}',
        "answer": {"score": "$.result.score"},
    }
    settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "models.yaml")[0])
    item = {"id": "r|baseline", "task": "fit", "resume": "A résumé.", "job_description": "A job."}
    for _ in range(2):
        results, _ = run_requests(settings, http_requests([item], 1), store)
        assert results[0].error_kind == "malformed_response"
        assert f"longer than {MAX_REPLY_BYTES:,} bytes" in results[0].error_message
    assert server.count == 1
    assert len(next(store.rows())["text"]) == MAX_REPLY_BYTES
