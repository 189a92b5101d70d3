"""What ``resumebias estimate-cost`` prints: the estimate of ``core.estimate`` as a table with
a total line, or as JSON."""

from __future__ import annotations

import json

import pandas as pd

from resumebias_dagster.core.estimate import CHARS_PER_TOKEN, USD_COLUMNS

SHOWN_COLUMNS = (
    "model",
    "task",
    "snapshot_epoch",
    "calls",
    "in_store",
    "to_call",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "output_tokens_basis",
    *USD_COLUMNS,
)
SUMMED_COLUMNS = (
    "calls",
    "in_store",
    "to_call",
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "usd_to_call",
    "usd_all_calls",
    *USD_COLUMNS,
)


def totals(table: pd.DataFrame) -> dict[str, float | int]:
    """Each summed column over the rows (dollars over the rows with a price)."""
    out: dict[str, float | int] = {}
    for column in SUMMED_COLUMNS:
        values = pd.to_numeric(table[column], errors="coerce").dropna()
        out[column] = round(float(values.sum()), 4) if column.startswith("usd_") else int(values.sum())
    return out


def rates_line(table: pd.DataFrame) -> str:
    """Where the dollars come from: the list prices' date and each wire's batch and cache rates."""
    listed = sorted({str(d) for d in table["price_as_of"].dropna()})
    wires = table.dropna(subset=["rates_as_of"]).drop_duplicates("provider")
    rates = [
        f"{wire} as of {as_of}" + (f" ({source})" if source else "")
        for wire, as_of, source in zip(wires["provider"], wires["rates_as_of"], wires["rates_source"])
    ]
    return (
        f"prices.yaml: list prices as of {', '.join(listed) or 'unknown'}; batch and cache rates of "
        + ("; ".join(rates) if rates else "no wire (no discount)")
        + ". Prices change: check the providers' pages before a large run."
    )


def cost_json(table: pd.DataFrame, design, store: str | None) -> str:
    return json.dumps(
        {
            "variants": len(design.variants),
            "probe_variants": len(design.probe_variants),
            "job_descriptions": len(design.job_descriptions),
            "store": store,
            "rows": json.loads(table.to_json(orient="records")),
            "totals": totals(table),
        },
        indent=2,
    )


def print_cost_table(table: pd.DataFrame, design, n_per_level: int, missing_store: str | None) -> None:
    print(
        f"{len(design.variants)} seniority variants ({n_per_level} résumés per level), "
        f"{len(design.probe_variants)} probe variants x {len(design.job_descriptions)} job descriptions; tokens "
        f"estimated as characters / {CHARS_PER_TOKEN}, output from stored answers of the same task where there are "
        "some; each model at its current snapshot epoch. Dollars of the calls to make: usd_list at list price, "
        "usd_batch through the batch API, usd_cached live with the provider's prefix cache (cached_input_tokens: "
        "the prompt prefix each call shares with an earlier one of its model and task, at best), usd_batch_cached "
        "both."
    )
    if missing_store is not None:
        print(f"no response store at {missing_store} yet: nothing is stored")
    total = totals(table)
    total_row = pd.DataFrame([{"model": "total", **total}]).reindex(columns=list(SHOWN_COLUMNS))
    shown = pd.concat([table[list(SHOWN_COLUMNS)].astype(object), total_row.astype(object)], ignore_index=True)
    print(shown.where(shown.notna(), "").to_markdown(index=False))
    for note in table.loc[table["note"] != "", ["model", "task", "note"]].itertuples(index=False):
        print(f"- {note.model} / {note.task}: {note.note}")
    print(
        f"\nto spend now: ${total['usd_list']:,.2f} for {total['to_call']:,} calls "
        f"({total['in_store']:,} already in the store); through the batch API ${total['usd_batch']:,.2f}, "
        f"with the prefix cache ${total['usd_cached']:,.2f}, both ${total['usd_batch_cached']:,.2f}"
    )
    print(rates_line(table))
    missing = sorted(set(table.loc[table["usd_list"].isna(), "model"]))
    if missing:
        print(f"no price for: {', '.join(missing)} (add them to prices.yaml)")
