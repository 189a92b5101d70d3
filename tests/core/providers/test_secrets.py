"""API keys: a missing one fails before any call naming its variable; a present one appears
nowhere it could leak (results, errors, logs, the store file, Dagster's event log)."""

import logging

import dagster as dg
import pytest
import yaml

from resumebias_dagster.core.providers import ChatRequest, ProviderConfigError, ResponseStore, run_requests
from resumebias_dagster.resources.providers import ProvidersResource, stats_metadata
from resumebias_dagster.testing import fake_providers as fp

WIRES = ("openai", "anthropic", "gemini")
KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"


def test_missing_key_fails_before_any_call_naming_the_variable(fake_server, settings_for, store, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    server = fake_server("openai")
    with pytest.raises(ProviderConfigError, match=KEY_ENV):
        run_requests(settings_for("openai", server.base_url), [ChatRequest.from_prompt("x")], store)
    assert server.count == 0
    monkeypatch.setenv(KEY_ENV, "   ")
    with pytest.raises(ProviderConfigError, match=KEY_ENV):
        run_requests(settings_for("openai", server.base_url), [ChatRequest.from_prompt("x")], store)
    assert server.count == 0


def test_default_key_variables_and_keyless_local_servers(settings_for):
    from resumebias_dagster.core.models.model_config import parse_models
    from resumebias_dagster.core.providers import ProviderSettings

    def settings(**entry):
        return ProviderSettings.from_spec(
            parse_models({"models": [{"name": "m", "kind": "provider", **entry}]}, "t")[0]
        )

    assert settings(provider="anthropic", model="claude-haiku-4-5").api_key_env == "ANTHROPIC_API_KEY"
    assert settings(provider="google", model="gemini-2.5-pro").api_key_env == "GEMINI_API_KEY"
    assert settings(provider="openai", model="gpt-5").api_key_env == "OPENAI_API_KEY"
    assert settings(provider="openai", model="llama3", base_url="http://localhost:11434/v1").api_key_env is None
    assert (
        settings(provider="openai", model="x", base_url="https://lan-vllm:8000/v1", api_key_env="").api_key_env is None
    )
    with pytest.raises(ProviderConfigError, match="api_key_env"):
        settings(provider="openai", model="openai/gpt-5", base_url="https://openrouter.ai/api/v1")


@pytest.fixture(autouse=True)
def _allowed_roots(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's models file and store


def _models_file(tmp_path, model_entry, base_url, wire="openai", enabled=True):
    path = tmp_path / "models.yaml"
    entry = model_entry(wire, base_url, name=f"fake-{wire}", max_concurrency=1)
    entry["enabled"] = enabled
    offline = {"name": "offline", "kind": "fine-tuned", "base_model": "pypi:none/x"}
    path.write_text(yaml.safe_dump({"models": [offline, entry]}))
    return path


def test_resource_setup_fails_naming_the_variable(fake_server, model_entry, tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    server = fake_server("openai")
    resource = ProvidersResource(
        models_file=str(_models_file(tmp_path, model_entry, server.base_url)), store_path=str(tmp_path / "r.sqlite")
    )

    @dg.asset
    def uses_provider(providers: ProvidersResource) -> None:
        providers.run("fake-openai", [ChatRequest.from_prompt("x")])

    with pytest.raises(dg.DagsterResourceFunctionError) as raised:
        dg.materialize([uses_provider], resources={"providers": resource})
    chain, error = [], raised.value
    while error is not None:
        chain.append(error)
        error = error.__cause__ or error.__context__
    config_errors = [e for e in chain if isinstance(e, ProviderConfigError)]
    assert config_errors and KEY_ENV in str(config_errors[0]) and "needs an API key" in str(config_errors[0])
    assert server.count == 0


def test_disabled_provider_models_need_no_key(fake_server, model_entry, tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    server = fake_server("openai")
    resource = ProvidersResource(
        models_file=str(_models_file(tmp_path, model_entry, server.base_url, enabled=False)),
        store_path=str(tmp_path / "r.sqlite"),
    )

    @dg.asset
    def offline_only(providers: ProvidersResource) -> list:
        return providers.model_names

    result = dg.materialize([offline_only], resources={"providers": resource})
    assert result.output_for_node("offline_only") == []


@pytest.mark.parametrize("wire", WIRES)
def test_fake_key_appears_nowhere(wire, fake_server, settings_for, tmp_path, fake_key, caplog):
    server = fake_server(wire)
    # A 401 whose message repeats the key (as OpenAI's does), a 400 and a 5xx whose bodies
    # repeat it too, then answers.
    server.script(fp.auth_error(echo_key=True))
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "responses.sqlite"
    with ResponseStore(path) as store:
        settings = settings_for(wire, server.base_url, max_retries=1, max_concurrency=1)
        results, stats = run_requests(settings, [ChatRequest.from_prompt(f"r{i}") for i in range(3)], store)
        assert results[0].error_kind == "auth"
        server.script(
            fp.Reply("status", status=400, message="bad key: ", echo_key=True),
            fp.Reply("status", status=500, message="oops: ", echo_key=True),
            fp.Reply("status", status=500, message="oops: ", echo_key=True),
        )
        more, more_stats = run_requests(settings, [ChatRequest.from_prompt(f"r{i}") for i in range(3)], store)
        rows = list(store.rows())
    assert server.requests[0].api_key == fake_key  # it was sent, to the server only
    assert any(fake_key in str(e) for e in [server.requests[0].headers])
    texts = [
        repr(results),
        repr(more),
        repr(stats.as_dict()),
        repr(more_stats.as_dict()),
        repr(rows),
        caplog.text,
        repr(settings),
    ]
    texts += [r.error_message or "" for r in results + more]
    for text in texts:
        assert fake_key not in text
    assert any("***" in (r.error_message or "") for r in results + more)
    for file in tmp_path.iterdir():
        assert fake_key.encode() not in file.read_bytes(), file.name


def test_fake_key_absent_from_dagster_event_log_and_metadata(fake_server, model_entry, tmp_path, fake_key):
    server = fake_server("openai")
    server.script(fp.auth_error(echo_key=True))
    store_path = tmp_path / "r.sqlite"
    resource = ProvidersResource(
        models_file=str(_models_file(tmp_path, model_entry, server.base_url)), store_path=str(store_path)
    )

    @dg.asset
    def provider_answers(context: dg.AssetExecutionContext, providers: ProvidersResource) -> list:
        results, stats = providers.run("fake-openai", [ChatRequest.from_prompt(f"r{i}") for i in range(3)])
        context.add_output_metadata(stats_metadata(stats))
        context.log.info(f"errors: {[r.error_message for r in results]}")
        return [r.text for r in results]

    (tmp_path / "dagster_home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster_home")) as instance:
        result = dg.materialize([provider_answers], resources={"providers": resource}, instance=instance)
        assert result.success
        records = instance.get_records_for_run(result.run_id).records
        serialized = [dg.serialize_value(record.event_log_entry) for record in records]
        assert serialized and all(fake_key not in s for s in serialized)
        materialization = result.asset_materializations_for_node("provider_answers")[0]
        assert materialization.metadata["provider_errors"].value == {"auth": 1, "aborted": 2}
        assert fake_key not in repr(materialization.metadata)
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert fake_key.encode() not in file.read_bytes(), file


def test_vertex_without_credentials_names_the_variable(monkeypatch, tmp_path):
    from resumebias_dagster.core.models.model_config import parse_models
    from resumebias_dagster.core.providers import ProviderSettings
    from resumebias_dagster.core.providers.types import check_credentials

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud login here
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")  # and no metadata server
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    entry = {
        "name": "v",
        "kind": "provider",
        "provider": "google",
        "model": "gemini-2.5-pro",
        "vertex_project": "p",
        "vertex_location": "us-central1",
    }
    settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "t")[0])
    with pytest.raises(ProviderConfigError, match="GOOGLE_APPLICATION_CREDENTIALS"):
        check_credentials([settings])
