"""The Dagster types of the asset tables: each pandera model of `core/tables/` checked
before its table is stored, so a table that fails its schema is never stored and nothing
downstream runs on it.

One type per model that `core.tables` exports, named after it: ``<Model>Type`` here
(``from resumebias_dagster.schemas import FitScoresType``), ``<Model>`` in Dagster, described
by the model's docstring. The models themselves are importable from here too."""

from __future__ import annotations

import warnings

import pandera.pandas as pa
from dagster import DagsterType
from dagster_pandera import pandera_schema_to_dagster_type

from resumebias_dagster.core import tables
from resumebias_dagster.core.tables import *  # noqa: F403  (the models, for the assets)


def _models() -> tuple[type[pa.DataFrameModel], ...]:
    """Every table model core/tables/ exports, in its ``__all__`` order."""
    exported = [getattr(tables, name) for name in tables.__all__]
    return tuple(m for m in exported if isinstance(m, type) and issubclass(m, pa.DataFrameModel))


MODELS = _models()

with warnings.catch_warnings():
    # The converter is marked beta; it is the documented way to enforce pandera in Dagster.
    warnings.simplefilter("ignore")
    DAGSTER_TYPES: dict[str, DagsterType] = {
        f"{model.__name__}Type": pandera_schema_to_dagster_type(model) for model in MODELS
    }


def __getattr__(name: str) -> DagsterType:
    """``<Model>Type``: the Dagster type of the table ``<Model>``."""
    try:
        return DAGSTER_TYPES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *DAGSTER_TYPES])
