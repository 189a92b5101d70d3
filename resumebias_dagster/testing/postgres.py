"""A private PostgreSQL server for tests and benchmarks: its own cluster in a temporary
folder, on a free port of 127.0.0.1, started with the server binaries (no system service).

Run as root, the server runs as the ``postgres`` user (it refuses to run as root). The
superuser logs in without a password; every other role needs its password over TCP
(scram-sha-256), so a test can check what a wrong password does.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from urllib.parse import quote

from resumebias_dagster.testing.processes import free_port


def server_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, or where Debian puts them."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").exists()]
    versions.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return versions[-1] if versions else None


def unavailable_reason() -> str | None:
    """Why no private server can be started here (a reason to skip), or None."""
    if server_binaries() is None:
        return "PostgreSQL server binaries not found (Debian: apt-get install -y postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and no `postgres` user to run the server as"
    return None


class PostgresServer:
    """``with PostgresServer() as server: server.url(server.create_database())``.

    ``fast``: no fsync and asynchronous commits (tests); off, the server's durable defaults
    (benchmarks).
    """

    host = "127.0.0.1"

    def __init__(self, superuser: str = "dagster", fast: bool = True):
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        self.superuser = superuser
        self.fast = fast
        bindir = server_binaries()
        assert bindir is not None  # unavailable_reason() found none missing
        self.bindir = bindir
        self.port = free_port()
        self.tmp: Path | None = None

    @property
    def log(self) -> Path:
        assert self.tmp is not None, "the server's folder exists only once it is started"
        return self.tmp / "server.log"

    def _run(self, *args: object, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / str(args[0])), *map(str, args[1:])]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def start(self) -> PostgresServer:
        # Not under pytest's tmp_path: that folder is private to the user running the tests,
        # and the server refuses to run as root.
        self.tmp = Path(tempfile.mkdtemp(prefix="resumebias-pg-"))
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.tmp, owner.pw_uid, owner.pw_gid)
        data = self.tmp / "data"
        try:
            self._run("initdb", "-D", data, "-U", self.superuser, "-A", "trust", "-E", "UTF8", "--no-sync")
            hba = (
                f"local all all trust\nhost all {self.superuser} 127.0.0.1/32 trust\n"
                "host all all 127.0.0.1/32 scram-sha-256\n"
            )
            if os.geteuid() == 0:
                subprocess.run(
                    ["runuser", "-u", "postgres", "--", "tee", str(data / "pg_hba.conf")],
                    input=hba,
                    text=True,
                    check=True,
                    capture_output=True,
                )
            else:
                (data / "pg_hba.conf").write_text(hba)
            options = f"-p {self.port} -k {self.tmp} -c listen_addresses={self.host}"
            if self.fast:
                # Durability is not what a test server is for: no fsync keeps it fast on a busy disk.
                options += " -c fsync=off -c synchronous_commit=off"
            self._run("pg_ctl", "-D", data, "-l", self.log, "-o", options, "-w", "-t", "60", "start")
        except subprocess.CalledProcessError as e:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise RuntimeError(f"could not start PostgreSQL: {e.cmd}\n{e.stdout}\n{e.stderr}") from None
        return self

    def stop(self) -> None:
        if self.tmp is None:
            return
        self._run("pg_ctl", "-D", self.tmp / "data", "-m", "fast", "-w", "-t", "30", "stop", check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp = None

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ databases and roles

    def url(self, database: str, user: str | None = None, password: str | None = None) -> str:
        login = quote(user or self.superuser, safe="") + (f":{quote(password, safe='')}" if password else "")
        return f"postgresql://{login}@{self.host}:{self.port}/{database}"

    def admin(self, sql: str, database: str = "postgres") -> list[tuple]:
        """Run ``sql`` as the superuser (autocommit); its rows, if any."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str | None = None, owner: str | None = None) -> str:
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        self.admin(f'CREATE DATABASE "{name}"' + (f' OWNER "{owner}"' if owner else ""))
        return name

    def create_role(self, name: str, password: str) -> None:
        escaped = password.replace("'", "''")
        self.admin(f"CREATE ROLE \"{name}\" LOGIN PASSWORD '{escaped}'")
