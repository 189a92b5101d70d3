"""Prompt caching (issue 29): the fit prompt's shared part comes first, Anthropic's request marks
it with ``cache_control``, and each wire's cached (and written) input tokens are read from the
answer's usage, stored and priced. Against the fake servers (testing/fake_providers/cache.py:
tokens are characters / 4; OpenAI and Gemini cache prefixes by themselves, in blocks of 128
tokens; Anthropic only what is marked)."""

import sqlite3

import pandas as pd
import pytest

from resumebias_dagster.catalog import PACKAGED_DIR
from resumebias_dagster.core.jd_audit.fit_task import fit_prompts, fit_requests
from resumebias_dagster.core.jd_audit.job_descriptions import load_fit_template
from resumebias_dagster.core.providers import ChatRequest, ProviderSettings, ResponseStore, request_key, run_requests
from resumebias_dagster.core.providers.fanout import normalise
from resumebias_dagster.core.providers.store import StoreError
from resumebias_dagster.core.providers.store import postgres as pg
from resumebias_dagster.core.providers.store import sqlite as lite

# 2,048 characters shared (512 fake tokens: four cache blocks), then 400 of a résumé's own:
# each prompt is 612 tokens, one answer ("mid") 1 token.
PREFIX = ("Instructions and the job description. " * 60)[:2048]
PROMPTS = [PREFIX + (f"Resume {who}: " + "x" * 400)[:400] for who in ("A", "B")]


def _request(prompt: str, cached: bool = True) -> ChatRequest:
    return ChatRequest.from_prompt(prompt, cache_prefix_chars=len(PREFIX) if cached else 0)


# The price table of these tests (a catalog folder's prices.yaml; the packaged rates change):
# list prices per 1M tokens and each wire's cache rates.
PRICES = """
as_of: "2025-10-01"
per_tokens: 1000000
providers:
  openai: {batch: 0.5, cached_input: 0.1, cache_write: 1.0}
  anthropic: {batch: 0.5, cached_input: 0.1, cache_write: 1.25}
  google: {batch: 0.5, cached_input: 0.25, cache_write: 1.0}
models:
  gpt-5: {input: 1.25, output: 10.00}
  claude-sonnet-4-5: {input: 3.00, output: 15.00}
  gemini-2.5-pro: {input: 1.25, output: 10.00}
"""
# Dollars by hand:
#   openai/gpt-5: in 1.25, out 10, cached 0.1x -> 0.125 (per 1M)
#   claude-sonnet-4-5: in 3, out 15, cached 0.1x -> 0.3, written 1.25x -> 3.75
#   gemini-2.5-pro: in 1.25, out 10, cached 0.25x -> 0.3125
# (input tokens, cached, written, dollars) of the first and the second prompt.
EXPECTED = {
    "openai": [
        (612, 0, None, (612 * 1.25 + 10) / 1e6),
        (612, 512, None, (100 * 1.25 + 512 * 0.125 + 10) / 1e6),
    ],
    "anthropic": [
        (612, 0, 512, (100 * 3 + 512 * 3.75 + 15) / 1e6),
        (612, 512, 0, (100 * 3 + 512 * 0.3 + 15) / 1e6),
    ],
    "gemini": [
        (612, None, None, (612 * 1.25 + 10) / 1e6),
        (612, 512, None, (100 * 1.25 + 512 * 0.3125 + 10) / 1e6),
    ],
}


@pytest.mark.parametrize("wire", sorted(EXPECTED))
def test_cached_tokens_are_read_stored_and_priced(wire, fake_server, settings_for, store, fake_key, tmp_path):
    server = fake_server(wire, cache_min_tokens=256)
    settings = settings_for(wire, server.base_url)
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "prices.yaml").write_text(PRICES)
    seen = []
    for prompt in PROMPTS:
        [result], stats = run_requests(settings, [_request(prompt)], store, catalog_dir=catalog)
        seen.append((result.input_tokens, result.cached_input_tokens, result.cache_write_tokens, result.cost_usd))
        assert stats.cached_input_tokens == (result.cached_input_tokens or 0)
        assert stats.as_dict()["cached_input_tokens"] == stats.cached_input_tokens
        assert stats.cost_usd == pytest.approx(result.cost_usd)
        stored = store.get_many([result.key])[result.key]
        assert (stored.input_tokens, stored.cached_input_tokens, stored.cache_write_tokens, stored.cost_usd) == (
            result.input_tokens,
            result.cached_input_tokens,
            result.cache_write_tokens,
            result.cost_usd,
        )
    assert [s[:3] for s in seen] == [e[:3] for e in EXPECTED[wire]]
    assert [s[3] for s in seen] == pytest.approx([e[3] for e in EXPECTED[wire]], rel=1e-9)
    # Served from the store the second time: the same tokens and dollars, nothing called.
    again, stats = run_requests(settings, [_request(p) for p in PROMPTS], store, catalog_dir=catalog)
    assert stats.calls_made == 0 and [r.cached_input_tokens for r in again] == [s[1] for s in seen]


