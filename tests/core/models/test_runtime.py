"""One dispatcher per task: the seniority label and the fit score run on a model of any kind
through ``ModelRuntime``; provider models go through its ``run`` callable (the transport)."""

from pathlib import Path

import pandas as pd
import pytest

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.jd_audit.fit_task import predict_fit
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.models.runtime import ModelRuntime, classifiers_from_table
from resumebias_dagster.core.providers import run_requests
from resumebias_dagster.core.seniority.task import predict_seniority
from resumebias_dagster.core.tables import SeniorityPredictions, columns


def _variants():
    return pd.DataFrame(
        {
            "variant_kind": ["style", "demographic"],
            "original_idx": [0, 0],
            "variant": ["neutral", "caucasian_male"],
            "true_seniority": ["senior", "senior"],
            "name": [None, "Greg Baker"],
            "text": ["Nine years building payment systems.", "Greg Baker. Nine years building payment systems."],
        }
    )


def _no_compute():
    raise AssertionError("a provider model must not resolve the torch device")


def _spec(entry):
    return parse_models({"models": [entry]}, "test")[0]


def test_provider_model_runs_through_the_runtime_transport(fake_server, settings_for, store, fake_key, model_entry):
    server = fake_server("openai", answer=lambda request: "senior")
    settings = settings_for("openai", server.base_url, runs_per_cell=2)
    calls = []

    def provider_run(model, requests, progress):
        calls.append((model, len(requests)))
        return run_requests(settings, requests, store, progress=progress)

    runtime = ModelRuntime(resolve_compute=_no_compute, cache_dir=Path("."), provider_run=provider_run)
    spec = _spec(model_entry("openai", server.base_url, runs_per_cell=2))
    df, stats = predict_seniority(spec, _variants(), runtime, load_prompt(SENIORITY_PROMPT))
    assert calls == [(spec.name, 4)] and server.count == 4
    assert list(df.columns) == columns(SeniorityPredictions)
    assert df["prediction"].tolist() == ["senior"] * 4 and stats.calls_made == 4


def test_provider_model_without_the_providers_resource_is_refused(model_entry):
    runtime = ModelRuntime(resolve_compute=_no_compute, cache_dir=Path("."))
    spec = _spec(model_entry("openai", "http://127.0.0.1:9/v1"))
    with pytest.raises(ValueError, match=f"{spec.name}: a provider or http model needs the providers resource"):
        predict_seniority(spec, _variants(), runtime, "{resume}")


def test_fine_tuned_model_without_a_trained_classifier_is_refused():
    trained = pd.DataFrame({"model": ["other"], "path": ["/x"], "fingerprint": ["abc"]})
    runtime = ModelRuntime(
        resolve_compute=_no_compute, cache_dir=Path("."), classifiers=classifiers_from_table(trained)
    )
    spec = _spec({"name": "minilm", "kind": "fine-tuned", "base_model": "pypi:x"})
    with pytest.raises(ValueError, match="minilm: no trained classifier; materialise fine_tuned_classifiers first"):
        predict_seniority(spec, _variants(), runtime, "{resume}")


def test_a_classifier_cannot_score_fit():
    runtime = ModelRuntime(resolve_compute=_no_compute, cache_dir=Path("."))
    spec = _spec({"name": "minilm", "kind": "fine-tuned", "base_model": "pypi:x"})
    with pytest.raises(ValueError, match=r"models.minilm.kind: 'fine-tuned' cannot score fit"):
        predict_fit(
            spec, _variants(), jd="jd", jd_text="A job.", template="{job_description} {resume}", runtime=runtime
        )
