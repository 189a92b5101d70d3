"""The PostgreSQL response store, on a private server started by the tests: claims across
processes and machines, schema migrations, and the URL's password kept out of every message.

The rules of a row run on both backends in test_store.py and tests/security/test_response_store.py;
here are what only a shared store has, and the claim race run on both backends.
"""

import json
import logging
import subprocess
import sys
import time
import traceback
import uuid
from urllib.parse import quote

import dagster as dg
import pytest
import yaml

from resumebias_dagster.core.providers import ChatRequest, ChatResult, ResponseStore, run_requests
from resumebias_dagster.core.providers.store import STORE_URL_ENV, ClaimOwner, StoreError, open_store
from resumebias_dagster.resources.providers import ProvidersResource

PASSWORD = "pw-Tiger:42@zz/%-do-not-leak"


@pytest.fixture
def login(postgres_server):
    """A role with a password and a database of its own: (url, wrong-password url)."""
    role = f"r_{uuid.uuid4().hex[:8]}"
    postgres_server.create_role(role, PASSWORD)
    db = postgres_server.create_database(owner=role)
    return postgres_server.url(db, role, PASSWORD), postgres_server.url(db, role, PASSWORD[:-3] + "xyz")


def versions(server, url) -> list[int]:
    return [r[0] for r in server.admin("SELECT version FROM resumebias_store_version ORDER BY version", db_of(url))]


def db_of(url: str) -> str:
    return url.rsplit("/", 1)[1].split("?")[0]


def relations(server, url, schema="public") -> list[str]:
    return [
        r[0]
        for r in server.admin(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE n.nspname = '{schema}' AND c.relkind IN ('r', 'S', 'v') ORDER BY 1",
            db_of(url),
        )
    ]


# ------------------------------------------------------------------ claims across processes and machines

CLAIMER = r"""
import json, random, sys, time
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.providers import ChatRequest, ChatResult, ProviderSettings, ResponseStore
from resumebias_dagster.core.providers.store import BUSY, CLAIMED, ClaimOwner
from pathlib import Path
target, n, seed, barrier, procs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])
entry = {"name": "m", "kind": "provider", "provider": "openai", "model": "x", "base_url": "http://127.0.0.1:9/v1",
         "api_key_env": ""}
settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "child")[0])
keys = [f"key-{i}" for i in range(n)]
random.Random(seed % 2).shuffle(keys)
owner, won = ClaimOwner.this_process(), []
with ResponseStore(target) as store:
    # Every process ready before any claims: they race.
    (barrier / f"ready-{seed}").touch()
    while len(list(barrier.iterdir())) < procs:
        time.sleep(0.005)
    while keys:
        busy = []
        for key in keys:
            state = store.claim(key, owner, 60)
            if state == CLAIMED:
                won.append(key)
                store.put(settings, ChatRequest.from_prompt(key), ChatResult(key=key, text=owner.token), owner=owner)
            elif state == BUSY:
                busy.append(key)
        keys = busy
print(json.dumps(won))
"""


def test_racing_processes_claim_each_key_exactly_once(store_target, tmp_path):
    """Six processes claim the same 600 keys at once, in two orders: every key is claimed (and
    answered) by exactly one of them."""
    n, procs = 600, 6
    ResponseStore(store_target).close()  # created before the race
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIMER, store_target, str(n), str(seed), str(barrier), str(procs)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(procs)
    ]
    outputs = [c.communicate(timeout=180) for c in children]
    assert [c.returncode for c in children] == [0] * procs, [err[-2000:] for _, err in outputs]
    won = [json.loads(out) for out, _ in outputs]
    assert sum(len(w) for w in won) == n and len(set().union(*map(set, won))) == n
    assert sum(1 for w in won if w) > 1  # they did race
    with ResponseStore(store_target) as store:
        rows = list(store.rows())
        assert len(rows) == n and all(r["calls"] == 1 and r["done"] == 1 for r in rows)
        assert store.claims() == []


def test_a_claim_of_another_machine_is_taken_over_when_its_lease_ends(any_store):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    # A process that no longer exists here, but of another machine: it may be alive there.
    elsewhere = ClaimOwner("another-machine", dead.pid, "another-machine:run")
    me = ClaimOwner.this_process()
    assert any_store.claim("k", elsewhere, lease_s=1.0) == "claimed"
    assert any_store.claim("k", me, lease_s=60) == "busy"
    time.sleep(1.2)
    assert any_store.claim("k", me, lease_s=60) == "claimed"
    assert [c["owner"] for c in any_store.claims()] == [me.token]
    # The old holder's late answer is still kept; it releases nothing of ours.
    any_store.put(*_put_args("k"), owner=elsewhere)
    assert [c["owner"] for c in any_store.claims()] == [me.token]
    assert any_store.claim("k", me, lease_s=60) == "done"


