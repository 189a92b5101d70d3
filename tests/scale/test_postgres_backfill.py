"""The scale-out path on one machine: deploy/dagster.yaml (Postgres storage, queued runs, runs
launched as Celery tasks) and deploy/workspace.yaml (a gRPC code server), with the code server,
the Dagster daemon and a Celery worker as separate processes, and a real asset backfill of
every model x JD partition of `fit_scores` for two provider models.

What differs from a deployment: Celery's filesystem transport stands in for Redis (nothing to
install) and the tables stay in a local DuckDB file (one machine)."""

import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml
from dagster._core.errors import DagsterUserCodeUnreachableError
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter
from dagster._core.utils import make_new_backfill_id
from dagster._grpc.client import DagsterGrpcClient
from dagster._grpc.types import ListRepositoriesResponse
from dagster._serdes import deserialize_value

from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.processes import free_port, stop_process_group, tail

pytestmark = pytest.mark.scale

REPO = Path(__file__).resolve().parents[2]
DEFS_FILE = Path(__file__).with_name("backfill_defs.py")
KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
BACKFILL_TIMEOUT_S = 240
CODE_SERVER_TIMEOUT_S = 120
ANSWER = json.dumps({"score": 6, "recommend": "yes", "justification": "ok",
                     "strengths": ["a", "b", "c"], "concerns": ["x", "y", "z"]})



def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)




