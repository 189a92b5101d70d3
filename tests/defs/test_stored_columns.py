"""One contract per table (issue 12): every asset's table is declared once, strictly, in
core/tables/. The materialisation tests of each group call `assert_stored_columns_match`
on their DuckDB file, for full tables; test_impact_ratios.py does so for the tables derived
from empty inputs."""

from resumebias_dagster.core import tables
from tests.defs.stored_columns import declared_models


def test_every_asset_table_is_declared_strictly():
    models = declared_models()
    from tests.definitions_snapshot import snapshot

    assert set(models) == set(snapshot()["assets"]), "every asset is a table with a declared model"
    loose = sorted(name for name, model in models.items() if model.to_schema().strict is not True)
    assert loose == [], f"models that accept undeclared columns: {loose}"


def test_empty_table_has_the_declared_columns_and_dtypes():
    for model in set(declared_models().values()):
        empty = tables.empty_table(model)
        assert list(empty.columns) == tables.columns(model) and len(empty) == 0
        model.validate(empty)


def test_conform_refuses_an_undeclared_column_naming_it():
    import pandas as pd
    import pytest

    df = tables.empty_table(tables.ReportFiles).assign(surprise=pd.Series(dtype=object))
    with pytest.raises(ValueError, match=r"ReportFiles: columns \['surprise'\] are not declared in core/tables/"):
        tables.conform(df, tables.ReportFiles)
    missing = pd.DataFrame({"plot": ["a"], "bytes": [3]})
    with pytest.raises(ValueError, match=r"ReportFiles: required columns \['path'\] are missing"):
        tables.conform(missing, tables.ReportFiles)
