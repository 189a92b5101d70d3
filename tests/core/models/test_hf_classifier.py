"""``kind: hf-classifier``: a tiny random BERT classifier saved here (tokenizer of the packaged
MiniLM, offline) is loaded, its labels summed into the seniority levels, and its rows validated."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.models.compute import resolve_compute
from resumebias_dagster.core.models.embedding import DEFAULT_EMBEDDING_MODEL
from resumebias_dagster.core.models.hf_classifier import (
    HfClassifierError,
    classifier_probabilities,
    level_label_ids,
    level_probabilities,
    load_hf_classifier,
    resolve_classifier_source,
    weights_identity,
)
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.models.model_sources import ModelSourceError, resolve_model_source

ID2LABEL = {0: "entry", 1: "intern", 2: "experienced", 3: "lead"}
LABELS = {"entry": "junior", "intern": "junior", "experienced": "mid", "lead": "senior"}
TEXTS = [
    "Intern, wrote unit tests for the billing service.",
    "Led a team of twelve engineers across three time zones and set the architecture.",
    "Five years of SQL reporting.",
]
CPU = resolve_compute("cpu", "float32", 1, 2, cuda_available=False)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A 4-label BERT classifier (random weights, fixed seed) with a real BERT tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-classifier")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_source(DEFAULT_EMBEDDING_MODEL))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        num_labels=len(ID2LABEL),
        id2label=ID2LABEL,
        label2id={v: k for k, v in ID2LABEL.items()},
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def spec_of(source, **options):
    entry = {"name": "tiny", "kind": "hf-classifier", "source": str(source), "labels": LABELS, **options}
    return parse_models({"models": [entry]}, "test-models.yaml")[0]


def manual_label_probs(folder, texts):
    """Softmax of the model's logits, one unpadded text at a time, in float64."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    rows = []
    with torch.inference_mode():
        for text in texts:
            logits = model(**tokenizer(text, truncation=True, max_length=64, return_tensors="pt")).logits
            rows.append(torch.softmax(logits.double(), dim=-1)[0].numpy())
    return np.stack(rows)


def test_level_probabilities_sum_the_labels_of_a_level_exactly():
    p = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.15, 0.05]])
    out = level_probabilities(p, ((0, 1), (2,), (3,)))
    np.testing.assert_array_equal(out, np.stack([p[:, 0] + p[:, 1], p[:, 2], p[:, 3]], axis=1))


