"""The response store: durable at once, zero calls on a re-run, resumable after SIGKILL,
safe with four processes writing at once. Each test runs on both backends (an SQLite file, a
PostgreSQL database of a private server; tests/conftest.py ``store_target``)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from resumebias_dagster.core.providers import ChatRequest, ResponseStore, request_key, run_requests
from resumebias_dagster.testing import fake_providers as fp

# A child process: one "partition" (a model) run through the shared store.
CHILD = r"""
import json, sys
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.providers import ChatRequest, ProviderSettings, ResponseStore, run_requests
entry, target, n = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "child")[0])
requests = [ChatRequest.from_prompt(f"résumé {i}") for i in range(n)]
with ResponseStore(target) as store:
    results, stats = run_requests(settings, requests, store)
print(json.dumps(stats.as_dict()))
"""


@pytest.fixture
def store(any_store):
    return any_store


def requests(n, prefix="résumé"):
    return [ChatRequest.from_prompt(f"{prefix} {i}") for i in range(n)]


def test_rerun_makes_zero_calls(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)
    first, stats1 = run_requests(settings, requests(30), store)
    second, stats2 = run_requests(settings, requests(30), store)
    assert server.count == 30
    assert (stats1.calls_made, stats1.served_from_store) == (30, 0)
    assert (stats2.calls_made, stats2.served_from_store) == (0, 30)
    assert all(r.from_store for r in second)
    assert [r.text for r in first] == [r.text for r in second]
    assert [r.resolved_model for r in second] == [r.resolved_model for r in first]
    assert stats2.cost_usd == 0 and stats2.as_dict()["cost_usd_incl_store"] == pytest.approx(stats1.cost_usd)


def test_every_sampling_parameter_is_part_of_the_key(fake_server, settings_for, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)
    base = ChatRequest.from_prompt("p")
    variants = [
        base,
        ChatRequest.from_prompt("p", sample_index=1),
        ChatRequest.from_prompt("p", temperature=0.1),
        ChatRequest.from_prompt("p", max_tokens=9),
        ChatRequest.from_prompt("p", json_mode=True),
        ChatRequest.from_prompt("p", system="s"),
        ChatRequest.from_prompt("q"),
    ]
    assert len({request_key(settings, r) for r in variants}) == len(variants)
    other_alias = settings_for("openai", server.base_url, model="openai/gpt-5-mini")
    other_host = settings_for("openai", "http://localhost:1/v1")
    moved_port = settings_for("openai", server.base_url.replace(str(server.port), "1"))
    renamed = settings_for("openai", server.base_url, name="same-model-other-name", max_concurrency=3)
    key = request_key(settings, base)
    assert request_key(other_alias, base) != key and request_key(other_host, base) != key
    # Another port is another server (tests/security/test_response_store.py).
    assert request_key(moved_port, base) != key and request_key(renamed, base) == key


def test_terminal_rows_are_final_and_transient_rows_are_retried(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url, max_retries=0, max_concurrency=1)
    server.script(fp.refusal(), fp.server_error(500), fp.content_filter(), fp.reset())
    results, stats = run_requests(settings, requests(4), store)
    assert [r.error_kind for r in results] == ["refusal", "server_error", "content_filter", "connection"]
    assert store.count() == 4 and store.count(done=True) == 2
    results, stats = run_requests(settings, requests(4), store)
    assert server.count == 6  # only the two transient ones again
    assert stats.calls_made == 2 and stats.served_from_store == 2
    assert [r.error_kind for r in results] == ["refusal", None, "content_filter", None]
    rows = {r["key"]: r for r in store.rows()}
    assert len(rows) == 4 and sorted(r["calls"] for r in rows.values()) == [1, 1, 2, 2]


def test_each_response_is_committed_as_it_returns(fake_server, settings_for, store_target, fake_key):
    # A second connection (as another process would) sees rows while the run is going on.
    server = fake_server("openai", latency_s=0.05)
    seen = []

    with ResponseStore(store_target) as store, ResponseStore(store_target) as other:

        def progress(done, total):
            seen.append(other.count())

        run_requests(settings_for("openai", server.base_url, max_concurrency=1), requests(5), store, progress=progress)
    assert seen == [1, 2, 3, 4, 5]


def test_four_partitions_write_one_store_at_once(fake_server, model_entry, store_target, fake_key):
    server = fake_server("openai", latency_s=0.005)
    path = store_target
    n = 150
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                json.dumps(
                    model_entry(
                        "openai", server.base_url, name=f"part-{i}", model=f"vendor/model-{i}", max_concurrency=16
                    )
                ),
                str(path),
                str(n),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outputs = [child.communicate(timeout=120) for child in children]
    assert [c.returncode for c in children] == [0] * 4, [err[-2000:] for _, err in outputs]
    stats = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert [s["calls_made"] for s in stats] == [n] * 4
    assert server.count == 4 * n
    with ResponseStore(path) as store:
        rows = list(store.rows())
        assert len(rows) == 4 * n == len({r["key"] for r in rows})
        assert {r["model"] for r in rows} == {f"part-{i}" for i in range(4)}
        assert all(r["done"] == 1 and r["text"] == "mid" for r in rows)
    # All four again, at once: nothing left to call.
    again = [subprocess.Popen(c.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in children]
    stats = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in again]
    assert [s["calls_made"] for s in stats] == [0] * 4
    assert server.count == 4 * n


def test_sigkill_half_way_then_resume_makes_only_the_missing_calls(fake_server, model_entry, store_target, fake_key):
    server = fake_server("openai", latency_s=0.02)
    path = store_target
    n = 400
    entry = model_entry("openai", server.base_url, name="killed", max_concurrency=4)
    with ResponseStore(path) as watcher:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(entry), str(path), str(n)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        stored = 0
        while stored < n // 2 and time.monotonic() < deadline:
            time.sleep(0.02)
            stored = watcher.count()
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    assert child.returncode == -signal.SIGKILL
    with ResponseStore(path) as store:
        kept = store.count()
        assert n // 2 <= kept < n
        calls_before = server.count
        from resumebias_dagster.core.models.model_config import parse_models
        from resumebias_dagster.core.providers import ProviderSettings

        settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "t")[0])
        results, stats = run_requests(settings, requests(n), store)
    assert stats.calls_made == n - kept
    assert server.count - calls_before == n - kept
    assert stats.served_from_store == kept
    assert all(r.ok for r in results)