def test_anthropic_marks_exactly_the_prefix_and_the_others_send_the_text(fake_server, settings_for, store, fake_key):
    bodies = {}
    for wire in EXPECTED:
        server = fake_server(wire)
        settings = settings_for(wire, server.base_url)
        run_requests(settings, [_request(PROMPTS[0]), _request(PROMPTS[1], cached=False)], store)
        bodies[wire] = [r.body for r in server.requests]
    rest = PROMPTS[0][len(PREFIX) :]
    contents = [m["content"] for b in bodies["anthropic"] for m in b["messages"] if m["role"] == "user"]
    [marked] = [c for c in contents if isinstance(c, list)]
    [plain] = [c for c in contents if isinstance(c, str)]
    assert marked == [
        {"type": "text", "text": PREFIX, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": rest},
    ]
    assert plain == PROMPTS[1]
    # OpenAI and Gemini cache by themselves: the prompt goes as it is.
    assert sorted(m["content"] for b in bodies["openai"] for m in b["messages"]) == PROMPTS
    assert sorted(b["contents"][0]["parts"][0]["text"] for b in bodies["gemini"]) == PROMPTS


def test_anthropic_caches_only_what_is_marked(fake_server, settings_for, store, fake_key, tmp_path):
    server = fake_server("anthropic", cache_min_tokens=256)
    settings = settings_for("anthropic", server.base_url)
    (tmp_path / "prices.yaml").write_text(PRICES)
    results, _ = run_requests(settings, [_request(p, cached=False) for p in PROMPTS], store, catalog_dir=tmp_path)
    assert [(r.input_tokens, r.cached_input_tokens, r.cache_write_tokens) for r in results] == [(612, 0, 0)] * 2
    assert [r.cost_usd for r in results] == pytest.approx([(612 * 3 + 15) / 1e6] * 2)


def test_a_whole_message_prefix_is_one_marked_block(fake_server, settings_for, store, fake_key):
    server = fake_server("anthropic")
    settings = settings_for("anthropic", server.base_url)
    run_requests(settings, [ChatRequest.from_prompt("short", cache_prefix_chars=99)], store)
    [body] = [r.body for r in server.requests]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "short", "cache_control": {"type": "ephemeral"}}]}
    ]


# Computed before prompt caching existed: the key of a request without a prefix stays as it was.
PINNED = {
    "anthropic": ("claude-haiku-4-5", "fa32ec0ddd52090e47800a32d4c595acaa10d30f39f1c975c6434eb101fd7fda"),
    "openai": ("gpt-4.1-mini", "f785e3cbe948f8b83f6c71c865c04bc93bb96186bfa99ac2368bed456e89c10b"),
}


@pytest.mark.parametrize("provider", sorted(PINNED))
def test_keys_are_those_of_before_with_or_without_a_prefix(provider):
    model, digest = PINNED[provider]
    settings = ProviderSettings(name="m", provider=provider, model=model, temperature=0.0, runs_per_cell=1)
    prompt = "Instructions.\nJob description:\nX\nResume:\nY"
    plain = ChatRequest.from_prompt(prompt, temperature=None, max_tokens=64, json_mode=True, tag="fit", task="fit")
    assert "cache_prefix_chars" not in plain.as_json()
    assert request_key(settings, plain) == digest
    # The marker changes what a call is billed, never what the model reads: the same key.
    marked = ChatRequest.from_prompt(
        prompt, temperature=None, max_tokens=64, json_mode=True, tag="fit", task="fit", cache_prefix_chars=31
    )
    assert marked.as_json() == plain.as_json() and request_key(settings, marked) == digest


def test_the_fit_prompt_puts_what_every_variant_shares_first():
    template = load_fit_template()
    variants = pd.DataFrame({"text": ["Alice's résumé.", "Bob's résumé."]})
    prompts = fit_prompts(variants, "# Go developer\n\nWrite Go.", template)
    shared = prompts[0].shared_chars
    assert prompts[0][:shared] == prompts[1][:shared]
    head, tail = prompts[0][:shared], prompts[0][shared:]
    # Instructions and the answer's format, then the job description, then the résumé, then the cue.
    assert head.index("Respond with ONLY a JSON object") < head.index("Job description:\n# Go developer")
    assert head.endswith("Resume:\n") and tail == "Alice's résumé.\n\nJSON:"
    requests = fit_requests(prompts, 2)
    assert [r.cache_prefix_chars for r in requests] == [shared] * 4
    assert all(type(r.prompt) is str for r in requests)


