"""Batch mode end to end: the fan-out's batch part (core/providers/batch.py) against fake servers on
127.0.0.1 that speak each provider's batch protocol, through the real SDKs and a real store."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from resumebias_dagster.core.providers import ChatRequest, run_requests
from resumebias_dagster.core.providers import batch as batch_module
from resumebias_dagster.core.providers.batch import BatchesPending
from resumebias_dagster.core.providers.batch_api import COLLECTED, NOT_RUN, BatchError
from resumebias_dagster.core.providers.fanout import normalise
from resumebias_dagster.core.providers.store import ClaimOwner
from resumebias_dagster.core.providers.types import ProviderConfigError, request_key

WIRES = ("openai", "anthropic", "gemini")


def fit_answer(request) -> str:
    """A fit answer in JSON, its score read off the résumé's number (so answers differ)."""
    number = int(request.prompt.rsplit("RESUME ", 1)[-1].split(":", 1)[0])
    return json.dumps({"score": 3 + number % 7, "recommend": "yes", "justification": "Relevant."})


def fit_requests(n: int) -> list[ChatRequest]:
    """Fit-scoring requests as the JD audit sends them: a shared prefix, JSON answers."""
    prefix = "Score this candidate for the job below from 1 to 10. Answer in JSON.\nJOB: Staff engineer.\n"
    return [
        ChatRequest.from_prompt(
            prefix + f"RESUME {i}: ten years of Python.", json_mode=True, task="fit", cache_prefix_chars=len(prefix)
        )
        for i in range(n)
    ]


def batch_settings(settings_for, wire, server, **options):
    options = {"batch": True, "batch_poll_s": 0.05, "batch_wait_s": 20, **options}
    return settings_for(wire, server.base_url, **options)


@pytest.mark.parametrize("wire", WIRES)
def test_a_batch_run_stores_every_answer_once(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire, answer=fit_answer)
    settings = batch_settings(settings_for, wire, server)
    requests = fit_requests(6)
    lines = []
    results, stats = run_requests(settings, requests, store, notify=lines.append)
    assert server.batches.submissions == 1
    assert server.batches.items_submitted == 6
    assert server.count == 0, "no live call"
    assert all(r.ok and r.parsed_json["score"] == 3 + i % 7 for i, r in enumerate(results))
    assert stats.batches_submitted == 1 and stats.batch_answers == 6 and stats.calls_made == 6
    assert stats.retries == 0
    assert store.count(done=True) == 6
    assert [b["state"] for b in store.batches()] == [COLLECTED]
    assert store.claims() == []
    assert any("submitted (6 requests)" in line for line in lines)
    # The same requests again: all from the store, nothing submitted or called.
    again, stats = run_requests(settings, requests, store)
    assert [r.text for r in again] == [r.text for r in results]
    assert server.batches.submissions == 1 and server.count == 0 and stats.served_from_store == 6


@pytest.mark.parametrize("wire", WIRES)
def test_batch_answers_equal_live_answers_and_cost_half(wire, fake_server, settings_for, tmp_path, fake_key):
    from resumebias_dagster.core.providers.store import ResponseStore

    server = fake_server(wire, answer=fit_answer, cache_min_tokens=None)
    requests = fit_requests(3)
    with ResponseStore(tmp_path / "live.sqlite") as live_store, ResponseStore(tmp_path / "batch.sqlite") as batch_store:
        live, live_stats = run_requests(settings_for(wire, server.base_url), requests, live_store)
        batched, batch_stats = run_requests(batch_settings(settings_for, wire, server), requests, batch_store)
    assert [r.text for r in batched] == [r.text for r in live]
    assert [r.input_tokens for r in batched] == [r.input_tokens for r in live]
    assert [r.resolved_model for r in batched] == [r.resolved_model for r in live]
    # Every fake alias is in prices.yaml; each wire's batch rate is half its list price.
    assert live_stats.cost_usd > 0
    assert batch_stats.cost_usd == pytest.approx(live_stats.cost_usd / 2, rel=1e-9)


