"""The probe catalog's vocabulary: arms, the baseline, the table columns."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.core.tables import ProbeVariants, columns

AXES_FILE = "probe_axes.yaml"
# fit_effects gives these arms meaning: placebo sets the noise floor, probe the bias index.
ARMS = ("probe", "anonymize", "prompt_injection", "placebo")
BASELINE = "baseline"
VARIANT_COLUMNS = columns(ProbeVariants)  # the probe_variants table (core/tables/)
PROBLEM_COLUMNS = ["resume_id", "variant", "problem"]
ANONYMIZE_SIGNALS = ("name", "contact", "links", "employers", "schools", "locations", "dates")
PLACEHOLDERS = ("name", "email", "phone", "link", "location", "employer", "school", "year")
PLACEBO_OPS = ("blank_line", "trailing_space", "bullet_glyph", "replace_word")

CatalogDir = str | os.PathLike | None


@dataclass(frozen=True)
class Axis:
    id: str
    arm: str
    label: str
    edit: str
    levels: dict[str, Any]  # level slug -> value, in file order
    params: dict[str, Any]  # the axis' other keys (months, placeholders)


@dataclass(frozen=True)
class ProbeAxes:
    interests: str  # appended to every résumé of the arm; "" for none
    axes: tuple[Axis, ...]

    def arms(self) -> dict[str, str]:
        return {a.id: a.arm for a in self.axes}

    def select(self, ids: Iterable[str]) -> ProbeAxes:
        ids = list(ids)
        unknown = sorted(set(ids) - {a.id for a in self.axes})
        if unknown:
            raise ValueError(f"unknown probe axes {unknown}; known: {[a.id for a in self.axes]}")
        return ProbeAxes(self.interests, tuple(a for a in self.axes if a.id in ids))


@dataclass(frozen=True)
class Signal:
    """One applied level: the variant's lines and what it was allowed to change."""

    lines: tuple[str, ...]
    removed: tuple[str, ...]  # values taken out of the baseline
    added: tuple[str, ...]  # values written in
    changed: frozenset[int]  # baseline lines that hold the signal
    inserts: bool = False  # whether lines may be added

    @property
    def text(self) -> str:
        return "\n".join(self.lines)
