"""A ``data/`` folder in the working directory is the tool's only if the tool created it
(issue 25, item 3). A cloned folder can ship ``data/dagster_home/dagster.yaml`` whose logging
handler runs a command, and ``data/responses.sqlite`` with forged answers; neither may be read
unless the operator names the folder. Each test failed on the code before issue 25."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from resumebias_dagster import settings

HOSTILE_INSTANCE = """\
python_logs:
  dagster_handler_config:
    handlers:
      pwn:
        "()": os.system
        command: "touch {marker}"
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh working directory, no data folder named by the environment, and a private
    per-user state folder (where the tool remembers the data folders it created)."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("RESUMEBIAS_DATA_DIR", raising=False)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return folder


def _plant(folder, marker):
    home = folder / "data" / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text(HOSTILE_INSTANCE.format(marker=marker))
    (folder / "data" / "responses.sqlite").write_bytes(b"forged")


def test_a_data_folder_the_tool_did_not_create_is_refused(workdir, tmp_path):
    marker = tmp_path / "pwned"
    _plant(workdir, marker)
    with pytest.raises(settings.UntrustedDataDirError) as raised:
        settings.data_dir()
    message = str(raised.value)
    assert str(workdir / "data") in message and "not created by resumebias" in message
    assert "RESUMEBIAS_DATA_DIR" in message  # how to opt in


def test_resumebias_run_in_a_cloned_folder_runs_no_planted_command(workdir, tmp_path):
    marker = tmp_path / "pwned"
    _plant(workdir, marker)
    done = subprocess.run(
        [sys.executable, "-m", "resumebias_dagster.cli", "run"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "not created by resumebias" in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists()


def test_a_data_folder_the_tool_created_is_used_again(workdir):
    first = settings.data_dir()
    assert first == workdir / "data" and first.is_dir()
    (first / "reports").mkdir()
    assert settings.data_dir() == first


def test_a_folder_replacing_the_created_one_is_refused(workdir):
    created = settings.data_dir()
    shutil.rmtree(created)
    created.mkdir()  # the same path, another folder (say a fresh clone in its place)
    with pytest.raises(settings.UntrustedDataDirError):
        settings.data_dir()


def test_a_symlink_named_data_is_refused(workdir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (workdir / "data").symlink_to(elsewhere)
    with pytest.raises(settings.UntrustedDataDirError):
        settings.data_dir()


def test_the_operator_opts_in_by_naming_the_folder(workdir, monkeypatch, tmp_path):
    _plant(workdir, tmp_path / "pwned")
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(workdir / "data"))
    assert settings.data_dir() == workdir / "data"


def test_an_instance_config_the_tool_did_not_write_is_refused(tmp_path, monkeypatch):
    from resumebias_dagster import runner

    data = tmp_path / "chosen"
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(data))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (data / "dagster_home").mkdir(parents=True)
    (data / "dagster_home" / "dagster.yaml").write_text(HOSTILE_INSTANCE.format(marker=tmp_path / "pwned"))
    with pytest.raises(runner.UntrustedInstanceError) as raised:
        runner.dagster_home()
    message = str(raised.value)
    assert "dagster.yaml" in message and "not written by resumebias" in message
    assert f"DAGSTER_HOME={data / 'dagster_home'}" in message  # how to opt in


def test_the_tool_writes_its_instance_config_and_reads_it_again(tmp_path, monkeypatch):
    from resumebias_dagster import runner

    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "chosen"))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    home = runner.dagster_home()
    assert (home / "dagster.yaml").read_bytes() == runner.INSTANCE_TEMPLATE.read_bytes()
    assert "DAGSTER_HOME" not in os.environ  # the instance is named as data, never by the environment
    assert runner.dagster_home() == home
    # An instance config it wrote from an older template is brought up to date.
    (home / "dagster.yaml").write_text("# an older resumebias template\n")
    settings.remember_file(home / "dagster.yaml")
    runner.dagster_home()
    assert (home / "dagster.yaml").read_bytes() == runner.INSTANCE_TEMPLATE.read_bytes()


def test_an_explicit_dagster_home_is_the_operators_choice(tmp_path, monkeypatch):
    from resumebias_dagster import runner

    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    assert runner.dagster_home() == home
    assert (home / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"


# ------------------------------------------------------------------ issue 40, item 5: a folder's .env

DOTENV = "RESUMEBIAS_DATA_DIR=./data\nDAGSTER_HOME=./data/dagster_home\n"


def _import_definitions(folder, extra_env):
    env = {k: v for k, v in os.environ.items() if k not in ("RESUMEBIAS_DATA_DIR", "DAGSTER_HOME")}
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, "-c", "import resumebias_dagster.definitions"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_data_folder_named_by_a_cloned_dotenv_is_refused_when_the_definitions_load(workdir, tmp_path):
    # Dagster's CLI loads ./.env before our code: a clone's .env named its shipped data/ and
    # instance, and the definitions went on with them.
    _plant(workdir, tmp_path / "pwned")
    (workdir / ".env").write_text(DOTENV)
    # As the Dagster CLI leaves the environment after reading .env:
    done = _import_definitions(workdir, {"RESUMEBIAS_DATA_DIR": "./data", "DAGSTER_HOME": "./data/dagster_home"})
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert f"{workdir / '.env'} sets RESUMEBIAS_DATA_DIR=./data (a data folder resumebias did not create)" in last
    assert "set the variable in your shell" in last


def test_the_dagster_cli_in_a_cloned_folder_stops_at_the_definitions(workdir, tmp_path):
    _plant(workdir, tmp_path / "pwned")
    (workdir / ".env").write_text("RESUMEBIAS_DATA_DIR=./data\n")
    dagster = Path(sys.executable).parent / "dagster"
    env = {k: v for k, v in os.environ.items() if k not in ("RESUMEBIAS_DATA_DIR", "DAGSTER_HOME")}
    done = subprocess.run(
        [str(dagster), "definitions", "validate", "-m", "resumebias_dagster.definitions"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "sets RESUMEBIAS_DATA_DIR=./data (a data folder resumebias did not create)" in done.stdout + done.stderr


def test_a_dotenv_naming_a_fresh_folder_or_a_shell_choice_is_fine(workdir, tmp_path):
    (workdir / ".env").write_text("RESUMEBIAS_DATA_DIR=./fresh\n")
    assert _import_definitions(workdir, {"RESUMEBIAS_DATA_DIR": "./fresh"}).returncode == 0
    # The same folder named in the shell (not by .env): the operator's choice, as before.
    _plant(workdir, tmp_path / "pwned")
    assert _import_definitions(workdir, {"RESUMEBIAS_DATA_DIR": str(workdir / "data")}).returncode == 0
