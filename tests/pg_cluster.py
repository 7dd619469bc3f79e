"""A private PostgreSQL cluster on loopback for the test session, when the server is installed.

`.ci/run` installs Debian's `postgresql`; on a developer machine without it the PostgreSQL tests
skip (under CI=true they fail instead, so a missing install step cannot hide). The cluster lives
in a temporary directory, listens on 127.0.0.1 on a free port, and is removed at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

RUN_AS = "postgres"  # the server refuses to run as root


def _bin_dir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """initdb + pg_ctl start in a temp dir; ``database(name)`` makes a fresh database.

    ``attach(handle)`` gives other processes of the same test run (pytest-xdist workers) the
    cluster the first one started; only the starter stops it.
    """

    owner = True

    def __init__(self) -> None:
        bin_dir = _bin_dir()
        if bin_dir is None:
            raise FileNotFoundError("PostgreSQL server binaries not found (initdb)")
        self._bin = bin_dir
        self._root = Path(tempfile.mkdtemp(prefix="netops-pg-"))
        self._data = self._root / "data"
        self.port = _free_port()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            account = pwd.getpwnam(RUN_AS)
            os.chown(self._root, account.pw_uid, account.pw_gid)
        self._run("initdb", "-D", str(self._data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        options = (
            f"-p {self.port} -k {self._root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self._data),
            "-o",
            options,
            "-l",
            str(self._root / "server.log"),
            "-w",
            "start",
        )

    @property
    def handle(self) -> str:
        """What another process needs to attach: the server's data folder and port."""
        return f"{self.port}:{self._root}"

    @classmethod
    def attach(cls, handle: str) -> PostgresCluster:
        """The cluster another process of this run started (it stays that process's to stop)."""
        port, root = handle.split(":", 1)
        bin_dir = _bin_dir()
        if bin_dir is None:
            raise FileNotFoundError("PostgreSQL server binaries not found (initdb)")
        cluster = cls.__new__(cls)
        cluster._bin = bin_dir
        cluster._root = Path(root)
        cluster._data = cluster._root / "data"
        cluster.port = int(port)
        cluster._as_root = os.geteuid() == 0
        cluster.owner = False
        return cluster

    def _run(self, tool: str, *args: str, stdin: str | None = None) -> None:
        command = [str(self._bin / tool), *args]
        if self._as_root:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        subprocess.run(
            command, check=True, capture_output=True, timeout=120, input=stdin, text=True
        )

    def database(self, name: str, template: str | None = None) -> str:
        """Create database ``name`` (a copy of ``template`` if given); return its async URL."""
        copy = ["-T", template] if template else []
        self._run(
            "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", *copy, name
        )
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{name}"

    def script(self, name: str, sql: str) -> None:
        """Run ``sql`` in database ``name`` with psql, stopping at the first error (a dump)."""
        self._run(
            "psql",
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", name),
            *("-v", "ON_ERROR_STOP=1", "-q", "-f", "-"),
            stdin=sql,
        )

    def stop(self) -> None:
        """Stop the server and remove its files (only the process that started it does)."""
        if not self.owner:
            return
        try:
            self._run("pg_ctl", "-D", str(self._data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self._root, ignore_errors=True)
