"""The commands the docs give for Dagster's own tools: `dg list defs` lists the assets of every
folder of defs/, and `dg dev` and `dagster dev -w workspace.yaml` both serve them (a real
webserver on 127.0.0.1, asked over GraphQL)."""

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import resumebias_dagster.defs
from resumebias_dagster.testing.processes import free_port, resumebias_env, stop_process_group, tail, wait_for_http

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# A generous guard for a loaded 2-core machine, not a speed requirement.
SERVER_START_TIMEOUT_S = 240


def _group_folders() -> set[str]:
    root = Path(resumebias_dagster.defs.__file__).parent
    return {p.name for p in root.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_")}


def _expected_assets() -> dict[str, str]:
    from resumebias_dagster.definitions import defs

    graph = defs.resolve_asset_graph()
    return {k.to_user_string(): graph.get(k).group_name for k in graph.get_all_asset_keys()}


def _env(tmp_path: Path) -> dict[str, str]:
    """The caller's resumebias and Dagster settings dropped, a private instance (no usage
    statistics, as the instance resumebias writes) and data folder."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return resumebias_env(tmp_path / "data", DAGSTER_HOME=str(home))


def _require(binary: str) -> Path:
    path = BIN / binary
    if not path.exists():
        pytest.skip(f"{path} not found (pip install -e . installs dagster-dg-cli)")
    return path


def test_dg_list_defs_lists_the_assets_of_every_defs_folder(tmp_path):
    out = subprocess.run(
        [str(_require("dg")), "list", "defs", "--json"],
        cwd=REPO,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    listed = json.loads(out.stdout)
    groups = {a["asset_key"]: a["group_name"] for a in listed["assets"]}
    assert groups == _expected_assets()
    assert set(groups.values()) == _group_folders()
    assert all(a["owners"] for a in listed["assets"]), "every asset has an owner"
    assert {"study_inputs", "fit_scores_job"} <= {j["name"] for j in listed["jobs"]}
    assert not (tmp_path / "data").exists(), "listing creates no data folder"


LOCATION = "resumebias_dagster"
QUERY = (
    "{ assetNodes { assetKey { path } groupName kinds repository { location { name } }"
    " metadataEntries { label ... on TableSchemaMetadataEntry { schema { columns { name type } } } } } }"
)
# What the UI shows of each asset beside its group: its kind tags and its table's columns.
SHOWN: dict[str, dict] = {}


def _served_assets(url: str) -> dict[str, str]:
    """Key -> group of every asset the server shows, each from the one code location: under
    one name, the sensors' and schedules' on/off state is shared by `dg dev` and `dagster dev`."""
    query = json.dumps({"query": QUERY}).encode()
    request = urllib.request.Request(f"{url}/graphql", data=query, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        nodes = json.load(reply)["data"]["assetNodes"]
    assert {n["repository"]["location"]["name"] for n in nodes} <= {LOCATION}
    for n in nodes:
        schema = [e["schema"] for e in n["metadataEntries"] if e["label"] == "dagster/column_schema"]
        SHOWN["/".join(n["assetKey"]["path"])] = {
            "kinds": sorted(n["kinds"]),
            "columns": [c["name"] for c in schema[0]["columns"]] if schema else None,
        }
    return {"/".join(n["assetKey"]["path"]): n["groupName"] for n in nodes}


def _serve(command: list[str], tmp_path: Path) -> dict[str, str]:
    """Start ``command`` (a dev server on a free port), wait until its code location shows
    its assets, and return them (key -> group); the server and its children stop after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "dev.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [*command, "-h", "127.0.0.1", "-p", str(port)],
            cwd=REPO,
            env=_env(tmp_path),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_http(f"{url}/server_info", proc, log, SERVER_START_TIMEOUT_S, command[0])
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not (served := _served_assets(url)):
            # The webserver answers before the code location has loaded.
            assert proc.poll() is None and time.monotonic() < deadline, tail(log)
            time.sleep(1)
        return served
    finally:
        stop_process_group(proc)


def test_dg_dev_serves_the_definitions(tmp_path):
    from resumebias_dagster.core.tables import FitScores, columns
    from resumebias_dagster.partitions import kind_tags

    assert _serve([str(_require("dg")), "dev"], tmp_path) == _expected_assets()
    # The UI shows each table's columns (from its pandera model) and each model's kind.
    assert SHOWN["fit_scores"] == {"kinds": sorted(kind_tags("fit")), "columns": list(columns(FitScores))}
    assert SHOWN["fit_scores"]["kinds"] == ["duckdb", "pytorch"]  # the default models: Gemma, MiniLM
    assert all(shown["columns"] for key, shown in SHOWN.items() if not key.endswith("_plots")), SHOWN


def test_dagster_dev_with_the_workspace_file_still_serves_them(tmp_path):
    assert _serve([str(_require("dagster")), "dev", "-w", "workspace.yaml"], tmp_path) == _expected_assets()