def _put_args(key: str, text: str = "mid"):
    from resumebias_dagster.core.models.model_config import parse_models
    from resumebias_dagster.core.providers import ProviderSettings

    entry = {
        "name": "m",
        "kind": "provider",
        "provider": "openai",
        "model": "x",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "",
    }
    settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "t")[0])
    return settings, ChatRequest.from_prompt(key), ChatResult(key=key, text=text)


def test_an_answer_is_stored_exactly_as_it_came(postgres_url):
    odd = "a\x00b \ud800 c \U0001f600 é"
    with ResponseStore(postgres_url) as store:
        store.put(*_put_args("k", odd))
        assert store.get_many(["k"])["k"].text == odd
        assert next(store.rows())["text"] == odd


def test_a_lost_connection_is_opened_again(postgres_server, postgres_url):
    with ResponseStore(postgres_url) as store:
        store.put(*_put_args("a"))
        pid = store._query("SELECT pg_backend_pid()")[0][0]
        postgres_server.admin(f"SELECT pg_terminate_backend({pid})")
        assert store.count() == 1
        store.put(*_put_args("b"))
        me = ClaimOwner.this_process()
        for _ in range(2):  # cut before a transaction (a claim), then before a single statement (a put)
            postgres_server.admin(f"SELECT pg_terminate_backend({store._query('SELECT pg_backend_pid()')[0][0]})")
            assert store.claim("c", me, 60) == "claimed"
        postgres_server.admin(f"SELECT pg_terminate_backend({store._query('SELECT pg_backend_pid()')[0][0]})")
        store.put(*_put_args("c"), owner=me)
        assert store.count() == 3 and store.claims() == []


# ------------------------------------------------------------------ the schema and its migrations


def test_a_new_database_gets_every_migration_once(postgres_server, postgres_url):
    from resumebias_dagster.core.providers.store.postgres import SCHEMA_VERSION

    with ResponseStore(postgres_url) as store:
        store.put(*_put_args("k"))
    assert versions(postgres_server, postgres_url) == list(range(1, SCHEMA_VERSION + 1))
    with ResponseStore(postgres_url) as store:
        assert store.count() == 1
    assert versions(postgres_server, postgres_url) == list(range(1, SCHEMA_VERSION + 1))
    assert relations(postgres_server, postgres_url) == [
        "batch_items",
        "batches",
        "claims",
        "responses",
        "resumebias_store_version",
        "snapshot_epochs",
        "snapshots",
    ]


OPENER = r"""
import sys, time
from resumebias_dagster.core.providers.store import ResponseStore
target, start_at = sys.argv[1], float(sys.argv[2])
time.sleep(max(0.0, start_at - time.time()))
with ResponseStore(target) as store:
    print(store.count())
"""


