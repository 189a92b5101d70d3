"""The UI command ``resumebias run --config`` prints opens the definitions the run used
(issue 39): the audit file's models as partitions and the run's materialisations, from any
folder. Before, the printed ``DAGSTER_HOME=... dagster dev`` left out the audit file, so the UI
showed the packaged models, hid the user's results, and its Materialize button started the
default study."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from resumebias_dagster.testing.processes import (
    free_port,
    resumebias_env,
    run_audit_file,
    stop_process_group,
    wait_for_http,
)

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KEY_ENV = "ACME_SCORER_KEY"
MODEL = "acme-fit"
START_TIMEOUT_S = 180
QUERY = """
{
  assetNodes(assetKeys: [{path: ["fit_scores"]}]) { partitionKeysByDimension { name partitionKeys } }
  fit: assetOrError(assetKey: {path: ["fit_scores"]}) {
    ... on Asset { assetMaterializations(limit: 100) { partition } }
  }
  resumes: assetOrError(assetKey: {path: ["user_resumes"]}) {
    ... on Asset { assetMaterializations(limit: 5) { runId } }
  }
}
"""


def write_audit(folder: Path, url: str) -> Path:
    (folder / "resumes").mkdir(parents=True)
    for k, row in enumerate(generate_resumes(n_per_level=1, seed=11).itertuples(index=False)):
        (folder / "resumes" / f"cv_{k:02d}.txt").write_text(row.text, encoding="utf-8")
    shutil.copytree(REPO / "examples" / "own_tool" / "catalog", folder / "catalog")
    entry = {
        "name": MODEL,
        "kind": "http",
        "url": url,
        "body": '{"resume": {{ resume | tojson }}, "job_description": {{ job_description | tojson }}}',
        "api_key_env": KEY_ENV,
        "answer": {"score": "$.result.score", "recommend": "$.result.decision"},
    }
    (folder / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
    audit = {
        "models_file": "models.yaml",
        "catalog_dir": "catalog",
        "assets": {"user_resumes": {"folder": "resumes"}, "probe_variants": {"resumes": "user"}},
    }
    path = folder / "audit.yaml"
    path.write_text(yaml.safe_dump(audit), encoding="utf-8")
    return path


def graphql(url: str) -> dict:
    request = urllib.request.Request(
        f"{url}/graphql", data=json.dumps({"query": QUERY}).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def test_the_printed_ui_command_shows_the_audit_files_models_and_results(tmp_path):
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = resumebias_env(tmp_path / "data", **{KEY_ENV: "test-key", "PATH": path})
    with FakeProviderServer("scorer") as server:
        audit = write_audit(tmp_path / "audit", server.base_url)
        proc = run_audit_file(audit, tmp_path, env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    # Before any call, what the audit file's models reach (issue 40): host and key variable.
    assert f"its models reach (before any call):\n  {MODEL} (http): calls 127.0.0.1:" in proc.stdout
    assert f"with the key in ${KEY_ENV}" in proc.stdout
    line = next(x for x in proc.stdout.splitlines() if x.startswith("UI: "))
    command = line.removeprefix("UI: ").split("   (")[0]
    assert f"RESUMEBIAS_AUDIT_FILE={audit}" in command, line

    # The command as printed, from another folder, with only the user's own environment (the
    # key, PATH) beside it: nothing the run set for itself.
    del env["RESUMEBIAS_DATA_DIR"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("w") as out:
        ui = subprocess.Popen(
            ["bash", "-c", f"exec env {command} -h 127.0.0.1 -p {port}"],
            cwd=elsewhere,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_http(f"{url}/server_info", ui, log, START_TIMEOUT_S, "the printed UI command")
        data = graphql(url)
    finally:
        stop_process_group(ui)
    dims = {d["name"]: d["partitionKeys"] for d in data["assetNodes"][0]["partitionKeysByDimension"]}
    assert dims["model"] == [MODEL], shlex.join(dims["model"])
    fit_partitions = [m["partition"] for m in data["fit"]["assetMaterializations"]]
    assert fit_partitions and all(MODEL in p for p in fit_partitions), fit_partitions
    assert len(set(fit_partitions)) == len(dims["jd"])
    assert data["resumes"]["assetMaterializations"], "user_resumes shows no materialisation"
