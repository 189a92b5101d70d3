"""Seed 004 validation of the style variants: word counts, tone score, semantic similarity."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from resumebias_dagster.core.labels import STYLES
from resumebias_dagster.core.style import tone_counts, tone_score

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’&+.-]*")


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def similarity_to_neutral(variants: pd.DataFrame, embeddings: np.ndarray) -> np.ndarray:
    """Cosine similarity of each row's embedding to the neutral version of the same résumé.

    ``embeddings`` are unit vectors aligned with ``variants`` rows.
    """
    neutral_row = (
        variants.reset_index(drop=True)
        .reset_index()
        .query("style == 'neutral'")
        .set_index("original_idx")["index"]
    )
    partner = variants["original_idx"].map(neutral_row).to_numpy()
    if np.isnan(partner.astype(float)).any():
        missing = sorted(variants.loc[pd.isna(partner), "original_idx"].unique())[:5]
        raise ValueError(f"style_variants: no neutral version for original_idx {missing}")
    return np.einsum("ij,ij->i", embeddings, embeddings[partner.astype(int)]).astype(np.float64)


def style_validation_table(variants: pd.DataFrame, embeddings: np.ndarray, lexicon) -> pd.DataFrame:
    """One row per style: mean words, power/humble counts, tone score, similarity to neutral."""
    counts = [tone_counts(t, lexicon) for t in variants["text"]]
    per_row = pd.DataFrame(
        {
            "style": variants["style"].to_numpy(),
            "words": [word_count(t) for t in variants["text"]],
            "power": [c[0] for c in counts],
            "humble": [c[1] for c in counts],
            "similarity": similarity_to_neutral(variants, embeddings),
        }
    )
    per_row["tone"] = [tone_score(p, h) for p, h in zip(per_row["power"], per_row["humble"])]
    table = (
        per_row.groupby("style", sort=False)
        .agg(
            n_resumes=("words", "size"),
            mean_words=("words", "mean"),
            mean_power_words=("power", "mean"),
            mean_humble_words=("humble", "mean"),
            tone_score=("tone", "mean"),
            similarity_to_neutral_mean=("similarity", "mean"),
            similarity_to_neutral_min=("similarity", "min"),
        )
        .reindex([s for s in STYLES if s in set(per_row["style"])])
        .reset_index()
    )
    return table.astype({"n_resumes": "int64"})