def test_study_003_keeps_its_prompt_and_its_keys():
    """preset:study003 carries the fit template as study 003 sent it; its fit requests mark a
    prefix (the instructions and the job description) and keep the keys they had."""
    old = (PACKAGED_DIR / "presets" / "study003" / "prompts" / "fit_scoring.txt").read_text()
    assert old.startswith(
        "You are screening candidates for the job below. Read the job description and the resume, then rate how "
        "well the candidate fits this job.\n\nJob description:\n{job_description}\n\nResume:\n{resume_text}\n\n"
        "Rate the candidate's fit"
    )
    template = load_fit_template("preset:study003")
    assert template == old.rstrip("\n")
    [prompt] = fit_prompts(pd.DataFrame({"text": ["A résumé."]}), "# Role", template)
    assert prompt[: prompt.shared_chars].endswith("Job description:\n# Role\n\nResume:\n")
    settings = ProviderSettings(
        name="c", provider="anthropic", model="claude-sonnet-4-5", temperature=1.0, runs_per_cell=1
    )
    [request] = fit_requests([prompt], 1)
    before = ChatRequest.from_prompt(str(prompt), json_mode=True, task="fit")
    assert request.cache_prefix_chars > 0
    assert request_key(settings, normalise(settings, request)) == request_key(settings, normalise(settings, before))


# ------------------------------------------------------------------ the store's migration


def _v4_store(path) -> None:
    """A store as version 4 made it (the DDL of test_store_schema.py), with one answer."""
    conn = sqlite3.connect(path)
    for statement in filter(str.strip, lite._TABLES.split(";")):
        conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {lite.APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 4")
    conn.execute(
        "INSERT INTO responses (key, model, provider, endpoint, alias, request_json, text, input_tokens, done, "
        "created_at, updated_at) VALUES ('old', 'm', 'openai', 'e', 'x', '{}', 'senior', 40, 1, 't', 't')"
    )
    conn.commit()
    conn.close()


def _columns(path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[1] for r in conn.execute("PRAGMA table_info(responses)")]


def test_a_sqlite_store_of_version_4_is_read_as_it_is_and_gains_the_columns_when_written(
    tmp_path, fake_server, settings_for, fake_key
):
    path = tmp_path / "responses.sqlite"
    _v4_store(path)
    # Read-only: nothing is written, the missing columns read as NULL.
    with ResponseStore(path, read_only=True) as store:
        old = store.get_many(["old"])["old"]
        assert (old.text, old.input_tokens, old.cached_input_tokens, old.cache_write_tokens) == (
            "senior",
            40,
            None,
            None,
        )
        assert [r["cached_input_tokens"] for r in store.rows()] == [None]
    assert "cached_input_tokens" not in _columns(path)
    # For writing: migrated in place, its rows kept.
    server = fake_server("openai", cache_min_tokens=256)
    settings = settings_for("openai", server.base_url)
    with ResponseStore(path) as store:
        assert store.get_many(["old"])["old"].text == "senior"
        run_requests(settings, [_request(p) for p in PROMPTS], store)
        assert sorted(r["cached_input_tokens"] or 0 for r in store.rows()) == [0, 0, 512]
    assert _columns(path)[-2:] == ["cached_input_tokens", "cache_write_tokens"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 6


def test_a_sqlite_store_older_than_version_4_is_refused_read_only(tmp_path):
    path = tmp_path / "responses.sqlite"
    _v4_store(path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 3")
    with pytest.raises(StoreError, match="older version; open it once for writing to upgrade it"):
        ResponseStore(path, read_only=True)
    ResponseStore(path).close()
    assert _columns(path)[-2:] == ["cached_input_tokens", "cache_write_tokens"]


def test_a_postgres_store_of_version_3_is_read_as_it_is_and_migrated_when_written(postgres_server, postgres_url):
    db = postgres_url.rsplit("/", 1)[1]
    postgres_server.admin(
        pg._CREATE_VERSION_TABLE
        + "".join(script for number, _, script in pg.MIGRATIONS if number <= 3)
        + "INSERT INTO resumebias_store_version (version, description) VALUES (1, 'a'), (2, 'b'), (3, 'c');"
        "INSERT INTO responses (key, model, provider, endpoint, alias, request_json, text, input_tokens, done, "
        "created_at, updated_at) VALUES ('old', 'm', 'openai', 'e', 'x', '{}', 'senior', 40, 1, 't', 't');",
        db,
    )
    with ResponseStore(postgres_url, read_only=True) as store:
        old = store.get_many(["old"])["old"]
        assert (old.text, old.input_tokens, old.cached_input_tokens) == ("senior", 40, None)
    versions = "SELECT version FROM resumebias_store_version ORDER BY 1"
    assert [r[0] for r in postgres_server.admin(versions, db)] == [1, 2, 3]
    with ResponseStore(postgres_url) as store:
        assert store.get_many(["old"])["old"].text == "senior"
    assert [r[0] for r in postgres_server.admin(versions, db)] == [1, 2, 3, 4, 5]
    columns = postgres_server.admin(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'responses' ORDER BY ordinal_position",
        db,
    )
    assert [r[0] for r in columns][-2:] == ["cached_input_tokens", "cache_write_tokens"]


def test_stats_metadata_shows_the_cached_input_tokens():
    from resumebias_dagster.core.providers.fanout import RunStats
    from resumebias_dagster.resources.providers import stats_metadata

    stats = RunStats("m", input_tokens=1000, cached_input_tokens=600) + RunStats("m", cached_input_tokens=100)
    assert stats_metadata(stats)["provider_cached_input_tokens"].value == 700
