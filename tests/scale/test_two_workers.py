"""Two machines in miniature: deploy/dagster.yaml (Postgres storage, queued runs, runs launched
as Celery tasks) and deploy/workspace.yaml (a gRPC code server), with the code server and the
Dagster daemon on a control "machine" and two Celery workers on two more, each with its own
data directory and DAGSTER_HOME. They share no disk, only servers: PostgreSQL (runs, events
and the response store), an S3 server (the tables, as Parquet) and Redis (the broker).

A backfill of every model x JD partition of `fit_scores` runs on both workers, `fit_effects`
reads every partition, and a partition re-run on the other worker makes no provider call.

What differs from a deployment: the servers run on 127.0.0.1 (moto stands in for a cloud
bucket); where no Redis server is installed, Celery's filesystem transport stands in."""

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

from resumebias_dagster import cli
from resumebias_dagster.core.common.shared_tables import SharedTables
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.processes import free_port, stop_process_group, tail

pytestmark = pytest.mark.scale

REPO = Path(__file__).resolve().parents[2]
DEFS_FILE = Path(__file__).with_name("backfill_defs.py")
KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
BACKFILL_TIMEOUT_S = 240
CODE_SERVER_TIMEOUT_S = 120
ANSWER = json.dumps(
    {"score": 6, "recommend": "yes", "justification": "ok", "strengths": ["a", "b", "c"], "concerns": ["x", "y", "z"]}
)


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _load_defs_module():
    spec = importlib.util.spec_from_file_location("resumebias_scale_backfill_defs", DEFS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MACHINES = ("worker-a", "worker-b")
CONTROL = "control"  # the test process, the code server and the daemon


@pytest.fixture
def deployment(tmp_path, monkeypatch, postgres, s3_server, redis_broker):
    """Three "machines" that share no disk: a control machine (this process, the code server,
    the daemon) and two workers, each with its own data directory, DAGSTER_HOME and copy of the
    catalog; they share only servers: PostgreSQL, S3, the broker and the fake provider."""
    bucket = f"scale-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    s3_server.create_bucket(bucket)
    celery_dir = tmp_path / "celery"
    if redis_broker is not None:
        broker = {"DAGSTER_CELERY_BROKER_URL": redis_broker.url(0), "DAGSTER_CELERY_BACKEND_URL": redis_broker.url(1)}
        transport = None
    else:
        # No Redis server here: Celery's filesystem transport, whose folder is the "network".
        for sub in ("broker", "control", "results"):
            (celery_dir / sub).mkdir(parents=True)
        broker = {
            "DAGSTER_CELERY_BROKER_URL": "filesystem://",
            "DAGSTER_CELERY_BACKEND_URL": f"file://{celery_dir / 'results'}",
        }
        transport = {
            "broker_transport_options": {
                "data_folder_in": str(celery_dir / "broker"),
                "data_folder_out": str(celery_dir / "broker"),
                "control_folder": str(celery_dir / "control"),
            }
        }
    shared_env = {
        "DAGSTER_PG_HOST": postgres["host"],
        "DAGSTER_PG_PORT": str(postgres["port"]),
        "DAGSTER_PG_USERNAME": postgres["user"],
        "DAGSTER_PG_PASSWORD": postgres["password"],
        "DAGSTER_PG_DB": postgres["db"],
        **broker,
        "RESUMEBIAS_CODE_SERVER_HOST": "127.0.0.1",
        "RESUMEBIAS_CODE_SERVER_PORT": str(free_port()),
        "RESUMEBIAS_TABLES_URL": f"s3://{bucket}/study",
        "RESUMEBIAS_STORE_URL": postgres["store_url"],
        **s3_server.env(),
        KEY_ENV: "sk-test",
        # dagster-celery starts `celery` by name: the venv's scripts must be on PATH even
        # when the tests run as .venv/bin/python without an activated venv.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    instance_yaml = yaml.safe_load((REPO / "deploy" / "dagster.yaml").read_text())
    if transport:
        instance_yaml["run_launcher"]["config"]["config_source"] = transport
    # The two fake models stand for two providers: a backfill's runs may go at once.
    for limit in instance_yaml["concurrency"]["runs"]["tag_concurrency_limits"]:
        if limit["key"] == "dagster/backfill":
            limit["limit"] = 2
    worker_yaml = yaml.safe_load((REPO / "deploy" / "celery-worker.yaml").read_text())
    if transport:
        worker_yaml["execution"]["config"]["config_source"] = transport

    with FakeProviderServer("openai", answer=lambda request: ANSWER) as server:
        models = [
            {
                "name": name,
                "kind": "provider",
                "provider": "openai",
                "model": f"fake/{name}",
                "base_url": server.base_url,
                "api_key_env": KEY_ENV,
                "temperature": 0.0,
                "runs_per_cell": 1,
                "max_concurrency": 8,
                "timeout_s": 10.0,
                "max_retries": 1,
            }
            for name in ("fake-a", "fake-b")
        ]
        machines = {}
        for name in (CONTROL, *MACHINES):
            folder = tmp_path / name
            (folder / "catalog").mkdir(parents=True)
            (folder / "catalog" / "models.yaml").write_text(yaml.safe_dump({"models": models}))
            (folder / "dagster_home").mkdir()
            (folder / "dagster_home" / "dagster.yaml").write_text(yaml.safe_dump(instance_yaml))
            (folder / "celery-worker.yaml").write_text(yaml.safe_dump(worker_yaml))
            machines[name] = {
                **shared_env,
                "DAGSTER_HOME": str(folder / "dagster_home"),
                "RESUMEBIAS_DATA_DIR": str(folder / "data"),
                "RESUMEBIAS_SCALE_DIR": str(folder),
                # The resources name this machine's catalog: an operator's allowed folder.
                "RESUMEBIAS_ALLOWED_ROOTS": str(folder),
            }
        for k, v in machines[CONTROL].items():
            monkeypatch.setenv(k, v)
        yield tmp_path, server, machines, bucket


def _wait_for_code_server(proc: subprocess.Popen, log: Path) -> None:
    """Until the code server answers with its loaded definitions (the daemon needs them)."""
    client = DagsterGrpcClient(
        host=os.environ["RESUMEBIAS_CODE_SERVER_HOST"], port=int(os.environ["RESUMEBIAS_CODE_SERVER_PORT"])
    )
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

    def start(self, name: str, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        with self.log(name).open("w") as out:
            self.procs[name] = subprocess.Popen(
                cmd,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )
        return self.procs[name]

    def stop(self, name: str) -> None:
        stop_process_group(self.procs.pop(name))

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
    """The code server (ready) and a Celery worker per worker machine; the test starts the daemon."""
    root, _, machines, _ = deployment
    services = Services(root)
    try:
        code_server = services.start(
            "code_server",
            [
                _bin("dagster"),
                "code-server",
                "start",
                "-f",
                str(DEFS_FILE),
                "-d",
                str(REPO),
                "-h",
                os.environ["RESUMEBIAS_CODE_SERVER_HOST"],
                "-p",
                os.environ["RESUMEBIAS_CODE_SERVER_PORT"],
                "--location-name",
                "resumebias_dagster",
            ],
        )
        for name in MACHINES:
            # One run at a time in the worker process itself: a run's step processes need a
            # parent that may have children (a prefork pool child may not). A solo worker busy
            # with a run takes no other, so a second run goes to the other worker.
            services.start(
                name,
                [
                    _bin("dagster-celery"),
                    "worker",
                    "start",
                    "-A",
                    "dagster_celery.app",
                    "-n",
                    f"{name}@%h",
                    "-y",
                    str(root / name / "celery-worker.yaml"),
                    "-q",
                    "dagster",
                    "--",
                    "--pool=solo",
                ],
                env=machines[name],
            )
        _wait_for_code_server(code_server, services.log("code_server"))
        yield services
    finally:
        services.stop_all()


def _run_backfill(instance, defs, services, keys, partition_names=None) -> list:
    """A backfill of ``keys`` (every partition, or ``partition_names``) to its end; its runs."""
    backfill_id = make_new_backfill_id()
    instance.add_backfill(
        PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id,
            asset_graph=defs.resolve_asset_graph(),
            partition_names=partition_names,
            asset_selection=keys,
            backfill_timestamp=time.time(),
            tags={},
            dynamic_partitions_store=instance,
            all_partitions=partition_names is None,
            title="scale-out test",
            description=None,
            run_config=None,
        )
    )
    if "daemon" not in services.procs:
        # Started after the first backfill exists: the daemon's first iteration picks it up at
        # once instead of 30 s later.
        services.start_daemon()
    deadline = time.monotonic() + BACKFILL_TIMEOUT_S
    while (status := instance.get_backfill(backfill_id).status) in (
        BulkActionStatus.REQUESTED,
        BulkActionStatus.CANCELING,
    ):
        services.check_alive()
        assert time.monotonic() < deadline, f"backfill not done in {BACKFILL_TIMEOUT_S} s{services.logs()}"
        time.sleep(2)
    runs = instance.get_runs(RunsFilter(tags={"dagster/backfill": backfill_id}))
    assert status == BulkActionStatus.COMPLETED_SUCCESS, (
        f"backfill ended {status}; runs {[(r.run_id, r.status) for r in runs]}{services.logs()}"
    )
    assert all(r.status == DagsterRunStatus.SUCCESS for r in runs)
    return runs


def _worker_of(run, services: Services) -> str:
    """The worker machine whose Celery log received the run's task."""
    task_id = run.tags["dagster-celery/task_id"]
    found = [name for name in MACHINES if task_id in services.log(name).read_text(errors="replace")]
    assert len(found) == 1, f"task {task_id} of run {run.run_id} in the logs of {found}{services.logs()}"
    return found[0]


def test_two_workers_share_tables_and_answers_and_no_disk(deployment, services):
    root, server, machines, bucket = deployment
    module = _load_defs_module()
    defs = module.defs
    fit_key, effects_key = dg.AssetKey("fit_scores"), dg.AssetKey("fit_effects")
    all_keys = set(module.PARTITIONS.get_partition_keys())
    assert len(all_keys) == 2 * 17

    def dims(key):
        return module.PARTITIONS.get_partition_key_from_str(key).keys_by_dimension

    with dg.DagsterInstance.get() as instance:
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.run_launcher).__name__ == "CeleryRunLauncher"

        inputs = dg.materialize(
            [*module.INPUTS, module.FIT_SCORES, *defs.asset_checks],
            selection=module.INPUTS,
            resources=module.RESOURCES,
            run_config=module.INPUTS_CONFIG,
            instance=instance,
        )
        assert inputs.success
        n_variants = len(inputs.output_for_node("probe_variants"))

        # Every (model, JD) partition of fit_scores, then fit_effects over all of them.
        runs = _run_backfill(instance, defs, services, [fit_key, effects_key])
        fit_runs = [r for r in runs if "dagster/asset_partition_range_start" in r.tags]
        effects_runs = [r for r in runs if r not in fit_runs]
        # The asset's BackfillPolicy groups the partitions into runs of one model each.
        per_run = module.FIT_SCORES.backfill_policy.max_partitions_per_run or len(module.JDS)
        assert len(fit_runs) == len(module.MODELS) * math.ceil(len(module.JDS) / per_run)
        assert len(effects_runs) == 1
        for r in fit_runs:
            assert (
                dims(r.tags["dagster/asset_partition_range_start"])["model"]
                == dims(r.tags["dagster/asset_partition_range_end"])["model"]
            )
        # The partitions ran on both worker machines.
        ran_on = {r.run_id: _worker_of(r, services) for r in runs}
        assert {ran_on[r.run_id] for r in fit_runs} == set(MACHINES), ran_on
        records = instance.fetch_materializations(fit_key, limit=1000).records
        assert {r.partition_key for r in records} == all_keys
        assert server.count == len(all_keys) * n_variants

        # fit_effects, on whichever worker, read every partition that both workers wrote.
        shared = SharedTables(os.environ["RESUMEBIAS_TABLES_URL"])
        scores = shared.read("audit", "fit_scores")
        assert {tuple(c) for c in scores[["model", "jd"]].drop_duplicates().to_numpy()} == {
            (d["model"], d["jd"]) for d in map(dims, all_keys)
        }
        assert set(scores.groupby(["model", "jd"]).size()) == {n_variants}
        effects = shared.read("audit", "fit_effects")
        assert {tuple(c) for c in effects[["model", "jd"]].drop_duplicates().to_numpy()} == {
            (d["model"], d["jd"]) for d in map(dims, all_keys)
        }
        # Nothing of the study lies on a worker's disk: no DuckDB file, no SQLite store.
        for name in (CONTROL, *MACHINES):
            assert not [p for p in (root / name).rglob("*") if p.suffix in {".duckdb", ".sqlite"}], name

        # A partition that worker A ran, re-run on worker B alone: every answer comes from the
        # shared store, none from the provider.
        run_a = next(r for r in fit_runs if ran_on[r.run_id] == MACHINES[0])
        partition = run_a.tags["dagster/asset_partition_range_start"]
        services.stop(MACHINES[0])
        calls_before = server.count
        (rerun,) = _run_backfill(instance, defs, services, [fit_key], partition_names=[partition])
        assert _worker_of(rerun, services) == MACHINES[1]
        assert server.count - calls_before == 0
        assert (
            len(shared.read("audit", "fit_scores", [{"model": dims(partition)["model"], "jd": dims(partition)["jd"]}]))
            == n_variants
        )

    # The shared tables inspected as a local DuckDB file.
    pulled = root / "pulled.duckdb"
    assert cli.main(["pull-tables", "--out", str(pulled)]) == 0
    with duckdb.connect(str(pulled), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM audit.fit_scores").fetchone() == (len(all_keys) * n_variants,)
