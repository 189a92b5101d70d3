"""The store's memory of provider batches (store/batches.py), on SQLite and PostgreSQL: recorded
with their requests, their keys claimed by the batch until it is closed, and the stores of the
version before batch mode migrated with their rows."""

import json
import sqlite3
import subprocess
import sys
import time

import pytest

from resumebias_dagster.core.providers import ChatRequest
from resumebias_dagster.core.providers.batch_api import (
    COLLECTED,
    ENDED,
    EXPIRED,
    IN_PROGRESS,
    NOT_SUBMITTED,
    SUBMITTING,
)
from resumebias_dagster.core.providers.store import BUSY, CLAIMED, ClaimOwner, ResponseStore
from resumebias_dagster.core.providers.store import postgres as pg
from resumebias_dagster.core.providers.store import sqlite as lite
from resumebias_dagster.core.providers.store.base import BATCH_LEASE_S, batch_owner
from resumebias_dagster.core.providers.store.operation import json_text
from resumebias_dagster.core.providers.store.schema import CACHE_COLUMNS, add_columns
from resumebias_dagster.core.providers.types import ChatResult


def items(settings, prefix="", n=3, task="fit"):
    requests = [ChatRequest.from_prompt(f"résumé {prefix}{i} \ud800", json_mode=True, task=task) for i in range(n)]
    return [(f"{prefix}{i:06d}", r) for i, r in enumerate(requests)]


def recorded(store, settings, submission_id, batch, run):
    """``batch`` claimed by ``run`` and recorded as ``submission_id`` (as batch.py does)."""
    for key, _ in batch:
        assert store.claim(key, run, 60) == CLAIMED
    store.record_batch(settings, submission_id, batch, run)


