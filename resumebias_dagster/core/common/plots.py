"""PNG figures of the audits, returned as bytes (assets embed them in their metadata).

matplotlib is imported inside each function with the non-interactive Agg backend, so
importing this module costs nothing and no display is needed. Sizes and resolution keep
each PNG small (well under 200 KB for 20 models, 17 JDs and 60 variants).
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pandas as pd

DPI = 80
# Diverging map: score penalties red, boosts blue.
CMAP = "RdBu"
SIGNIFICANT_COLOR = "#c0392b"
BELOW_FLOOR_COLOR = "#e69f00"
OTHER_COLOR = "#9e9e9e"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any, dpi: int = DPI) -> bytes:
    plt = _pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    return buf.getvalue()


def _empty(message: str) -> bytes:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 1.5))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    return _png(fig)


def volcano_png(effects: pd.DataFrame, alpha: float = 0.05, ncols: int = 4) -> bytes:
    """Delta against -log10 p, one panel per model.

    Red: q < alpha and |delta| above the placebo noise floor (``significant``); orange:
    q < alpha but inside the floor; grey: the rest. Placebo cells are drawn as crosses,
    the floor as dashed verticals. Cells without a p-value are left out (their count is
    in the panel title).
    """
    if effects.empty:
        return _empty("no fit-score effects")
    plt = _pyplot()
    models = sorted(effects["model"].unique())
    ncols = min(ncols, len(models))
    nrows = math.ceil(len(models) / ncols)
    # One or two models get larger panels: the legend above needs the width anyway.
    panel = (3.0, 2.4) if ncols > 2 else (6.0, 4.0)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel[0] * ncols, panel[1] * nrows), squeeze=False)
    finite_p = effects["p_value"].where(effects["p_value"] > 0, np.nextafter(0, 1))
    y_all = -np.log10(finite_p)
    x_lim = np.nanmax(np.abs(effects["delta"].to_numpy(dtype=float)), initial=0.0) * 1.05 or 1.0
    for k, ax in enumerate(axes.flat):
        if k >= len(models):
            ax.axis("off")
            continue
        model = models[k]
        e = effects[effects["model"] == model]
        y = y_all[e.index]
        ok = np.isfinite(y) & e["delta"].notna()
        q_hit = (e["q_value"] < alpha).to_numpy()
        color = np.where(
            e["significant"].to_numpy(dtype=bool), SIGNIFICANT_COLOR, np.where(q_hit, BELOW_FLOOR_COLOR, OTHER_COLOR)
        )
        placebo = (e["arm"] == "placebo").to_numpy()
        for mask, marker in ((~placebo & ok.to_numpy()), "o"), ((placebo & ok.to_numpy()), "x"):
            ax.scatter(e["delta"][mask], y[mask], c=color[mask], s=9, marker=marker, linewidths=0.7)
        floor = e["noise_floor"].iloc[0]
        if np.isfinite(floor):
            for side in (-floor, floor):
                ax.axvline(side, color="black", linestyle="--", linewidth=0.6)
        ax.axvline(0, color="black", linewidth=0.4)
        ax.set_xlim(-x_lim, x_lim)
        untestable = int((~ok).sum())
        ax.set_title(model + (f" ({untestable} without p)" if untestable else ""), fontsize=9)
        ax.tick_params(labelsize=7)
        if k % ncols == 0:
            ax.set_ylabel("-log10 p", fontsize=8)
        if k >= len(models) - ncols:
            ax.set_xlabel("delta (score points)", fontsize=8)
    handles = [
        plt.Line2D([], [], marker="o", linestyle="", color=SIGNIFICANT_COLOR, label=f"q < {alpha:g}, above floor"),
        plt.Line2D([], [], marker="o", linestyle="", color=BELOW_FLOOR_COLOR, label=f"q < {alpha:g}, inside floor"),
        plt.Line2D([], [], marker="o", linestyle="", color=OTHER_COLOR, label="not significant"),
        plt.Line2D([], [], marker="x", linestyle="", color="black", label="placebo cell"),
        plt.Line2D([], [], linestyle="--", color="black", label="placebo noise floor"),
    ]
    fig.legend(
        handles=handles,
        loc="upper center",
        ncol=5 if ncols > 2 else 3,
        fontsize=8,
        frameon=False,
        bbox_to_anchor=(0.5, 1.0),
    )
    fig.suptitle("Fit-score change against the baseline résumé", y=1.03, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    # Many panels of scatter points compress poorly; a lower resolution keeps the PNG small.
    return _png(fig, dpi=DPI if len(models) <= 8 else 64)


def heatmap_png(effects: pd.DataFrame, model: str) -> bytes:
    """Delta of every (axis-level variant, JD) cell of one model; dots mark significant cells."""
    e = effects[effects["model"] == model]
    if e.empty:
        return _empty(f"no fit-score effects for {model}")
    plt = _pyplot()
    variants = list(dict.fromkeys(e.sort_values(["arm", "axis", "level"])["variant"]))
    jds = sorted(e["jd"].unique())
    grid = e.pivot_table(index="variant", columns="jd", values="delta", aggfunc="first")
    grid = grid.reindex(index=variants, columns=jds)
    significant = e.pivot_table(index="variant", columns="jd", values="significant", aggfunc="first")
    sig = significant.reindex(index=variants, columns=jds).fillna(False).to_numpy(dtype=bool)
    values = grid.to_numpy(dtype=float)
    vmax = float(np.nanmax(np.abs(values), initial=0.0)) or 1.0
    fig, ax = plt.subplots(figsize=(2.5 + 0.42 * len(jds), 1.5 + 0.2 * len(variants)))
    image = ax.imshow(np.ma.masked_invalid(values), cmap=CMAP, vmin=-vmax, vmax=vmax, aspect="auto")
    rows, cols = np.nonzero(sig)
    ax.scatter(cols, rows, s=16, c="black", edgecolors="white", linewidths=0.6, marker="o")
    ax.set_xticks(range(len(jds)), jds, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(variants)), variants, fontsize=7)
    ax.set_title(f"{model}: score change by variant and job description (dot: significant)", fontsize=9)
    fig.colorbar(image, ax=ax, label="delta (score points)", shrink=0.6)
    fig.tight_layout()
    return _png(fig)


def seniority_bars_png(group_metrics: pd.DataFrame, variant_kind: str = "demographic") -> bytes:
    """The seniority notebooks' two bar charts for one experiment: accuracy and mean rank
    difference per group (``variant_kind`` "demographic" or "style"), one bar per model."""
    g = group_metrics[(group_metrics["variant_kind"] == variant_kind) & (group_metrics["group_kind"] == variant_kind)]
    if g.empty:
        return _empty(f"no {variant_kind} groups in the metrics")
    plt = _pyplot()
    groups = list(dict.fromkeys(g["group"]))
    models = sorted(g["model"].unique())
    x = np.arange(len(groups))
    width = 0.8 / len(models)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    panels = (
        ("accuracy", "Accuracy", f"Accuracy by {variant_kind}"),
        ("rank_diff", "Avg rank difference", f"Prediction bias by {variant_kind}"),
    )
    for ax, (column, ylabel, title) in zip(axes, panels):
        for i, model in enumerate(models):
            values = g[g["model"] == model].set_index("group")[column].reindex(groups).to_numpy(dtype=float)
            ax.bar(x + (i - (len(models) - 1) / 2) * width, np.nan_to_num(values), width, label=model)
        ax.set_xticks(x, [name.replace("_", " ") for name in groups], fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=7)
    axes[0].set_ylim(0, 1)
    axes[1].axhline(0, color="black", linestyle="--", linewidth=0.5)
    fig.tight_layout()
    return _png(fig)
