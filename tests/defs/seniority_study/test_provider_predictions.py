"""A provider model as a seniority_predictions partition, against a real HTTP server on 127.0.0.1."""

import dagster as dg
import duckdb
import yaml

from resumebias_dagster.defs.seniority_models import training
from resumebias_dagster.defs.seniority_study import predictions, resumes, variants
from resumebias_dagster.defs.user_resumes.files import user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.testing.fake_providers import FakeProviderServer

FAKE_KEY = "sk-FAKEKEY-dagster-asset-7c1e5f0a-do-not-leak"
KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
PARTITIONS = dg.StaticPartitionsDefinition(["fake-gpt"])
PREDICTIONS = predictions.build_seniority_predictions(PARTITIONS)
UPSTREAM = [
    user_resumes,
    resumes.base_resumes,
    variants.style_variants,
    variants.name_variants,
    training.classifier_training_set,
    training.fine_tuned_classifiers,
]


def _answer(request) -> str:
    # Messy but parsable answers, as real models give them.
    return "**Senior.**" if "Lead" in request.prompt or "Principal" in request.prompt else "Mid-level"


def test_provider_partition_calls_once_then_serves_from_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's catalog folder and store
    with FakeProviderServer("openai", answer=_answer) as server:
        catalog_dir = tmp_path / "catalog"
        catalog_dir.mkdir()
        entry = {
            "name": "fake-gpt",
            "kind": "provider",
            "provider": "openai",
            "model": "openai/gpt-5",
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "temperature": 0.7,
            "runs_per_cell": 2,
            "max_concurrency": 8,
            "timeout_s": 5.0,
            "max_retries": 1,
        }
        (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
        db = tmp_path / "study.duckdb"
        store = tmp_path / "responses.sqlite"
        resources = {
            "io_manager": ResumebiasIOManager(database=str(db), schema="audit"),
            "catalog": CatalogResource(catalog_dir=str(catalog_dir)),
            "compute": ComputeResource(device="cpu"),
            "shared_files": SharedFilesResource(),
            "providers": ProvidersResource(catalog_dir=str(catalog_dir), store_path=str(store)),
        }
        home = tmp_path / "dagster_home"
        home.mkdir()
        with dg.instance_for_test(temp_dir=str(home)) as instance:
            dg.materialize(
                [*UPSTREAM, PREDICTIONS],
                selection=UPSTREAM,  # no fine-tuned model here: fine_tuned_classifiers is an empty table
                resources=resources,
                run_config={
                    "ops": {
                        "base_resumes": {"config": {"n_per_level": 1, "seed": 3}},
                        "classifier_training_set": {"config": {"n_per_level": 4, "seed": 1003}},
                    }
                },
                instance=instance,
            )
            first = dg.materialize(
                [*UPSTREAM, PREDICTIONS],
                selection=[PREDICTIONS],
                partition_key="fake-gpt",
                resources=resources,
                instance=instance,
            )
            rows = first.output_for_node("seniority_predictions")
            # 3 résumés: 9 style + 12 name variants, 2 samples each, one call per sample.
            assert server.count == 42 and len(rows) == 42
            assert set(rows["prediction"]) <= {"mid", "senior"} and rows["error"].isna().all()
            assert rows["resolved_model"].notna().all()
            meta = first.asset_materializations_for_node("seniority_predictions")[0].metadata
            assert meta["provider_calls_made"].value == 42
            assert meta["provider_calls_from_store"].value == 0

            again = dg.materialize(
                [*UPSTREAM, PREDICTIONS],
                selection=[PREDICTIONS],
                partition_key="fake-gpt",
                resources=resources,
                instance=instance,
            )
            assert server.count == 42, "nothing changed, so no new provider call"
            meta = again.asset_materializations_for_node("seniority_predictions")[0].metadata
            assert meta["provider_calls_made"].value == 0
            assert meta["provider_calls_from_store"].value == 42

            logs = [dg.serialize_value(r.event_log_entry) for r in instance.get_records_for_run(again.run_id).records]
            logs += [dg.serialize_value(r.event_log_entry) for r in instance.get_records_for_run(first.run_id).records]
            assert all(FAKE_KEY not in entry for entry in logs)
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("select * from audit.seniority_predictions").df()
    assert len(stored) == 42
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert FAKE_KEY.encode() not in file.read_bytes(), file