_CHILD = textwrap.dedent(
    """
    import json, os, sys
    sys.path[:0] = [os.environ["TESTS_DIR"], os.path.join(os.environ["TESTS_DIR"], "core", "providers")]
    from conftest import settings_for
    from resumebias_dagster.core.providers import ChatRequest, run_requests
    from resumebias_dagster.core.providers.store import ResponseStore
    from test_batch_runs import fit_requests
    args = json.loads(sys.argv[1])
    settings = settings_for(args["wire"], args["base_url"], batch=True, batch_poll_s=0.05, batch_wait_s=600)
    with ResponseStore(args["store"]) as store:
        run_requests(settings, fit_requests(args["n"]), store)
    """
)


@pytest.mark.parametrize("wire", WIRES)
def test_killed_after_submission_the_next_run_polls_the_same_batch(wire, fake_server, settings_for, tmp_path, fake_key):
    from resumebias_dagster.core.providers.store import ResponseStore

    server = fake_server(wire, answer=fit_answer)
    server.batches.hold()
    path = tmp_path / "responses.sqlite"
    args = json.dumps({"wire": wire, "base_url": server.base_url, "store": str(path), "n": 5})
    env = {**os.environ, "TESTS_DIR": str(Path(__file__).parents[2])}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, args], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while server.batches.status_reads == 0:
            assert child.poll() is None, "the run ended before it polled its batch"
            assert time.monotonic() < deadline, "the run never polled its batch"
            time.sleep(0.05)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert server.batches.submissions == 1
    server.batches.hold(False)
    with ResponseStore(path) as store:
        assert [b["state"] for b in store.batches()] == ["in_progress"]
        lines = []
        results, stats = run_requests(
            batch_settings(settings_for, wire, server), fit_requests(5), store, notify=lines.append
        )
        assert server.batches.submissions == 1, "the second run submitted nothing"
        assert stats.batches_submitted == 0 and stats.batch_answers == 5
        assert server.count == 0
        assert all(r.ok for r in results)
        assert store.count(done=True) == 5
        assert any("polling them" in line for line in lines)


@pytest.mark.parametrize("wire", WIRES)
def test_an_outage_while_polling_is_waited_out(wire, fake_server, settings_for, store, fake_key):
    """The provider answers the batch's status reads with 503 for a while (past the SDK's own
    retries): the run says so, polls again and collects every answer, submitting nothing twice."""
    server = fake_server(wire, answer=fit_answer)
    server.batches.fail_status_reads(3)
    settings = batch_settings(settings_for, wire, server, max_retries=0)
    lines = []
    results, stats = run_requests(settings, fit_requests(3), store, notify=lines.append)
    assert server.batches.failed_status_reads == 3
    assert all(r.ok for r in results)
    assert server.batches.submissions == 1 and server.count == 0
    assert stats.batch_answers == 3 and store.count(done=True) == 3
    assert [b["state"] for b in store.batches()] == [COLLECTED]
    failed = [line for line in lines if "could not read the state of batch" in line]
    assert len(failed) == 3 and all("server_error" in line and "polling again" in line for line in failed)
    assert not any(fake_key in line for line in lines)


def test_an_outage_past_the_wait_leaves_the_batch_for_the_next_run(fake_server, settings_for, store, fake_key):
    server = fake_server("openai", answer=fit_answer)
    server.batches.fail_status_reads(10_000)
    settings = batch_settings(settings_for, "openai", server, max_retries=0, batch_wait_s=0.4)
    with pytest.raises(BatchesPending, match=r"its state could not be read \(server_error: .*503"):
        run_requests(settings, fit_requests(3), store)
    assert [b["state"] for b in store.batches()] == ["in_progress"]
    server.batches.fail_status_reads(0)
    results, stats = run_requests(batch_settings(settings_for, "openai", server), fit_requests(3), store)
    assert all(r.ok for r in results)
    assert server.batches.submissions == 1 and stats.batch_answers == 3


