"""The servers bench.perf measures, each a real process on loopback, pinned to its own core.

The servers get one core (``taskset -c``; several server processes share it) and the load
generator the other (``os.sched_setaffinity``), so the two do not take turns on one core; on a
machine with a single core nothing is pinned and the report says so.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from agent.base.settings import Settings
from agent.security.auth import issue_token, load_or_create_signing_key

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0  # first start seeds the demo inventory (PostgreSQL: tens of seconds)
SERVER_CPU = 0
LOAD_CPU = 1
CALLERS: dict[str, tuple[str, list[str]]] = {
    "paula": (
        "acme",
        ["inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"],
    ),
    "alice": ("acme", ["inventory.read", "assurance.read", "capacity.read"]),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pinning() -> bool:
    """True when the server and the generator can have a core each."""
    return (os.cpu_count() or 1) >= 2 and shutil.which("taskset") is not None


def pin_generator() -> None:
    """Keep this process (the load generator) off the server's core."""
    if pinning():
        os.sched_setaffinity(0, {LOAD_CPU})


@dataclass
class Server:
    """One server process; ``ready`` is a path that answers 200 once it serves."""

    name: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    ready: str
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    started_s: float = 0.0
    cwd: Path = ROOT
    setup: list[list[str]] = field(default_factory=list)
    """Commands run once, with the server's environment, before its first start (seeding)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> Server:
        prefix = ["taskset", "-c", str(SERVER_CPU)] if pinning() else []
        command = [*prefix, *[c.replace("{port}", str(self.port)) for c in self.command]]
        with self.log_path.open("ab") as log:
            for step in self.setup:
                done = subprocess.run(step, env=self.env, stdout=log, stderr=log, cwd=self.cwd)
                if done.returncode != 0:
                    tail = self.log_path.read_text()[-3000:]
                    raise RuntimeError(f"{self.name}: {' '.join(step)} failed:\n{tail}")
            self.setup = []
        began = time.perf_counter()
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.cwd
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        served: float | None = None  # when it first answered (started_s)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log_path.read_text()[-3000:]}")
            try:
                answer = httpx.get(self.base_url + self.ready, timeout=2)
                if answer.status_code == 200 and served is None:
                    served = self.started_s = time.perf_counter() - began
                if answer.status_code == 200 and not _warming(answer):
                    return self  # measured from here: no start-up work left in its CPU
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not start:\n{self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process and its children so far."""
        return tree_cpu_seconds(self.pid)

    def rss_kib(self) -> int:
        """VmRSS of the server process, from /proc (the Python process under taskset)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise LookupError("no VmRSS")


def _warming(answer: httpx.Response) -> bool:
    """An agent still training its classifier in the background (its /healthz says so): its
    CPU would count against the first cell measured."""
    try:
        health = answer.json()
    except ValueError:
        return False
    return isinstance(health, dict) and health.get("classifier") == "training"


def tree_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (all its threads), of its children it has reaped (cutime +
    cstime), and, recursively, of its live children: what a server with worker processes
    costs, not only its parent. A process that ends while it is read counts as 0 (its parent's
    cutime takes it over once reaped)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    own = sum(int(fields[index]) for index in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")
    children = []
    for task in tasks:
        try:  # a thread may end between the listing and the read
            children += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return own + sum(tree_cpu_seconds(child) for child in children)


def base_env(sdk_tracing: bool) -> dict[str, str]:
    """The environment both servers get: the same SDK tracing switch for both."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not sdk_tracing:
        env["OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"] = "false"
    else:
        env.pop("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", None)
    return env


def echo_server(workdir: Path, sdk_tracing: bool, store: str = "memory") -> Server:
    """The bare-SDK reference (bench/echo_agent.py) under uvicorn's defaults, on ``store``
    (memory: InMemoryTaskStore; sqlite: the SDK's DatabaseTaskStore on aiosqlite)."""
    command = [sys.executable, "-m", "bench.echo_agent", "--port", "{port}", "--store", store]
    return Server(
        f"echo (bare a2a-sdk, {store})",
        command,
        base_env(sdk_tracing),
        workdir / f"echo-{store}.log",
        "/.well-known/agent-card.json",
    )


SEED_AHEAD = timedelta(hours=12)
"""How far past now the seeded series runs: a window "the last hour" then always holds the
same samples (check_link_capacity's 24 records), however long the run takes."""


def netagent(tree: Path | None = None) -> list[str]:
    """The `netagent` command of ``tree`` (default: this checkout), from its own pyproject.toml.

    Not the venv's console script: that one imports whatever entry point the checkout that
    installed the venv last declares, which a worktree or an older tree (--agent-tree) may not
    have.
    """
    project = tomllib.loads(((tree or ROOT) / "pyproject.toml").read_text())["project"]
    module, _, function = project["scripts"]["netagent"].partition(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    return [sys.executable, "-c", code]


def seed_command(database_url: str, tree: Path | None = None) -> list[str]:
    """`netagent seed` of the demo inventory, its series ending SEED_AHEAD from now."""
    until = (datetime.now(UTC) + SEED_AHEAD).replace(minute=0, second=0, microsecond=0)
    return [
        *netagent(tree),
        "seed",
        "--database-url",
        database_url,
        "--until",
        until.strftime("%Y-%m-%dT%H:%M:%S"),
    ]


def agent_server(
    workdir: Path,
    home: Path,
    database_url: str,
    sdk_tracing: bool,
    seed: bool = True,
    tree: Path | None = None,
    name: str | None = None,
) -> Server:
    """`netagent serve` on its own NETAGENT_HOME; ``seed`` seeds the demo inventory before the
    first start (`netagent seed`, the series SEED_AHEAD past now; the agent's own seeding on
    start is off, since it ends the series now and the last hour's samples would thin out as
    the run goes on).

    ``tree``: run the agent's code from another checkout (e.g. the commit before a fix), for
    before/after figures taken with the same generator. ``name``: the log's name, for several
    servers on one home (replicas).
    """
    env = base_env(sdk_tracing) | {
        "NETAGENT_HOME": str(home),
        "NETAGENT_DATABASE_URL": database_url,
        "NETAGENT_SEED": "0",
        "NETAGENT_LIVE_TELEMETRY": "0",
        "NETAGENT_LOG_LEVEL": "warning",
        # The cells speak HTTP; replicas on one machine would all want gRPC's default port,
        # which serve refuses when it is taken (the second replica would not start).
        "NETAGENT_GRPC_PORT": "off",
    }
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    command = [*netagent(tree), "serve", "--port", "{port}"]
    log = workdir / f"netagent-{name or home.name}.log"
    return Server(
        "netagent",
        command,
        env,
        log,
        "/healthz",
        cwd=tree or ROOT,
        setup=[seed_command(database_url, tree)] if seed else [],
    )


def tokens(home: Path, subject: str, count: int) -> tuple[str, ...]:
    """Bearer tokens for ``count`` callers with ``subject``'s tenant and scopes, signed with the
    agent's embedded key in ``home``: ``subject`` itself, then ``subject-02`` and so on.

    One caller per simulated client, because ``limits.max_concurrent`` is per caller and
    skill: 32 clients sharing one identity would measure refusals, not invocations.
    """
    home.mkdir(parents=True, exist_ok=True)
    tenant, scopes = CALLERS[subject]
    settings = Settings(home=home)
    key = load_or_create_signing_key(home)
    names = [subject] + [f"{subject}-{n:02d}" for n in range(2, count + 1)]
    return tuple(
        issue_token(key, settings, subject=name, tenant=tenant, scopes=scopes) for name in names
    )