def dead_pid() -> int:
    """The id of a process of this machine that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def settings(settings_for):
    return settings_for("openai", "http://127.0.0.1:9/v1")


def test_a_recorded_batch_holds_its_keys_until_it_is_closed(store_target, settings):
    batch = items(settings)
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-1", batch, run)
        assert [c["owner"] for c in store.claims()] == ["batch:rb-1"] * 3
        assert {(c["host"], c["pid"]) for c in store.claims()} == {("batch", 0)}
        [record] = store.open_batches([batch[0][0]])
        assert (record["state"], record["batch_id"], record["requests"]) == (SUBMITTING, None, 3)
        assert (record["model"], record["alias"], record["succeeded"], record["message"]) == (
            "fake-openai",
            "openai/gpt-5",
            None,
            None,
        )
        store.batch_submitted("rb-1", "batch_abc")
        assert store.open_batches()[0]["state"] == IN_PROGRESS
        store.set_batch_state("rb-1", ENDED, provider_state="ended", succeeded=1, errored=2)
        [record] = store.open_batches(model=settings.name)
        assert (record["batch_id"], record["state"], record["provider_state"]) == ("batch_abc", ENDED, "ended")
        assert (record["succeeded"], record["errored"]) == (1, 2)
        assert store.open_batches(["not-a-key"]) == [] and store.open_batches(model="other") == []
        # An answer stored by the batch releases its key; closing releases the rest.
        store.put(settings, batch[0][1], ChatResult(key=batch[0][0], text="7"), owner=batch_owner("rb-1"))
        assert [c["key"] for c in store.claims()] == [batch[1][0], batch[2][0]]
        store.close_batch("rb-1")
        assert store.claims() == [] and store.open_batches() == []
        assert [(b["submission_id"], b["state"]) for b in store.batches()] == [("rb-1", COLLECTED)]
        other = ClaimOwner(run.host, run.pid, "other")
        assert [store.claim(key, other, 60) for key, _ in batch] == ["done", CLAIMED, CLAIMED]


def test_a_batch_claim_is_never_taken_over_as_a_dead_process_claim(store_target, settings):
    batch = items(settings)
    # The recording run has died since, on this machine.
    gone = ClaimOwner(ClaimOwner.this_process().host, dead_pid(), "gone")
    other = ClaimOwner(gone.host, 424242, "other")
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-1", batch, gone)
        assert store.claim("not-batched", gone, 60) == CLAIMED
        before = time.time()
        # The dead run's own claim is taken over at once (the rule this test relies on)...
        assert store.claim("not-batched", other, 60) == CLAIMED
        # ... its batch's claims are not, by a run of this machine nor of one named "batch".
        assert [store.claim(key, other, 60) for key, _ in batch] == [BUSY] * 3
        assert [store.claim(key, ClaimOwner("batch", gone.pid, "x"), 60) for key, _ in batch] == [BUSY] * 3
        held = {c["key"]: c for c in store.claims()}
        assert [held[key]["owner"] for key, _ in batch] == ["batch:rb-1"] * 3
        assert held["not-batched"]["owner"] == "other"
        leases = [held[key]["expires_at"] - before for key, _ in batch]
        assert all(BATCH_LEASE_S - 60 < lease < BATCH_LEASE_S + 60 for lease in leases), leases


def test_a_batch_is_recorded_in_one_transaction(store_target, settings):
    batch = items(settings)
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        for key, _ in batch:
            store.claim(key, run, 60)
        # A key twice: its second item breaks the batch's key; nothing of the batch is kept.
        with pytest.raises(Exception, match="(?i)unique|duplicate"):
            store.record_batch(settings, "rb-1", [*batch, batch[0]], run)
        assert store.batches() == [] and store.batch_requests("rb-1") == []
        assert [c["owner"] for c in store.claims()] == [run.token] * 3
        # Only the recording run's claims pass to the batch.
        store.release(run, [batch[2][0]])
        assert store.claim(batch[2][0], ClaimOwner("elsewhere", 1, "another"), 60) == CLAIMED
        store.record_batch(settings, "rb-2", batch, run)
        assert [c["owner"] for c in store.claims()] == ["batch:rb-2", "batch:rb-2", "another"]
        with pytest.raises(Exception, match="(?i)unique|duplicate"):
            store.record_batch(settings, "rb-2", batch[:1], run)
        assert [(b["submission_id"], b["requests"]) for b in store.batches()] == [("rb-2", 3)]


def test_closing_a_batch_frees_only_its_unstored_keys(store_target, settings):
    first, second = items(settings, "a"), items(settings, "b")
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-a", first, run)
        recorded(store, settings, "rb-b", second, run)
        assert store.claim("live", run, 60) == CLAIMED
        store.set_batch_state("rb-a", EXPIRED, message="window passed")
        store.put(settings, first[1][1], ChatResult(key=first[1][0], text="3"), owner=batch_owner("rb-a"))
        store.close_batch("rb-a")
        assert [(c["key"], c["owner"]) for c in store.claims()] == [
            *((key, "batch:rb-b") for key, _ in second),
            ("live", run.token),
        ]
        assert [store.claim(key, ClaimOwner("elsewhere", 1, "next"), 60) for key, _ in first] == [
            CLAIMED,
            "done",
            CLAIMED,
        ]
        # The message of the last poll is kept when closing names none.
        by_id = {b["submission_id"]: b for b in store.batches()}
        assert (by_id["rb-a"]["state"], by_id["rb-a"]["message"]) == (COLLECTED, "window passed")
        store.close_batch("rb-b", NOT_SUBMITTED, message="no batch API")
        assert [(b["state"], b["message"]) for b in store.batches(settings.name)][0] == (NOT_SUBMITTED, "no batch API")
        assert [(c["key"], c["owner"]) for c in store.claims()] == [
            ("a000000", "next"),
            ("a000002", "next"),
            ("live", run.token),
        ]
        assert store.open_batches() == []


def test_open_batches_by_keys_and_model(store_target, settings, settings_for):
    other_settings = settings_for("openai", "http://127.0.0.1:9/v1", name="other")
    run = ClaimOwner.this_process()
    big = items(settings, "big", n=1200)
    small = items(settings, "small", n=2)
    theirs = items(other_settings, "theirs", n=2)
    done = items(settings, "done", n=2)
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-done", done, run)
        store.close_batch("rb-done")
        recorded(store, settings, "rb-big", big, run)
        recorded(store, other_settings, "rb-theirs", theirs, run)
        recorded(store, settings, "rb-small", small, run)

        def ids(keys=None, model=None):
            return [b["submission_id"] for b in store.open_batches(keys, model)]

        assert ids() == ["rb-big", "rb-theirs", "rb-small"]
        assert ids(model="fake-openai") == ["rb-big", "rb-small"] and ids(model="other") == ["rb-theirs"]
        # A few keys asked of a big batch (probed by key), and many (its keys read whole),
        # across chunks of 500; a key in a closed batch holds nothing.
        assert ids([big[1100][0]]) == ["rb-big"]
        assert ids([big[1100][0], small[1][0], done[0][0]]) == ["rb-big", "rb-small"]
        assert ids([key for key, _ in big[::-1]] + [theirs[0][0]]) == ["rb-big", "rb-theirs"]
        assert ids([key for key, _ in big] + [theirs[0][0]], model="fake-openai") == ["rb-big"]
        assert ids(iter([small[0][0], small[0][0]])) == ["rb-small"]
        assert ids([done[0][0], "absent"]) == [] and ids([]) == []
        assert [b["submission_id"] for b in store.batches()] == ["rb-small", "rb-theirs", "rb-big", "rb-done"]
        assert [b["submission_id"] for b in store.batches("fake-openai")] == ["rb-small", "rb-big", "rb-done"]


def test_open_batches_of_30000_keys_is_fast(store_target, settings):
    run = ClaimOwner.this_process()
    keys = [f"{i:064x}" for i in range(30_000)]
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-few", items(settings, "few", n=2), run)
        request = ChatRequest.from_prompt("p")
        store.record_batch(settings, "rb-many", [(key, request) for key in keys[::2]], run)
        started = time.perf_counter()
        assert [b["submission_id"] for b in store.open_batches(keys)] == ["rb-many"]
        assert [b["submission_id"] for b in store.open_batches(keys[-1:] + keys[-2:])] == ["rb-many"]
        # Probed by key (15,000 items, 601 keys asked): found in the second chunk of keys.
        assert [b["submission_id"] for b in store.open_batches(keys[1::2][:600] + keys[:1])] == ["rb-many"]
        assert store.open_batches(keys[1::2][:600]) == []
        elapsed = time.perf_counter() - started
        # About 0.1 s on either backend: a limit far above, yet below a query per key.
        assert elapsed < 3, elapsed


def test_a_stored_request_reads_back_as_the_request(store_target, settings):
    request = ChatRequest(
        messages=(("user", "a \ud800 lone surrogate"), ("assistant", "{}"), ("user", "again\x00")),
        system="sys é",
        temperature=0.7,
        max_tokens=300,
        json_mode=True,
        logprobs=5,
        sample_index=2,
        tag="audit-judge",
        task="judge",
    )
    plain = ChatRequest.from_prompt("plain")
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-1", [("k2", request), ("k1", plain)], run)
        stored = store.batch_requests("rb-1")
        assert [(key, task) for key, task, _ in stored] == [("k1", "seniority"), ("k2", "judge")]
        assert stored[1][2] == request.as_json()
        rebuilt = ChatRequest.from_json(stored[1][2], stored[1][1])
        assert rebuilt == request and rebuilt.task == "judge"
        assert rebuilt.messages[0] == ("user", "a \ud800 lone surrogate") and isinstance(rebuilt.messages, tuple)
        assert ChatRequest.from_json(stored[0][2]) == plain and ChatRequest.from_json(stored[0][2]).task == ""
        assert store.batch_requests("absent") == []


def test_from_json_is_the_inverse_of_as_json():
    request = ChatRequest(messages=(("user", "x \udfff y"),), temperature=0.0, tag="neutral/3", task="generation")
    data = json.loads(json_text(request.as_json(), sort_keys=True))
    rebuilt = ChatRequest.from_json(data, "generation")
    assert rebuilt == request and rebuilt.task == "generation"
    assert rebuilt.messages == (("user", "x \udfff y"),) and rebuilt.temperature == 0.0
    assert rebuilt.as_json() == request.as_json()


def test_a_provider_message_nothing_can_store_is_stored_cleaned(store_target, settings):
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        recorded(store, settings, "rb-1", items(settings), run)
        store.set_batch_state("rb-1", ENDED, provider_state="done\x00", message="bad \ud800 byte\x00")
        [row] = store.batches()
        assert (row["provider_state"], row["message"]) == ("done\ufffd", "bad ? byte\ufffd")
        store.close_batch("rb-1", message="é \udc80")
        assert store.batches()[0]["message"] == "é ?"


# ------------------------------------------------------------------ stores of the version before batch mode


def _v5_sqlite_store(path, settings) -> None:
    """A store as version 5 created it, with an answer, a claim and a snapshot of ``settings``."""
    conn = sqlite3.connect(path)
    conn.executescript(
        lite._TABLES
        + add_columns("responses", CACHE_COLUMNS, lite.TYPES)
        + f"PRAGMA application_id = {lite.APPLICATION_ID}; PRAGMA user_version = 5;"
        "INSERT INTO responses (key, model, provider, endpoint, alias, request_json, text, done, created_at, "
        "updated_at, cached_input_tokens) VALUES ('old', 'm', 'openai', 'e', 'x', '{}', 'senior', 1, 't', 't', 7);"
        "INSERT INTO claims VALUES ('busy', 'tok', 'elsewhere', 1, 1e12);"
    )
    with conn:
        conn.execute(
            "INSERT INTO snapshots VALUES (?, ?, ?, 'x-2026', 0, 't')",
            (settings.provider, settings.endpoint, settings.model),
        )
    conn.close()


def test_a_sqlite_store_of_version_5_gains_the_batch_tables_and_keeps_its_rows(tmp_path, settings):
    path = tmp_path / "old.sqlite"
    _v5_sqlite_store(path, settings)
    with ResponseStore(path, read_only=True) as store:
        assert store.batches() == [] and store.open_batches(["old"]) == [] and store.batch_requests("x") == []
        assert store.get_many(["old"])["old"].text == "senior"
    with ResponseStore(path) as store:
        assert store.get_many(["old"])["old"].cached_input_tokens == 7
        assert [(c["key"], c["owner"]) for c in store.claims()] == [("busy", "tok")]
        assert store.snapshot(settings) == ("x-2026", 0)
        assert store.batches() == []
        recorded(store, settings, "rb-1", items(settings), ClaimOwner.this_process())
        assert [b["submission_id"] for b in store.open_batches(["000001"])] == ["rb-1"]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 6
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")] == [
        "responses_model",
        "batch_items_submission",
    ]
    conn.close()


def test_a_postgres_store_of_migration_4_gains_the_batch_tables_and_keeps_its_rows(
    postgres_server, postgres_url, settings
):
    db = postgres_url.rsplit("/", 1)[1].split("?")[0]
    postgres_server.admin(
        pg._CREATE_VERSION_TABLE
        + "\n".join(script for number, _, script in pg.MIGRATIONS if number <= 4)
        + "INSERT INTO resumebias_store_version (version, description) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd');"
        "INSERT INTO responses (key, model, provider, endpoint, alias, request_json, text, done, created_at, "
        "updated_at, cached_input_tokens) VALUES ('old', 'm', 'openai', 'e', 'x', '{}', 'senior', 1, 't', 't', 7);"
        "INSERT INTO claims VALUES ('busy', 'tok', 'elsewhere', 1, 1e12);",
        db,
    )
    with ResponseStore(postgres_url, read_only=True) as store:
        assert store.batches() == [] and store.open_batches(["old"]) == [] and store.batch_requests("x") == []
    with ResponseStore(postgres_url) as store:
        assert store.get_many(["old"])["old"].text == "senior"
        assert store.get_many(["old"])["old"].cached_input_tokens == 7
        assert [(c["key"], c["owner"]) for c in store.claims()] == [("busy", "tok")]
        recorded(store, settings, "rb-1", items(settings), ClaimOwner.this_process())
        assert [b["submission_id"] for b in store.open_batches(["000001"])] == ["rb-1"]
    assert [r[0] for r in postgres_server.admin("SELECT version FROM resumebias_store_version ORDER BY 1", db)] == [
        1,
        2,
        3,
        4,
        5,
    ]
