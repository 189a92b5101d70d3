"""OpenAI's Batch API: the batch backend (core/providers/batch_openai.py) through the real openai SDK
against the fake server's batch endpoints on 127.0.0.1 (testing/fake_providers/batch_openai.py)."""

import asyncio
import json

import pytest

from resumebias_dagster.core.providers.batch_api import (
    CANCELLED,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    NOT_RUN,
    BatchError,
    BatchUnsupported,
)
from resumebias_dagster.core.providers.batch_openai import OpenAIBatchBackend
from resumebias_dagster.core.providers.fanout import normalise
from resumebias_dagster.core.providers.openai_client import OpenAIClient
from resumebias_dagster.core.providers.types import ChatRequest, Secret, request_key

WRONG_KEY = "sk-WRONGKEY-91c2d3e4f5a6b7c8-do-not-leak"


def items_of(settings, n=4):
    """Normalised requests (as the runner hands them over) with their keys."""
    requests = [
        ChatRequest.from_prompt(
            f"Score résumé {i} for the job. Answer in JSON.", json_mode=True, task="fit", system="You are a recruiter."
        )
        for i in range(n)
    ]
    requests = [normalise(settings, r) for r in requests]
    return [(request_key(settings, r), r) for r in requests]


async def _with(backend, work):
    try:
        return await work(backend)
    finally:
        await backend.aclose()


def run(settings, work, key):
    return asyncio.run(_with(OpenAIBatchBackend(settings, Secret(key) if key else None), work))


def live(settings, items, key):
    async def go():
        client = OpenAIClient(settings, Secret(key))
        try:
            return [await client.complete(request, k) for k, request in items]
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_a_batch_is_answered_as_the_live_client_answers(fake_server, settings_for, fake_key):
    server = fake_server(
        "openai",
        cache_min_tokens=None,
        batch_polls_to_finish=2,
        resolved_model=lambda alias: f"{alias}-snapshot-\ud800",
    )
    settings = settings_for("openai", server.base_url, max_tokens={"fit": 333})
    items = items_of(settings)

    async def work(backend):
        batch_id = await backend.submit(items, "rb-first")
        first, second = await backend.status(batch_id), await backend.status(batch_id)
        return batch_id, first, second, await backend.results(batch_id)

    batch_id, first, second, results = run(settings, work, fake_key)
    assert first.state == IN_PROGRESS and first.provider_state == "in_progress" and first.total == 4
    assert second.state == ENDED and second.provider_state == "completed"
    assert (second.total, second.succeeded, second.errored) == (4, 4, 0)
    assert sorted(r.key for r in results) == sorted(k for k, _ in items)
    assert server.count == 0, "no live call"
    assert server.batches.keys and set(server.batches.keys) == {fake_key}
    # The upload is the live client's body line by line, labelled with the submission.
    (upload,) = [f for f in server.batches.files.values() if f[1] == "batch"]
    lines = [json.loads(line) for line in upload[2].decode().splitlines()]
    assert [line["custom_id"] for line in lines] == [k for k, _ in items]
    assert {(line["method"], line["url"]) for line in lines} == {("POST", "/v1/chat/completions")}
    assert server.batches.metadata[batch_id] == {"submission": "rb-first"}

    answers = live(settings, items, fake_key)
    assert [request.body for request in server.requests] == [line["body"] for line in lines]
    body = lines[0]["body"]
    assert body["model"] == "openai/gpt-5" and body["max_tokens"] == 333
    assert body["response_format"] == {"type": "json_object"} and body["messages"][0]["role"] == "system"
    by_key = {r.key: r for r in results}
    for answer in answers:
        batched = by_key[answer.key]
        assert batched.ok and batched.text == answer.text
        assert (batched.input_tokens, batched.output_tokens, batched.cached_input_tokens) == (
            answer.input_tokens,
            answer.output_tokens,
            answer.cached_input_tokens,
        )
        assert batched.resolved_model == answer.resolved_model
        assert batched.attempts == 1 and batched.billed_attempts == 1 and batched.cost_usd is None
    # A lone surrogate in a name is made valid UTF-8, as the live client makes it.
    assert all(r.resolved_model.encode("utf-8") for r in results)


