"""Asset metadata helpers shared by every stage."""

from __future__ import annotations

import dagster as dg
import pandas as pd

# Tables and plots derived from model outputs refresh themselves (under `dagster dev` or a
# daemon) once their inputs change, e.g. after model_alias_sensor re-ran a model. Unlike plain
# eager, a missing input does not hold them back: they are computed over the partitions that
# exist, and imported_predictions is missing until someone imports a study.
UPDATE_WITH_UPSTREAM = dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing())


def table_metadata(df: pd.DataFrame, preview_rows: int = 10, **extra) -> dict:
    """Row count, column schema and a Markdown preview, plus any extra entries."""
    preview = df.head(preview_rows)
    text_cols = [c for c in preview.columns if preview[c].dtype == object]
    # Long texts would make the preview unreadable in the UI.
    preview = preview.assign(**{c: preview[c].astype(str).str.slice(0, 60) for c in text_cols})
    meta = {
        "dagster/row_count": dg.MetadataValue.int(len(df)),
        "preview": dg.MetadataValue.md(preview.to_markdown(index=False) if len(df) else "(empty)"),
    }
    meta.update(extra)
    return meta
