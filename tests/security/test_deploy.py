"""The shipped deployment does not expose the UI (which can launch runs on workers holding
provider keys) beyond the machine, and says how to open it safely. Failed before issue 10:
the compose file published port 3000 on every interface."""

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_every_published_port_binds_to_loopback():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yaml").read_text())
    published = [(name, port) for name, service in compose["services"].items() for port in service.get("ports", [])]
    assert published, "the UI should be reachable on the Docker host"
    for name, port in published:
        assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"


def test_the_deploy_guide_binds_the_webserver_to_loopback_and_explains_the_proxy():
    guide = (DEPLOY / "README.md").read_text()
    assert "dagster-webserver -h 127.0.0.1" in guide
    assert "dagster-webserver -h 0.0.0.0" not in guide
    assert "authenticating reverse proxy" in guide
    # Database files never on a network filesystem.
    assert "refuses a network filesystem" in guide and "shared filesystem (NFS" not in guide


def test_compose_workers_share_answers_and_tables_not_a_disk():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yaml").read_text())
    env = compose["services"]["worker"]["environment"]
    assert env["RESUMEBIAS_STORE_URL"].startswith("postgresql://")
    assert env["RESUMEBIAS_TABLES_URL"].startswith("s3://")
    assert (
        "minio" in compose["services"]
        and "CREATE DATABASE resumebias_store" in (DEPLOY / "postgres-init.sql").read_text()
    )
