"""Gemini's batch mode (core/providers/batch_gemini.py) through the real google-genai SDK against the
fake server's Gemini batch endpoints on 127.0.0.1 (testing/fake_providers/batch_gemini.py)."""

import asyncio
import json

import pytest

from resumebias_dagster.core.providers import batch_gemini
from resumebias_dagster.core.providers.batch_api import (
    CANCELLED,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    BatchError,
    BatchUnsupported,
)
from resumebias_dagster.core.providers.batch_gemini import GeminiBatchBackend
from resumebias_dagster.core.providers.google_client import GoogleClient
from resumebias_dagster.core.providers.types import ChatRequest

REQUESTS = [
    ChatRequest.from_prompt("Classify this résumé: ten years of Python.", temperature=0.2, max_tokens=16),
    ChatRequest(
        messages=(("user", "Score this candidate."), ("assistant", "Which job?"), ("user", "Staff engineer.")),
        system="Answer in JSON.",
        temperature=0.0,
        max_tokens=64,
        json_mode=True,
    ),
    ChatRequest.from_prompt("Seniority of: junior developer, one year.", temperature=0.7, max_tokens=8, logprobs=3),
]
KEYS = [f"key{i:02d}" for i in range(len(REQUESTS))]


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def gemini(fake_server, settings_for, fake_key):
    """(server, settings, key) of a fake Gemini API without a prompt cache (live and batch
    answers then report the same usage whatever their order)."""
    server = fake_server("gemini", cache_min_tokens=None)
    settings = settings_for("gemini", server.base_url)
    return server, settings, settings.api_key()


async def submitted(settings, key, items=None, submission_id="sub-1"):
    backend = GeminiBatchBackend(settings, key)
    batch_id = await backend.submit(items or list(zip(KEYS, REQUESTS)), submission_id)
    return backend, batch_id


def test_submit_poll_and_read_like_the_live_client(gemini):
    server, settings, key = gemini

    async def scenario():
        server.batches.hold()
        backend, batch_id = await submitted(settings, key)
        try:
            running = await backend.status(batch_id)
            server.batches.hold(False)
            ended = await backend.status(batch_id)
            results = await backend.results(batch_id)
        finally:
            await backend.aclose()
        live = GoogleClient(settings, key)
        try:
            answers = [await live.complete(request, k) for k, request in zip(KEYS, REQUESTS)]
        finally:
            await live.aclose()
        return batch_id, running, ended, results, answers

    batch_id, running, ended, results, answers = run(scenario())
    assert batch_id.startswith("batches/")
    assert running.state == IN_PROGRESS and running.total == 3
    assert ended.state == ENDED and ended.provider_state == "JOB_STATE_SUCCEEDED"
    assert (ended.total, ended.succeeded, ended.errored) == (3, 3, 0)
    assert sorted(r.key for r in results) == sorted(KEYS)
    by_key = {r.key: r for r in results}
    for k, answer in zip(KEYS, answers):
        got = by_key[k]
        assert answer.ok and got.ok and got.text == answer.text
        assert (got.input_tokens, got.output_tokens, got.cached_input_tokens) == (
            answer.input_tokens,
            answer.output_tokens,
            answer.cached_input_tokens,
        )
        assert got.resolved_model == answer.resolved_model == "gemini-2.5-pro-2025-01-01"
        assert got.logprobs == answer.logprobs and got.finish_reason == answer.finish_reason
        assert (got.attempts, got.billed_attempts, got.cost_usd) == (1, 1, None)
    assert by_key["key02"].logprobs, "logprobs asked for and read"
    # What each batch item carried is exactly the live request's body.
    (batch,) = server.batches.batches.values()
    live_bodies = [r.body for r in server.requests]
    assert [request for _, request in batch.items] == live_bodies
    assert [item_id for item_id, _ in batch.items] == KEYS
    assert live_bodies[1]["systemInstruction"] and live_bodies[1]["generationConfig"]["responseMimeType"]
    assert batch.model == "gemini-2.5-pro" and batch.label == "sub-1"
    # The key went to this host only, in the header the live client uses.
    assert server.batches.keys and set(server.batches.keys) == {key.reveal()}
    assert server.count == 3, "the batch made no live call"


