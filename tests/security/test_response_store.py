"""The response store under attack and under faults: no answer cached for the wrong server,
none lost after it was paid for, none paid twice.

Each test here failed on the code before the integrity work (issue 10): two ports shared
answers, a deeply nested reply crashed the run before its answer was stored, timed-out
generations were retried (and billed) within the run, an empty answer was final forever,
two processes asking for the same keys both paid, and the store ran its schema on any SQLite
file it was pointed at.

The tests of the store's rules run on both backends (an SQLite file, a PostgreSQL database of
a private server; tests/conftest.py ``store_target``).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

import dagster as dg
import pytest

from resumebias_dagster.core.providers import ChatRequest, ResponseStore, request_key, run_requests
from resumebias_dagster.core.providers.store import SQLiteStore, StoreError
from resumebias_dagster.resources.providers import ProvidersResource, stats_metadata
from resumebias_dagster.testing import fake_providers as fp
from tests.security.fit_answers import one_baseline_variant, openai_fit_spec

WIRES = ("openai", "anthropic", "gemini")


@pytest.fixture
def store(any_store):
    return any_store


# ------------------------------------------------------------------ 7: the whole endpoint is in the key


def test_two_servers_differing_only_by_port_never_share_answers(fake_server, settings_for, store, fake_key):
    first = fake_server("openai", answer=lambda r: "junior")
    second = fake_server("openai", answer=lambda r: "senior")
    assert first.base_url.split(":")[1] == second.base_url.split(":")[1]  # same host, other port
    request = [ChatRequest.from_prompt("Classify this résumé.")]
    a, _ = run_requests(settings_for("openai", first.base_url), request, store)
    b, stats = run_requests(settings_for("openai", second.base_url), request, store)
    assert a[0].text == "junior" and b[0].text == "senior"
    assert stats.calls_made == 1 and first.count == 1 and second.count == 1


def test_two_upstreams_behind_one_gateway_never_share_answers(settings_for):
    one = settings_for("openai", "https://gateway.example/upstream-a/v1")
    two = settings_for("openai", "https://gateway.example/upstream-b/v1")
    request = ChatRequest.from_prompt("x")
    assert request_key(one, request) != request_key(two, request)


def test_credentials_in_a_base_url_stay_out_of_the_key_and_the_stored_endpoint(
    fake_server, settings_for, store, fake_key, everything_stored
):
    server = fake_server("openai")
    port = server.base_url.split(":")[2].split("/")[0]
    secret_url = f"http://scott:tiger-pass-42@127.0.0.1:{port}/v1?key=sk-url-secret-999"
    settings = settings_for("openai", secret_url)
    # The query enters the endpoint as a hash only (issue 40: every parameter, credential-named
    # or not, tells endpoints apart); user info not at all.
    assert settings.endpoint.startswith(f"http://127.0.0.1:{port}/v1?query-sha256=")
    assert settings.endpoint == settings_for("openai", f"http://127.0.0.1:{port}/v1?key=sk-url-secret-999").endpoint
    run_requests(settings, [ChatRequest.from_prompt("x")], store)
    raw = everything_stored(store)
    for secret in (b"tiger-pass-42", b"sk-url-secret-999"):
        assert secret not in raw


# ------------------------------------------------------------------ 8: store the raw answer first


@pytest.mark.parametrize("wire", WIRES)
def test_a_deeply_nested_reply_is_stored_and_becomes_a_typed_row(wire, fake_server, settings_for, store, fake_key):
    hostile = "[" * 200_000 + "]" * 200_000
    nested = '{"score": ' + "[" * 100_000 + "]" * 100_000 + "}"
    server = fake_server(wire)
    server.script(fp.answer(nested), fp.answer(hostile))
    requests = [ChatRequest.from_prompt(f"résumé {i}", json_mode=True) for i in range(2)]
    results, stats = run_requests(settings_for(wire, server.base_url, max_concurrency=1), requests, store)
    assert [r.error_kind for r in results] == ["unparsable", "unparsable"]
    assert "nested" in results[0].error_message
    rows = {r["key"]: r for r in store.rows()}
    assert len(rows) == 2 and all(r["done"] == 1 and r["error_kind"] is None for r in rows.values())
    assert sorted(len(r["text"]) for r in rows.values()) == sorted([len(nested), len(hostile)])
    # The paid answers are kept: a second run calls nothing and reports the same typed rows.
    again, stats = run_requests(settings_for(wire, server.base_url), requests, store)
    assert stats.calls_made == 0 and server.count == 2
    assert [r.error_kind for r in again] == ["unparsable", "unparsable"]


def test_the_fit_task_turns_a_deeply_nested_answer_into_a_failed_run(fake_server, settings_for, store, fake_key):

    from resumebias_dagster.core.jd_audit.fit_task import predict_fit_with_provider

    server = fake_server("openai")
    server.script(fp.answer('{"score": ' + "[" * 100_000 + "]" * 100_000 + "}"))
    settings = settings_for("openai", server.base_url)
    spec = openai_fit_spec(server.base_url)
    variants = one_baseline_variant()
    rows, _ = predict_fit_with_provider(
        lambda reqs: run_requests(settings, reqs, store),
        variants,
        jd="jd",
        jd_text="A job.",
        template="{job_description}\n{resume_text}",
        spec=spec,
    )
    assert rows["score"].isna().all() and rows["error"].iloc[0].startswith("unparsable")


# ------------------------------------------------------------------ 9: timeouts are not retried within a run


@pytest.mark.parametrize("wire", WIRES)
def test_a_timed_out_generation_is_not_retried_within_the_run_and_is_counted_as_billed(
    wire, fake_server, settings_for, store, fake_key
):
    server = fake_server(wire)
    server.script(fp.slow(1.0))
    settings = settings_for(wire, server.base_url, timeout_s=0.25, max_retries=3)
    results, stats = run_requests(settings, [ChatRequest.from_prompt("x")], store)
    assert results[0].error_kind == "timeout"
    assert server.count == 1  # the SDK's own retries would have sent it four times
    assert stats.http_attempts == 1 and stats.billed_attempts == 1
    # The next run retries it.
    again, stats = run_requests(settings, [ChatRequest.from_prompt("x")], store)
    assert again[0].ok and stats.calls_made == 1 and stats.billed_attempts == 1
    row = next(store.rows())
    assert row["calls"] == 2 and row["billed_attempts"] == 2 and row["attempts"] == 2


@pytest.mark.parametrize("wire", ["openai", "gemini"])
def test_retry_timeouts_is_an_explicit_per_model_choice(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    server.script(fp.slow(1.0))
    settings = settings_for(wire, server.base_url, timeout_s=0.25, max_retries=2, retry_timeouts=True)
    results, stats = run_requests(settings, [ChatRequest.from_prompt("x")], store)
    assert results[0].ok and server.count == 2
    assert (
        stats.http_attempts == 2 and stats.billed_attempts == 2 and stats.as_dict()["billed_attempts_per_answer"] == 2.0
    )


def test_retry_timeouts_must_be_a_boolean():
    from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models
    from resumebias_dagster.core.providers import ProviderSettings

    entry = {"name": "m", "kind": "provider", "provider": "openai", "model": "x", "retry_timeouts": True}
    assert ProviderSettings.from_spec(parse_models({"models": [entry]}, "models.yaml")[0]).retry_timeouts
    assert not ProviderSettings.from_spec(
        parse_models({"models": [{**entry, "retry_timeouts": False}]}, "m")[0]
    ).retry_timeouts

    from resumebias_dagster.core.providers import ProviderConfigError

    with pytest.raises(ProviderConfigError, match="model 'm': retry_timeouts must be true or false"):
        ProviderSettings.from_spec(parse_models({"models": [{**entry, "retry_timeouts": "yes"}]}, "models.yaml")[0])
    with pytest.raises(ModelConfigError, match="unknown setting"):
        parse_models({"models": [{**entry, "retry_timeout": True}]}, "models.yaml")


# ------------------------------------------------------------------ 10: empty answers are retried, up to a limit


@pytest.mark.parametrize("wire", WIRES)
def test_an_empty_answer_is_called_again_up_to_a_limit(wire, fake_server, settings_for, store, fake_key):
    from resumebias_dagster.core.providers.types import EMPTY_CALL_LIMIT

    server = fake_server(wire)
    server.script(*[fp.empty()] * (EMPTY_CALL_LIMIT + 1))
    settings = settings_for(wire, server.base_url)
    request = [ChatRequest.from_prompt("x")]
    for call in range(1, EMPTY_CALL_LIMIT + 2):
        results, stats = run_requests(settings, request, store)
        assert results[0].error_kind == "empty"
        assert server.count == min(call, EMPTY_CALL_LIMIT)
    row = next(store.rows())
    assert row["done"] == 1 and row["calls"] == EMPTY_CALL_LIMIT


def test_a_flaky_empty_answer_is_replaced_by_the_next_runs_answer(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    server.script(fp.empty())
    settings = settings_for("openai", server.base_url)
    first, _ = run_requests(settings, [ChatRequest.from_prompt("x")], store)
    second, stats = run_requests(settings, [ChatRequest.from_prompt("x")], store)
    assert first[0].error_kind == "empty" and second[0].ok and second[0].text == "mid"
    assert stats.calls_made == 1 and next(store.rows())["done"] == 1


# ------------------------------------------------------------------ 11: in-flight keys are claimed across processes

CHILD = """
import json, sys
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.providers import ChatRequest, ProviderSettings, ResponseStore, run_requests
entry, path, n = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "child")[0])
with ResponseStore(path) as store:
    results, stats = run_requests(settings, [ChatRequest.from_prompt(f"résumé {i}") for i in range(n)], store)
