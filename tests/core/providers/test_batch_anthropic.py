"""Anthropic's Message Batches: the batch backend (core/providers/batch_anthropic.py) through the real
anthropic SDK against the fake server's batch endpoints on 127.0.0.1
(testing/fake_providers/batch_anthropic.py)."""

import asyncio
import json

import pytest

from resumebias_dagster.core.providers.anthropic_client import AnthropicClient
from resumebias_dagster.core.providers.batch_anthropic import AnthropicBatchBackend
from resumebias_dagster.core.providers.batch_api import ENDED, IN_PROGRESS, NOT_RUN, BatchError, BatchUnsupported
from resumebias_dagster.core.providers.fanout import normalise
from resumebias_dagster.core.providers.types import ChatRequest, Secret, request_key

WRONG_KEY = "sk-ant-WRONGKEY-91c2d3e4f5a6b7c8-do-not-leak"
PREFIX = "Score the résumé below for this job from 1 to 10. Answer in JSON. JOB: Staff engineer.\n"


def items_of(settings, n=4):
    """Normalised fit requests with a shared prefix marked for the prompt cache, with their keys."""
    requests = [
        normalise(
            settings,
            ChatRequest.from_prompt(
                PREFIX + f"RESUME {i}: ten years of Python.",
                json_mode=True,
                task="fit",
                system="You are a recruiter.",
                cache_prefix_chars=len(PREFIX),
            ),
        )
        for i in range(n)
    ]
    return [(request_key(settings, r), r) for r in requests]


async def _with(backend, work):
    try:
        return await work(backend)
    finally:
        await backend.aclose()


def run(settings, work, key):
    return asyncio.run(_with(AnthropicBatchBackend(settings, Secret(key)), work))


def live(settings, items, key):
    async def go():
        client = AnthropicClient(settings, Secret(key))
        try:
            return [await client.complete(request, k) for k, request in items]
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_a_batch_is_answered_as_the_live_client_answers(fake_server, settings_for, fake_key):
    server = fake_server("anthropic", cache_min_tokens=None, batch_polls_to_finish=2)
    settings = settings_for("anthropic", server.base_url, max_tokens={"fit": 333}, extra_body={"top_k": 5})
    items = items_of(settings)

    async def work(backend):
        batch_id = await backend.submit(items, "rb-first")
        first, second = await backend.status(batch_id), await backend.status(batch_id)
        return batch_id, first, second, await backend.results(batch_id), await backend.find("rb-first")

    batch_id, first, second, results, found = run(settings, work, fake_key)
    assert first.state == IN_PROGRESS and first.total == 4 and first.succeeded == 0
    assert second.state == ENDED and (second.total, second.succeeded, second.errored) == (4, 4, 0)
    assert found is None, "Anthropic keeps no label"
    assert sorted(r.key for r in results) == sorted(k for k, _ in items)
    assert server.count == 0 and set(server.batches.keys) == {fake_key}
    sent = server.batches.batches[batch_id].items
    assert [custom_id for custom_id, _ in sent] == [k for k, _ in items]

    answers = live(settings, items, fake_key)
    # Each item's params are exactly what the live client posts, extra_body among them.
    assert [params for _, params in sent] == [request.body for request in server.requests]
    params = sent[0][1]
    assert params["model"] == "claude-sonnet-4-5" and params["max_tokens"] == 333 and params["top_k"] == 5
    assert params["system"] == "You are a recruiter."
    marked, rest = params["messages"][-1]["content"]
    assert marked == {"type": "text", "text": PREFIX, "cache_control": {"type": "ephemeral"}}
    assert rest["text"].startswith("RESUME 0")
    by_key = {r.key: r for r in results}
    for answer in answers:
        batched = by_key[answer.key]
        assert batched.ok and batched.text == answer.text
        assert (batched.input_tokens, batched.output_tokens) == (answer.input_tokens, answer.output_tokens)
        assert batched.resolved_model == answer.resolved_model and batched.finish_reason == answer.finish_reason
        assert batched.attempts == 1 and batched.billed_attempts == 1 and batched.cost_usd is None


def test_cache_usage_of_batch_answers_is_read_as_live(fake_server, settings_for, fake_key):
    server = fake_server("anthropic", cache_min_tokens=1)
    settings = settings_for("anthropic", server.base_url)
    items = items_of(settings, 3)

    async def work(backend):
        batch_id = await backend.submit(items, "rb-cache")
        await backend.status(batch_id)
        return await backend.results(batch_id)

    results = sorted(run(settings, work, fake_key), key=lambda r: [k for k, _ in items].index(r.key))
    # The first item wrote the marked prefix, the others read it; input_tokens is the whole input.
    assert results[0].cache_write_tokens > 0 and results[0].cached_input_tokens == 0
    assert all(r.cached_input_tokens == results[0].cache_write_tokens for r in results[1:])
    assert len({r.input_tokens for r in results}) == 1


