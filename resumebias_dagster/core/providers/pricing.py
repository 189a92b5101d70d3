"""Dollar cost of tokens from the packaged price table (``catalog/prices.yaml``)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from resumebias_dagster.catalog import CatalogError, load_yaml

PRICES_FILE = "prices.yaml"


@dataclass(frozen=True)
class Price:
    name: str
    input_per_token: float
    output_per_token: float
    as_of: str

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float:
        return (input_tokens or 0) * self.input_per_token + (output_tokens or 0) * self.output_per_token


def _table(catalog_dir: str | os.PathLike | None) -> tuple[dict[str, tuple[float, float]], float, str]:
    data = load_yaml(PRICES_FILE, catalog_dir)
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise CatalogError(f"{PRICES_FILE}: expected a mapping with a 'models' mapping")
    per = float(data.get("per_tokens", 1_000_000))
    table = {}
    for name, entry in data["models"].items():
        if not isinstance(entry, dict) or not {"input", "output"} <= set(entry):
            raise CatalogError(f"{PRICES_FILE}: model {name!r} needs input and output prices")
        table[str(name).lower()] = (float(entry["input"]), float(entry["output"]))
    return table, per, str(data.get("as_of", "unknown"))


def _matches(model: str, name: str) -> bool:
    return model == name or (model.startswith(name) and model[len(name)] in "-@:")


def price_for(model: str | None, catalog_dir: str | os.PathLike | None = None) -> Price | None:
    """The price of ``model`` (an alias or a resolved version), or None if the table lacks it."""
    if not model:
        return None
    table, per, as_of = _table(catalog_dir)
    bare = model.lower().rsplit("/", 1)[-1]
    matches = [name for name in table if _matches(bare, name)]
    if not matches:
        return None
    best = max(matches, key=len)
    input_price, output_price = table[best]
    return Price(best, input_price / per, output_price / per, as_of)


def cost_usd(price: Price | None, input_tokens: int | None, output_tokens: int | None) -> float | None:
    if price is None or (input_tokens is None and output_tokens is None):
        return None
    return price.cost(input_tokens, output_tokens)
