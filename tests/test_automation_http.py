"""Every tool's version (issue 44): a scoring endpoint (kind http) that names a version source is
probed like a provider's alias, against a real HTTP scorer on 127.0.0.1. A new version is a move:
the sensor re-runs its partitions and the re-run calls it afresh, each answer stored with the
version it came from. One without a version source is called afresh by the weekly re-audit; the
ranking partitions run before are re-run too; a malformed version source is refused in one line."""

from datetime import datetime, timezone

import dagster as dg
import pytest
import yaml

from resumebias_dagster.automation import build_model_alias_sensor, rerun_requests, weekly_fit_reaudit
from resumebias_dagster.core.models.model_config import ModelConfigError, load_models
from resumebias_dagster.core.providers.http_scorer import http_requests
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.sensors import requested, tick

JDS = ["jd-a", "jd-b"]
BODY = '{"resume": {{ resume | tojson }}, "job_description": {{ job_description | tojson }}}'


@pytest.fixture(autouse=True)
def _allowed_roots(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))


def _entry(name, server, **extra):
    return {
        "name": name,
        "kind": "http",
        "url": server.base_url,
        "body": BODY,
        "answer": {"score": "$.result.score"},
        "max_retries": 0,
        **extra,
    }


def _providers(tmp_path, *entries) -> ProvidersResource:
    catalog = tmp_path / "catalog"
    catalog.mkdir(exist_ok=True)
    (catalog / "models.yaml").write_text(yaml.safe_dump({"models": list(entries)}))
    return ProvidersResource(catalog_dir=str(catalog), store_path=str(tmp_path / "responses.sqlite"))


def _items(n=3):
    return [
        {"id": f"r{i}", "task": "fit", "resume": f"Python engineer {i}, SQL, Docker", "job_description": "Python SQL"}
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "version",
    [{"header": "X-Model-Version"}, {"path": "$.model_version"}, {"url": "VERSION_URL", "path": "$.version"}],
    ids=["header", "path", "endpoint"],
)
def test_a_new_version_of_an_http_tool_reruns_its_partitions_with_fresh_calls(tmp_path, version):
    current = {"version": "2026.1"}
    with FakeProviderServer("scorer", resolved_model=lambda _: current["version"]) as server:
        if "url" in version:
            version = {**version, "url": server.base_url.replace("/score", "/version")}
        providers = _providers(tmp_path, _entry("vendor", server, version=version), _entry("plain", server))
        sensor = build_model_alias_sensor(set(), {"vendor", "plain"}, JDS)
        first = tick(sensor, providers, None)
        assert first.run_requests == [] and "(1 probed)" in first.skip_reason.skip_message  # plain has no version
        with dg.build_resources({"providers": providers}) as resources:
            before, stats = resources.providers.run("vendor", http_requests(_items(), 1))
            assert stats.calls_made == 3 and {r.resolved_model for r in before} == {"2026.1"}
            _, again = resources.providers.run("vendor", http_requests(_items(), 1))
            assert again.served_from_store == 3
        assert tick(sensor, providers, first.cursor).run_requests == []

        current["version"] = "2026.2"
        moved = tick(sensor, providers, first.cursor)
        assert requested(moved) == [("fit_scores_job", f"{jd}|vendor") for jd in JDS]
        assert {r.tags["resumebias/snapshot"] for r in moved.run_requests} == {"2026.2"}
        assert {r.tags["resumebias/pool"] for r in moved.run_requests} == {f"provider:http:127.0.0.1:{server.port}"}
        with dg.build_resources({"providers": providers}) as resources:
            after, stats = resources.providers.run("vendor", http_requests(_items(), 1))
            assert stats.calls_made == 3, "a new version is never answered from the old one's store"
            assert {r.resolved_model for r in after} == {"2026.2"}
            assert len(list(resources.providers.store().rows(model="vendor"))) == 6  # the old answers stay
        assert tick(sensor, providers, moved.cursor).run_requests == []


def test_a_tool_that_reports_no_version_is_a_named_probe_failure(tmp_path):
    with FakeProviderServer("scorer") as server:  # no version anywhere
        providers = _providers(tmp_path, _entry("vendor", server, version={"header": "X-Model-Version"}))
        with dg.build_resources({"providers": providers}) as resources:
            result = resources.providers.probe()["vendor"]
        assert isinstance(result, Exception)
        assert str(result) == "model 'vendor': the answer reported no version (version.header 'X-Model-Version')"
        with dg.build_resources({"providers": providers}) as resources:
            answers, _ = resources.providers.run("vendor", http_requests(_items(1), 1))
        assert answers[0].resolved_model == f"http:{server.base_url}"  # the tool did not say


def test_the_weekly_reaudit_calls_an_unversioned_tool_afresh_once_per_date(tmp_path):
    with FakeProviderServer("scorer") as server:
        providers = _providers(tmp_path, _entry("plain", server))
        with dg.build_resources({"providers": providers}) as resources:
            resources.providers.run("plain", http_requests(_items(), 1))
        for _ in range(2):  # the same date twice (two schedules): one new epoch
            with dg.build_schedule_context(
                resources={"providers": providers},
                scheduled_execution_time=datetime(2026, 12, 7, 6, tzinfo=timezone.utc),
            ) as context:
                result = weekly_fit_reaudit(context)
        assert isinstance(result, list)
        with dg.build_resources({"providers": providers}) as resources:
            _, stats = resources.providers.run("plain", http_requests(_items(), 1))
            assert stats.calls_made == 3, "the re-audit of a tool that cannot say it changed calls it again"
            assert resources.providers.settings("plain").snapshot_epoch == 1


def test_rankings_run_before_are_rerun_with_the_model():
    class Providers:
        def settings(self, name):
            from resumebias_dagster.core.providers.types import ProviderSettings

            return ProviderSettings(name=name, provider="openai", model="m", temperature=0.7, runs_per_cell=1)

    key = str(dg.MultiPartitionKey({"model": "m", "jd": "jd-a"}))
    requests = rerun_requests(
        Providers(), ["m"], "snapshot-1:x", prediction_models=set(), fit_models=set(), jds=JDS, ranked={key}
    )
    assert [(r.job_name, str(r.partition_key), r.run_key) for r in requests] == [
        ("rankings_job", "jd-a|m", "snapshot-1:x:m:jd-a:ranking")
    ]


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (
            "X-Version",
            "version: {header: X-Model-Version}, {path: $.model.version} or {url: https://host/version}, got 'X-Version'",
        ),
        ({"header": "X", "url": "http://127.0.0.1:1/v"}, "version takes one of header, path or url"),
        (
            {"header": "X Version"},
            "version.header must name one response header, e.g. X-Model-Version, got 'X Version'",
        ),
        ({"path": "$.a[*]"}, "version.path: path '$.a[*]' is not a dotted path"),
        (
            {"url": "http://127.0.0.2:9/version"},
            "version.url must be on the scoring url's scheme, host and port (http://127.0.0.1:8400)",
        ),
        ({"model": "x"}, "version takes one of header, path or url"),
    ],
)
def test_a_malformed_version_source_is_refused_in_one_line(tmp_path, version, message):
    entry = {
        "name": "vendor",
        "kind": "http",
        "url": "http://127.0.0.1:8400/score",
        "body": BODY,
        "answer": {"score": "$.s"},
        "version": version,
    }
    (tmp_path / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
    with pytest.raises(ModelConfigError) as err:
        load_models(tmp_path / "models.yaml")
    text = str(err.value)
    assert "'vendor'" in text and message in text and "\n" not in text, text