def test_a_refused_key_while_polling_stops_the_run(fake_server, settings_for, store, fake_key):
    """Not an outage: a key the provider refuses stays refused, so the run stops at once with the
    provider's reason instead of polling until batch_wait_s."""
    server = fake_server("anthropic", answer=fit_answer)
    server.batches.fail_status_reads(1, status=401)
    settings = batch_settings(settings_for, "anthropic", server, max_retries=0, batch_wait_s=60)
    started = time.monotonic()
    with pytest.raises(BatchError, match="401|auth") as caught:
        run_requests(settings, fit_requests(2), store)
    assert caught.value.kind == "auth" and time.monotonic() - started < 30
    assert fake_key not in str(caught.value)
    assert [b["state"] for b in store.batches()] == ["in_progress"], "kept for the next run to poll"


def test_a_live_run_never_calls_a_key_held_by_an_open_batch(fake_server, settings_for, store, fake_key):
    server = fake_server("openai", answer=fit_answer)
    server.batches.hold()
    settings = batch_settings(settings_for, "openai", server, batch_wait_s=0.3)
    with pytest.raises(BatchesPending, match="materialise again"):
        run_requests(settings, fit_requests(4), store)
    assert server.batches.submissions == 1
    # The model turned back to live calls: its open batch is polled, nothing is called live.
    live = settings_for("openai", server.base_url, batch_poll_s=0.05, batch_wait_s=0.3)
    with pytest.raises(BatchesPending):
        run_requests(live, fit_requests(4), store)
    assert server.count == 0
    server.batches.hold(False)
    results, stats = run_requests(live, fit_requests(4), store)
    assert server.count == 0 and server.batches.submissions == 1
    assert all(r.ok for r in results) and stats.batch_answers == 4


def test_a_server_without_batches_gets_live_calls_and_says_so(fake_server, settings_for, store, fake_key):
    server = fake_server("openai", answer=fit_answer, batch=False)
    lines = []
    results, stats = run_requests(
        batch_settings(settings_for, "openai", server), fit_requests(3), store, notify=lines.append
    )
    assert all(r.ok for r in results)
    assert server.count == 3 and stats.calls_made == 3 and stats.batches_submitted == 0
    # The fallback says what it costs (issue 40): the list price, twice the batch's.
    assert any(
        "making live calls instead, at the list price: twice what the batch would have cost for these 3 requests"
        in line
        for line in lines
    )
    assert store.claims() == []


def test_items_an_expired_batch_did_not_run_are_asked_again(fake_server, settings_for, store, fake_key):
    server = fake_server("anthropic", answer=fit_answer)
    server.batches.hold()
    settings = batch_settings(settings_for, "anthropic", server, batch_wait_s=0.3)
    with pytest.raises(BatchesPending):
        run_requests(settings, fit_requests(4), store)
    server.batches.expire(run_count=1)
    results, stats = run_requests(batch_settings(settings_for, "anthropic", server), fit_requests(4), store)
    assert [r.error_kind for r in results].count(NOT_RUN) == 3
    assert store.count(done=True) == 1
    server.batches.hold(False)
    results, stats = run_requests(batch_settings(settings_for, "anthropic", server), fit_requests(4), store)
    assert all(r.ok for r in results)
    assert server.batches.submissions == 2 and server.batches.items_submitted == 4 + 3
    assert store.count(done=True) == 4


def interrupted_submission(settings, store, submitted: list[int]):
    """A run killed after the store recorded its batch of 3 requests (labelled
    ``rb-interrupted``) and before the provider's answer, with ``submitted`` giving the sizes
    of the batches that did reach the provider (the first ones of the recorded items)."""
    import asyncio

    from resumebias_dagster.core.providers.registry import make_batch_backend

    requests = [normalise(settings, r) for r in fit_requests(3)]
    items = [(request_key(settings, r), r) for r in requests]
    owner = ClaimOwner.this_process()
    for key, _ in items:
        store.claim(key, owner, 60)
    store.record_batch(settings, "rb-interrupted", items, owner)

    async def submit():
        backend = make_batch_backend(settings, settings.api_key())
        try:
            for size in submitted:
                await backend.submit(items[:size], "rb-interrupted")
        finally:
            await backend.aclose()

    asyncio.run(submit())