assert all(r.ok for r in results), [r.error_kind for r in results if not r.ok]
print(json.dumps(stats.as_dict()))
"""


def test_two_processes_requesting_the_same_keys_pay_once(fake_server, model_entry, store_target, fake_key):
    server = fake_server("openai", latency_s=0.05)
    path = store_target
    n = 60
    entry = json.dumps(model_entry("openai", server.base_url, name="same", max_concurrency=8))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, entry, str(path), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=120) for child in children]
    assert [c.returncode for c in children] == [0, 0], [err[-3000:] for _, err in outputs]
    stats = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert server.count == n
    assert sum(s["calls_made"] for s in stats) == n
    assert all(s["calls_made"] + s["served_from_store"] == n for s in stats)
    with ResponseStore(path) as store:
        assert store.count() == n and store.count(done=True) == n
        assert store.claims() == []


def test_a_claim_of_a_dead_process_on_this_machine_is_taken_over_at_once(store):
    from resumebias_dagster.core.providers.store import ClaimOwner

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    ghost = ClaimOwner.this_process()
    ghost = ClaimOwner(ghost.host, dead.pid, "ghost")
    assert store.claim("k", ghost, lease_s=3600) == "claimed"
    me = ClaimOwner.this_process()
    assert store.claim("k", me, lease_s=3600) == "claimed"
    assert [c["owner"] for c in store.claims()] == [me.token]


def test_a_live_claim_makes_the_other_process_wait_for_its_answer(
    fake_server, settings_for, store, store_target, fake_key
):
    from resumebias_dagster.core.providers.store import ClaimOwner

    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)
    request = ChatRequest.from_prompt("x")
    from resumebias_dagster.core.providers.fanout import normalise

    key = request_key(settings, normalise(settings, request))
    holder = ClaimOwner(ClaimOwner.this_process().host, ClaimOwner.this_process().pid, "other-run")
    assert store.claim(key, holder, lease_s=3600) == "claimed"

    def answer_later() -> None:
        time.sleep(0.5)
        with ResponseStore(store_target) as other:
            from resumebias_dagster.core.providers.types import ChatResult

            other.put(settings, normalise(settings, request), ChatResult(key=key, text="senior"), owner=holder)

    import threading

    thread = threading.Thread(target=answer_later)
    thread.start()
    results, stats = run_requests(settings, [request], store)
    thread.join()
    assert results[0].text == "senior" and server.count == 0
    assert stats.calls_made == 0 and stats.served_from_store == 1 and stats.waited_for_other_runs == 1


# ------------------------------------------------------------------ 5: the store refuses a file that is not its own


def test_the_store_refuses_another_programs_sqlite_file(tmp_path):
    from resumebias_dagster.core.providers.store import StoreError

    other = tmp_path / "places.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        db.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    before = other.read_bytes()
    with pytest.raises(StoreError, match=r"places\.sqlite.*not a response store.*moz_places"):
        ResponseStore(other)
    assert other.read_bytes() == before
    with sqlite3.connect(other) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["moz_places"]


def test_the_store_refuses_a_file_that_is_not_sqlite(tmp_path):
    from resumebias_dagster.core.providers.store import StoreError

    notes = tmp_path / "notes.txt"
    notes.write_text("OPENAI_API_KEY=sk-do-not-echo-me-123456\n" * 20)
    with pytest.raises(StoreError, match=r"notes\.txt.*not a response store") as raised:
        ResponseStore(notes)
    assert "sk-do-not-echo" not in str(raised.value)
    assert notes.read_text().startswith("OPENAI_API_KEY")


def test_the_store_opens_its_own_files_and_an_empty_file(tmp_path):
    path = tmp_path / "responses.sqlite"
    with ResponseStore(path):
        pass
    with ResponseStore(path) as store:
        assert store.count() == 0
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with ResponseStore(empty) as store:
        assert store.count() == 0


def test_billed_attempts_are_in_the_asset_metadata(fake_server, model_entry, data_dir, fake_key):
    import yaml

    server = fake_server("openai")
    server.script(fp.slow(1.0))
    path = data_dir / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [model_entry("openai", server.base_url, name="m", timeout_s=0.25)]}))

    @dg.asset
    def answers(context, providers: ProvidersResource) -> None:
        _, stats = providers.run("m", [ChatRequest.from_prompt(f"r{i}") for i in range(3)])
        context.add_output_metadata(stats_metadata(stats))

    result = dg.materialize([answers], resources={"providers": ProvidersResource(models_file=str(path))})
    metadata = result.asset_materializations_for_node("answers")[0].metadata
    assert metadata["provider_http_attempts"].value == 3
    assert metadata["provider_billed_attempts"].value == 3  # two answers and one abandoned generation
    assert metadata["provider_billed_attempts_per_answer"].value == 1.5
    assert metadata["provider_errors"].value == {"timeout": 1}


def test_a_store_locked_while_another_process_creates_it_is_opened_not_refused(tmp_path, monkeypatch):
    # Two processes opening a new store at once: SQLite answers "database is locked" at once
    # (not after the busy timeout) when both want to switch the journal mode; seen in CI as
    # "not a response store (not an SQLite database: database is locked)".
    real_open, calls = SQLiteStore._open, []

    def locked_once(self, durable):
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database is locked")
        return real_open(self, durable)

    monkeypatch.setattr(SQLiteStore, "_open", locked_once)
    with ResponseStore(tmp_path / "responses.sqlite", busy_timeout_s=5) as store:
        assert store.count() == 0
    assert len(calls) == 2


def test_a_store_that_stays_locked_names_the_lock_not_a_foreign_file(tmp_path, monkeypatch):
    def always_locked(self, durable):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(SQLiteStore, "_open", always_locked)
    with pytest.raises(StoreError, match=r"responses.sqlite is locked by another process for longer than 0.3 s"):
        ResponseStore(tmp_path / "responses.sqlite", busy_timeout_s=0.3)


def test_six_processes_opening_a_new_store_at_once_all_open_it(tmp_path):
    code = (
        "import sys\nfrom resumebias_dagster.core.providers import ResponseStore\nResponseStore(sys.argv[1]).close()\n"
    )
    for attempt in range(3):
        path = tmp_path / f"s{attempt}.sqlite"
        children = [
            subprocess.Popen([sys.executable, "-c", code, str(path)], stderr=subprocess.PIPE, text=True)
            for _ in range(6)
        ]
        errors = [child.communicate(timeout=120)[1] for child in children]
        assert [c.returncode for c in children] == [0] * 6, errors
