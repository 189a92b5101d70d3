"""``resumebias estimate-cost`` prints list, batch, cached and batch+cached dollars with totals
and where the rates come from; ``--json`` has them too; a bad rate in prices.yaml is refused."""

from __future__ import annotations

import json

import pytest
import yaml

from resumebias_dagster.cli import main
from resumebias_dagster.core.estimate import USD_COLUMNS


@pytest.fixture
def models_file(tmp_path, model_entry, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "models.yaml"
    path.write_text(
        yaml.safe_dump({"models": [model_entry("openai", "https://openrouter.ai/api/v1", runs_per_cell=2)]})
    )
    return str(path)


def _run(models_file, *extra):
    return main(["estimate-cost", "--models-file", models_file, "--n-per-level", "2", *extra])


def test_the_table_shows_each_price_with_totals_and_the_rates_date(models_file, capsys):
    assert _run(models_file) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| model"))
    for column in ("cached_input_tokens", *USD_COLUMNS):
        assert f" {column} " in header
    total = next(line for line in out.splitlines() if line.startswith("| total"))
    assert total.count("|") == header.count("|")
    assert "to spend now: $" in out and "through the batch API $" in out and "both $" in out
    assert "batch and cache rates of openai as of 2025-10-01 (https://openai.com/api/pricing)" in out


def test_json_has_the_new_fields_and_totals(models_file, capsys):
    assert _run(models_file, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    fit = next(r for r in out["rows"] if r["task"] == "fit")
    for field in ("usd_list", "usd_batch", "cached_input_tokens", "usd_cached", "usd_batch_cached", "rates_as_of"):
        assert field in fit
    assert fit["usd_list"] == fit["usd_to_call"] and fit["usd_batch"] == pytest.approx(fit["usd_list"] / 2, abs=1e-4)
    assert fit["cached_input_tokens"] > 0 and fit["usd_batch_cached"] < fit["usd_batch"]
    assert fit["rates_as_of"] == "2025-10-01" and fit["rates_source"] == "https://openai.com/api/pricing"
    assert out["totals"]["usd_list"] == pytest.approx(sum(r["usd_list"] for r in out["rows"]), abs=1e-4)


@pytest.mark.parametrize(
    "rates,message",
    [
        ({"batch": 5}, r"prices.yaml: providers.openai.batch must be a multiple in [0, 2], got 5"),
        (
            {"min_cached_tokens": {"default": 0}},
            "prices.yaml: providers.openai.min_cached_tokens.default must be a whole number of tokens, "
            "at least 1, got 0",
        ),
    ],
)
def test_a_bad_rate_in_prices_yaml_is_refused(models_file, tmp_path, capsys, rates, message):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    prices = {"models": {"gpt-5": {"input": 1.25, "output": 10.0}}, "providers": {"openai": rates}}
    (catalog / "prices.yaml").write_text(yaml.safe_dump(prices))
    assert _run(models_file, "--catalog-dir", str(catalog), "--task", "seniority") == 2
    captured = capsys.readouterr()
    assert f"error: {message}" in captured.err and captured.out == ""


BODY = '{"resume": {{ resume | tojson }}, "job_description": {{ job_description | tojson }}}'


def _http_entry(url, **extra):
    answer = {"score": "$.result.score", "label": "$.seniority"}
    return {"name": "acme-http", "kind": "http", "url": url, "body": BODY, "answer": answer, "max_retries": 0, **extra}


def test_a_scoring_endpoint_and_the_ranking_task_are_priced_less_what_the_store_holds(
    tmp_path, model_entry, monkeypatch, capsys
):
    """Every kind and task (issue 44): an http entry's calls at its price_per_call, with the answers
    the store holds subtracted (five fit calls made through a real scorer on 127.0.0.1), and the
    ranking task of a provider model."""
    import dagster as dg

    from resumebias_dagster.core.estimate import _http, study_design
    from resumebias_dagster.core.models.model_config import load_models
    from resumebias_dagster.core.providers.types import ProviderSettings
    from resumebias_dagster.resources.providers import ProvidersResource
    from resumebias_dagster.testing.fake_providers import FakeProviderServer

    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    monkeypatch.setenv("RESUMEBIAS_TEST_PROVIDER_KEY", "sk-test")
    with FakeProviderServer("scorer") as server:
        path = tmp_path / "models.yaml"
        entries = [
            model_entry("openai", "https://openrouter.ai/api/v1"),
            _http_entry(server.base_url, price_per_call=0.002),
        ]
        path.write_text(yaml.safe_dump({"models": entries}))
        spec = next(s for s in load_models(path) if s.kind == "http")
        made = _http(ProviderSettings.from_spec(spec), study_design(2), "fit").requests[:5]
        with dg.build_resources({"providers": ProvidersResource(models_file=str(path))}) as resources:
            _, stats = resources.providers.run("acme-http", made)
        assert stats.calls_made == 5
    assert main(["estimate-cost", "--models-file", str(path), "--n-per-level", "2", "--json"]) == 0
    rows = {(r["model"], r["task"]): r for r in json.loads(capsys.readouterr().out)["rows"]}
    fit, seniority = rows["acme-http", "fit"], rows["acme-http", "seniority"]
    assert fit["in_store"] == 5 and fit["to_call"] == fit["calls"] - 5
    assert fit["usd_to_call"] == pytest.approx(0.002 * fit["to_call"]) and fit["usd_all_calls"] == pytest.approx(
        0.002 * fit["calls"]
    )
    assert seniority["in_store"] == 0 and seniority["usd_to_call"] == pytest.approx(0.002 * seniority["calls"])
    assert fit["input_tokens"] is None and "$0.002 a call" in fit["note"]
    ranking = rows["fake-openai", "ranking"]
    assert ranking["calls"] > 0 and ranking["usd_to_call"] > 0 and "ranking items" in ranking["note"]
    assert ("acme-http", "ranking") not in rows  # a scorer of one résumé does not rank


def test_a_bad_price_per_call_is_refused_naming_the_model(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [_http_entry("http://127.0.0.1:8400/score", price_per_call="cheap")]}))
    assert main(["estimate-cost", "--models-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "model 'acme-http': price_per_call must be a number of US dollars per call (0 or more), got 'cheap'" in err
