"""Asset metadata helpers shared by every group: table previews, published plots, and the
four-fifths entry of the impact-ratio tables."""

from __future__ import annotations

import base64

import dagster as dg
import pandas as pd

from resumebias_dagster.core.common.shared_files import SharedFiles
from resumebias_dagster.core.tables.verdicts import VALIDITY_VERDICT_VALUES, VERDICT_VALUES
from resumebias_dagster.settings import data_dir

# Tables and plots derived from model outputs refresh themselves (under `dg dev` or a
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


def json_by_key(values: pd.Series) -> dg.JsonMetadataValue:
    """A Series keyed by label (counts, means) as a JSON object with text keys."""
    return dg.MetadataValue.json({str(k): v.item() if hasattr(v, "item") else v for k, v in values.items()})


def publish_pngs(context: dg.AssetExecutionContext, pngs: dict[str, bytes], shared: SharedFiles | None) -> pd.DataFrame:
    """Write each PNG under data/reports/ and show it in the asset's metadata."""
    folder = data_dir() / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []
    meta: dict[str, dg.MetadataValue] = {}
    for name, png in pngs.items():
        path = folder / f"{name}.png"
        path.write_bytes(png)
        rows.append({"plot": name, "path": str(path), "bytes": len(png)})
        meta[name] = dg.MetadataValue.md(f"![{name}](data:image/png;base64,{base64.b64encode(png).decode()})")
        meta[f"{name}_file"] = dg.MetadataValue.path(str(path))
        if shared is not None:
            # Several machines: the report (on any worker) reads the plot from here.
            meta[f"{name}_shared"] = dg.MetadataValue.text(shared.put_file(path))
    context.add_output_metadata(meta)
    return pd.DataFrame(rows, columns=["plot", "path", "bytes"]).astype({"bytes": "int64"})


def impact_ratios_metadata(df: pd.DataFrame) -> dict:
    """What the UI shows of an impact-ratio table: a preview and how many groups fall below four-fifths."""
    return table_metadata(
        df.drop(columns="group_source"),
        preview_rows=60,
        flagged_groups=dg.MetadataValue.int(int(df["below_four_fifths"].sum())),
        flagged_beyond_noise=dg.MetadataValue.int(int(df["ci_below_four_fifths"].sum())),
    )


def verdicts_metadata(df: pd.DataFrame) -> dict:
    """What the UI shows of a verdicts table: each finding's verdict beside its estimate,
    interval, adjusted p and minimal detectable effect, and the count of each verdict."""
    shown = df[["model", "finding", "estimate", "ci_low", "ci_high", "q", "mde", "verdict"]].round(4)
    counts = df["verdict"].value_counts()
    return table_metadata(
        shown,
        preview_rows=60,
        **{
            f"{v.replace(' ', '_')}_findings": dg.MetadataValue.int(int(counts.get(v, 0)))
            for v in (*VERDICT_VALUES, *VALIDITY_VERDICT_VALUES)
            if v in VERDICT_VALUES or v in set(df["verdict"])
        },
    )
