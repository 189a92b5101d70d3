"""The DuckDB I/O manager when a partitioned table's model gains a column (fit_scores' `name`):
partitions written before keep their rows, with NULL in the new column."""

import dagster as dg
import duckdb
import pandas as pd

from resumebias_dagster.resources.storage import ResumebiasIOManager

PARTITIONS = dg.StaticPartitionsDefinition(["a", "b"])


def _asset(with_name: bool):
    @dg.asset(name="scores", partitions_def=PARTITIONS, metadata={"partition_expr": "jd"})
    def scores(context: dg.AssetExecutionContext) -> pd.DataFrame:
        frame = pd.DataFrame({"jd": [context.partition_key] * 2, "score": [6.0, 7.0]})
        if with_name:
            frame.insert(1, "name", ["Brad McCarthy", None])
        return frame

    return scores


def test_a_partition_with_a_new_column_is_stored_beside_the_older_ones(tmp_path):
    database = tmp_path / "study.duckdb"
    resources = {"io_manager": ResumebiasIOManager(database=str(database), schema="audit")}
    assert dg.materialize([_asset(False)], partition_key="a", resources=resources).success
    assert dg.materialize([_asset(True)], partition_key="b", resources=resources).success
    with duckdb.connect(str(database), read_only=True) as con:
        rows = con.execute("SELECT jd, name, score FROM audit.scores ORDER BY jd, score").fetchall()
    assert rows == [("a", None, 6.0), ("a", None, 7.0), ("b", "Brad McCarthy", 6.0), ("b", None, 7.0)]
