"""The seniority-study graph end to end on a small design, stored in a real DuckDB file."""

import dagster as dg
import duckdb
import pandas as pd
import pytest

from resumebias_dagster.defs.seniority_models import training
from resumebias_dagster.defs.seniority_study import (
    metrics,
    predictions,
    resumes,
    variants,
)
from resumebias_dagster.defs.user_resumes.files import user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from tests.defs.stored_columns import assert_stored_columns_match

MODULES = [resumes, variants, training, predictions, metrics]
# name_variants reads user_resumes (resumes: user); never materialised, it reads as empty.
ASSETS = [*dg.load_assets_from_modules(MODULES), user_resumes]
CHECKS = dg.load_asset_checks_from_modules(MODULES)
# The seniority-study tables without the models (tested in test_seniority_models.py).
TRAINING = {"classifier_training_set", "fine_tuned_classifiers"}
UNPARTITIONED = [a for a in ASSETS if a.partitions_def is None and not {k.path[-1] for k in a.keys} & TRAINING]

SOCIAL_CSV = """original_idx,true_seniority,demographic,name,model,prediction,correct
0,junior,caucasian_male,Greg Smith,m1,junior,True
0,junior,caucasian_female,Emily Smith,m1,mid,False
0,junior,african_american_male,Jamal Jones,m1,junior,True
0,junior,african_american_female,Lakisha Jones,m1,junior,True
1,senior,caucasian_male,Brad Ryan,m1,senior,True
1,senior,caucasian_female,Anne Ryan,m1,senior,True
1,senior,african_american_male,Hakim Banks,m1,mid,False
1,senior,african_american_female,Aisha Banks,m1,unknown,False
"""