def test_errored_items_are_typed_and_unreadable_lines_kept_raw(fake_server, settings_for, fake_key):
    server = fake_server("anthropic")
    settings = settings_for("anthropic", server.base_url)
    items = items_of(settings, 6)
    keys = [k for k, _ in items]
    unreadable_answer = json.dumps({"custom_id": keys[3], "result": {"type": "succeeded", "message": 7}}).encode()
    no_id = b'{"custom_id": \xff not json'

    async def work(backend):
        batch_id = await backend.submit(items, "rb-faults")
        server.batches.fail_item(keys[0], 400, f"bad request from {fake_key}")
        server.batches.fail_item(keys[1], 529, "overloaded")
        server.batches.fail_item(keys[2], 401, "invalid key")
        server.batches.garble(keys[3], unreadable_answer)
        server.batches.extra_lines.append(no_id)
        status = await backend.status(batch_id)
        return status, await backend.results(batch_id)

    status, results = run(settings, work, fake_key)
    assert status.state == ENDED and (status.succeeded, status.errored) == (3, 3)
    by_key = {r.key: r for r in results}
    assert len(results) == 7 and set(by_key) == {*keys, ""}
    assert [by_key[k].error_kind for k in keys[:3]] == ["bad_request", "server_error", "auth"]
    assert by_key[keys[0]].error_message.startswith("invalid_request_error: bad request")
    assert fake_key not in by_key[keys[0]].error_message
    assert [by_key[k].billed_attempts for k in keys[:3]] == [0, 0, 0]
    garbled = by_key[keys[3]]
    assert garbled.error_kind == "malformed_response" and garbled.billed_attempts == 1
    assert garbled.text.encode("utf-8", "surrogateescape") == unreadable_answer
    assert by_key[""].error_kind == "malformed_response"
    assert by_key[""].text.encode("utf-8", "surrogateescape") == no_id
    assert all(by_key[k].ok for k in keys[4:])


@pytest.mark.parametrize("end", ["expire", "cancel"])
def test_items_an_ended_batch_did_not_run_are_not_run(end, fake_server, settings_for, fake_key):
    server = fake_server("anthropic")
    server.batches.hold()
    settings = settings_for("anthropic", server.base_url)
    items = items_of(settings, 3)

    async def work(backend):
        batch_id = await backend.submit(items, "rb-late")
        assert (await backend.status(batch_id)).state == IN_PROGRESS
        getattr(server.batches, end)(batch_id, run_count=1)
        return await backend.status(batch_id), await backend.results(batch_id)

    status, results = run(settings, work, fake_key)
    assert status.state == ENDED and status.total == 3 and status.succeeded == 1
    by_key = {r.key: r for r in results}
    assert by_key[items[0][0]].ok
    assert [(by_key[k].error_kind, by_key[k].billed_attempts) for k, _ in items[1:]] == [(NOT_RUN, 0)] * 2


def test_results_are_read_from_the_configured_host_only(fake_server, settings_for, fake_key):
    """A results_url naming another host is not followed: the key stays with the configured one."""
    server = fake_server("anthropic")
    server.batches.results_host = "http://127.0.0.1:9"  # nothing listens there
    settings = settings_for("anthropic", server.base_url, max_retries=0)
    items = items_of(settings, 2)

    async def work(backend):
        batch_id = await backend.submit(items, "rb-host")
        await backend.status(batch_id)
        return await backend.results(batch_id)

    results = run(settings, work, fake_key)
    assert sorted(r.key for r in results) == sorted(k for k, _ in items) and all(r.ok for r in results)
    assert server.batches.result_reads == 1


def test_a_server_without_message_batches_is_unsupported(fake_server, settings_for, fake_key):
    server = fake_server("anthropic", batch=False)
    settings = settings_for("anthropic", server.base_url)

    async def work(backend):
        with pytest.raises(BatchUnsupported):
            await backend.submit(items_of(settings, 2), "rb-none")

    run(settings, work, fake_key)
    assert server.count == 0 and server.batches.submissions == 0


def test_a_key_that_is_no_custom_id_is_refused_before_anything_is_sent(fake_server, settings_for, fake_key):
    server = fake_server("anthropic")
    settings = settings_for("anthropic", server.base_url)
    ((_, request),) = items_of(settings, 1)

    async def work(backend):
        with pytest.raises(ValueError, match="custom_id"):
            await backend.submit([("not a key!", request)], "rb-id")

    run(settings, work, fake_key)
    assert server.batches.keys == []


def test_a_wrong_key_is_an_auth_error_that_never_shows_the_key(fake_server, settings_for, fake_key):
    server = fake_server("anthropic")
    server.batches.expected_key = fake_key
    settings = settings_for("anthropic", server.base_url, max_retries=0)

    async def work(backend):
        with pytest.raises(BatchError) as submitted:
            await backend.submit(items_of(settings, 1), "rb-key")
        with pytest.raises(BatchError) as polled:
            await backend.status("msgbatch_000001")
        return submitted.value, polled.value

    submitted, polled = run(settings, work, WRONG_KEY)
    for error in (submitted, polled):
        assert error.kind == "auth" and "401" in str(error)
        assert WRONG_KEY not in str(error)
    assert server.batches.keys == [WRONG_KEY, WRONG_KEY] and server.batches.submissions == 0
