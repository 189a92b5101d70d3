"""The shared-tables I/O manager in real Dagster runs: partitions written apart (one run or a
range run), read by an unpartitioned downstream asset, and clear refusals."""

import dagster as dg
import pandas as pd
import pytest

from resumebias_dagster.core.common.shared_tables import SharedTables, SharedTablesError
from resumebias_dagster.resources.storage import ResumebiasIOManager, SharedTablesIOManager, default_io_manager

PARTITIONS = dg.MultiPartitionsDefinition(
    {
        "model": dg.StaticPartitionsDefinition(["m1", "m2"]),
        "jd": dg.StaticPartitionsDefinition(["jd1", "jd2", "jd3"]),
    }
)


@dg.asset(
    partitions_def=PARTITIONS,
    metadata={"partition_expr": {"model": "model", "jd": "jd"}},
    backfill_policy=dg.BackfillPolicy.multi_run(3),
)
def scores(context: dg.AssetExecutionContext) -> pd.DataFrame:
    rows = []
    for key in context.partition_keys:
        dims = PARTITIONS.get_partition_key_from_str(key).keys_by_dimension
        rows += [{"model": dims["model"], "jd": dims["jd"], "score": float(i)} for i in range(2)]
    return pd.DataFrame(rows)


@dg.asset
def summary(scores: pd.DataFrame) -> pd.DataFrame:
    return scores.groupby("model", as_index=False)["score"].count()


@dg.asset(partitions_def=PARTITIONS, metadata={"partition_expr": {"model": "model", "jd": "jd"}})
def leaky(context: dg.AssetExecutionContext) -> pd.DataFrame:
    return pd.DataFrame({"model": ["m1", "m2"], "jd": ["jd1", "jd1"], "score": [1.0, 2.0]})


@dg.asset
def never_materialised() -> pd.DataFrame:
    return pd.DataFrame({"a": [1]})


@dg.asset
def reads_missing(never_materialised: pd.DataFrame) -> pd.DataFrame:
    return never_materialised


@pytest.fixture
def io_manager(tmp_path):
    return SharedTablesIOManager(url=f"file://{tmp_path}/tables")


def test_partitions_from_separate_runs_and_a_range_run_are_all_read_downstream(io_manager, tmp_path):
    resources = {"io_manager": io_manager}
    assert dg.materialize([scores], partition_key="jd1|m1", resources=resources).success
    # A backfill run over a range of partitions writes one file per partition.
    ranged = dg.materialize(
        [scores],
        resources=resources,
        tags={"dagster/asset_partition_range_start": "jd1|m2", "dagster/asset_partition_range_end": "jd3|m2"},
    )
    assert ranged.success
    stored = SharedTables(io_manager.url).partitions("audit", "scores")
    assert len(stored) == 4
    result = dg.materialize([scores, summary], selection=[summary], resources=resources)
    assert result.success
    assert result.output_for_node("summary").set_index("model")["score"].to_dict() == {"m1": 2, "m2": 6}
    mat = ranged.get_asset_materialization_events()[0].materialization
    assert mat.metadata["dagster/storage_kind"].value == "parquet"


def test_a_rerun_partition_replaces_its_rows(io_manager):
    resources = {"io_manager": io_manager}
    for _ in range(2):
        assert dg.materialize([scores], partition_key="jd2|m1", resources=resources).success
    assert len(SharedTables(io_manager.url).read("audit", "scores")) == 2


def test_rows_of_partitions_outside_the_run_are_refused_before_anything_is_written(io_manager):
    with pytest.raises(dg.Failure, match=r"leaky: rows for partitions outside this run .*'m2'.*nothing written"):
        dg.materialize([leaky], partition_key="jd1|m1", resources={"io_manager": io_manager})
    assert SharedTables(io_manager.url).read("audit", "leaky") is None


def test_an_upstream_never_materialised_is_named(io_manager):
    with pytest.raises(
        dg.Failure, match=r"upstream asset 'never_materialised' has not been materialised in the shared"
    ):
        dg.materialize(
            [never_materialised, reads_missing], selection=[reads_missing], resources={"io_manager": io_manager}
        )


def test_default_is_duckdb_and_the_environment_selects_shared_tables(monkeypatch, tmp_path):
    monkeypatch.delenv("RESUMEBIAS_TABLES_URL", raising=False)
    assert isinstance(default_io_manager(), ResumebiasIOManager)
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", "s3://bucket/audit")
    chosen = default_io_manager()
    assert isinstance(chosen, SharedTablesIOManager) and chosen.url == "s3://bucket/audit"
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", "s3://AKIA:hunter2@bucket/audit")
    with pytest.raises(SharedTablesError) as e:
        default_io_manager()
    assert str(e.value).startswith("RESUMEBIAS_TABLES_URL: ") and "hunter2" not in str(e.value)
