"""Helpers for tests that start servers in their own process groups."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
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
