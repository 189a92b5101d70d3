"""The real SDK clients against fake provider APIs on 127.0.0.1: answers, faults, exact
call counts at the server."""

import pytest

from resumebias_dagster.core.providers import ChatRequest, run_requests
from resumebias_dagster.testing import fake_providers as fp

WIRES = ("openai", "anthropic", "gemini")


def one(settings, store, request=None):
    results, stats = run_requests(settings, [request or ChatRequest.from_prompt("Classify this résumé.")], store)
    return results[0], stats


@pytest.mark.parametrize("wire", WIRES)
def test_answer_with_resolved_model_tokens_and_cost(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire, resolved_model=lambda alias: f"{alias.split('/')[-1]}-snapshot-7")
    result, stats = one(settings_for(wire, server.base_url), store)
    assert server.count == 1
    assert result.ok and result.text == "mid"
    assert result.resolved_model.endswith("-snapshot-7")
    assert result.input_tokens and result.output_tokens
    assert result.cost_usd > 0  # every fake alias is in prices.yaml
    assert result.attempts == 1 and not result.from_store
    assert stats.calls_made == 1 and stats.served_from_store == 0
    request = server.requests[0]
    assert request.api_key == fake_key
    assert request.model.endswith(server.requests[0].model)
    assert "Classify this résumé." in request.prompt