def test_failed_items_are_typed_and_unrun_items_absent(gemini):
    server, settings, key = gemini

    async def scenario():
        server.batches.hold()
        backend, batch_id = await submitted(settings, key)
        server.batches.fail_item("key00", 429, "quota exhausted")
        server.batches.fail_item("key01", 400, f"bad field for key {key.reveal()}")
        server.batches.expire(run_count=2)
        try:
            return await backend.status(batch_id), await backend.results(batch_id)
        finally:
            await backend.aclose()

    status, results = run(scenario())
    assert status.state == EXPIRED and (status.succeeded, status.errored) == (0, 2)
    by_key = {r.key: r for r in results}
    assert sorted(by_key) == ["key00", "key01"], "the item not run is the runner's to mark"
    assert by_key["key00"].error_kind == "rate_limited" and "quota exhausted" in by_key["key00"].error_message
    assert by_key["key01"].error_kind == "bad_request"
    assert key.reveal() not in by_key["key01"].error_message and "***" in by_key["key01"].error_message
    assert all((r.attempts, r.billed_attempts) == (1, 0) for r in results)


def test_a_cancelled_batch_reports_what_it_ran(gemini):
    server, settings, key = gemini

    async def scenario():
        server.batches.hold()
        backend, batch_id = await submitted(settings, key)
        server.batches.cancel(run_count=1)
        try:
            return await backend.status(batch_id), await backend.results(batch_id)
        finally:
            await backend.aclose()

    status, results = run(scenario())
    assert status.state == CANCELLED
    assert [(r.key, r.ok) for r in results] == [("key00", True)]


def test_unreadable_answers_are_kept_and_a_missing_key_is_empty(gemini):
    server, settings, key = gemini

    async def scenario():
        server.batches.hold()
        backend, batch_id = await submitted(settings, key)
        server.batches.garble("key00")
        server.batches.drop_key("key01")
        server.batches.hold(False)
        try:
            return await backend.results(batch_id) if (await backend.status(batch_id)).state == ENDED else None
        finally:
            await backend.aclose()

    results = run(scenario())
    assert results is not None and len(results) == 3
    garbled, keyless, fine = results
    assert garbled.key == "key00" and garbled.error_kind == "malformed_response"
    assert json.loads(garbled.text) == {
        "metadata": {"key": "key00"},
        "response": {"usageMetadata": {"promptTokenCount": "many"}},
    }
    assert (garbled.attempts, garbled.billed_attempts) == (1, 1)
    assert keyless.key == "" and keyless.ok and keyless.billed_attempts == 1
    assert fine.key == "key02" and fine.ok


def test_results_of_a_batch_still_running_raise(gemini):
    server, settings, key = gemini

    async def scenario():
        server.batches.hold()
        backend, batch_id = await submitted(settings, key)
        try:
            await backend.results(batch_id)
        finally:
            await backend.aclose()

    with pytest.raises(BatchError, match="no results yet"):
        run(scenario())


def test_a_failed_batch_says_why(gemini):
    server, settings, key = gemini

    async def scenario():
        server.batches.hold()
        backend, batch_id = await submitted(settings, key)
        server.batches.fail_batch(batch_id.removeprefix("batches/"), "request 2 is too large")
        try:
            return await backend.status(batch_id), await backend.results(batch_id)
        finally:
            await backend.aclose()

    status, results = run(scenario())
    assert status.state == FAILED and "request 2 is too large" in status.message
    assert results == []


def test_no_batch_endpoint_is_unsupported(fake_server, settings_for, fake_key):
    server = fake_server("gemini", batch=False)
    settings = settings_for("gemini", server.base_url)

    async def scenario():
        backend = GeminiBatchBackend(settings, settings.api_key())
        try:
            await backend.submit(list(zip(KEYS, REQUESTS)), "sub-1")
        finally:
            await backend.aclose()

    with pytest.raises(BatchUnsupported, match="HTTP 404"):
        run(scenario())
    assert server.batches.submissions == 0


