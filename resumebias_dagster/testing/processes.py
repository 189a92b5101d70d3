"""Helpers for tests that start servers in their own process groups."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process_group(proc: subprocess.Popen) -> None:
    """End a process started with ``start_new_session=True`` and everything it started,
    forcefully if it lingers."""
    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue


def tail(path: Path, n: int = 80) -> str:
    """The last ``n`` lines of a log file."""
    return "\n".join(path.read_text(errors="replace").splitlines()[-n:]) if path.exists() else "(no log)"


def wait_for_http(url: str, proc: subprocess.Popen, log: Path, timeout_s: float, what: str) -> None:
    """Wait until ``url`` answers; ``AssertionError`` with the log's tail when ``proc`` exits
    first or ``timeout_s`` passes (a busy machine starts a code location slowly: be generous)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} did not answer within {timeout_s:g} s:\n{tail(log)}") from None
            time.sleep(0.5)


def resumebias_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``resumebias`` command a test starts: none of the caller's
    resumebias or Dagster settings, its own data folder, the shared model cache (the test
    session's), no model hub, and ``extra`` (a key variable, PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESUMEBIAS_", "DAGSTER_"))}
    env.update({"RESUMEBIAS_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"})
    if os.environ.get("RESUMEBIAS_MODEL_CACHE"):
        env["RESUMEBIAS_MODEL_CACHE"] = os.environ["RESUMEBIAS_MODEL_CACHE"]
    env.update(extra)
    return env


def run_audit_file(audit: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``resumebias run --config AUDIT`` as a user runs it, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "resumebias_dagster.cli", "run", "--config", str(audit)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
