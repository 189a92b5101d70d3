"""What every table declaration shares: the strict base of every model and the key columns
several tables begin with, the helpers core builds its frames with, and the plot files table.

A model's columns are its base's, then its own (in declaration order); a column a model
declares again keeps its base's place. Each model is named after its class (the Dagster
type's name, schemas.py), and its docstring is the table's description.

A check declared on a base that several tables share is named as its method: pandera (0.35)
gives a check's ``name=`` to the first table built from it only, the method's name to the others."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing.pandas import Series


def columns(model: type[pa.DataFrameModel]) -> list[str]:
    """The table's columns in their declared order."""
    return list(model.to_schema().columns)


def empty_table(model: type[pa.DataFrameModel]) -> pd.DataFrame:
    """A table with no rows and the model's columns and dtypes (nothing to report yet)."""
    schema = model.to_schema()
    return pd.DataFrame({name: pd.Series(dtype=column.dtype.type) for name, column in schema.columns.items()})


def conform(df: pd.DataFrame, model: type[pa.DataFrameModel]) -> pd.DataFrame:
    """`df` with exactly the model's columns in the declared order; an empty frame (or one
    missing nullable columns) gets them typed, so empty and full runs store the same table.
    A column the model does not declare is a programming error, not something to drop."""
    schema = model.to_schema()
    extra = [c for c in df.columns if c not in schema.columns]
    if extra:
        raise ValueError(f"{schema.name}: columns {extra} are not declared in core/tables/")
    if not len(df):
        return empty_table(model)
    missing = [c for c in schema.columns if c not in df.columns]
    not_nullable = [c for c in missing if not schema.columns[c].nullable]
    if not_nullable:
        raise ValueError(f"{schema.name}: required columns {not_nullable} are missing")
    out = df.copy() if missing else df
    for c in missing:
        out[c] = pd.Series(
            pd.NA if schema.columns[c].dtype.type is object else float("nan"),
            index=df.index,
            dtype=schema.columns[c].dtype.type,
        )
    return out[list(schema.columns)]


class StrictTable(pa.DataFrameModel):
    """Every table: strict, a column that is not declared is refused."""

    class Config:
        strict = True


class PerModel(StrictTable):
    """A table with rows per model: the model's name (models config) comes first."""

    model: Series[str]


class PerJudge(StrictTable):
    """A table with rows per judge of the audit: the judge's name comes first."""

    judge: Series[str]


class ReportFiles(StrictTable):
    """Files written under the data directory: plots, the audit report."""

    plot: Series[str] = pa.Field(unique=True)
    path: Series[str]
    bytes: Series[int] = pa.Field(gt=0)
