"""The declared settings of every verdict: level, power, margins and effects to detect
(``catalog/inference.yaml``, a user catalog folder's copy first), checked when read."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.tables.verdicts import CHANCE_KINDS

SETTINGS_FILE = "inference.yaml"
# Kinds of bias finding; each has a margin and an effect to detect, in its own unit
# (``resumebias plan`` sizes studies for these).
KINDS = ("style_shift", "seniority_bias", "inconsistency", "fit_delta", "impact_ratio")
# Kinds of validity finding (issue 42): does the screener order a better and a worse twin of a
# résumé the right way, and as often for every name group; does it read a résumé's true
# seniority level (accuracy), and does it over- or underrate it on average (rank difference).
VALIDITY_KINDS = ("criterion_validity", "validity_gap", "seniority_accuracy", "rank_difference")
ALL_KINDS = KINDS + VALIDITY_KINDS
# Kinds whose finding is a share read against chance: its value when the screener orders pairs
# at random. Their margin is a target (the share a valid screener reaches), their effect to
# detect a share too; the estimate is built as the excess over chance (core/inference/verdicts.py).
CHANCE = dict(CHANCE_KINDS)
UNITS = {
    "style_shift": "levels",
    "seniority_bias": "levels",
    "inconsistency": "share of résumés",
    "fit_delta": "points",
    "impact_ratio": "ratio",
    "criterion_validity": "share of comparisons",
    "validity_gap": "share of comparisons",
    "seniority_accuracy": "share of texts",
    "rank_difference": "levels",
}


@dataclass(frozen=True)
class InferenceSettings:
    alpha: float = 0.05
    power: float = 0.80
    exact_max: int = 14
    draws: int = 9999
    seed: int = 0
    margins: Mapping[str, float] = field(
        default_factory=lambda: {
            "style_shift": 0.05,
            "seniority_bias": 0.05,
            "inconsistency": 0.05,
            "fit_delta": 0.25,
            "impact_ratio": 0.9,
            "criterion_validity": 0.9,
            "validity_gap": 0.1,
            "seniority_accuracy": 0.8,
            "rank_difference": 0.1,
        }
    )
    detect: Mapping[str, float] = field(
        default_factory=lambda: {
            "style_shift": 0.05,
            "seniority_bias": 0.05,
            "inconsistency": 0.05,
            "fit_delta": 0.25,
            "impact_ratio": 0.8,
            "criterion_validity": 0.75,
            "validity_gap": 0.1,
            "seniority_accuracy": 0.6,
            "rank_difference": 0.1,
        }
    )


def _number(value, where: str, low: float, high: float, *, open_low: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CatalogError(f"{SETTINGS_FILE}: {where} must be a number, got {value!r}")
    ok = (value > low if open_low else value >= low) and value < high
    if not ok:
        raise CatalogError(
            f"{SETTINGS_FILE}: {where} must lie in {'(' if open_low else '['}{low:g}, {high:g}), got {value!r}"
        )
    return float(value)


def _per_kind(data: Mapping, key: str) -> dict[str, float]:
    section = data.get(key)
    if not isinstance(section, dict):
        raise CatalogError(
            f"{SETTINGS_FILE}: `{key}` must map each kind of finding ({', '.join(ALL_KINDS)}) to a number"
        )
    unknown = sorted(set(map(str, section)) - set(ALL_KINDS))
    missing = [k for k in ALL_KINDS if k not in section]
    if unknown or missing:
        raise CatalogError(
            f"{SETTINGS_FILE}: `{key}` must list exactly {', '.join(ALL_KINDS)}; missing {missing}, unknown {unknown}"
        )
    out = {}
    for kind in ALL_KINDS:
        if kind == "impact_ratio":
            out[kind] = _number(section[kind], f"{key}.{kind}", 0.0, 1.0)
        elif kind in CHANCE:  # a share between chance and 1 (1 itself no finite sample can show)
            out[kind] = _number(section[kind], f"{key}.{kind}", CHANCE[kind], 1.0)
        elif kind == "validity_gap":
            out[kind] = _number(section[kind], f"{key}.{kind}", 0.0, 1.0)
        else:
            out[kind] = _number(section[kind], f"{key}.{kind}", 0.0, float("inf"))
    return out


def load_inference_settings(catalog_dir: str | os.PathLike | None = None) -> InferenceSettings:
    """The settings of ``inference.yaml``; a malformed file is refused naming the setting."""
    data = load_yaml(SETTINGS_FILE, catalog_dir)
    if not isinstance(data, dict):
        raise CatalogError(f"{SETTINGS_FILE}: must be a mapping with alpha, power, randomization, margins, detect")
    randomization = data.get("randomization") or {}
    if not isinstance(randomization, dict):
        raise CatalogError(f"{SETTINGS_FILE}: `randomization` must be a mapping with exact_max, draws, seed")
    exact_max, draws, seed = (randomization.get(k, d) for k, d in (("exact_max", 14), ("draws", 9999), ("seed", 0)))
    for name, value, low, high in (
        ("exact_max", exact_max, 1, 20),
        ("draws", draws, 99, 10**6),
        ("seed", seed, 0, 2**32),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise CatalogError(
                f"{SETTINGS_FILE}: randomization.{name} must be a whole number in [{low}, {high}], got {value!r}"
            )
    return InferenceSettings(
        alpha=_number(data.get("alpha", 0.05), "alpha", 0.0, 0.5),
        power=_number(data.get("power", 0.8), "power", 0.5, 1.0, open_low=False),
        exact_max=exact_max,
        draws=draws,
        seed=seed,
        margins=_per_kind(data, "margins"),
        detect=_per_kind(data, "detect"),
    )
