"""The command docs/howto/re-audit.md gives to turn on Dagster's automation condition sensor
(issue 41: the tables "refresh themselves" only while it runs, and it is off in a new
instance, which no page said) works as written."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = "dagster sensor start default_automation_condition_sensor -m resumebias_dagster.definitions"


def test_the_documented_command_turns_the_automation_sensor_on(tmp_path):
    assert COMMAND in " ".join((REPO / "docs" / "howto" / "re-audit.md").read_text(encoding="utf-8").split())
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"), "RESUMEBIAS_DATA_DIR": str(tmp_path / "data")}
    (tmp_path / "home").mkdir()
    dagster = str(Path(sys.executable).parent / "dagster")
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    before = subprocess.run([dagster, "sensor", "list", "-m", "resumebias_dagster.definitions"], **run)
    assert "Sensor: default_automation_condition_sensor [STOPPED]" in before.stdout, before.stderr[-2000:]
    started = subprocess.run([dagster, *COMMAND.split()[1:]], **run)
    assert started.returncode == 0, started.stderr[-2000:]
    after = subprocess.run([dagster, "sensor", "list", "-m", "resumebias_dagster.definitions"], **run)
    assert "Sensor: default_automation_condition_sensor [RUNNING]" in after.stdout
