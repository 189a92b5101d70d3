"""Dollar cost of tokens from the packaged price table (``catalog/prices.yaml``).

A ``Price`` holds a model's list prices per token and its wire's rates (``providers`` in the
table): the batch multiple, and what an input token read from the prompt cache and one written
to it cost. ``cost`` prices one answer's tokens: cached input tokens are part of the input
tokens a provider reports, so the uncached ones are the difference.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from resumebias_dagster.catalog import CatalogError, load_yaml

PRICES_FILE = "prices.yaml"
RATES = ("batch", "cached_input", "cache_write")


@dataclass(frozen=True)
class WireRates:
    """A provider wire's multiples of the list price (1.0: no discount), and when they were read."""

    batch: float = 1.0
    cached_input: float = 1.0
    cache_write: float = 1.0
    as_of: str = "unknown"
    source: str = ""
    # The shortest prompt prefix the wire's cache serves (tokens): a default (None: no prefix
    # cache known) and (model name, minimum) pairs matched like the model table's names.
    min_cached_tokens: int | None = None
    min_cached_tokens_by_model: tuple[tuple[str, int], ...] = ()

    def min_cached_for(self, model: str | None) -> int | None:
        """The minimum cacheable prefix of ``model`` on this wire (None: no prefix cache known)."""
        bare = (model or "").lower().rsplit("/", 1)[-1]
        matches = [(name, n) for name, n in self.min_cached_tokens_by_model if _matches(bare, name)]
        return max(matches, key=lambda m: len(m[0]))[1] if matches else self.min_cached_tokens


@dataclass(frozen=True)
class Price:
    name: str
    input_per_token: float
    output_per_token: float
    as_of: str
    # An input token read from the prompt cache, and one written to it (Anthropic).
    cached_input_per_token: float | None = None
    cache_write_per_token: float | None = None
    batch_factor: float = 1.0

    def cost(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cached_input_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        batch: bool = False,
    ) -> float:
        """Dollars of one answer: ``input_tokens`` include the cached and cache-written ones."""
        cached = cached_input_tokens or 0
        written = cache_write_tokens or 0
        plain = max(0, (input_tokens or 0) - cached - written)
        cached_rate = self.input_per_token if self.cached_input_per_token is None else self.cached_input_per_token
        write_rate = self.input_per_token if self.cache_write_per_token is None else self.cache_write_per_token
        total = (
            plain * self.input_per_token
            + cached * cached_rate
            + written * write_rate
            + (output_tokens or 0) * self.output_per_token
        )
        return total * (self.batch_factor if batch else 1.0)


def _rates(data: dict) -> dict[str, WireRates]:
    providers = data.get("providers") or {}
    if not isinstance(providers, dict):
        raise CatalogError(f"{PRICES_FILE}: providers must map a provider wire to its rates")
    rates = {}
    for wire, entry in providers.items():
        if not isinstance(entry, dict) or set(entry) - {*RATES, "as_of", "source", "min_cached_tokens"}:
            raise CatalogError(
                f"{PRICES_FILE}: providers.{wire} takes {', '.join(RATES)}, as_of and source, and "
                f"min_cached_tokens, got {entry!r}"
            )
        values = {}
        for rate in RATES:
            value = entry.get(rate, 1.0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
                raise CatalogError(
                    f"{PRICES_FILE}: providers.{wire}.{rate} must be a multiple in [0, 2], got {value!r}"
                )
            values[rate] = float(value)
        rates[str(wire)] = WireRates(
            batch=values["batch"],
            cached_input=values["cached_input"],
            cache_write=values["cache_write"],
            as_of=str(entry.get("as_of", data.get("as_of", "unknown"))),
            source=str(entry.get("source", "")),
            **_min_cached(wire, entry.get("min_cached_tokens")),
        )
    return rates


def _min_cached(wire, value) -> dict:
    """``min_cached_tokens``: a number of tokens, or a mapping of model names to numbers whose
    ``default`` applies to the wire's other models."""
    where = f"{PRICES_FILE}: providers.{wire}.min_cached_tokens"

    def tokens(key: str, n) -> int:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise CatalogError(f"{where}{key} must be a whole number of tokens, at least 1, got {n!r}")
        return n

    if value is None:
        return {}
    if not isinstance(value, dict):
        return {"min_cached_tokens": tokens("", value)}
    by_model = tuple((str(k).lower(), tokens(f".{k}", n)) for k, n in value.items() if k != "default")
    default = value.get("default")
    return {
        "min_cached_tokens": None if default is None else tokens(".default", default),
        "min_cached_tokens_by_model": by_model,
    }


def _table(
    catalog_dir: str | os.PathLike | None,
) -> tuple[dict[str, tuple[float, float, float | None]], float, str, dict[str, WireRates]]:
    data = load_yaml(PRICES_FILE, catalog_dir)
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise CatalogError(f"{PRICES_FILE}: expected a mapping with a 'models' mapping")
    per = float(data.get("per_tokens", 1_000_000))
    table = {}
    for name, entry in data["models"].items():
        if not isinstance(entry, dict) or not {"input", "output"} <= set(entry):
            raise CatalogError(f"{PRICES_FILE}: model {name!r} needs input and output prices")
        cached = entry.get("cached_input")
        table[str(name).lower()] = (
            float(entry["input"]),
            float(entry["output"]),
            None if cached is None else float(cached),
        )
    return table, per, str(data.get("as_of", "unknown")), _rates(data)


def _matches(model: str, name: str) -> bool:
    return model == name or (model.startswith(name) and model[len(name)] in "-@:")


def wire_rates(provider: str | None, catalog_dir: str | os.PathLike | None = None) -> WireRates:
    """The batch and cache rates of a provider wire (no discount for a wire the table lacks)."""
    return _table(catalog_dir)[3].get(provider or "", WireRates())


def price_for(
    model: str | None, catalog_dir: str | os.PathLike | None = None, provider: str | None = None
) -> Price | None:
    """The price of ``model`` (an alias or a resolved version), with the rates of ``provider``'s
    wire, or None if the table lacks the model."""
    if not model:
        return None
    table, per, as_of, rates = _table(catalog_dir)
    bare = model.lower().rsplit("/", 1)[-1]
    matches = [name for name in table if _matches(bare, name)]
    if not matches:
        return None
    best = max(matches, key=len)
    input_price, output_price, cached_price = table[best]
    wire = rates.get(provider or "", WireRates())
    return Price(
        best,
        input_price / per,
        output_price / per,
        as_of,
        cached_input_per_token=(cached_price if cached_price is not None else input_price * wire.cached_input) / per,
        cache_write_per_token=input_price * wire.cache_write / per,
        batch_factor=wire.batch,
    )


def cost_usd(
    price: Price | None,
    input_tokens: int | None,
    output_tokens: int | None,
    *,
    cached_input_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    batch: bool = False,
) -> float | None:
    if price is None or (input_tokens is None and output_tokens is None):
        return None
    return price.cost(
        input_tokens,
        output_tokens,
        cached_input_tokens=cached_input_tokens,
        cache_write_tokens=cache_write_tokens,
        batch=batch,
    )
