"""A private Redis server for the scale-out test's Celery broker: `redis-server` on a free port
of 127.0.0.1, nothing written to disk, in its own process group."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from resumebias_dagster.testing.processes import free_port, stop_process_group, tail


def unavailable_reason() -> str | None:
    if shutil.which("redis-server") is None:
        return "redis-server not found (Debian: apt-get install -y redis-server)"
    try:
        import redis  # noqa: F401 - what Celery's Redis transport connects with
    except ImportError:
        return "the redis client is not installed (pip install -e '.[test]' brings celery[redis])"
    return None


class RedisServer:
    host = "127.0.0.1"

    def __init__(self, folder: Path):
        self.port = free_port()
        self.log = folder / "redis.log"
        self.proc: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://{self.host}:{self.port}/{db}"

    def start(self, timeout_s: float = 20) -> RedisServer:
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", self.host, "--save", "", "--appendonly", "no"],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}:\n{tail(self.log)}")
            try:
                with socket.create_connection((self.host, self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer in {timeout_s} s:\n{tail(self.log)}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process_group(self.proc)
