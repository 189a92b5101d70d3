"""``resumebias batches``: the provider batches of a response store, with their state."""

import json

from resumebias_dagster.cli import main
from resumebias_dagster.core.providers import ChatRequest
from resumebias_dagster.core.providers.store import ClaimOwner, ResponseStore


def test_batches_lists_each_batch_with_its_state(tmp_path, settings_for, capsys):
    path = tmp_path / "r.sqlite"
    settings = settings_for("openai", "http://127.0.0.1:9/v1")
    owner = ClaimOwner.this_process()
    with ResponseStore(path) as store:
        store.claim("a" * 64, owner, 60)
        store.record_batch(settings, "rb-x", [("a" * 64, ChatRequest.from_prompt("hi"))], owner)
        store.batch_submitted("rb-x", "batch_123")
        store.set_batch_state("rb-x", "in_progress", provider_state="in_progress", succeeded=0, errored=0)
    assert main(["batches", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 batch(es)" in out and "batch_123  in_progress (in_progress)  0 answered, 0 failed of 1" in out
    assert main(["batches", "--store", str(path), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["batch_id"], row["model"], row["requests"]) == ("batch_123", settings.name, 1)


def test_batches_of_a_missing_store_is_an_input_error(tmp_path, capsys):
    assert main(["batches", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "no response store at" in capsys.readouterr().err
