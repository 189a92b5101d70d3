"""The store's memory of provider batches (store/batches.py), on SQLite and PostgreSQL: recorded
with their requests, their keys claimed by the batch until it is closed."""

import sqlite3

import pytest

from resumebias_dagster.core.providers import ChatRequest
from resumebias_dagster.core.providers.batch_api import COLLECTED, IN_PROGRESS, NOT_SUBMITTED, SUBMITTING
from resumebias_dagster.core.providers.store import BUSY, CLAIMED, ClaimOwner, ResponseStore
from resumebias_dagster.core.providers.store.base import batch_owner
from resumebias_dagster.core.providers.types import ChatResult


def items(settings_for, n=3):
    settings = settings_for("openai", "http://127.0.0.1:9/v1")
    requests = [ChatRequest.from_prompt(f"résumé {i} \ud800", json_mode=True, task="fit") for i in range(n)]
    return settings, [(f"{i:064x}", r) for i, r in enumerate(requests)]


def test_a_recorded_batch_holds_its_keys_until_it_is_closed(store_target, settings_for):
    settings, batch = items(settings_for)
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        for key, _ in batch:
            assert store.claim(key, run, 60) == CLAIMED
        store.record_batch(settings, "rb-1", batch, run)
        assert [c["owner"] for c in store.claims()] == ["batch:rb-1"] * 3
        # Another run, even on this machine after the recording process died, finds them busy.
        other = ClaimOwner(run.host, 999_999_999, "other")
        assert all(store.claim(key, other, 60) == BUSY for key, _ in batch)
        [record] = store.open_batches([batch[0][0]])
        assert (record["state"], record["batch_id"], record["requests"]) == (SUBMITTING, None, 3)
        store.batch_submitted("rb-1", "batch_abc")
        store.set_batch_state("rb-1", IN_PROGRESS, provider_state="in_progress", succeeded=1, errored=0)
        [record] = store.open_batches(model=settings.name)
        assert (record["batch_id"], record["provider_state"], record["succeeded"]) == ("batch_abc", "in_progress", 1)
        assert store.open_batches(["not-a-key"]) == [] and store.open_batches(model="other") == []
        stored = store.batch_requests("rb-1")
        assert [(k, task) for k, task, _ in stored] == [(k, "fit") for k, _ in batch]
        assert [ChatRequest.from_json(data, task) for _, task, data in stored] == [r for _, r in batch]
        # An answer stored by the batch releases its key; closing releases the rest.
        store.put(settings, batch[0][1], ChatResult(key=batch[0][0], text="7"), owner=batch_owner("rb-1"))
        assert len(store.claims()) == 2
        store.close_batch("rb-1")
        assert store.claims() == [] and store.open_batches() == []
        assert [(b["submission_id"], b["state"]) for b in store.batches()] == [("rb-1", COLLECTED)]
        assert store.claim(batch[1][0], other, 60) == CLAIMED


def test_a_batch_never_submitted_is_closed_with_its_reason(store_target, settings_for):
    settings, batch = items(settings_for, 2)
    run = ClaimOwner.this_process()
    with ResponseStore(store_target) as store:
        for key, _ in batch:
            store.claim(key, run, 60)
        store.record_batch(settings, "rb-2", batch, run)
        store.close_batch("rb-2", NOT_SUBMITTED, message="no batch API")
        [row] = store.batches(settings.name)
        assert (row["state"], row["message"]) == (NOT_SUBMITTED, "no batch API")
        assert store.claims() == []


def test_a_store_of_version_5_gains_the_batch_tables_when_opened_for_writing(tmp_path, settings_for):
    path = tmp_path / "old.sqlite"
    ResponseStore(path).close()
    conn = sqlite3.connect(path)
    conn.executescript("DROP TABLE batch_items; DROP TABLE batches; PRAGMA user_version = 5;")
    conn.close()
    with ResponseStore(path, read_only=True) as store:
        with pytest.raises(Exception, match="batches"):
            store.batches()
    with ResponseStore(path) as store:
        assert store.batches() == []
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 6
    conn.close()