def test_a_submission_interrupted_before_confirmation_is_found_by_its_label(
    fake_server, settings_for, store, fake_key, monkeypatch
):
    """Killed between the store's record and the provider's answer: OpenAI keeps the label, so
    the next run finds the batch instead of submitting it again."""
    server = fake_server("openai", answer=fit_answer)
    settings = batch_settings(settings_for, "openai", server)
    interrupted_submission(settings, store, submitted=[3])
    monkeypatch.setattr(batch_module, "UNCONFIRMED_GRACE_S", 0.0)
    results, stats = run_requests(settings, fit_requests(3), store)
    assert server.batches.submissions == 1
    assert all(r.ok for r in results) and stats.batch_answers == 3


def test_anthropic_finds_an_interrupted_submission_by_its_size_and_time(
    fake_server, settings_for, store, fake_key, monkeypatch
):
    """Anthropic keeps no label: the one unknown batch of the record's size, created within
    minutes of it, is taken, and its answers are matched by request key."""
    server = fake_server("anthropic", answer=fit_answer)
    settings = batch_settings(settings_for, "anthropic", server)
    # Another batch of the account, known to the store already: never taken for this one.
    first, _ = run_requests(settings, fit_requests(4)[3:], store)
    interrupted_submission(settings, store, submitted=[3])
    monkeypatch.setattr(batch_module, "UNCONFIRMED_GRACE_S", 0.0)
    lines = []
    results, stats = run_requests(settings, fit_requests(3), store, notify=lines.append)
    assert server.batches.submissions == 2, "the interrupted batch was not submitted again"
    assert all(r.ok for r in results) and stats.batch_answers == 3
    assert any("has its size (3 requests) and time and is taken for it" in line for line in lines)
    assert store.count(done=True) == 4


@pytest.mark.parametrize(
    ("submitted", "why"),
    [([2], "a batch of another size"), ([3, 3], "two batches of its size: no guess between them")],
)
def test_anthropic_takes_no_batch_it_cannot_single_out(
    fake_server, settings_for, store, fake_key, monkeypatch, submitted, why
):
    server = fake_server("anthropic", answer=fit_answer)
    settings = batch_settings(settings_for, "anthropic", server)
    interrupted_submission(settings, store, submitted=submitted)
    monkeypatch.setattr(batch_module, "UNCONFIRMED_GRACE_S", 0.0)
    lines = []
    results, stats = run_requests(settings, fit_requests(3), store, notify=lines.append)
    assert server.batches.submissions == len(submitted) + 1, why
    assert all(r.ok for r in results) and stats.batches_submitted == 1
    assert any("no single unknown batch of this size" in line for line in lines)


def test_anthropic_takes_no_batch_created_long_before_the_record(
    fake_server, settings_for, store, fake_key, monkeypatch
):
    server = fake_server("anthropic", answer=fit_answer)
    settings = batch_settings(settings_for, "anthropic", server)
    interrupted_submission(settings, store, submitted=[3])
    (old,) = server.batches.created
    server.batches.created[old] -= 3600  # an hour before the record: another submission's
    monkeypatch.setattr(batch_module, "UNCONFIRMED_GRACE_S", 0.0)
    results, stats = run_requests(settings, fit_requests(3), store)
    assert server.batches.submissions == 2 and stats.batches_submitted == 1
    assert all(r.ok for r in results)