@pytest.fixture(autouse=True)
def _allowed_roots(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's import files and store


def _resources(db_path):
    return {
        "io_manager": ResumebiasIOManager(database=str(db_path), schema="audit"),
        "catalog": CatalogResource(),
        "compute": ComputeResource(device="cpu", dtype="float32", num_threads=2),
        "shared_files": SharedFilesResource(),
        "providers": ProvidersResource(store_path=str(db_path.parent / "responses.sqlite")),
    }


def _run_config(import_paths=()):
    return {
        "ops": {
            "base_resumes": {"config": {"n_per_level": 2, "seed": 7}},
            "imported_predictions": {"config": {"import_paths": list(import_paths)}},
        }
    }


@pytest.mark.slow
def test_whole_graph_materialises_into_duckdb(tmp_path):
    csv = tmp_path / "social.csv"
    csv.write_text(SOCIAL_CSV)
    db = tmp_path / "study.duckdb"
    result = dg.materialize(
        [*ASSETS, *CHECKS],
        selection=UNPARTITIONED,
        resources=_resources(db),
        run_config=_run_config([str(csv)]),
    )
    assert result.success
    checks = {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {
        "style_facts_identical": True,
        "differ_only_in_names": True,
        "rules_hold": True,
    }

    with duckdb.connect(str(db), read_only=True) as con:
        counts = dict(
            con.execute("select table_name, estimated_size from duckdb_tables() where schema_name='audit'").fetchall()
        )
        base = con.execute("select * from audit.base_resumes").df()
        summary = con.execute("select * from audit.seniority_bias_summary").df()
        validation = con.execute("select * from audit.style_validation").df()
        similarity = con.execute("select * from audit.style_similarity").df()
    assert set(counts) >= {
        "base_resumes",
        "style_variants",
        "name_variants",
        "style_validation",
        "style_similarity",
        "imported_predictions",
        "seniority_group_metrics",
        "seniority_bias_summary",
    }
    assert len(base) == 6 and sorted(base["seniority"].value_counts().tolist()) == [2, 2, 2]
    row = summary.set_index("variant_kind").loc["demographic"]
    # Original 0 has four valid, differing predictions; original 1 has an unknown: 1 of 2 originals.
    assert row["n_inconsistent"] == 1 and row["inconsistency_rate"] == pytest.approx(0.5)
    assert row["n_invalid"] == 1
    tone = validation.set_index("style")["tone_score"]
    assert tone["overstated"] > tone["neutral"] > tone["understated"]
    # Three pairs by two measures; every pair held to the seniority study's 0.7 reaches it.
    assert len(similarity) == 6 and set(similarity["measure"]) == {"tfidf", "minilm"}
    assert similarity["passed"].all() and (similarity.loc[similarity["checked"], "similarity_mean"] >= 0.7).all()
    assert set(counts) <= assert_stored_columns_match(db)


def test_every_asset_reading_the_style_variants_waits_for_the_style_validation():
    """The blocking check on style_validation stops only the assets downstream of it, so every
    direct reader of style_variants (other than the validation's own outputs) must depend on it."""
    from resumebias_dagster.definitions import defs

    graph = defs.resolve_asset_graph()
    readers = graph.get(dg.AssetKey("style_variants")).child_keys
    validation = {dg.AssetKey("style_validation"), dg.AssetKey("style_similarity")}
    assert readers - validation, "nothing reads style_variants"
    for key in readers - validation:
        assert dg.AssetKey("style_validation") in graph.get(key).parent_keys, key.to_user_string()


@pytest.mark.slow
def test_a_style_set_failing_seed_004_rules_stops_the_predictions_of_the_run(tmp_path):
    """The blocking check on style_validation keeps seniority_predictions (which depends on it)
    from running in the same run; the validation tables that explain why are stored."""
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    # No style set can lead the next style's mean tone by more than 2 (the score lies in [-1, 1]).
    (catalog / "style_validation.yaml").write_text(
        "similarity: {minimum: 0.7, statistic: mean, pairs: {minilm: [neutral-overstated]}}\n"
        "tone: {order: [overstated, neutral, understated], min_gap: 2.0, positive: [], negative: []}\n"
        "word_count: {order: [overstated, neutral, understated]}\n"
    )
    db = tmp_path / "study.duckdb"
    keys = predictions.seniority_predictions.partitions_def.get_partition_keys()
    model = "minilm-classifier" if "minilm-classifier" in keys else keys[0]
    result = dg.materialize(
        [*ASSETS, *CHECKS],
        selection=[
            resumes.base_resumes,
            variants.style_variants,
            variants.style_validation,
            variants.name_variants,
            predictions.seniority_predictions,
        ],
        partition_key=model,
        resources={**_resources(db), "catalog": CatalogResource(catalog_dir=str(catalog))},
        run_config={"ops": {"base_resumes": {"config": {"n_per_level": 1}}}},
        raise_on_error=False,
    )
    assert not result.success
    checks = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    failed = checks["rules_hold"]
    assert not failed.passed and "tone order: overstated" in failed.description
    started = {e.step_key for e in result.all_events if e.event_type_value == "STEP_START"}
    assert "seniority_predictions" not in started
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
    assert {"style_validation", "style_similarity"} <= tables and "seniority_predictions" not in tables


def test_bad_import_file_fails_with_its_name_and_nothing_downstream_runs(tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_text("original_idx,true_seniority,model,prediction\n0,junior,m1,junior\n")
    db = tmp_path / "study.duckdb"
    selection = [predictions.imported_predictions, *dg.load_assets_from_modules([metrics])]
    with pytest.raises(Exception, match=r"broken\.csv.*(missing|column)"):
        dg.materialize(
            [*ASSETS],
            selection=selection,
            resources=_resources(db),
            run_config={"ops": {"imported_predictions": {"config": {"import_paths": [str(bad)]}}}},
        )
    if db.exists():
        with duckdb.connect(str(db), read_only=True) as con:
            tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
        assert not tables & {"imported_predictions", "seniority_group_metrics", "seniority_bias_summary"}


def test_predictions_violating_the_schema_are_not_stored(tmp_path):
    """The pandera Dagster type blocks a table with an impossible label before storage."""

    @dg.asset(name="imported_predictions", dagster_type=predictions.SeniorityPredictionsType)
    def broken_predictions() -> pd.DataFrame:
        return pd.DataFrame(
            {
                "variant_kind": ["style"],
                "original_idx": [0],
                "variant": ["neutral"],
                "model": ["m"],
                "run": [0],
                "prediction": ["lead"],
                "true_seniority": ["mid"],
                "resolved_model": [None],
                "latency_s": [float("nan")],
                "error": [None],
            }
        ).astype({"resolved_model": object, "error": object})

    db = tmp_path / "study.duckdb"
    result = dg.materialize(
        [broken_predictions, *[a for a in ASSETS if "imported_predictions" not in {k.path[-1] for k in a.keys}]],
        selection=[broken_predictions, *dg.load_assets_from_modules([metrics])],
        resources=_resources(db),
        raise_on_error=False,
    )
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "lead" in str(failure.event_specific_data.error)
    assert [e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"] == []