def _load_defs_module():
    spec = importlib.util.spec_from_file_location("resumebias_scale_backfill_defs", DEFS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def deployment(tmp_path, monkeypatch, postgres):
    """Environment and files of a one-machine deployment; yields the folder holding them."""
    celery_dir = tmp_path / "celery"
    for sub in ("broker", "control", "results"):
        (celery_dir / sub).mkdir(parents=True)
    env = {
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
        "DAGSTER_PG_HOST": postgres["host"], "DAGSTER_PG_PORT": str(postgres["port"]),
        "DAGSTER_PG_USERNAME": postgres["user"], "DAGSTER_PG_PASSWORD": postgres["password"],
        "DAGSTER_PG_DB": postgres["db"],
        "DAGSTER_CELERY_BROKER_URL": "filesystem://",
        "DAGSTER_CELERY_BACKEND_URL": f"file://{celery_dir / 'results'}",
        "RESUMEBIAS_CODE_SERVER_HOST": "127.0.0.1", "RESUMEBIAS_CODE_SERVER_PORT": str(free_port()),
        "RESUMEBIAS_SCALE_DIR": str(tmp_path / "scale"),
        # The resources name the scale folder's catalog and store: an operator's allowed folder.
        "RESUMEBIAS_ALLOWED_ROOTS": str(tmp_path / "scale"),
        KEY_ENV: "sk-test",
        # dagster-celery starts `celery` by name: the venv's scripts must be on PATH even
        # when the tests run as .venv/bin/python without an activated venv.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    # Producer (daemon) and consumer (worker) share one folder: the filesystem "queue".
    transport = {"broker_transport_options": {
        "data_folder_in": str(celery_dir / "broker"), "data_folder_out": str(celery_dir / "broker"),
        "control_folder": str(celery_dir / "control"),
    }}
    instance_yaml = yaml.safe_load((REPO / "deploy" / "dagster.yaml").read_text())
    instance_yaml["run_launcher"]["config"]["config_source"] = transport
    Path(env["DAGSTER_HOME"]).mkdir()
    (Path(env["DAGSTER_HOME"]) / "dagster.yaml").write_text(yaml.safe_dump(instance_yaml))
    worker_yaml = yaml.safe_load((REPO / "deploy" / "celery-worker.yaml").read_text())
    worker_yaml["execution"]["config"]["config_source"] = transport
    (tmp_path / "celery-worker.yaml").write_text(yaml.safe_dump(worker_yaml))
    catalog = Path(env["RESUMEBIAS_SCALE_DIR"]) / "catalog"
    catalog.mkdir(parents=True)
    with FakeProviderServer("openai", answer=lambda request: ANSWER) as server:
        models = [{"name": name, "kind": "provider", "provider": "openai", "model": f"fake/{name}",
                   "base_url": server.base_url, "api_key_env": KEY_ENV, "temperature": 0.0, "runs_per_cell": 1,
                   "max_concurrency": 8, "timeout_s": 10.0, "max_retries": 1} for name in ("fake-a", "fake-b")]
        (catalog / "models.yaml").write_text(yaml.safe_dump({"models": models}))
        yield tmp_path, server


def _wait_for_code_server(proc: subprocess.Popen, log: Path) -> None:
    """Until the code server answers with its loaded definitions (the daemon needs them)."""
    client = DagsterGrpcClient(host=os.environ["RESUMEBIAS_CODE_SERVER_HOST"],
                               port=int(os.environ["RESUMEBIAS_CODE_SERVER_PORT"]))
    deadline = time.monotonic() + CODE_SERVER_TIMEOUT_S
    while True:
        assert proc.poll() is None, f"code server exited with {proc.returncode}:\n{tail(log)}"
        try:
            if isinstance(deserialize_value(client.list_repositories()), ListRepositoriesResponse):
                return
        except DagsterUserCodeUnreachableError:
            pass
        assert time.monotonic() < deadline, f"code server not ready in {CODE_SERVER_TIMEOUT_S} s:\n{tail(log)}"
        time.sleep(1)


class Services:
    """Deployment processes, each in a process group of its own, with its log file."""

    def __init__(self, root: Path):
        self.root = root
        self.procs: dict[str, subprocess.Popen] = {}

    def log(self, name: str) -> Path:
        return self.root / f"{name}.log"

    def start(self, name: str, cmd: list[str]) -> subprocess.Popen:
        with self.log(name).open("w") as out:
            self.procs[name] = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                                start_new_session=True)
        return self.procs[name]

    def check_alive(self) -> None:
        for name, proc in self.procs.items():
            assert proc.poll() is None, f"{name} exited with {proc.returncode}:\n{tail(self.log(name))}"

    def logs(self) -> str:
        return "".join(f"\n--- {name}\n{tail(self.log(name))}" for name in self.procs)

    def start_daemon(self) -> None:
        self.start("daemon", [_bin("dagster-daemon"), "run", "-w", str(REPO / "deploy" / "workspace.yaml")])

    def stop_all(self) -> None:
        for proc in self.procs.values():
            stop_process_group(proc)


@pytest.fixture
def services(deployment):
    """The code server (ready) and one Celery worker; the test starts the daemon itself."""
    root, _ = deployment
    services = Services(root)
    try:
        code_server = services.start("code_server", [
            _bin("dagster"), "code-server", "start", "-f", str(DEFS_FILE), "-d", str(REPO),
            "-h", os.environ["RESUMEBIAS_CODE_SERVER_HOST"], "-p", os.environ["RESUMEBIAS_CODE_SERVER_PORT"],
            "--location-name", "resumebias_dagster",
        ])
        # One run at a time in the worker process itself: a run's step processes need a parent
        # that may have children (a prefork pool child may not).
        services.start("worker", [
            _bin("dagster-celery"), "worker", "start", "-A", "dagster_celery.app", "-y", str(root / "celery-worker.yaml"),
            "-q", "dagster", "--", "--pool=solo",
        ])
        _wait_for_code_server(code_server, services.log("code_server"))
        yield services
    finally:
        services.stop_all()


def test_backfill_of_every_model_x_jd_partition_on_postgres(deployment, services):
    root, server = deployment
    module = _load_defs_module()
    defs = module.defs
    fit_key = dg.AssetKey("fit_scores")
    all_keys = set(module.PARTITIONS.get_partition_keys())
    assert len(all_keys) == 2 * 17

    with dg.DagsterInstance.get() as instance:
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.run_launcher).__name__ == "CeleryRunLauncher"

        inputs = dg.materialize([*module.INPUTS, module.FIT_SCORES, *defs.asset_checks],
                                selection=module.INPUTS, resources=module.RESOURCES,
                                run_config=module.INPUTS_CONFIG, instance=instance)
        assert inputs.success
        n_variants = len(inputs.output_for_node("probe_variants"))

        backfill_id = make_new_backfill_id()
        instance.add_backfill(PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id, asset_graph=defs.resolve_asset_graph(), partition_names=None,
            asset_selection=[fit_key], backfill_timestamp=time.time(), tags={},
            dynamic_partitions_store=instance, all_partitions=True, title="scale-out test",
            description=None, run_config=None,
        ))
        # Started after the backfill exists: the daemon's first iteration picks it up at once
        # instead of 30 s later.
        services.start_daemon()

        deadline = time.monotonic() + BACKFILL_TIMEOUT_S
        while (status := instance.get_backfill(backfill_id).status) in (
            BulkActionStatus.REQUESTED, BulkActionStatus.CANCELING
        ):
            services.check_alive()
            assert time.monotonic() < deadline, f"backfill not done in {BACKFILL_TIMEOUT_S} s{services.logs()}"
            time.sleep(2)
        runs = instance.get_runs(RunsFilter(tags={"dagster/backfill": backfill_id}))
        assert status == BulkActionStatus.COMPLETED_SUCCESS, (
            f"backfill ended {status}; runs {[(r.run_id, r.status) for r in runs]}{services.logs()}"
        )

        # The asset's BackfillPolicy groups the partitions into runs of one model each (ranges
        # of JDs); every run went to the worker as a Celery task.
        per_run = module.FIT_SCORES.backfill_policy.max_partitions_per_run or len(module.JDS)
        assert len(runs) == len(module.MODELS) * math.ceil(len(module.JDS) / per_run)
        model = lambda key: module.PARTITIONS.get_partition_key_from_str(key).keys_by_dimension["model"]
        for r in runs:
            assert model(r.tags["dagster/asset_partition_range_start"]) == model(r.tags["dagster/asset_partition_range_end"])
        assert {model(r.tags["dagster/asset_partition_range_start"]) for r in runs} == set(module.MODELS)
        assert all(r.status == DagsterRunStatus.SUCCESS for r in runs)
        assert all("dagster-celery/task_id" in r.tags for r in runs)
        # Every partition has its materialisation in the Postgres event log.
        records = instance.fetch_materializations(fit_key, limit=1000).records
        assert {r.partition_key for r in records} == all_keys
        assert instance.get_materialized_partitions(fit_key) == all_keys

    assert server.count == len(all_keys) * n_variants
    with duckdb.connect(str(root / "scale" / "study.duckdb"), read_only=True) as con:
        cells = con.execute("SELECT model, jd, count(*) FROM audit.fit_scores GROUP BY ALL").fetchall()
    dims = [module.PARTITIONS.get_partition_key_from_str(k).keys_by_dimension for k in all_keys]
    assert {(m, j) for m, j, _ in cells} == {(d["model"], d["jd"]) for d in dims}
    assert {n for _, _, n in cells} == {n_variants}
