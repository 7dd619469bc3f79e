"""The run's private PostgreSQL (tests/pg_cluster.py): started when a cell first needs it, one
database per cell, removed at the end; and the CPU its processes spend, for the figures."""

from __future__ import annotations

from pathlib import Path

from bench.perf.servers import tree_cpu_seconds
from tests.pg_cluster import PostgresCluster


class Postgres:
    """One cluster for the whole run, so its start-up (initdb) is paid once."""

    def __init__(self) -> None:
        self.cluster: PostgresCluster | None = None

    def database(self, name: str, template: str | None = None) -> str:
        """A fresh database (a copy of ``template`` if given); its async URL."""
        if self.cluster is None:
            self.cluster = PostgresCluster()
        return self.cluster.database(name, template)

    def cpu_seconds(self) -> float:
        """utime + stime of the postmaster and every backend so far (NaN before the start, or
        where its pid file cannot be read)."""
        if self.cluster is None:
            return float("nan")
        root = self.cluster.handle.split(":", 1)[1]
        try:
            pid = int((Path(root) / "data" / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return float("nan")
        return tree_cpu_seconds(pid)

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
