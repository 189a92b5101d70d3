"""Keep each provider snapshot in an analysis of its own.

A floating alias (``gpt-5``, ``mistral-large-latest``) can resolve to a new snapshot between
runs; while a re-run is under way, some partitions of a model hold the old snapshot's answers
and some the new one's. Analyses label such a model ``<model>@<snapshot>`` per snapshot, so no
table mixes two snapshots, and every summary row says which snapshots it describes.
"""

from __future__ import annotations

import pandas as pd

SEPARATOR = "@"


def separate_snapshots(rows: pd.DataFrame, partition: tuple[str, ...] = ("model",)) -> pd.DataFrame:
    """``rows`` with ``model`` renamed ``<model>@<resolved_model>`` for models answered by more
    than one snapshot. Rows without a resolved model (failed calls) take the most common
    snapshot of their partition (``partition`` columns), where they were produced."""
    if rows.empty or "resolved_model" not in rows.columns:
        return rows
    resolved = rows["resolved_model"].astype(object)
    known = resolved.notna()
    if known.any():
        typical = rows[known].groupby(list(partition))["resolved_model"].agg(lambda s: s.value_counts().index[0])
        fill = rows[list(partition)].merge(typical.rename("typical").reset_index(), how="left", on=list(partition))
        resolved = resolved.where(known, pd.Series(fill["typical"].to_numpy(), index=resolved.index))
    per_model = resolved.groupby(rows["model"]).nunique()
    mixed = rows["model"].isin(per_model[per_model > 1].index) & resolved.notna()
    if not mixed.any():
        return rows
    out = rows.copy()
    out.loc[mixed, "model"] = out.loc[mixed, "model"] + SEPARATOR + resolved[mixed].astype(str)
    return out


def snapshots_of(rows: pd.DataFrame) -> dict[str, str]:
    """Per model: the snapshots (resolved model versions) its rows come from, "; "-joined."""
    if rows.empty or "resolved_model" not in rows.columns:
        return {}
    known = rows.dropna(subset=["resolved_model"])
    return {str(model): "; ".join(sorted(set(s))) for model, s in known.groupby("model")["resolved_model"]}