def test_a_foreign_batch_taken_for_ours_stores_nothing_under_our_keys(
    fake_server, settings_for, store, fake_key, monkeypatch
):
    """A batch of the same size and time that is not ours (another tool on the same account)
    answers none of our keys: they are marked not run, and the next run asks them again."""
    import asyncio

    from resumebias_dagster.core.providers.registry import make_batch_backend

    server = fake_server("anthropic", answer=fit_answer)
    settings = batch_settings(settings_for, "anthropic", server)
    interrupted_submission(settings, store, submitted=[])
    others = [normalise(settings, r) for r in fit_requests(6)[3:]]

    async def someone_else():
        backend = make_batch_backend(settings, settings.api_key())
        try:
            await backend.submit([(request_key(settings, r), r) for r in others], "someone-else")
        finally:
            await backend.aclose()

    asyncio.run(someone_else())
    monkeypatch.setattr(batch_module, "UNCONFIRMED_GRACE_S", 0.0)
    results, _ = run_requests(settings, fit_requests(3), store)
    assert [r.error_kind for r in results] == [NOT_RUN] * 3
    assert store.count(done=True) == 0, "no answer of another request stored under our keys"
    results, stats = run_requests(settings, fit_requests(3), store)
    assert all(r.ok for r in results) and stats.batches_submitted == 1


def test_batch_settings_are_checked(settings_for):
    with pytest.raises(ProviderConfigError, match="batch must be true or false"):
        settings_for("openai", "http://127.0.0.1:9/v1", batch="yes")
    with pytest.raises(ProviderConfigError, match="batch_poll_s must be a number of seconds > 0"):
        settings_for("openai", "http://127.0.0.1:9/v1", batch_poll_s=0)


QUOTA = {
    "code": "token_limit_exceeded",
    "line": None,
    "param": None,
    "message": "Enqueued token limit reached for gpt-x in organization org-1. Limit: 90,000 enqueued tokens. "
    "Please try again once some in_progress batches have been completed.",
}


def test_a_batch_refused_whole_stops_the_run_with_the_providers_reason(
    fake_server, settings_for, store, fake_key, capsys, tmp_path
):
    # Issue 40: the run succeeded, every row read "batch ... ended without running it", and the
    # reason sat only in the store; every later run resubmitted and was refused the same way.
    from resumebias_dagster.cli import main
    from resumebias_dagster.core.providers.batch import BatchRefused

    server = fake_server("openai", answer=fit_answer)
    server.batches.refuse_with = [QUOTA]
    settings = batch_settings(settings_for, "openai", server)
    with pytest.raises(BatchRefused) as exc:
        run_requests(settings, fit_requests(3), store)
    message = str(exc.value)
    assert "refused 1 batch(es) whole" in message and "token_limit_exceeded: Enqueued token limit reached" in message
    assert server.batches.submissions == 1 and server.count == 0
    # The next run within the wait submits nothing and says when to come back.
    with pytest.raises(BatchRefused, match=r"refused this model's last batch for a quota .*run again in 1[45] min"):
        run_requests(settings, fit_requests(3), store)
    assert server.batches.submissions == 1
    # `resumebias batches` prints the reason.
    assert main(["batches", "--store", str(tmp_path / "responses.sqlite")]) == 0
    assert "token_limit_exceeded: Enqueued token limit reached" in capsys.readouterr().out


def test_after_the_quota_wait_the_batch_is_submitted_again(fake_server, settings_for, store, fake_key, monkeypatch):
    from resumebias_dagster.core.providers.batch import BatchRefused

    server = fake_server("openai", answer=fit_answer)
    server.batches.refuse_with = [QUOTA]
    settings = batch_settings(settings_for, "openai", server)
    with pytest.raises(BatchRefused):
        run_requests(settings, fit_requests(2), store)
    server.batches.refuse_with = None
    monkeypatch.setattr(batch_module, "QUOTA_WAIT_S", 0.0)
    results, _ = run_requests(settings, fit_requests(2), store)
    assert all(r.ok for r in results) and server.batches.submissions == 2
