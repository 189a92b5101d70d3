"""A private PostgreSQL server for the scale-out tests: its own cluster in a temporary folder,
on a free port, started with the server binaries (no system service)."""

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from resumebias_dagster.testing.processes import free_port


def _server_bin() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, or where Debian puts them."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").exists()]
    versions.sort(key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    return versions[-1] if versions else None


@pytest.fixture(scope="module")
def postgres():
    """Connection settings of a running server with an empty database `dagster` (trust auth)."""
    bindir = _server_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not found (Debian: apt-get install -y postgresql)")
    as_root = os.geteuid() == 0
    if as_root:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and no `postgres` user to run the server as")
    try:
        import psycopg2
    except ImportError:
        pytest.skip("psycopg2 not installed (pip install -e '.[test]' brings dagster-postgres)")

    # Not under pytest's tmp_path: that folder is private to the user running the tests, and
    # the server refuses to run as root.
    tmp = Path(tempfile.mkdtemp(prefix="resumebias-pg-"))
    if as_root:
        os.chown(tmp, owner.pw_uid, owner.pw_gid)
    data = tmp / "data"
    port = free_port()

    def server_cmd(*args, check=True):
        cmd = [str(bindir / args[0]), *map(str, args[1:])]
        if as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    try:
        server_cmd("initdb", "-D", data, "-U", "dagster", "-A", "trust", "-E", "UTF8", "--no-sync")
        # Durability is not what this server is for: no fsync keeps it fast on a busy disk.
        options = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
        server_cmd("pg_ctl", "-D", data, "-l", tmp / "server.log", "-o", options, "-w", "-t", "60", "start")
    except subprocess.CalledProcessError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {e.cmd}\n{e.stdout}\n{e.stderr}")
    try:
        conn = psycopg2.connect(host="127.0.0.1", port=port, user="dagster", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE dagster")
        conn.close()
        yield {"host": "127.0.0.1", "port": port, "user": "dagster", "password": "", "db": "dagster",
               "log": tmp / "server.log"}
    finally:
        server_cmd("pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "30", "stop", check=False)
        shutil.rmtree(tmp, ignore_errors=True)
