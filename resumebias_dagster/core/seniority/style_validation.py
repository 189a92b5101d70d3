"""Notebook 004 validation of the style variants: word counts, tone score, similarity between the
versions of a résumé, and the seniority study's pass/fail thresholds.

Independent of the rewriter. This module reads ``catalog/tone_lexicon.yaml`` (power and humble
words fixed from published lists) and ``catalog/style_validation.yaml`` (thresholds); it never
reads the rewriter's rules (``style_rewrites.yaml``) and imports nothing from ``core.seniority.style``,
and the rewriter never reads the lexicon, so the tone separation it reports is measured, not
built in.

Similarity is measured two ways for each of the three pairs of versions of one résumé
(neutral–overstated, neutral–understated, overstated–understated): TF-IDF cosine (the surface
measure, implemented here in numpy: see :func:`tfidf_vectors`) and the cosine of sentence
embeddings (all-MiniLM-L6-v2 by default, computed by the asset and passed in).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.common.labels import SIMILARITY_MEASURES, STYLES

LEXICON_FILE = "tone_lexicon.yaml"
THRESHOLDS_FILE = "style_validation.yaml"
SIMILARITY_STATISTICS = ("mean", "min")
# Every pair of versions of one résumé, in the seniority study's order of styles.
STYLE_PAIRS = (("neutral", "overstated"), ("neutral", "understated"), ("overstated", "understated"))

CatalogDir = str | os.PathLike | None

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’&+.-]*")


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


# --------------------------------------------------------------------------- tone


@dataclass(frozen=True)
class ToneLexicon:
    """Power and humble words/phrases of notebook 004 tone score."""

    power: tuple[str, ...]
    humble: tuple[str, ...]

    def __post_init__(self) -> None:
        power = {_phrase_key(p) for p in self.power}
        humble = {_phrase_key(h) for h in self.humble}
        both = sorted(power & humble)
        if both:
            raise ValueError(f"tone lexicon: {both} listed as both power and humble")


def _phrase_key(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def _lexicon_words(value: Any, key: str) -> tuple[str, ...]:
    """A list of words, or a mapping of source name to list (flattened in order)."""
    groups = value.items() if isinstance(value, Mapping) else [(None, value)]
    words: list[str] = []
    for source, group in groups:
        where = key if source is None else f"{key}.{source}"
        if not isinstance(group, list) or not all(isinstance(w, str) and w.strip() for w in group):
            raise CatalogError(f"{LEXICON_FILE}: {where} must be a list of non-empty strings")
        words.extend(group)
    if not words:
        raise CatalogError(f"{LEXICON_FILE}: {key} has no words")
    return tuple(words)


def load_tone_lexicon(catalog_dir: CatalogDir = None) -> ToneLexicon:
    """The lexicon of ``tone_lexicon.yaml``: ``power`` and ``humble``, each a list or a mapping
    of source name to list; other keys (``left_out``) are documentation."""
    data = load_yaml(LEXICON_FILE, catalog_dir)
    if not isinstance(data, Mapping) or "power" not in data or "humble" not in data:
        raise CatalogError(f"{LEXICON_FILE}: needs 'power' and 'humble' word lists")
    power, humble = _lexicon_words(data["power"], "power"), _lexicon_words(data["humble"], "humble")
    try:
        return ToneLexicon(power, humble)
    except ValueError as exc:
        raise CatalogError(f"{LEXICON_FILE}: {exc}") from exc


# Letters, digits and hyphens belong to a word: "data-driven" is not "driven".
_EDGE = "A-Za-z0-9-"


@lru_cache(maxsize=16)
def _tone_matcher(power: tuple[str, ...], humble: tuple[str, ...]) -> tuple[re.Pattern, frozenset[str]]:
    # Longest phrase first, so a phrase beats its own first word and counts once.
    phrases = sorted({_phrase_key(p) for p in power + humble}, key=lambda p: (-len(p), p))
    body = "|".join(r"\s+".join(re.escape(w) for w in p.split()) for p in phrases)
    pattern = re.compile(rf"(?<![{_EDGE}])(?:{body})(?![{_EDGE}])", re.IGNORECASE)
    return pattern, frozenset(_phrase_key(p) for p in power)


def tone_counts(text: str, lexicon: ToneLexicon | Mapping[str, Iterable[str]]) -> tuple[int, int]:
    """(power, humble) occurrences: case-insensitive, whole words (hyphens join words), a
    phrase counts once and its words are not counted again."""
    if not isinstance(lexicon, ToneLexicon):
        lexicon = ToneLexicon(tuple(lexicon["power"]), tuple(lexicon["humble"]))
    pattern, power_set = _tone_matcher(lexicon.power, lexicon.humble)
    power = humble = 0
    for m in pattern.finditer(text):
        if _phrase_key(m.group(0)) in power_set:
            power += 1
        else:
            humble += 1
    return power, humble


def tone_score(power: int, humble: int) -> float:
    """Notebook 004: (power - humble) / (power + humble + 1), from -1 (humble) to +1 (power)."""
    return (power - humble) / (power + humble + 1)


# --------------------------------------------------------------------------- TF-IDF

# scikit-learn's TfidfVectorizer defaults: lowercase, tokens of two or more word characters.
TFIDF_TOKEN = re.compile(r"(?u)\b\w\w+\b")


@dataclass(frozen=True)
class TfidfVectors:
    """L2-normalised TF-IDF rows of a corpus, stored sparsely (term ids sorted, weights).

    Variant (scikit-learn ``TfidfVectorizer()`` with its defaults): text lowercased, tokens are
    runs of two or more word characters (``\\b\\w\\w+\\b``), tf is the raw count, idf is
    ``ln((1 + n) / (1 + df)) + 1`` (``smooth_idf=True``; n documents, df documents holding the
    term), weight = tf · idf, each row divided by its l2 norm. A text without tokens is a zero
    row, whose cosine with anything is 0.
    """

    vocabulary: tuple[str, ...]
    idf: np.ndarray
    term_ids: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...]

    def cosine(self, i: int, j: int) -> float:
        _, a, b = np.intersect1d(self.term_ids[i], self.term_ids[j], assume_unique=True, return_indices=True)
        return float(np.dot(self.weights[i][a], self.weights[j][b]))

    def dense(self) -> np.ndarray:
        """The document-term matrix (for small corpora and tests)."""
        out = np.zeros((len(self.term_ids), len(self.vocabulary)))
        for row, (ids, w) in enumerate(zip(self.term_ids, self.weights)):
            out[row, ids] = w
        return out


def tfidf_vectors(texts: Sequence[str]) -> TfidfVectors:
    """TF-IDF of ``texts`` with the idf fitted on ``texts`` themselves (see :class:`TfidfVectors`)."""
    tokens = [TFIDF_TOKEN.findall(t.lower()) for t in texts]
    vocabulary = tuple(sorted({tok for doc in tokens for tok in doc}))
    index = {term: i for i, term in enumerate(vocabulary)}
    counted = []
    df = np.zeros(len(vocabulary), dtype=np.int64)
    for doc in tokens:
        ids, counts = np.unique(
            np.fromiter((index[t] for t in doc), dtype=np.int64, count=len(doc)), return_counts=True
        )
        counted.append((ids, counts))
        df[ids] += 1
    n = len(texts)
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    weights = []
    for ids, counts in counted:
        w = counts * idf[ids]
        norm = math.sqrt(float(np.dot(w, w)))
        weights.append(w / norm if norm > 0 else w.astype(np.float64))
    return TfidfVectors(vocabulary, idf, tuple(ids for ids, _ in counted), tuple(weights))


# --------------------------------------------------------------------------- similarity


def _style_rows(variants: pd.DataFrame) -> pd.DataFrame:
    """Row position of each (original_idx, style); refuses a résumé lacking a style of the set."""
    rows = pd.DataFrame(
        {
            "original_idx": variants["original_idx"].to_numpy(),
            "style": variants["style"].to_numpy(),
            "row": np.arange(len(variants)),
        }
    )
    duplicated = rows[rows.duplicated(["original_idx", "style"], keep=False)]
    if len(duplicated):
        first = duplicated.iloc[0]
        raise ValueError(f"style_variants: original_idx {first.original_idx} has more than one {first.style!r} version")
    table = rows.pivot(index="original_idx", columns="style", values="row")
    present = [s for s in STYLES if s in table.columns]
    missing = table[present].isna()
    if missing.any().any():
        style = missing.any().idxmax()
        idx = sorted(table.index[missing[style]])[:5]
        raise ValueError(f"style_variants: no {style!r} version for original_idx {idx}")
    return table[present].astype(int)


def pair_similarities(variants: pd.DataFrame, embeddings: np.ndarray) -> pd.DataFrame:
    """One row per (résumé, pair of its versions, measure): TF-IDF cosine (idf fitted on every
    text of ``variants``) and the cosine of ``embeddings`` (unit vectors aligned with rows)."""
    if len(embeddings) != len(variants):
        raise ValueError(f"{len(embeddings)} embeddings for {len(variants)} style_variants rows")
    rows = _style_rows(variants)
    tfidf = tfidf_vectors(variants["text"].tolist())
    frames = []
    for a, b in STYLE_PAIRS:
        if a not in rows.columns or b not in rows.columns:
            continue
        left, right = rows[a].to_numpy(), rows[b].to_numpy()
        measures = {
            "tfidf": np.array([tfidf.cosine(i, j) for i, j in zip(left, right)]),
            "minilm": np.einsum("ij,ij->i", embeddings[left], embeddings[right]).astype(np.float64),
        }
        for measure in SIMILARITY_MEASURES:
            frames.append(
                pd.DataFrame(
                    {
                        "original_idx": rows.index.to_numpy(),
                        "style_a": a,
                        "style_b": b,
                        "measure": measure,
                        "similarity": measures[measure],
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- thresholds


@dataclass(frozen=True)
class ValidationThresholds:
    """Notebook 004 pass/fail rules (``catalog/style_validation.yaml``)."""

    similarity_minimum: float
    similarity_statistic: str
    # Per measure, the pairs of styles held to the minimum (a measure not named: none).
    similarity_pairs: Mapping[str, tuple[tuple[str, str], ...]]
    tone_order: tuple[str, ...]
    # One per step of tone_order: how far each style's mean tone must lie above the next one's.
    tone_min_gaps: tuple[float, ...]
    # Styles whose mean tone must be above 0 / below 0.
    tone_positive: tuple[str, ...]
    tone_negative: tuple[str, ...]
    word_count_order: tuple[str, ...]

    def checks(self, measure: str, style_a: str, style_b: str) -> bool:
        return (style_a, style_b) in self.similarity_pairs.get(measure, ())


def _setting(data: Mapping, section: str, key: str) -> Any:
    part = data.get(section)
    if not isinstance(part, Mapping) or key not in part:
        raise CatalogError(f"{THRESHOLDS_FILE}: missing {section}.{key}")
    return part[key]


def _number(value: Any, where: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise CatalogError(f"{THRESHOLDS_FILE}: {where} must be a number from {low:g} to {high:g}, not {value!r}")
    return float(value)


def _choices(value: Any, where: str, allowed: Sequence[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or any(v not in allowed for v in value) or len(set(value)) != len(value):
        raise CatalogError(
            f"{THRESHOLDS_FILE}: {where} must be a list of distinct values from {', '.join(allowed)}, not {value!r}"
        )
    return tuple(value)


def _gaps(value: Any, steps: int) -> tuple[float, ...]:
    """``tone.min_gap``: one number for every step of ``tone.order``, or a list with one per step."""
    if not isinstance(value, list):
        return (_number(value, "tone.min_gap", 0.0, 2.0),) * steps
    if len(value) != steps:
        raise CatalogError(
            f"{THRESHOLDS_FILE}: tone.min_gap must be a number or a list of {steps} numbers "
            f"(one per step of tone.order), not {value!r}"
        )
    return tuple(_number(v, f"tone.min_gap[{i}]", 0.0, 2.0) for i, v in enumerate(value))


def _pairs(value: Any) -> dict[str, tuple[tuple[str, str], ...]]:
    """``{measure: ["neutral-overstated", ...]}`` as canonical (style_a, style_b) tuples."""
    canonical = {f"{a}-{b}": (a, b) for a, b in STYLE_PAIRS}
    either_order = canonical | {f"{b}-{a}": (a, b) for a, b in STYLE_PAIRS}
    if not isinstance(value, Mapping) or any(m not in SIMILARITY_MEASURES for m in value):
        raise CatalogError(
            f"{THRESHOLDS_FILE}: similarity.pairs must map measures ({', '.join(SIMILARITY_MEASURES)}) "
            f"to lists of pairs, not {value!r}"
        )
    out = {}
    for measure, names in value.items():
        where = f"similarity.pairs.{measure}"
        if names is None:
            names = []
        if not isinstance(names, list) or any(n not in either_order for n in names):
            raise CatalogError(
                f"{THRESHOLDS_FILE}: {where} must be a list of pairs from {', '.join(canonical)}, not {names!r}"
            )
        pairs = tuple(either_order[n] for n in names)
        if len(set(pairs)) != len(pairs):
            raise CatalogError(f"{THRESHOLDS_FILE}: {where} names a pair twice ({names!r})")
        out[measure] = pairs
    return out


def load_validation_thresholds(catalog_dir: CatalogDir = None) -> ValidationThresholds:
    data = load_yaml(THRESHOLDS_FILE, catalog_dir)
    if not isinstance(data, Mapping):
        raise CatalogError(f"{THRESHOLDS_FILE}: needs the sections similarity, tone and word_count")
    statistic = _setting(data, "similarity", "statistic")
    if statistic not in SIMILARITY_STATISTICS:
        raise CatalogError(
            f"{THRESHOLDS_FILE}: similarity.statistic must be one of {', '.join(SIMILARITY_STATISTICS)}, not {statistic!r}"
        )
    tone_order = _choices(_setting(data, "tone", "order"), "tone.order", STYLES)
    positive = _choices(_setting(data, "tone", "positive"), "tone.positive", STYLES)
    negative = _choices(_setting(data, "tone", "negative"), "tone.negative", STYLES)
    both = [s for s in positive if s in negative]
    if both:
        raise CatalogError(f"{THRESHOLDS_FILE}: tone: {', '.join(both)} is in both tone.positive and tone.negative")
    return ValidationThresholds(
        similarity_minimum=_number(_setting(data, "similarity", "minimum"), "similarity.minimum", -1.0, 1.0),
        similarity_statistic=statistic,
        similarity_pairs=_pairs(_setting(data, "similarity", "pairs")),
        tone_order=tone_order,
        tone_min_gaps=_gaps(_setting(data, "tone", "min_gap"), max(len(tone_order) - 1, 0)),
        tone_positive=positive,
        tone_negative=negative,
        word_count_order=_choices(_setting(data, "word_count", "order"), "word_count.order", STYLES),
    )


# --------------------------------------------------------------------------- tables


def style_validation_table(variants: pd.DataFrame, lexicon: ToneLexicon) -> pd.DataFrame:
    """One row per style: mean words, mean power/humble counts, mean tone score."""
    counts = [tone_counts(t, lexicon) for t in variants["text"]]
    per_row = pd.DataFrame(
        {
            "style": variants["style"].to_numpy(),
            "words": [word_count(t) for t in variants["text"]],
            "power": [c[0] for c in counts],
            "humble": [c[1] for c in counts],
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
        )
        .reindex([s for s in STYLES if s in set(per_row["style"])])
        .reset_index()
    )
    return table.astype(
        {"n_resumes": "int64", "mean_words": "float64", "mean_power_words": "float64", "mean_humble_words": "float64"}
    )


def style_similarity_table(pairs: pd.DataFrame, thresholds: ValidationThresholds) -> pd.DataFrame:
    """One row per (pair of styles, measure): mean and minimum over résumés, the threshold, and
    whether the pair is held to it (``checked``) and, if so, whether the configured statistic
    reaches it (``passed``; true for a pair not held to it)."""
    table = (
        pairs.groupby(["style_a", "style_b", "measure"], sort=False)["similarity"]
        .agg(n_resumes="size", similarity_mean="mean", similarity_min="min")
        .reset_index()
    )
    checked = np.array(
        [thresholds.checks(str(r.measure), str(r.style_a), str(r.style_b)) for r in table.itertuples(index=False)],
        dtype=np.bool_,
    )
    value = table[f"similarity_{thresholds.similarity_statistic}"]
    table["threshold"] = thresholds.similarity_minimum
    table["checked"] = checked
    table["passed"] = ~checked | (value >= thresholds.similarity_minimum)
    return table.astype({"n_resumes": "int64"})


def validation_failures(
    validation: pd.DataFrame, similarity: pd.DataFrame, thresholds: ValidationThresholds
) -> list[str]:
    """Each notebook 004 rule the style set breaks, in words (empty: the set passes)."""
    failures = []
    by_style = validation.set_index("style")

    def order(column: str, what: str, styles: tuple[str, ...], gaps: tuple[float, ...]) -> None:
        missing = [s for s in styles if s not in by_style.index]
        if missing:
            failures.append(f"{what}: no {', '.join(missing)} rows to compare")
            return
        for hi, lo, gap in zip(styles, styles[1:], gaps):
            scores = by_style[column].astype(float)
            a, b = float(scores[hi]), float(scores[lo])
            # Strictly above, and by at least the gap.
            if not (a > b and a - b >= gap):
                need = f"at least {gap:g} above" if gap else "above"
                failures.append(f"{what}: {hi} {a:.3f} is not {need} {lo} {b:.3f}")

    order("tone_score", "tone order", thresholds.tone_order, thresholds.tone_min_gaps)
    for styles, above, word in ((thresholds.tone_positive, True, "above"), (thresholds.tone_negative, False, "below")):
        for style in styles:
            if style not in by_style.index:
                failures.append(f"tone sign: no {style} rows to compare")
                continue
            value = float(by_style["tone_score"].astype(float)[style])
            if not (value > 0 if above else value < 0):
                failures.append(f"tone sign: {style} {value:.3f} is not {word} 0")
    order("mean_words", "word-count order", thresholds.word_count_order, (0.0,) * len(thresholds.word_count_order))
    stat = thresholds.similarity_statistic
    measured = {(r.measure, r.style_a, r.style_b): r for r in similarity.itertuples(index=False)}
    for measure, pairs in thresholds.similarity_pairs.items():
        for a, b in pairs:
            row = measured.get((measure, a, b))
            if row is None:
                failures.append(f"{measure} similarity {a}–{b}: not measured")
                continue
            value = float(getattr(row, f"similarity_{stat}"))
            if not value >= thresholds.similarity_minimum:
                failures.append(
                    f"{measure} similarity {row.style_a}–{row.style_b}: {stat} {value:.3f} "
                    f"below {thresholds.similarity_minimum:g}"
                )
    return failures
