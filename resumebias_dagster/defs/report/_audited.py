"""The models an audit report names: each audited model's name, kind, source, the snapshots it
answered from (the summaries' ``resolved_models``), temperature and runs per cell."""

import pandas as pd

from resumebias_dagster.core.models.model_config import load_models


def audited_models(catalog_dir, *tables: pd.DataFrame) -> list[dict]:
    """Every model of the catalog's models file, with the snapshots ``tables`` record for it."""
    resolved: dict[str, set[str]] = {}
    for table in tables:
        if len(table) and "resolved_models" in table.columns:
            for model, value in zip(table["model"], table["resolved_models"]):
                if isinstance(value, str) and value:
                    resolved.setdefault(str(model).split("@")[0], set()).add(value)
    return [
        {
            "name": s.name,
            "kind": s.kind,
            "source": s.option("model") or s.option("source") or s.option("base_model") or "",
            "resolved": ", ".join(sorted(resolved.get(s.name, ()))),
            "temperature": s.temperature,
            "runs_per_cell": s.runs_per_cell,
        }
        for s in load_models(catalog_dir=catalog_dir)
    ]