def test_vertex_is_unsupported(fake_server, settings_for, fake_key):
    server = fake_server("gemini")
    settings = settings_for("gemini", server.base_url, vertex_project="proj-1", vertex_location="europe-west4")
    assert settings.vertex

    async def scenario():
        backend = GeminiBatchBackend(settings, settings.api_key())
        try:
            with pytest.raises(BatchUnsupported, match="Vertex AI.*Cloud Storage or BigQuery"):
                await backend.submit(list(zip(KEYS, REQUESTS)), "sub-1")
            assert await backend.find("sub-1") is None
            with pytest.raises(BatchError):
                await backend.status("batches/x")
        finally:
            await backend.aclose()

    run(scenario())
    assert server.batches.keys == [] and server.count == 0


def test_extra_body_goes_inside_each_request_as_the_live_client_sends_it(gemini, settings_for):
    server, _, key = gemini
    extra = {"generationConfig": {"topK": 3}, "labels": {"audit": "resumebias"}}
    settings = settings_for("gemini", server.base_url, extra_body=extra)

    async def scenario():
        backend, batch_id = await submitted(settings, key)
        try:
            results = await backend.results(batch_id) if (await backend.status(batch_id)).state == ENDED else []
        finally:
            await backend.aclose()
        live = GoogleClient(settings, key)
        try:
            for k, request in zip(KEYS, REQUESTS):
                await live.complete(request, k)
        finally:
            await live.aclose()
        return results

    results = run(scenario())
    assert sorted(r.key for r in results) == sorted(KEYS) and all(r.ok for r in results)
    (batch,) = server.batches.batches.values()
    live_bodies = [r.body for r in server.requests]
    # Each item carries exactly the live request's body, extra fields merged into it as the SDK
    # merges them (recursively: the request's own generationConfig keeps its other fields).
    assert [request for _, request in batch.items] == live_bodies
    assert all(b["generationConfig"]["topK"] == 3 and b["labels"] == extra["labels"] for b in live_bodies)
    assert live_bodies[0]["generationConfig"]["temperature"] == 0.2
    # and none of them at the batch's own level.
    (body,) = server.batches.bodies
    assert set(body) == {"batch"} and "labels" not in body["batch"] and "generationConfig" not in body["batch"]
    assert batch.model == "gemini-2.5-pro" and batch.label == "sub-1"


def test_find_by_display_name_over_pages(gemini, monkeypatch):
    server, settings, key = gemini
    monkeypatch.setattr(batch_gemini, "_LIST_PAGE", 1)

    async def scenario():
        server.batches.hold()
        backend = GeminiBatchBackend(settings, key)
        try:
            ids = [await backend.submit(list(zip(KEYS, REQUESTS)), f"sub-{n}") for n in range(3)]
            return ids, [await backend.find(f"sub-{n}") for n in range(3)], await backend.find("sub-9")
        finally:
            await backend.aclose()

    ids, found, missing = run(scenario())
    assert found == ids and len(set(ids)) == 3
    assert missing is None


@pytest.mark.parametrize("call", ["submit", "status", "find"])
def test_a_wrong_key_is_auth_and_never_echoed(gemini, call):
    server, settings, key = gemini

    async def scenario():
        backend, batch_id = await submitted(settings, key)
        server.batches.expected_key = "another-key"
        try:
            if call == "submit":
                await backend.submit(list(zip(KEYS, REQUESTS)), "sub-2")
            elif call == "status":
                await backend.status(batch_id)
            else:
                await backend.find("sub-1")
        finally:
            await backend.aclose()

    with pytest.raises(BatchError) as caught:
        run(scenario())
    assert caught.value.kind == "auth"
    assert key.reveal() not in str(caught.value)
    assert server.batches.keys[-1] == key.reveal(), "the server did echo it"


def test_batch_calls_use_the_documented_api_version(gemini):
    # Issue 40: google-genai 3.6.1 sends batch calls to /v1/, Google's batch guide documents v1beta;
    # a 404 there would have sent the run to live calls at twice the price.
    server, settings, key = gemini

    async def scenario():
        backend, batch_id = await submitted(settings, key)
        try:
            await backend.status(batch_id)
        finally:
            await backend.aclose()
        return batch_id

    batch_id = run(scenario())
    assert server.batches.versions[batch_id.rpartition("/")[2]] == batch_gemini.BATCH_API_VERSION == "v1beta"