def test_probabilities_are_the_models_softmax_summed_per_level(model_dir):
    classifier = load_hf_classifier(spec_of(model_dir), CPU)
    assert classifier.level_ids == ((0, 1), (2,), (3,))
    probs = classifier_probabilities(classifier, TEXTS, CPU)
    assert probs.shape == (len(TEXTS), 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    manual = manual_label_probs(model_dir, TEXTS)
    expected = np.stack([manual[:, 0] + manual[:, 1], manual[:, 2], manual[:, 3]], axis=1)
    np.testing.assert_allclose(probs, expected, atol=1e-6)
    assert classifier_probabilities(classifier, [], CPU).shape == (0, 3)


def test_integer_ids_name_the_same_labels(model_dir):
    by_name = classifier_probabilities(load_hf_classifier(spec_of(model_dir), CPU), TEXTS, CPU)
    ids = spec_of(model_dir, labels={0: "junior", 1: "junior", 2: "mid", "3": "senior"})
    np.testing.assert_array_equal(classifier_probabilities(load_hf_classifier(ids, CPU), TEXTS, CPU), by_name)


def test_batch_size_and_max_length_of_the_entry_are_used(model_dir, monkeypatch):
    from resumebias_dagster.core.models import finetune

    seen = {}
    real = finetune.classify

    def spy(model, tokenizer, texts, settings, max_length):
        seen.update(batch_size=settings.batch_size, max_length=max_length)
        return real(model, tokenizer, texts, settings, max_length)

    monkeypatch.setattr(finetune, "classify", spy)
    logged = []
    classifier = load_hf_classifier(spec_of(model_dir, batch_size=3, max_length=512), CPU, log=logged.append)
    classifier_probabilities(classifier, TEXTS, CPU)
    # The tiny model has 64 positions: 512 tokens would not fit it.
    assert seen == {"batch_size": 3, "max_length": 64}
    assert logged == ["tiny: max_length 512 capped at 64, the most the model reads"]
    classifier = load_hf_classifier(spec_of(model_dir, max_length=16), CPU)
    assert (classifier.batch_size, classifier.max_length) == (16, 16)


def test_an_unmapped_model_label_is_named(model_dir):
    labels = {k: v for k, v in LABELS.items() if k != "intern"}
    with pytest.raises(HfClassifierError) as err:
        load_hf_classifier(spec_of(model_dir, labels=labels), CPU)
    message = str(err.value)
    assert message.startswith(f"models.tiny.labels ({model_dir}): the model's label(s) 'intern' (id 1) map to no")
    assert "config.id2label (0: entry, 1: intern, 2: experienced, 3: lead)" in message


def test_a_label_the_model_lacks_is_refused(model_dir):
    with pytest.raises(HfClassifierError, match=r"models\.tiny\.labels \(.*\): 'boss' is not a label of the model; "):
        load_hf_classifier(spec_of(model_dir, labels={**LABELS, "boss": "senior"}), CPU)
    with pytest.raises(HfClassifierError, match=r"7 is not a label of the model; its labels \(id: name\) are 0: entry"):
        load_hf_classifier(spec_of(model_dir, labels={**LABELS, 7: "senior"}), CPU)


def test_a_label_given_twice_is_refused():
    with pytest.raises(HfClassifierError, match=r"m: the model's label 'a' \(id 0\) is given twice, as 'a' and 0"):
        level_label_ids({0: "a", 1: "b", 2: "c"}, {"a": "junior", 0: "junior", "b": "mid", "c": "senior"}, where="m")


def test_a_hub_id_is_refused_without_allow_download(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HfClassifierError) as err:
        load_hf_classifier(spec_of("someorg/resume-roberta"), CPU)
    message = str(err.value)
    assert message.startswith("models.tiny.source: 'someorg/resume-roberta' is not a folder")
    assert "not in the local cache; set allow_download: true on the entry to download it from the hub" in message
    assert isinstance(err.value, ModelSourceError)
    # With allow_download the id goes to from_pretrained as is (nothing is fetched here).
    assert resolve_classifier_source("someorg/resume-roberta", allow_download=True) == "someorg/resume-roberta"


def test_a_missing_folder_is_named(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(HfClassifierError, match=rf"models\.tiny\.source: model path '{missing}' does not exist"):
        load_hf_classifier(spec_of(missing, allow_download=True), CPU)


def test_a_folder_without_a_model_is_named(tmp_path):
    with pytest.raises(HfClassifierError, match=rf"models\.tiny\.source: {tmp_path} holds no Hugging Face model"):
        load_hf_classifier(spec_of(tmp_path), CPU)


def test_a_base_model_without_a_trained_head_is_refused():
    # The packaged MiniLM is an encoder: its classification head would be random.
    with pytest.raises(HfClassifierError, match=r"is not a trained sequence classifier: weights classifier\.bias"):
        load_hf_classifier(
            spec_of(DEFAULT_EMBEDDING_MODEL, labels={"LABEL_0": "junior", "LABEL_1": "mid", 2: "senior"}), CPU
        )


def test_identity_hashes_the_weights(model_dir, tmp_path):
    identity = weights_identity(str(model_dir), str(model_dir))
    assert identity.startswith(f"hf:{model_dir}@") and len(identity.rsplit("@", 1)[1]) == 12
    assert weights_identity(str(model_dir), str(model_dir)) == identity
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "config.json").write_text((model_dir / "config.json").read_text().replace('"lead"', '"boss"'))
    assert weights_identity(str(model_dir), str(copy)) != identity


def variants() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "variant_kind": ["style", "style", "demographic"],
            "original_idx": np.array([0, 0, 1], dtype="int64"),
            "variant": ["neutral", "overstated", "african_american_female"],
            "true_seniority": ["junior", "junior", "senior"],
            "name": [None, None, "Keisha Washington"],
            "text": TEXTS,
        }
    ).astype({"name": object})


def test_rows_validate_as_seniority_predictions(model_dir):
    from resumebias_dagster.core.models.runtime import ModelRuntime
    from resumebias_dagster.core.seniority.task import predict_seniority
    from resumebias_dagster.core.tables import SeniorityPredictions

    runtime = ModelRuntime(resolve_compute=lambda: CPU, cache_dir=model_dir)

    def predict_with_hf_classifier(spec, variants, _settings):
        rows, stats = predict_seniority(spec, variants, runtime, "{resume}")
        assert stats is None
        return rows

    rows = predict_with_hf_classifier(spec_of(model_dir), variants(), CPU)
    SeniorityPredictions.validate(rows)
    assert len(rows) == 3 and set(rows["run"]) == {0}
    assert rows["resolved_model"].iloc[0] == weights_identity(str(model_dir), str(model_dir))
    # Temperature 0 (the kind's default): the stored distribution is the argmax, one-hot.
    assert set(np.ravel(rows[["p_junior", "p_mid", "p_senior"]].to_numpy())) <= {0.0, 1.0}

    sampled = predict_with_hf_classifier(spec_of(model_dir, temperature=1.0, runs_per_cell=4), variants(), CPU)
    SeniorityPredictions.validate(sampled)
    assert len(sampled) == 12 and list(sampled["run"][:4]) == [0, 1, 2, 3]
    probs = classifier_probabilities(load_hf_classifier(spec_of(model_dir), CPU), TEXTS, CPU)
    np.testing.assert_allclose(sampled[["p_junior", "p_mid", "p_senior"]].to_numpy()[::4], probs, atol=1e-12)


def test_importing_the_modules_imports_no_torch():
    code = (
        "import sys, resumebias_dagster.core.models.hf_classifier, resumebias_dagster.core.seniority.task; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
