"""Prices with the wires' batch and prompt-cache rates (catalog/prices.yaml)."""

import pytest
import yaml

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.providers.pricing import cost_usd, price_for, wire_rates


def test_list_batch_and_cached_prices():
    price = price_for("claude-haiku-4-5-20251001", provider="anthropic")
    assert price.input_per_token == pytest.approx(1.00e-6) and price.output_per_token == pytest.approx(5.00e-6)
    # 1,000 input tokens of which 600 read from the cache and 100 written to it, 50 output.
    listed = cost_usd(price, 1000, 50)
    cached = cost_usd(price, 1000, 50, cached_input_tokens=600, cache_write_tokens=100)
    assert listed == pytest.approx(1000 * 1e-6 + 50 * 5e-6)
    assert cached == pytest.approx(300 * 1e-6 + 600 * 0.1e-6 + 100 * 1.25e-6 + 50 * 5e-6)
    assert cost_usd(price, 1000, 50, batch=True) == pytest.approx(listed * 0.5)


def test_a_models_own_cached_price_wins_over_its_wires_rate():
    assert price_for("gpt-4.1-mini", provider="openai").cached_input_per_token == pytest.approx(0.10e-6)
    assert price_for("gpt-5-mini", provider="openai").cached_input_per_token == pytest.approx(0.025e-6)


def test_without_a_wire_there_is_no_discount():
    price = price_for("gpt-5-mini")
    assert cost_usd(price, 100, 10, cached_input_tokens=50, batch=True) == pytest.approx(cost_usd(price, 100, 10))
    assert wire_rates("http").batch == 1.0


def test_a_bad_rate_is_refused_naming_it(tmp_path):
    data = {"models": {"m": {"input": 1, "output": 2}}, "providers": {"openai": {"batch": 5}}}
    (tmp_path / "prices.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(
        CatalogError, match=r"prices.yaml: providers.openai.batch must be a multiple in \[0, 2\], got 5"
    ):
        price_for("m", tmp_path, provider="openai")
    data["providers"] = {"openai": {"discount": 0.5}}
    (tmp_path / "prices.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogError, match="providers.openai takes batch, cached_input, cache_write, as_of and source"):
        price_for("m", tmp_path, provider="openai")
