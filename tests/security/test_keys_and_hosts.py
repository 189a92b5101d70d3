"""Keys go only where the user configured them, and never into logs.

Tried as an attacker would: a repository that ships its own ``models.yaml``, a config naming
a host of someone else's choosing for the anthropic and google wires, SDK environment
variables that redirect a client or supply a key, and exceptions whose text or traceback
holds the key. Each test failed on the code before issue 10.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import dagster as dg
import pytest
import yaml

from resumebias_dagster.core.models.model_config import load_models, models_file, parse_models
from resumebias_dagster.core.providers import ChatRequest, ProviderConfigError, ProviderSettings, run_requests
from resumebias_dagster.resources.providers import ProvidersResource

KEY = "sk-user-real-key-7f3a9c2b1d5e4f60"


def settings_of(**entry) -> ProviderSettings:
    return ProviderSettings.from_spec(parse_models({"models": [{"name": "m", "kind": "provider", **entry}]}, "t")[0])


# ------------------------------------------------------------------ 1: a models.yaml in the working directory


def _hostile_repo(tmp_path, base_url: str):
    repo = tmp_path / "cloned-repo"
    repo.mkdir()
    (repo / "models.yaml").write_text(
        yaml.safe_dump(
            {
                "models": [
                    {
                        "name": "helpful-model",
                        "kind": "provider",
                        "provider": "openai",
                        "model": "gpt-5",
                        "base_url": base_url,
                        "api_key_env": "OPENAI_API_KEY",
                        "runs_per_cell": 1,
                    }
                ]
            }
        )
    )
    return repo


def test_a_models_yaml_in_the_working_directory_is_ignored(tmp_path, monkeypatch, fake_server):
    attacker = fake_server("openai")
    repo = _hostile_repo(tmp_path, attacker.base_url)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("RESUMEBIAS_MODELS_FILE", raising=False)
    monkeypatch.delenv("RESUMEBIAS_CATALOG_DIR", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert models_file().parent.name == "catalog"  # the packaged file
    assert "helpful-model" not in {m.name for m in load_models(include_disabled=True)}


def test_the_definitions_loaded_next_to_a_hostile_models_yaml_have_no_partition_for_it(tmp_path, fake_server):
    attacker = fake_server("openai")
    repo = _hostile_repo(tmp_path, attacker.base_url)
    code = (
        "import json; from resumebias_dagster.partitions import model_partitions; "
        "print(json.dumps(model_partitions.get_partition_keys()))"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("RESUMEBIAS_MODELS")}
    env.update(OPENAI_API_KEY=KEY)
    env.pop("RESUMEBIAS_CATALOG_DIR", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "helpful-model" not in json.loads(out.stdout)
    assert attacker.count == 0


def test_the_models_file_is_chosen_only_by_explicit_settings(tmp_path, monkeypatch):
    repo = _hostile_repo(tmp_path, "https://attacker.example/v1")
    monkeypatch.chdir(repo)
    monkeypatch.delenv("RESUMEBIAS_CATALOG_DIR", raising=False)
    # Naming it explicitly is the user's choice.
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", "./models.yaml")
    assert models_file() == (repo / "models.yaml").absolute()
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", str(repo / "models.yaml"))
    assert models_file() == (repo / "models.yaml").absolute()
    # A bare name is a catalog name, never a file that happens to be in the working directory.
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", "models.yaml")
    assert models_file().parent.name == "catalog"
    (repo / "mine.yaml").write_text((repo / "models.yaml").read_text())
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", "mine.yaml")
    with pytest.raises(Exception, match=r"mine\.yaml.*\./mine\.yaml"):
        models_file()
    # A packaged name stays the packaged file.
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", "models_gpu.yaml")
    assert models_file().parent.name == "catalog"
    # So is the catalog folder's models.yaml.
    monkeypatch.delenv("RESUMEBIAS_MODELS_FILE")
    catalog = tmp_path / "my-catalog"
    catalog.mkdir()
    (catalog / "models.yaml").write_text((repo / "models.yaml").read_text())
    monkeypatch.setenv("RESUMEBIAS_CATALOG_DIR", str(catalog))
    assert models_file() == catalog / "models.yaml"


def test_the_run_log_says_which_models_file_is_in_use(data_dir, monkeypatch):
    monkeypatch.delenv("RESUMEBIAS_MODELS_FILE", raising=False)
    monkeypatch.delenv("RESUMEBIAS_CATALOG_DIR", raising=False)

    @dg.asset
    def uses_providers(providers: ProvidersResource) -> None:
        pass

    with dg.instance_for_test() as instance:
        result = dg.materialize([uses_providers], resources={"providers": ProvidersResource()}, instance=instance)
        messages = [r.event_log_entry.user_message for r in instance.get_records_for_run(result.run_id).records]
    assert any("models config:" in m and "catalog/models.yaml" in m for m in messages), messages


# ------------------------------------------------------------------ 2: one key rule for every wire


@pytest.mark.parametrize(
    "provider,model,default_env",
    [
        ("openai", "gpt-5", "OPENAI_API_KEY"),
        ("anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("google", "gemini-2.5-pro", "GEMINI_API_KEY"),
    ],
)
def test_a_host_of_someone_elses_choosing_needs_its_key_named(provider, model, default_env):
    url = "https://user:hunter2-secret@llm-gateway.example:8443/v1?key=sk-in-url-55"
    with pytest.raises(ProviderConfigError, match=r"llm-gateway\.example:8443.*api_key_env") as raised:
        settings_of(provider=provider, model=model, base_url=url)
    assert "hunter2" not in str(raised.value) and "sk-in-url" not in str(raised.value)
    assert default_env in str(raised.value)
    # Named explicitly, it is the user's choice; the provider's own host keeps its default.
    assert (
        settings_of(provider=provider, model=model, base_url=url, api_key_env="GATEWAY_KEY").api_key_env
        == "GATEWAY_KEY"
    )
    assert settings_of(provider=provider, model=model).api_key_env == default_env


def test_vertex_application_default_credentials_go_only_to_google():
    with pytest.raises(ProviderConfigError, match="Application Default Credentials"):
        settings_of(
            provider="google",
            model="gemini-2.5-pro",
            vertex_project="p",
            vertex_location="us-central1",
            base_url="https://vertex-proxy.example/",
        )
    assert (
        settings_of(
            provider="google",
            model="gemini-2.5-pro",
            vertex_project="p",
            vertex_location="us-central1",
            base_url="https://us-central1-aiplatform.googleapis.com/",
        ).api_key_env
        is None
    )


@pytest.mark.parametrize(
    "wire,env_names",
    [
        ("openai", ("OPENAI_API_KEY",)),
        ("anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")),
        ("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),
    ],
)
def test_an_endpoint_without_keys_never_gets_a_key_from_the_sdks_environment(
    wire, env_names, fake_server, settings_for, store, monkeypatch
):
    server = fake_server(wire)
    for name in env_names:
        monkeypatch.setenv(name, KEY)
    results, _ = run_requests(
        settings_for(wire, server.base_url, api_key_env=""), [ChatRequest.from_prompt("x")], store
    )
    assert results[0].ok
    request = server.requests[0]
    assert KEY not in json.dumps(request.headers) and request.api_key in (None, "no-key")


@pytest.mark.parametrize(
    "wire,provider,env_name",
    [
        ("openai", "openai", "OPENAI_BASE_URL"),
        ("anthropic", "anthropic", "ANTHROPIC_BASE_URL"),
        ("gemini", "google", "GOOGLE_GEMINI_BASE_URL"),
    ],
)
def test_sdk_environment_variables_cannot_redirect_a_key(wire, provider, env_name, fake_server, monkeypatch):
    import asyncio

    from resumebias_dagster.core.providers.registry import make_client
    from resumebias_dagster.core.providers.types import Secret

    attacker = fake_server(wire)
    monkeypatch.setenv(env_name, attacker.base_url)
    settings = settings_of(provider=provider, model="m", timeout_s=0.5, max_retries=0)
    assert settings.base_url is None

    async def call():
        client = make_client(settings, Secret(KEY))
        try:
            return await client.complete(ChatRequest.from_prompt("x"), "k")
        finally:
            await client.aclose()

    result = asyncio.run(call())
    assert not result.ok  # the provider's real host is not reachable from here
    assert attacker.count == 0


# ------------------------------------------------------------------ 4: logs and exceptions


def test_records_of_any_logger_are_redacted_with_their_tracebacks(fake_server, settings_for, store, fake_key, caplog):
    server = fake_server("openai")
    run_requests(settings_for("openai", server.base_url), [ChatRequest.from_prompt("x")], store)
    caplog.set_level(logging.DEBUG)
    late = logging.getLogger("httpx2.created.after.the.client")
    late.warning("sent header %s", f"Bearer {fake_key}")
    try:
        raise RuntimeError(f"upstream said: invalid key {fake_key}")
    except RuntimeError:
        late.exception("the call failed")
        logging.getLogger("some.other.library").error("again", exc_info=True)
    logging.getLogger("dagster.anything").info("stack", stack_info=True, extra={})
    formatter = logging.Formatter("%(message)s")
    texts = [formatter.format(r) for r in caplog.records] + [caplog.text]
    assert any("the call failed" in t and "Traceback" in t for t in texts)
    assert any("***" in t for t in texts)
    for text in texts:
        assert fake_key not in text


def test_an_exception_holding_the_key_leaves_the_step_scrubbed(
    fake_server, model_entry, data_dir, fake_key, monkeypatch
):
    from resumebias_dagster.core.providers import base

    server = fake_server("openai")
    path = data_dir / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [model_entry("openai", server.base_url, name="fake-openai")]}))

    async def exploding(self, request, key):
        raise RuntimeError(f"the SDK failed while sending Authorization: Bearer {self._api_key.reveal()}")

    monkeypatch.setattr(base.ProviderClient, "complete", exploding)

    @dg.asset
    def provider_answers(providers: ProvidersResource) -> None:
        providers.run("fake-openai", [ChatRequest.from_prompt("x")])

    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [provider_answers],
            instance=instance,
            raise_on_error=False,
            resources={"providers": ProvidersResource(models_file=str(path))},
        )
        assert not result.success
        serialized = [
            dg.serialize_value(r.event_log_entry) for r in instance.get_records_for_run(result.run_id).records
        ]
    failure = [s for s in serialized if "STEP_FAILURE" in s]
    assert failure and "the SDK failed while sending" in failure[0]
    assert all(fake_key not in s for s in serialized)