@pytest.mark.parametrize("wire", WIRES)
def test_sampling_parameters_reach_the_wire(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    # A seniority request (the default task of a plain prompt) carries the seniority limit.
    one(settings_for(wire, server.base_url, temperature=0.3, max_tokens={"seniority": 7}), store)
    body = server.requests[0].body
    if wire == "openai":
        assert body["temperature"] == 0.3 and body["max_tokens"] == 7
    elif wire == "anthropic":
        # The installed Messages API takes no temperature; max_tokens is required.
        assert "temperature" not in body and body["max_tokens"] == 7
    else:
        assert body["generationConfig"]["temperature"] == 0.3
        assert body["generationConfig"]["maxOutputTokens"] == 7


@pytest.mark.parametrize("wire", WIRES)
def test_429_with_retry_after_is_retried_by_the_sdk(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.rate_limited(retry_after=0.01))
    result, stats = one(settings_for(wire, server.base_url), store)
    assert result.ok
    assert server.count == 2
    assert result.attempts == 2 and stats.retries == 1


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("code", [500, 503])
def test_5xx_is_retried_by_the_sdk(wire, code, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.server_error(code), fp.server_error(code))
    result, _ = one(settings_for(wire, server.base_url), store)
    assert result.ok
    assert server.count == 3


@pytest.mark.parametrize("wire", WIRES)
def test_exhausted_retries_become_typed_rows(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(*[fp.rate_limited(0.01)] * 3)
    result, stats = one(settings_for(wire, server.base_url, max_retries=2), store)
    assert server.count == 3  # the first try and two retries, no more
    assert result.error_kind == "rate_limited"
    assert stats.errors == {"rate_limited": 1}
    server.script(*[fp.server_error(503)] * 3)
    result, _ = one(settings_for(wire, server.base_url, max_retries=2), store)
    assert server.count == 6
    assert result.error_kind == "server_error" and "503" in result.error_message


@pytest.mark.parametrize("wire", WIRES)
def test_slow_answers_past_the_timeout_retried_when_the_model_allows_it(
    wire, fake_server, settings_for, store, fake_key
):
    # retry_timeouts: true (by default a timed-out generation is not sent again in the run:
    # tests/security/test_response_store.py)
    server = fake_server(wire)
    server.script(fp.slow(1.0), fp.slow(1.0))
    result, _ = one(settings_for(wire, server.base_url, timeout_s=0.25, max_retries=1, retry_timeouts=True), store)
    assert result.error_kind == "timeout"
    assert server.count == 2
    assert result.latency_s < 2.5


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_connection_reset_is_retried_by_openai_and_anthropic(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.reset())
    result, _ = one(settings_for(wire, server.base_url), store)
    assert result.ok
    assert server.count == 2


def test_connection_reset_ends_typed_for_gemini(fake_server, settings_for, store, fake_key):
    # google-genai retries connect errors and timeouts, not a connection dropped mid-request.
    server = fake_server("gemini")
    server.script(fp.reset())
    result, _ = one(settings_for("gemini", server.base_url), store)
    assert result.error_kind == "connection"
    assert server.count == 1


@pytest.mark.parametrize("wire", WIRES)
def test_malformed_json_is_not_retried_and_is_typed(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.malformed())
    result, _ = one(settings_for(wire, server.base_url), store)
    assert result.error_kind == "malformed_response"
    assert server.count == 1


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_refusal(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.refusal())
    result, _ = one(settings_for(wire, server.base_url), store)
    assert result.error_kind == "refusal" and result.text is None
    assert server.count == 1


@pytest.mark.parametrize("wire", ["openai", "gemini"])
def test_content_filter(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.content_filter())
    result, _ = one(settings_for(wire, server.base_url), store)
    assert result.error_kind == "content_filter"
    assert server.count == 1


def test_anthropic_output_blocked_is_content_filter(fake_server, settings_for, store, fake_key):
    server = fake_server("anthropic")
    server.script(fp.status(400, "Output blocked by content filtering policy"))
    result, _ = one(settings_for("anthropic", server.base_url), store)
    assert result.error_kind == "content_filter"
    assert server.count == 1


@pytest.mark.parametrize("wire", WIRES)
def test_empty_answer(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.empty())
    result, _ = one(settings_for(wire, server.base_url), store)
    assert result.error_kind == "empty"


@pytest.mark.parametrize("wire", WIRES)
def test_bad_key_stops_the_run_after_one_call(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.auth_error())
    requests = [ChatRequest.from_prompt(f"résumé {i}") for i in range(20)]
    results, stats = run_requests(settings_for(wire, server.base_url, max_concurrency=1), requests, store)
    assert server.count == 1
    assert results[0].error_kind == "auth"
    assert {r.error_kind for r in results[1:]} == {"aborted"}
    assert stats.calls_made == 1 and store.count() == 1  # aborted requests are not stored


@pytest.mark.parametrize("wire", ["openai", "gemini"])
def test_logprobs_where_the_api_offers_them(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    result, _ = one(settings_for(wire, server.base_url), store, ChatRequest.from_prompt("level?", logprobs=3))
    assert result.logprobs[0]["token"] == "mid"
    assert [t["token"] for t in result.logprobs[0]["top"]] == ["mid", "junior", "senior"]
    # Stored and served back the same.
    again, stats = one(settings_for(wire, server.base_url), store, ChatRequest.from_prompt("level?", logprobs=3))
    assert again.from_store and again.logprobs == result.logprobs and server.count == 1


@pytest.mark.parametrize("wire", WIRES)
def test_json_mode_parses_strictly(wire, fake_server, settings_for, store, fake_key):
    answers = iter(['```json\n{"level": "mid",}\n```', "not json at all"])
    server = fake_server(wire, answer=lambda request: next(answers))
    settings = settings_for(wire, server.base_url)
    result, _ = one(settings, store, ChatRequest.from_prompt("as JSON", json_mode=True))
    assert result.parsed_json == {"level": "mid"}
    result, stats = one(settings, store, ChatRequest.from_prompt("as JSON, again", json_mode=True))
    assert result.error_kind == "unparsable" and result.text == "not json at all"
    assert stats.errors == {"unparsable": 1}
    if wire == "openai":
        assert server.requests[0].body["response_format"] == {"type": "json_object"}
    if wire == "gemini":
        assert server.requests[0].body["generationConfig"]["responseMimeType"] == "application/json"


def test_openrouter_error_inside_a_200_is_typed(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    # OpenRouter reports some upstream failures as 200 {"error": {...}}.
    server.script(fp.error_in_200(502))
    result, _ = one(settings_for("openai", server.base_url), store)
    assert result.error_kind == "server_error"
    assert server.count == 1


def test_rate_limit_spaces_requests(fake_server, settings_for, store, fake_key):
    import time

    server = fake_server("openai")
    settings = settings_for("openai", server.base_url, requests_per_minute=600, max_concurrency=8)
    start = time.perf_counter()
    run_requests(settings, [ChatRequest.from_prompt(f"r{i}") for i in range(25)], store)
    # 10 per second with a one-second bucket: the first 10 at once, then 10 a second.
    assert time.perf_counter() - start >= 1.2
    assert server.count == 25


def test_vertex_ai_with_project_location_and_credentials(fake_server, settings_for, store):
    import asyncio

    from google.oauth2.credentials import Credentials

    from resumebias_dagster.core.providers import run_requests_async
    from resumebias_dagster.core.providers.registry import make_client

    server = fake_server("gemini", resolved_model="gemini-2.5-pro-002")
    # The models config sends Application Default Credentials only to Google's hosts
    # (tests/security/test_keys_and_hosts.py); the client itself is checked here against a
    # loopback server, so the settings are made directly.
    from dataclasses import replace

    settings = replace(
        settings_for("gemini", server.base_url),
        api_key_env=None,
        vertex_project="proj-1",
        vertex_location="europe-west4",
    )
    assert settings.vertex and settings.endpoint == f"vertex:http://127.0.0.1:{server.port}"

    async def go():
        client = make_client(settings, None, credentials=Credentials(token="ya29.fake-access-token"))
        try:
            return await run_requests_async(settings, [ChatRequest.from_prompt("level?")], store, client=client)
        finally:
            await client.aclose()

    results, _ = asyncio.run(go())
    assert results[0].ok and results[0].resolved_model == "gemini-2.5-pro-002"
    request = server.requests[0]
    assert (
        "/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent"
        in request.path
    )
    assert request.headers["authorization"] == "Bearer ya29.fake-access-token"