def test_processes_opening_a_new_database_at_once_migrate_it_once(postgres_server, postgres_url):
    from resumebias_dagster.core.providers.store.postgres import SCHEMA_VERSION

    start_at = time.time() + 3
    children = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, postgres_url, str(start_at)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outputs = [c.communicate(timeout=120) for c in children]
    assert [c.returncode for c in children] == [0] * 6, [err[-2000:] for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == ["0"] * 6
    assert versions(postgres_server, postgres_url) == list(range(1, SCHEMA_VERSION + 1))


def test_a_store_of_an_older_version_is_migrated_forward(postgres_server, postgres_url):
    from resumebias_dagster.core.providers.store import postgres as pg

    db = db_of(postgres_url)
    postgres_server.admin(
        pg._CREATE_VERSION_TABLE
        + pg.MIGRATIONS[0][2]
        + "INSERT INTO resumebias_store_version (version, description) VALUES (1, 'tables');",
        db,
    )
    postgres_server.admin(
        "INSERT INTO responses (key, model, provider, endpoint, alias, request_json, text, done, "
        "created_at, updated_at) VALUES ('old', 'm', 'openai', 'e', 'x', '{}', 'senior', 1, 't', 't')",
        db,
    )
    with ResponseStore(postgres_url) as store:
        assert store.get_many(["old"])["old"].text == "senior"
    assert versions(postgres_server, postgres_url) == [1, 2, 3, 4, 5]
    indexes = {r[0] for r in postgres_server.admin("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'", db)}
    assert {"responses_model", "responses_alias", "claims_owner"} <= indexes


def test_a_store_of_a_newer_version_is_refused(postgres_server, postgres_url):
    ResponseStore(postgres_url).close()
    postgres_server.admin(
        "INSERT INTO resumebias_store_version (version, description) VALUES (99, 'future')", db_of(postgres_url)
    )
    with pytest.raises(StoreError, match=r"newer version \(99; this code knows up to 5\).*upgrade resumebias_dagster"):
        ResponseStore(postgres_url)
    assert versions(postgres_server, postgres_url) == [1, 2, 3, 4, 5, 99]


def test_a_database_of_another_program_is_refused_untouched(postgres_server, postgres_url):
    db = db_of(postgres_url)
    postgres_server.admin(
        "CREATE TABLE orders (id serial PRIMARY KEY, item text); INSERT INTO orders (item) VALUES ('book')", db
    )
    before = relations(postgres_server, postgres_url)
    with pytest.raises(
        StoreError,
        match=r"is not a response store \(its schema holds orders, orders_id_seq\).*"
        "nothing was written",
    ):
        ResponseStore(postgres_url, setting="providers.store_url")
    assert relations(postgres_server, postgres_url) == before == ["orders", "orders_id_seq"]
    assert postgres_server.admin("SELECT item FROM orders", db) == [("book",)]


def test_a_schema_of_its_own_inside_a_shared_database(postgres_server, postgres_url):
    db = db_of(postgres_url)
    postgres_server.admin("CREATE TABLE runs (id int); CREATE SCHEMA resumebias", db)
    url = postgres_url + "?options=-csearch_path%3Dresumebias"
    with ResponseStore(url) as store:
        store.put(*_put_args("k"))
        assert store.count() == 1
    assert relations(postgres_server, url, "resumebias") == [
        "batch_items",
        "batches",
        "claims",
        "responses",
        "resumebias_store_version",
        "snapshot_epochs",
        "snapshots",
    ]
    assert relations(postgres_server, url) == ["runs"]
    with pytest.raises(StoreError, match="search_path names no schema that exists"):
        ResponseStore(postgres_url + "?options=-csearch_path%3Dmissing")


def test_read_only_opens_an_existing_store_and_writes_nothing(postgres_url):
    import psycopg

    with pytest.raises(StoreError, match="is empty; open it once for writing"):
        ResponseStore(postgres_url, read_only=True)
    with ResponseStore(postgres_url) as store:
        store.put(*_put_args("k"))
    with ResponseStore(postgres_url, read_only=True) as store:
        assert store.count() == 1
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            store.put(*_put_args("other"))


# ------------------------------------------------------------------ selection and bad input


def test_the_url_selects_the_backend_and_importing_the_definitions_imports_no_driver(postgres_url, monkeypatch):
    monkeypatch.setenv(STORE_URL_ENV, postgres_url)
    with ResponseStore() as store, open_store() as same:
        assert store.backend == same.backend == "postgres"
    code = "import sys, resumebias_dagster.definitions; assert 'psycopg' not in sys.modules, 'psycopg imported'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def _full_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def test_bad_urls_fail_clearly_naming_the_setting_and_never_the_password(login, postgres_server, caplog):
    url, wrong = login
    caplog.set_level(logging.DEBUG)
    cases = [
        (wrong, "the server refused the login .*password authentication failed"),
        (url.replace(f":{postgres_server.port}/", ":1/"), "cannot be reached .*Connection refused"),
        ("mysql://u:" + PASSWORD + "@127.0.0.1/db", r"must start with postgresql:// \(got mysql://\)"),
        (url.replace("@", "%zz@"), "not a valid PostgreSQL URL"),
        (url.rsplit("/", 1)[0] + "/nodb", 'database "nodb" does not exist; create the database first'),
    ]
    for target, message in cases:
        with pytest.raises(StoreError, match=f"^providers.store_url: .*{message}") as raised:
            ResponseStore(target, setting="providers.store_url")
        text = _full_text(raised.value)
        for secret in (PASSWORD, quote(PASSWORD, safe=""), PASSWORD[:-3] + "xyz"):
            assert secret not in text, text
    with ResponseStore(url) as store:
        assert PASSWORD not in repr(store) and quote(PASSWORD, safe="") not in store.location
        logging.getLogger("anything").warning("connecting to %s", url)
    assert quote(PASSWORD, safe="") not in caplog.text and "connecting to" in caplog.text


def _models_file(tmp_path, model_entry, base_url):
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [model_entry("openai", base_url, name="m", max_concurrency=2)]}))
    return str(path)


