"""estimate-cost's list, batch and cached dollars: the cached input tokens measured on the
prompts themselves (issue 29, item 3)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from resumebias_dagster.core.estimate import DEFAULT_OUTPUT_TOKENS, Design, cache_tokens, estimate_cost, study_design
from resumebias_dagster.core.models.model_config import load_models
from resumebias_dagster.core.providers import ProviderSettings

# A fit template of the test's own, not the packaged wording: 400 characters (100 tokens) of
# instructions, then the job description, then the résumé.
INSTRUCTIONS = "I" * 400
JDS = {"jd-one": "J" * 800, "jd-two": "K" * 800}  # 200 tokens each, nothing in common
RESUMES = ["1" * 400, "2" * 400, "3" * 400]  # 100 tokens each, nothing in common


def _catalog(tmp_path, min_cached_tokens=100):
    (tmp_path / "prompts").mkdir(parents=True)
    (tmp_path / "prompts" / "fit_scoring.txt").write_text(INSTRUCTIONS + "{job_description}{resume_text}\n")
    rates = {
        "batch": 0.5,
        "cached_input": 0.1,
        "cache_write": 1.25,
        "min_cached_tokens": min_cached_tokens,
        "as_of": "2030-02-02",
        "source": "https://example.test/prices",
    }
    prices = {
        "as_of": "2030-01-01",
        "per_tokens": 1000,
        # Rates of the test's own; a cache write costs more than list on both wires here.
        "providers": {"google": rates, "anthropic": rates},
        "models": {"gemini-2.5-pro": {"input": 1.0, "output": 2.0}, "claude-sonnet-4-5": {"input": 1.0, "output": 2.0}},
    }
    (tmp_path / "prices.yaml").write_text(yaml.safe_dump(prices))
    return tmp_path


def _design() -> Design:
    variants = pd.DataFrame({"variant": ["baseline", "a", "b"], "text": RESUMES, "resume_id": ["r1"] * 3})
    jds = pd.DataFrame({"jd": list(JDS), "title": ["One", "Two"], "text": list(JDS.values())})
    return Design(
        pd.DataFrame(columns=["variant_kind", "original_idx", "variant", "text", "true_seniority", "name"]),
        variants,
        jds,
        pd.DataFrame(columns=["resume_id", "text"]),
        1,
    )


def test_two_job_descriptions_and_three_resumes_by_hand(tmp_path, settings_for):
    """A wire caching repeated prefixes by itself (Gemini's implicit cache, OpenAI's)."""
    catalog = _catalog(tmp_path)
    model = settings_for("gemini", "http://127.0.0.1:9", runs_per_cell=1)
    row = estimate_cost([model], _design(), None, tasks=("fit",), catalog_dir=catalog).iloc[0]
    # Six prompts of 1,600 characters (400 tokens) in this order, with what each shares with an
    # earlier one: J1R1 nothing; J1R2, J1R3 instructions + JD (300 tokens); J2R1 the
    # instructions (100 tokens, the minimum); J2R2, J2R3 instructions + JD (300).
    assert (row.calls, row.to_call, row.input_tokens) == (6, 6, 2400)
    assert row.cached_input_tokens == 300 + 300 + 100 + 300 + 300
    # Writes: J1R1 writes what J1R2 reads (300); J2R1 adds its JD to the instructions it read (200).
    assert row.cache_write_tokens == 300 + 200
    output = 6 * DEFAULT_OUTPUT_TOKENS["fit"]
    assert output == row.output_tokens == 1500
    # $1 and $2 per 1,000 input and output tokens; a read at 0.1, a write at 1.25.
    list_usd = 2400 * 0.001 + 1500 * 0.002
    cached_usd = (2400 - 1300 - 500) * 0.001 + 1300 * 0.0001 + 500 * 0.00125 + 1500 * 0.002
    assert row.usd_list == pytest.approx(5.4) == pytest.approx(list_usd) == row.usd_to_call
    assert row.usd_batch == pytest.approx(2.7)
    assert row.usd_cached == pytest.approx(cached_usd) == pytest.approx(4.355)
    assert row.usd_batch_cached == pytest.approx(cached_usd * 0.5) == pytest.approx(2.1775)
    assert (row.price_as_of, row.rates_as_of, row.rates_source) == (
        "2030-01-01",
        "2030-02-02",
        "https://example.test/prices",
    )


def test_repeated_runs_read_the_whole_prompt_and_the_minimum_holds(tmp_path, settings_for):
    model = settings_for("gemini", "http://127.0.0.1:9", runs_per_cell=2)
    row = estimate_cost([model], _design(), None, tasks=("fit",), catalog_dir=_catalog(tmp_path)).iloc[0]
    # Each prompt's second run reads all 400 tokens; the first runs read as above.
    assert row.cached_input_tokens == 6 * 400 + 4 * 300 + 100
    # Each prompt is written once, in full: 12 calls x 400 tokens are all read or written.
    assert row.cached_input_tokens + row.cache_write_tokens == row.input_tokens == 4800
    # Above the instructions' 100 tokens: only the shared instructions + JD count.
    model = settings_for("gemini", "http://127.0.0.1:9", runs_per_cell=1)
    row = estimate_cost([model], _design(), None, tasks=("fit",), catalog_dir=_catalog(tmp_path / "b", 101)).iloc[0]
    assert (row.cached_input_tokens, row.cache_write_tokens) == (4 * 300, 2 * 300)


def test_anthropic_caches_only_the_marked_prefix(tmp_path, settings_for):
    """The fit requests mark their instructions and job description (300 tokens here) for
    Anthropic's cache: read where an earlier request shares all of it, else written; the
    résumé of a repeated run is not read, being past the mark."""
    catalog = _catalog(tmp_path)
    for runs in (1, 2):
        model = settings_for("anthropic", "http://127.0.0.1:9", runs_per_cell=runs)
        row = estimate_cost([model], _design(), None, tasks=("fit",), catalog_dir=catalog).iloc[0]
        assert (row.cached_input_tokens, row.cache_write_tokens) == ((6 * runs - 2) * 300, 2 * 300)
        list_usd = 6 * runs * (400 * 0.001 + 250 * 0.002)
        cached_usd = list_usd - (6 * runs - 2) * 300 * 0.0009 + 2 * 300 * 0.00025
        assert row.usd_list == pytest.approx(list_usd) and row.usd_cached == pytest.approx(cached_usd)
    # The minimum applies to the marked prefix: 300 tokens are not enough for 301.
    row = estimate_cost([model], _design(), None, tasks=("fit",), catalog_dir=_catalog(tmp_path / "b", 301)).iloc[0]
    assert (row.cached_input_tokens, row.cache_write_tokens) == (0, 0)
    # A request marking nothing (the seniority task's) caches nothing on Anthropic.
    texts = ["a" * 8000, "a" * 8000]
    assert cache_tokens(texts, 100, 1, marks=[0, 0]) == (0, 0)
    assert cache_tokens(texts, 100, 1, marks=[4000, 4000]) == (1000, 1000)


def test_openai_counts_whole_128_token_blocks_past_1024():
    shared = "a" * 4 * 1300  # 1,300 tokens: 1,024 + 2 whole blocks of 128
    assert cache_tokens([shared + "x", shared + "y"], 1024, 128) == (1280, 1280)
    below = "a" * 4 * 1000
    assert cache_tokens([below + "x", below + "y"], 1024, 128) == (0, 0)
    assert cache_tokens([shared + "x", shared + "y"], None, 128) == (0, 0)  # a wire with no cache
    # Not only the previous request: the longest prefix shared with any earlier one.
    assert cache_tokens(["b" * 8000, "c" * 8000, "b" * 8000], 1024, 1) == (2000, 2000)


def test_a_wire_without_rates_has_no_cached_tokens_and_no_discount(tmp_path, settings_for):
    catalog = _catalog(tmp_path)
    data = yaml.safe_load((catalog / "prices.yaml").read_text())
    del data["providers"]
    (catalog / "prices.yaml").write_text(yaml.safe_dump(data))
    model = settings_for("gemini", "http://127.0.0.1:9", runs_per_cell=1)
    row = estimate_cost([model], _design(), None, tasks=("fit",), catalog_dir=catalog).iloc[0]
    assert row.cached_input_tokens == row.cache_write_tokens == 0 and row.rates_as_of is None
    assert row.usd_list == row.usd_batch == row.usd_cached == row.usd_batch_cached == pytest.approx(5.4)


@pytest.fixture(scope="module")
def full_study():
    specs = [s for s in load_models(include_disabled=True) if s.kind == "provider"]
    models = [ProviderSettings.from_spec(s) for s in specs]
    judge = next(m for m in models if m.name == "gemini-2.5-pro")  # study 003's judge
    return estimate_cost(models, study_design(), None, judges=[judge], tasks=("seniority", "fit", "judge"))


def test_batch_and_cache_halve_a_full_study_at_least(full_study):
    """Issue 29's done-when: with batch and caching on, a full study's estimated price is at
    most half its list price, for every wire of the packaged provider entries."""
    priced = full_study.dropna(subset=["usd_list"])
    assert set(priced["task"]) == {"seniority", "fit", "judge"}
    assert set(priced["provider"]) == {"openai", "anthropic", "google"}
    ratios = {
        wire: rows["usd_batch_cached"].sum() / rows["usd_list"].sum() for wire, rows in priced.groupby("provider")
    }
    overall = priced["usd_batch_cached"].sum() / priced["usd_list"].sum()
    print({**{w: round(float(r), 3) for w, r in ratios.items()}, "overall": round(float(overall), 3)})
    # 1e-4: each row's dollars are rounded to 4 decimals. Gemini 2.5 Pro (google) gets the
    # batch discount alone: no prompt of the study reaches its 2,048-token cache minimum; nor
    # does Claude called directly (anthropic): the fit prompt's marked prefix (instructions and
    # job description, about 440 tokens) is under its 1,024.
    assert all(r <= 0.5 + 1e-4 for r in ratios.values()), ratios
    assert overall < 0.5
    assert full_study.loc[full_study["task"] == "fit", "cached_input_tokens"].gt(0).any()
