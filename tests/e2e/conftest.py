"""A real `dagster-webserver` on 127.0.0.1 and Debian's Chromium driven by Playwright."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from resumebias_dagster.testing.processes import free_port, stop_process_group, tail, wait_for_http

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-output" / "e2e"
# The code location loads in seconds, but a busy 2-core machine can take far longer.
SERVER_START_TIMEOUT_S = 120

# Runs launch straight from the webserver: no daemon to start and wait for.
INSTANCE_YAML = """\
run_coordinator:
  module: dagster.core.run_coordinator
  class: DefaultRunCoordinator
telemetry:
  enabled: false
"""


class Webserver:
    def __init__(self, url: str, log: Path):
        self.url = url
        self.log = log

    def log_tail(self, n: int = 60) -> str:
        return tail(self.log, n)


def _require_browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found (Debian: apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright not installed (pip install -e '.[test]')")


@pytest.fixture
def webserver(tmp_path):
    """`dagster-webserver` loading `resumebias_dagster.definitions` on a free port, with a
    private Dagster instance and data directory."""
    # Checked first so a machine without the browser does not start a server for nothing.
    _require_browser()
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(INSTANCE_YAML)
    data = tmp_path / "data"
    data.mkdir()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    log = SCREENSHOTS / "webserver.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DAGSTER_HOME": str(home), "RESUMEBIAS_DATA_DIR": str(data)}
    binary = Path(sys.executable).parent / "dagster-webserver"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(binary), "-m", "resumebias_dagster.definitions", "-h", "127.0.0.1", "-p", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Webserver(url, log)
    try:
        wait_for_http(f"{url}/server_info", proc, log, SERVER_START_TIMEOUT_S, "dagster-webserver")
        yield server
    finally:
        stop_process_group(proc)


@pytest.fixture
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def page():
    """A headless Chromium page; skips when the browser or Playwright is not installed."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            pg = context.new_page()
            pg.set_default_timeout(60_000)
            yield pg
        finally:
            browser.close()