def test_run_config_may_not_carry_the_password(login, fake_server, model_entry, tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    server = fake_server("openai")
    url, _ = login

    @dg.asset
    def answers(providers: ProvidersResource) -> None:
        providers.run("m", [ChatRequest.from_prompt("x")])

    for options, message in (
        ({"store_url": url}, "providers.store_url holds a password"),
        (
            {"store_url": url.replace(f":{PASSWORD}", ""), "store_path": str(tmp_path / "r.sqlite")},
            "store_url and providers.store_path are both set",
        ),
    ):
        resource = ProvidersResource(models_file=_models_file(tmp_path, model_entry, server.base_url), **options)
        with pytest.raises(dg.DagsterResourceFunctionError) as raised:
            dg.materialize([answers], resources={"providers": resource})
        assert message in _full_text(raised.value)
    assert server.count == 0


def test_workers_share_the_store_named_by_the_environment(
    login, fake_server, model_entry, tmp_path, monkeypatch, fake_key, postgres_server
):
    """Two runs (as on two machines: nothing on disk is shared) through $RESUMEBIAS_STORE_URL
    with a password: the second pays nothing; the password is in no event, log or row."""
    url, wrong = login
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    server = fake_server("openai")
    models = _models_file(tmp_path, model_entry, server.base_url)

    @dg.asset
    def answers(context: dg.AssetExecutionContext, providers: ProvidersResource) -> None:
        _, stats = providers.run("m", [ChatRequest.from_prompt(f"r{i}") for i in range(5)])
        context.log.info(f"calls made: {stats.calls_made}")

    logs = []
    for machine in ("a", "b"):
        monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / machine))
        monkeypatch.setenv(STORE_URL_ENV, url)
        (tmp_path / machine / "home").mkdir(parents=True)
        with dg.instance_for_test(temp_dir=str(tmp_path / machine / "home")) as instance:
            result = dg.materialize(
                [answers], resources={"providers": ProvidersResource(models_file=models)}, instance=instance
            )
            assert result.success
            logs += [dg.serialize_value(e) for e in instance.all_logs(result.run_id)]
    assert server.count == 5
    assert any("calls made: 0" in entry for entry in logs)
    assert not list(tmp_path.glob("*/responses.sqlite"))
    rows = postgres_server.admin("SELECT * FROM responses", db_of(url))
    assert len(rows) == 5

    monkeypatch.setenv(STORE_URL_ENV, wrong)
    (tmp_path / "c").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "c")) as instance:
        result = dg.materialize(
            [answers],
            resources={"providers": ProvidersResource(models_file=models)},
            instance=instance,
            raise_on_error=False,
        )
        assert not result.success
        failure = [dg.serialize_value(e) for e in instance.all_logs(result.run_id)]
    assert any("RESUMEBIAS_STORE_URL: the response store at" in e and "refused the login" in e for e in failure)

    for text in logs + failure + [repr(rows)]:
        for secret in (PASSWORD, quote(PASSWORD, safe=""), quote(PASSWORD[:-3] + "xyz", safe="")):
            assert secret not in text


def test_estimate_cost_reads_a_shared_store(
    login, model_entry, fake_server, settings_for, fake_key, tmp_path, monkeypatch, capsys
):
    from resumebias_dagster.cli import main
    from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
    from resumebias_dagster.core.estimate import study_design
    from resumebias_dagster.core.seniority.task import predict_with_provider

    url, wrong = login
    server = fake_server("openai")
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [model_entry("openai", server.base_url, runs_per_cell=1)]}))
    args = ["estimate-cost", "--models-file", str(path), "--n-per-level", "1", "--task", "seniority", "--json"]
    settings = settings_for("openai", server.base_url, runs_per_cell=1)
    with ResponseStore(url) as store:
        predict_with_provider(
            lambda requests: run_requests(settings, requests, store),
            study_design(1).variants.head(5),
            settings,
            load_prompt(SENIORITY_PROMPT),
        )
    monkeypatch.setenv(STORE_URL_ENV, url)
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"][0]["in_store"] == 5 and out["store"] == url.replace(f":{quote(PASSWORD, safe='')}", "")
    assert main([*args, "--store", wrong]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --store: the response store at") and "refused the login" in err
    assert quote(PASSWORD, safe="") not in err and PASSWORD not in err
