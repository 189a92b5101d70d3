"""Hostile answers and endpoints (issue 25, "Integrity, second pass"): a 2xx answer is never
lost after it was paid for, never paid twice, and never blocks a table write; a query string
in ``base_url`` is part of the key; a key never travels over plain HTTP except to loopback.

Each test here failed on the code before issue 25: a lone surrogate in an answer crashed the
SQLite store (the answer lost, paid again every run) and, JSON-escaped in a fit answer, made
the DuckDB write of fit_scores fail on every re-run; a message content sent as a list of
parts, a body nested deeper than the SDK's JSON parser recurses and invalid UTF-8 in a body
ended as transient rows without the body, called (and billed) again on every run; a timeout
or an error in a 200 was billed again on every run without bound; ``?upstream=a`` and
``?upstream=b`` shared answers; ``http://api.openai.com/v1`` was accepted.

The store tests run on both backends (an SQLite file, a PostgreSQL database of a private
server; tests/conftest.py ``any_store``).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import dagster as dg
import duckdb
import pandas as pd
import pytest

from resumebias_dagster.core.common.parsing import parse_json_object, valid_utf8
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.providers import (
    ChatRequest,
    ChatResult,
    ProviderConfigError,
    ProviderSettings,
    request_key,
    run_requests,
)
from resumebias_dagster.core.providers.types import BILLED_CALL_LIMIT, TRANSIENT_KINDS
from resumebias_dagster.testing import fake_providers as fp
from tests.security.fit_answers import one_baseline_variant, openai_fit_spec

WIRES = ("openai", "anthropic", "gemini")


@pytest.fixture
def store(any_store):
    return any_store


def is_valid_utf8(text: str | None) -> bool:
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def settings_of(**entry) -> ProviderSettings:
    return ProviderSettings.from_spec(parse_models({"models": [{"name": "m", "kind": "provider", **entry}]}, "t")[0])


# ------------------------------------------------------------------ 4: lone surrogates


def test_the_store_keeps_an_answer_with_lone_surrogates_exactly(store, settings_for):
    settings = settings_for("openai", "http://127.0.0.1:9/v1", api_key_env="")
    # A prompt may carry one too (a résumé written by a model): its key and row must not fail.
    request = ChatRequest.from_prompt("Classify this résumé \ud800.")
    key = request_key(settings, request)
    text = "mid \ud800 then \udcff, a NUL \x00 and an emoji \U0001f600"
    store.put(
        settings,
        request,
        ChatResult(
            key=key,
            text=text,
            resolved_model="snap-\udfff",
            finish_reason="stop",
            logprobs=[{"token": "\ud800", "logprob": -0.1, "top": [{"token": "mid\udc80", "logprob": -0.2}]}],
        ),
    )
    got = store.get_many([key])[key]
    assert got.text == text  # exactly as it came
    assert got.logprobs[0]["token"] == "\ud800" and got.logprobs[0]["top"][0]["token"] == "mid\udc80"
    assert is_valid_utf8(got.resolved_model) and got.resolved_model.startswith("snap-")
    row = next(store.rows())
    assert row["text"] == text and row["done"] == 1
    assert json.loads(row["request_json"])["messages"][0][1] == "Classify this résumé \ud800."


@pytest.mark.parametrize("wire", WIRES)
def test_an_answer_with_a_lone_surrogate_is_stored_exactly_and_handed_on_as_valid_utf8(
    wire, fake_server, settings_for, store, fake_key
):
    server = fake_server(wire)
    server.script(fp.hostile("lone_surrogate", "mid"))
    settings = settings_for(wire, server.base_url)
    requests = [ChatRequest.from_prompt("x")]
    results, stats = run_requests(settings, requests, store)
    assert results[0].ok and results[0].text == "mid\ufffd"
    row = next(store.rows())
    assert row["text"] == "mid\ud800" and row["done"] == 1
    # Paid once: the next run is served from the store, valid UTF-8 again.
    again, stats = run_requests(settings, requests, store)
    assert stats.calls_made == 0 and server.count == 1
    assert again[0].text == "mid\ufffd" and again[0].from_store


def test_an_error_message_with_a_lone_surrogate_is_stored_and_handed_on_valid(
    fake_server, settings_for, store, fake_key
):
    server = fake_server("openai")
    server.script(fp.error_in_200(502, "upstream \ud800 overloaded"))
    results, _ = run_requests(settings_for("openai", server.base_url), [ChatRequest.from_prompt("x")], store)
    assert results[0].error_kind == "server_error"
    assert is_valid_utf8(results[0].error_message) and "upstream \ufffd overloaded" in results[0].error_message
    assert store.count() == 1


def test_the_json_parser_hands_on_valid_utf8_whatever_the_escapes():
    parsed = parse_json_object('{"j": "a \\ud800 b", "l": ["\\udc00", {"k\\udfff": "\\ud83d\\ude00"}], "n": 3}')
    assert parsed.ok
    assert parsed.value == {"j": "a \ufffd b", "l": ["\ufffd", {"k\ufffd": "\U0001f600"}], "n": 3}
    # The text itself may hold surrogates (read back from the store).
    assert parse_json_object('{"j": "x\ud800"}').value == {"j": "x\ufffd"}
    assert valid_utf8("ok") == "ok" and valid_utf8("a\udcff\ud800") == "a\ufffd\ufffd"
    assert valid_utf8("\ud83d\ude00") == "\U0001f600"  # a pair split over two code points is its character


def test_a_fit_answer_with_an_escaped_lone_surrogate_is_written_to_duckdb(
    fake_server, settings_for, store, fake_key, data_dir
):
    from resumebias_dagster.core.jd_audit.fit_task import predict_fit_with_provider
    from resumebias_dagster.resources.storage import ResumebiasIOManager

    answer = (
        '{"score": 7, "recommend": "yes", "justification": "solid \\ud800 fit", '
        '"strengths": ["a\\udc00b"], "concerns": ["\\ud83d\\ude00 fine"]}'
    )
    server = fake_server("openai")
    server.script(fp.answer(answer))
    settings = settings_for("openai", server.base_url)
    spec = openai_fit_spec(server.base_url)
    variants = one_baseline_variant()

    @dg.asset
    def fit_scores() -> pd.DataFrame:
        rows, _ = predict_fit_with_provider(
            lambda reqs: run_requests(settings, reqs, store),
            variants,
            jd="jd",
            jd_text="A job.",
            template="{job_description}\n{resume_text}",
            spec=spec,
        )
        return rows

    database = data_dir / "study.duckdb"
    for _ in range(2):  # the re-run reads the stored answer: the partition is not blocked for good
        result = dg.materialize(
            [fit_scores], resources={"io_manager": ResumebiasIOManager(database=str(database), schema="audit")}
        )
        assert result.success
    assert server.count == 1
    with duckdb.connect(str(database)) as con:
        rows = con.execute("SELECT score, justification, strengths, concerns, error FROM audit.fit_scores").fetchall()
    assert rows == [(7.0, "solid \ufffd fit", '["a\ufffdb"]', '["\U0001f600 fine"]', None)]
    assert next(store.rows())["text"] == answer


# ------------------------------------------------------------------ 5: 2xx answers the SDK cannot read


def test_a_message_content_given_as_a_list_of_parts_is_an_answer(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    mistral = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "magistral",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": [{"type": "text", "text": "junior or senior?"}]},
                        {"type": "text", "text": "sen"},
                        {"type": "text", "text": "ior"},
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    server.script(fp.hostile("list_content", "junior"), fp.raw_body(json.dumps(mistral).encode()))
    settings = settings_for("openai", server.base_url, max_concurrency=1)
    requests = [ChatRequest.from_prompt("a"), ChatRequest.from_prompt("b")]
    results, _ = run_requests(settings, requests, store)
    assert [(r.error_kind, r.text) for r in results] == [(None, "junior"), (None, "senior")]
    again, stats = run_requests(settings, requests, store)
    assert stats.calls_made == 0 and server.count == 2 and [r.text for r in again] == ["junior", "senior"]


CASES = [(wire, kind) for wire in WIRES for kind in ("deep_nesting", "invalid_utf8", "malformed")]


@pytest.mark.parametrize("wire,kind", CASES)
def test_a_2xx_body_the_client_cannot_read_is_stored_raw_and_paid_once(
    wire, kind, fake_server, settings_for, store, fake_key
):
    server = fake_server(wire)
    server.script(fp.malformed() if kind == "malformed" else fp.hostile(kind))
    settings = settings_for(wire, server.base_url)
    requests = [ChatRequest.from_prompt("x")]
    results, stats = run_requests(settings, requests, store)
    row = next(store.rows())
    assert row["done"] == 1 and row["text"] and row["billed_attempts"] == 1
    if wire == "gemini" and kind == "invalid_utf8":
        # google-genai decodes a body with replacement characters: an answer, valid UTF-8.
        assert results[0].ok and results[0].text.startswith("mid") and "\ufffd" in results[0].text
    else:
        assert results[0].error_kind == "malformed_response", results[0].error_message
        assert "stored as it came" in results[0].error_message
        assert results[0].text is None  # a body is not an answer
    again, stats = run_requests(settings, requests, store)
    assert stats.calls_made == 0 and server.count == 1
    assert again[0].error_kind == results[0].error_kind


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_raw_body_is_kept_byte_for_byte(wire, fake_server, settings_for, store, fake_key):
    body = b'{"id": "x", "deep": ' + b"[" * 50_000 + b"]" * 50_000 + b', "bad": "\xff\xfe\xed\xa0\x80 \xc3\xa9"}'
    server = fake_server(wire)
    server.script(fp.raw_body(body))
    results, _ = run_requests(settings_for(wire, server.base_url), [ChatRequest.from_prompt("x")], store)
    assert results[0].error_kind == "malformed_response"
    stored = next(store.rows())["text"]
    assert stored.encode("utf-8", "surrogateescape") == body


@pytest.mark.parametrize("kind", sorted(TRANSIENT_KINDS))
def test_no_transient_kind_is_billed_without_bound(kind, store, settings_for):
    settings = settings_for("openai", "http://127.0.0.1:9/v1", api_key_env="")
    request = ChatRequest.from_prompt("x")
    key = request_key(settings, request)
    for _ in range(BILLED_CALL_LIMIT):
        assert key not in store.get_many([key]), "called again while under the limit"
        store.put(
            settings, request, ChatResult(key=key, error_kind=kind, error_message="e", attempts=1, billed_attempts=1)
        )
    final = store.get_many([key])
    assert final[key].error_kind == kind
    row = next(store.rows())
    assert row["calls"] == BILLED_CALL_LIMIT and row["billed_attempts"] == BILLED_CALL_LIMIT and row["done"] == 1


@pytest.mark.parametrize("fault", ["timeout", "error_in_200"])
def test_a_key_billed_on_every_run_is_called_at_most_the_limit(fault, fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    reply = fp.slow(1.0) if fault == "timeout" else fp.error_in_200()
    server.script(*[reply] * (BILLED_CALL_LIMIT + 2))
    settings = settings_for("openai", server.base_url, timeout_s=0.25)
    for _ in range(BILLED_CALL_LIMIT + 2):
        results, _ = run_requests(settings, [ChatRequest.from_prompt("x")], store)
        assert results[0].error_kind in ("timeout", "server_error")
    assert server.count == BILLED_CALL_LIMIT
    row = next(store.rows())
    assert row["done"] == 1 and row["billed_attempts"] == BILLED_CALL_LIMIT


def test_an_unbilled_failure_stays_transient(fake_server, settings_for, store, fake_key):
    # A 429 costs nothing: made final, a day of rate limits would leave holes in the data for good.
    server = fake_server("openai")
    server.script(*[fp.rate_limited()] * (BILLED_CALL_LIMIT + 1))
    settings = settings_for("openai", server.base_url, max_retries=0)
    for _ in range(BILLED_CALL_LIMIT + 1):
        results, _ = run_requests(settings, [ChatRequest.from_prompt("x")], store)
        assert results[0].error_kind == "rate_limited"
    assert server.count == BILLED_CALL_LIMIT + 1 and next(store.rows())["done"] == 0
    results, _ = run_requests(settings, [ChatRequest.from_prompt("x")], store)
    assert results[0].ok


# ------------------------------------------------------------------ 10a: the query string is part of the key


@pytest.mark.parametrize("wire", WIRES)
def test_a_query_string_in_base_url_is_part_of_the_key_and_reaches_the_server(
    wire, fake_server, settings_for, store, fake_key, everything_stored
):
    server = fake_server(wire)
    request = [ChatRequest.from_prompt("x")]
    alpha = settings_for(wire, server.base_url + "?upstream=alpha-route")
    beta = settings_for(wire, server.base_url + "?upstream=beta-route")
    assert alpha.endpoint != beta.endpoint
    run_requests(alpha, request, store)
    _, stats = run_requests(beta, request, store)
    assert stats.calls_made == 1 and server.count == 2
    sent = [urlsplit(r.path) for r in server.requests]
    assert [parse_qs(s.query) for s in sent] == [{"upstream": ["alpha-route"]}, {"upstream": ["beta-route"]}]
    assert all(s.path.endswith(("/chat/completions", "/messages", ":generateContent")) for s in sent)
    # The values may be credentials under a name no one can know: they stay out of the rows.
    raw = everything_stored(store)
    assert b"alpha-route" not in raw and b"beta-route" not in raw


def test_a_credential_like_query_parameter_is_in_the_key_as_a_hash(settings_for):
    # Issue 40: ?upstream_token=a and =b were left out of the key (the name looks like a
    # credential), so two upstreams shared answers. Every parameter is in the key, hashed.
    request = ChatRequest.from_prompt("x")
    one = settings_for("openai", "https://gw.example/v1?upstream=a&api_key=sk-first-key-111")
    same = settings_for("openai", "https://gw.example/v1?api_key=sk-first-key-111&upstream=a")
    rotated = settings_for("openai", "https://gw.example/v1?api_key=sk-second-key-222&upstream=a")
    token_a = settings_for("openai", "https://gw.example/v1?upstream_token=a")
    token_b = settings_for("openai", "https://gw.example/v1?upstream_token=b")
    assert request_key(one, request) == request_key(same, request) != request_key(rotated, request)
    assert request_key(token_a, request) != request_key(token_b, request)
    for settings in (one, rotated, token_a, token_b):
        assert "sk-" not in settings.endpoint and "api_key" not in settings.endpoint
        assert "upstream" not in settings.endpoint


# ------------------------------------------------------------------ 10b: no key over plain HTTP


@pytest.mark.parametrize(
    "provider,url",
    [
        ("openai", "http://api.openai.com/v1"),
        ("anthropic", "http://api.anthropic.com"),
        ("google", "http://generativelanguage.googleapis.com/"),
        ("openai", "http://openrouter.ai/api/v1"),
        ("openai", "http://10.0.0.7:8000/v1"),
        ("openai", "http://192.168.1.20:8000/v1"),
        ("openai", "http://gpu-box.lan:8000/v1"),
        ("openai", "http://user:pw-secret-1@gateway.example/v1?key=sk-in-url-77"),
    ],
)
def test_plain_http_is_refused_except_to_loopback(provider, url):
    for key_env in ("GATEWAY_KEY", ""):
        with pytest.raises(ProviderConfigError) as raised:
            settings_of(provider=provider, model="mdl", base_url=url, api_key_env=key_env)
        message = str(raised.value)
        host = urlsplit(url).hostname
        assert message.startswith("model 'm': base_url") and f"http://{host}" in message
        assert "https://" in message and "127.0.0.1" in message
        assert "pw-secret" not in message and "sk-in-url" not in message


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.2:8000/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8000/v1",
        "https://10.0.0.7/v1",
        "https://gateway.example/v1",
        "HTTP://LOCALHOST:8000/v1",
    ],
)
def test_loopback_over_http_and_any_host_over_https_are_accepted(url):
    assert settings_of(provider="openai", model="mdl", base_url=url, api_key_env="").base_url == url


def test_the_stored_cost_adds_up_to_every_billed_call(fake_server, settings_for, store, fake_key):
    # Issue 40: after billed empty answers a row's cost_usd kept the last call's cost while
    # billed_attempts added up (three calls: $0.00117 stored, $0.00351 paid).
    server = fake_server("openai")
    server.script(*[fp.empty()] * 3)
    settings = settings_for("openai", server.base_url)
    costs = []
    for _ in range(3):
        results, stats = run_requests(settings, [ChatRequest.from_prompt("x")], store)
        costs.append(stats.cost_usd)
    assert server.count == 3 and all(c and c > 0 for c in costs)
    row = next(store.rows())
    assert row["done"] == 1 and row["billed_attempts"] == 3
    assert row["cost_usd"] == pytest.approx(sum(costs), rel=1e-9)


@pytest.mark.parametrize("wire", WIRES)
def test_an_answer_that_echoes_the_key_is_stored_and_tabled_without_it(
    wire, fake_server, settings_for, store, fake_key
):
    # Issue 40: a provider echoing the Authorization header inside a 2xx answer put the key into
    # fit_scores.justification (234 rows) and the store.
    def echo(request) -> str:
        return json.dumps({"score": 6, "recommend": "maybe", "justification": f"auth was {request.api_key}"})

    server = fake_server(wire, answer=echo)
    settings = settings_for(wire, server.base_url)
    request = ChatRequest.from_prompt("Score this résumé. Answer in JSON.", json_mode=True, task="fit")
    results, _ = run_requests(settings, [request], store)
    assert results[0].ok and results[0].parsed_json == {
        "score": 6,
        "recommend": "maybe",
        "justification": "auth was ***",
    }
    assert all(fake_key not in str(value) for row in store.rows() for value in row.values())