def test_failed_items_are_typed_and_unreadable_lines_kept_raw(fake_server, settings_for, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)
    items = items_of(settings, 5)
    keys = [k for k, _ in items]
    unreadable_answer = json.dumps(
        {"id": "r", "custom_id": keys[2], "response": {"status_code": 200, "body": {"choices": 7}}, "error": None}
    ).encode()
    no_id = b'{"id": "batch_req_9", "custom_id": \xff not json'

    async def work(backend):
        batch_id = await backend.submit(items, "rb-faults")
        server.batches.fail_item(keys[0], 500, f"upstream failed for {fake_key}")
        server.batches.fail_item(keys[1], 429, "insufficient_quota: out of credit")
        server.batches.garble(keys[2], unreadable_answer)
        server.batches.extra_lines.append(no_id)
        status = await backend.status(batch_id)
        return status, await backend.results(batch_id)

    status, results = run(settings, work, fake_key)
    assert status.state == ENDED and (status.succeeded, status.errored) == (3, 2)
    by_key = {r.key: r for r in results}
    assert len(results) == 6 and set(by_key) == {*keys, ""}
    assert by_key[keys[0]].error_kind == "server_error" and "HTTP 500" in by_key[keys[0]].error_message
    assert fake_key not in by_key[keys[0]].error_message
    assert by_key[keys[1]].error_kind == "auth"
    assert [by_key[k].billed_attempts for k in keys[:2]] == [0, 0]
    garbled = by_key[keys[2]]
    assert garbled.error_kind == "malformed_response" and garbled.billed_attempts == 1
    assert garbled.text.encode("utf-8", "surrogateescape") == unreadable_answer
    lost = by_key[""]
    assert lost.error_kind == "malformed_response" and lost.text.encode("utf-8", "surrogateescape") == no_id
    assert all(by_key[k].ok for k in keys[3:])
    assert all(r.attempts == 1 for r in results)


@pytest.mark.parametrize(("end", "state"), [("expire", EXPIRED), ("cancel", CANCELLED)])
def test_items_an_ended_batch_did_not_run_are_not_run(end, state, fake_server, settings_for, fake_key):
    server = fake_server("openai")
    server.batches.hold()
    settings = settings_for("openai", server.base_url)
    items = items_of(settings, 3)

    async def work(backend):
        batch_id = await backend.submit(items, "rb-late")
        assert (await backend.status(batch_id)).state == IN_PROGRESS
        getattr(server.batches, end)(batch_id, run_count=1)
        return await backend.status(batch_id), await backend.results(batch_id)

    status, results = run(settings, work, fake_key)
    assert status.state == state
    by_key = {r.key: r for r in results}
    assert by_key[items[0][0]].ok
    assert [by_key[k].error_kind for k, _ in items[1:]] == [NOT_RUN, NOT_RUN]
    assert [by_key[k].billed_attempts for k, _ in items[1:]] == [0, 0]


def test_a_batch_refused_at_validation_is_failed_with_its_reasons(fake_server, settings_for, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)

    async def work(backend):
        batch_id = await backend.submit(items_of(settings, 2), "rb-bad")
        server.batches.batches[batch_id].outcome = "failed"
        server.batches.invalid[batch_id] = [{"code": "invalid_request", "line": 1, "message": f"bad {fake_key}"}]
        return await backend.status(batch_id), await backend.results(batch_id)

    status, results = run(settings, work, fake_key)
    assert status.state == FAILED and status.provider_state == "failed"
    assert "invalid_request: bad" in status.message and fake_key not in status.message
    assert results == []


def test_a_server_without_a_batch_api_is_unsupported(fake_server, settings_for, fake_key):
    server = fake_server("openai", batch=False)
    settings = settings_for("openai", server.base_url)

    async def work(backend):
        with pytest.raises(BatchUnsupported):
            await backend.submit(items_of(settings, 2), "rb-none")

    run(settings, work, fake_key)
    assert server.count == 0 and server.batches.submissions == 0


def test_a_submission_is_found_by_its_label(fake_server, settings_for, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)
    items = items_of(settings, 2)

    async def work(backend):
        first = await backend.submit(items[:1], "rb-one")
        second = await backend.submit(items[1:], "rb-two")
        return first, second, await backend.find("rb-one"), await backend.find("rb-two"), await backend.find("rb-x")

    first, second, found_one, found_two, found_none = run(settings, work, fake_key)
    assert first != second and (found_one, found_two, found_none) == (first, second, None)


def test_a_wrong_key_is_an_auth_error_that_never_shows_the_key(fake_server, settings_for, fake_key):
    server = fake_server("openai")
    server.batches.expected_key = fake_key
    settings = settings_for("openai", server.base_url, max_retries=0)

    async def work(backend):
        with pytest.raises(BatchError) as submitted:
            await backend.submit(items_of(settings, 1), "rb-key")
        with pytest.raises(BatchError) as polled:
            await backend.status("batch_000001")
        return submitted.value, polled.value

    submitted, polled = run(settings, work, WRONG_KEY)
    for error in (submitted, polled):
        assert error.kind == "auth" and "401" in str(error)
        assert WRONG_KEY not in str(error)
    assert server.batches.keys == [WRONG_KEY, WRONG_KEY], "the key went to the configured server only"
    assert server.batches.submissions == 0
