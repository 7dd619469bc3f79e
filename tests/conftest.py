"""Shared fixtures: a seeded database, demo tokens, and a real agent on 127.0.0.1.

Nothing here imports the network deployment until a fixture needs it: the core's tests
(``tests/core``) collect and run in a copy of the repository without ``db/``, ``netops/`` and
``skills/``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import uvicorn
from sqlalchemy.engine import make_url

from agent.app import create_app
from agent.base.settings import Settings
from agent.registry.loader import Registry
from agent.security.auth import issue_token, load_or_create_signing_key
from agent.storage.engine import make_engine

if TYPE_CHECKING:
    from agent.ports import Deployment

_CLUSTER: Any = None


START_TIMEOUT_S = 300.0
"""How long an agent under test may take to answer: a cold start trains the routing model."""
SHARED_CLUSTER = "NETOPS_TEST_PG_CLUSTER"  # set by the process that started the cluster
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


def pytest_configure(config: pytest.Config) -> None:
    """Start the session's PostgreSQL cluster before collection (modules read the URL).

    Under pytest-xdist the controller starts it and its workers attach to it (they inherit
    the environment), so one run has one cluster, whatever the number of workers.
    """
    global _CLUSTER
    from tests.pg_cluster import PostgresCluster

    # Agents the tests start (in process or as `netagent serve`) serve no gRPC unless a test
    # asks (start_agent(grpc=True)): the default port is one for the whole machine.
    os.environ.setdefault("NETAGENT_GRPC_PORT", "off")

    if os.environ.get(SHARED_CLUSTER):
        _CLUSTER = PostgresCluster.attach(os.environ[SHARED_CLUSTER])
        return
    if os.environ.get("NETOPS_TEST_POSTGRES_URL"):
        return

    try:
        _CLUSTER = PostgresCluster()
    except (FileNotFoundError, KeyError, subprocess.CalledProcessError) as exc:
        if os.environ.get("CI") == "true":
            raise pytest.UsageError(f"CI needs PostgreSQL for its tests: {exc}") from exc
        return
    os.environ["NETOPS_TEST_POSTGRES_URL"] = _CLUSTER.database("netops_inventory")
    os.environ[SHARED_CLUSTER] = _CLUSTER.handle


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to when the suite runs on several workers.

    A test module is one unit (its module fixtures are built once), except in the integration
    suite, where each backend's round is one unit: its session agents are then built once per
    round, and the two rounds run side by side on two of the workers.
    """
    path = nodeid.split("::", 1)[0]
    if path.startswith("tests/integration/") and nodeid.endswith("]"):
        ids = nodeid[nodeid.rindex("[") + 1 : -1].split("-")
        for backend in BACKENDS:
            if backend in ids:
                return f"integration-{backend}"
    return path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`pytest -n 3 --dist loadgroup` (the README's test command) schedules by work_unit.

    pytest-xdist's own loadgroup reads xdist_group marks into node ids, which pytest 9 no
    longer lets a plugin rewrite; a scheduler with our split does the same job.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # units go out in collection order (set below)
    return WorkUnitScheduling(config, log)


# The longest units first, so that no long one starts last while the other worker idles.
LONG_UNITS = (  # seconds of one worker in a full run (junit, -n 3, 2026-12-03), longest first
    "integration-postgresql",  # 580
    "integration-sqlite",  # 539
    "tests/cluster/test_durability.py",  # 123
    "tests/fuzz/test_fuzz_jsonrpc.py",  # 108
    "tests/e2e/test_console_browser.py",  # 97
    "tests/test_docs.py",  # 73
    "tests/cluster/test_replicas.py",  # 71
    "tests/core/interfaces/test_fast_check.py",  # 67
    "tests/unit/test_cli_reads.py",  # 65
    "tests/db/test_db_simulator.py",  # 61
    "tests/fuzz/test_fuzz_rest.py",  # 57
    "tests/fuzz/test_fuzz_skills.py",  # 52
)


@pytest.hookimpl(trylast=True)  # after pytest's own reordering by fixture scope
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long units first (a stable sort: each unit keeps its own order)."""
    if config.getvalue("dist") != "loadgroup" and not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item: pytest.Item) -> int:
        unit = work_unit(item.nodeid)
        return LONG_UNITS.index(unit) if unit in LONG_UNITS else len(LONG_UNITS)

    items.sort(key=rank)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the cluster this session started (an attached worker leaves it running)."""
    if _CLUSTER is not None:
        _CLUSTER.stop()


def postgres_database(name: str, template: str | None = None) -> str | None:
    """A fresh database in the session's cluster, or None when there is none.

    Names get this process's worker id, so parallel workers never ask for the same one.
    """
    if _CLUSTER is None:
        return None
    return _CLUSTER.database(f"{name}_{WORKER}", template=template)


def postgres_script(url: str, sql: str) -> None:
    """Run a SQL script (a ``pg_dump``, say) with psql in a database ``postgres_database`` made."""
    assert _CLUSTER is not None, "no PostgreSQL cluster in this session"
    _CLUSTER.script(str(make_url(url).database), sql)


def postgres_available() -> bool:
    """True when this session runs its own PostgreSQL cluster."""
    return _CLUSTER is not None


# --- the database backend agents run on -------------------------------------------------------
# The integration suite runs once per backend (tests/integration/conftest.py parametrizes the
# `backend` fixture); everywhere else agents use the embedded SQLite default. Agents get a copy of
# a database seeded once per backend and session, which is much faster than seeding each.
BACKENDS = ("sqlite", "postgresql")
_backend = "sqlite"
_seeded_templates: dict[str, Path | str] = {}
_postgres_by_home: dict[Path, str] = {}


@pytest.fixture(scope="session")
def backend() -> str:
    """Outside the integration suite, agents run on SQLite."""
    return "sqlite"


@pytest.fixture(scope="module", autouse=True)
def _agents_use_backend(backend: str) -> None:
    """start_agent (in fixtures and test bodies alike) follows the module's backend.

    Module scope, autouse: it is set up before any other module or function fixture of the
    module, and again whenever the (session-scoped, parametrized) backend changes.
    """
    use_backend(backend)


def use_backend(name: str) -> None:
    """Agents started from now on run on ``name`` (until the next module or round says)."""
    global _backend
    _backend = name


def _seeded_template(backend: str, scratch: Path) -> Path | str:
    """Seed once per backend: a SQLite file to copy, or a PostgreSQL template database."""
    if backend not in _seeded_templates:
        if backend == "postgresql":
            url = postgres_database("netops_seeded_template")
            assert url is not None
            seed_database(url)
            _seeded_templates[backend] = str(make_url(url).database)
        else:
            scratch.mkdir(parents=True, exist_ok=True)
            path = scratch / "seeded-template.db"
            seed_database(f"sqlite+aiosqlite:///{path}")
            _seeded_templates[backend] = path
    return _seeded_templates[backend]


def _database_for(home: Path, seeded: bool, backend: str) -> tuple[str | None, bool]:
    """(database URL or None for the home's SQLite file, whether it still needs seeding)."""
    if backend == "postgresql":
        if home in _postgres_by_home:  # a restart on the same home finds its database
            return _postgres_by_home[home], seeded
        template = _seeded_template("postgresql", home) if seeded else None
        url = postgres_database(f"agent_{uuid.uuid4().hex[:12]}", template=template)
        if url is None:
            pytest.skip("no PostgreSQL cluster in this session")
        _postgres_by_home[home] = url
        return url, False
    target = home / "netagent.db"
    if seeded and not target.exists():
        template = _seeded_template("sqlite", home.parent / ".seeded-template")
        shutil.copyfile(template, target)
        return None, False
    return None, seeded


def seeded_copy(home: Path, backend: str) -> str:
    """The URL of a private copy of the session's seeded demo database, on ``backend``.

    Seeding the demo takes seconds (some 6 on PostgreSQL, by COPY); a copy of the session's
    template takes a fraction of one. Blocking: from async code, call it in a thread.
    """
    home.mkdir(parents=True, exist_ok=True)
    url, _ = _database_for(home, True, backend)
    return url or f"sqlite+aiosqlite:///{home / 'netagent.db'}"


# The simulated telemetry ends here, and the agent's clock stands still here, so results are
# reproducible whatever day the tests run.
FIXED_NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

IDENTITIES: dict[str, tuple[str, list[str]]] = {
    "alice": ("acme", ["inventory.read", "assurance.read", "capacity.read"]),
    "paula": (
        "acme",
        ["inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"],
    ),
    "carl": ("acme", ["inventory.read", "assurance.read", "capacity.read", "capacity.plan"]),
    "gary": (
        "globex",
        ["inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"],
    ),
    "vic": ("acme", ["inventory.read"]),
    "nora": ("acme", ["inventory.read", "assurance.read", "capacity.read", "audit.read"]),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def seed_database(url: str, until: datetime = FIXED_NOW) -> None:
    """Migrate and seed the network deployment's demo inventory at ``url``."""
    from db.migrate import upgrade
    from db.simulator import seed

    async def run() -> None:
        await upgrade(url)
        engine = make_engine(url)
        try:
            await seed(engine, scale="small", until=until)
        finally:
            await engine.dispose()

    asyncio.run(run())


@dataclass
class RunningAgent:
    """A live agent: its base URL, settings and a way to mint tokens for it."""

    base_url: str
    settings: Settings
    server: uvicorn.Server
    thread: threading.Thread

    @property
    def grpc_target(self) -> str:
        """``host:port`` of its gRPC binding (started with ``start_agent(grpc=True)``)."""
        assert self.settings.grpc_port, "this agent serves no gRPC"
        return f"127.0.0.1:{self.settings.grpc_port}"

    def token(
        self,
        subject: str,
        tenant: str | None = None,
        scopes: list[str] | None = None,
        ttl: int = 3600,
    ) -> str:
        default_tenant, default_scopes = IDENTITIES.get(subject, ("acme", []))
        key = load_or_create_signing_key(self.settings.home)
        return issue_token(
            key,
            self.settings,
            subject=subject,
            tenant=tenant or default_tenant,
            scopes=default_scopes if scopes is None else scopes,
            ttl_seconds=ttl,
        )

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def start_agent(
    home: Path,
    *,
    database_url: str | None = None,
    registry: Registry | None = None,
    clock: Callable[[], datetime] | None = lambda: FIXED_NOW,
    seeded: bool = True,
    settings_overrides: dict[str, Any] | None = None,
    backend: str | None = None,
    grpc: bool = False,
    deployment: Deployment | None = None,
    **app_options: Any,
) -> RunningAgent:
    """Start a real uvicorn server on a free loopback port in a thread and wait until it serves.

    The listening socket is bound here, before the app is built, and handed to uvicorn: no
    other process can take the port between choosing it and listening on it. With ``grpc``
    the app's lifespan also serves the gRPC binding, in uvicorn's loop, on another free port
    (chosen, then bound by the lifespan: a port taken in between fails the start loudly).
    ``deployment``: the agent's (default: the network deployment, on its seeded inventory).
    """
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = int(listener.getsockname()[1])
    settings = Settings(
        home=home,
        port=port,
        database_url=database_url,
        seed_on_start=False,
        grpc_port=free_port() if grpc else 0,
        **(settings_overrides or {}),
    )
    home.mkdir(parents=True, exist_ok=True)
    if database_url is None:
        database_url, seeded = _database_for(home, seeded, backend or _backend)
        settings = replace(settings, database_url=database_url)
    if seeded:
        seed_database(settings.resolved_database_url)
    if deployment is None:
        from netops.deployment import network_deployment

        # the clock stands still at FIXED_NOW: no live samples
        deployment = network_deployment(live_telemetry=False)
    app = create_app(settings, deployment, registry=registry, clock=clock, **app_options)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    # a start with no trained model in the cache trains it first: about 45 s of CPU for the
    # network agent's routing data, two or three times that on a loaded 2-core machine
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.started:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    return RunningAgent(base, settings, server, thread)
            except httpx.HTTPError:
                pass
        if not thread.is_alive():
            break
        time.sleep(0.05)
    server.should_exit = True
    raise RuntimeError("agent did not start")


@pytest.fixture(scope="session")
def agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """One seeded agent shared by the integration tests that only read (gRPC too, so that its
    card is the default settings' card: tests/snapshots/public-agent-card.json)."""
    running = start_agent(tmp_path_factory.mktemp("agent-home"), backend=backend, grpc=True)
    yield running
    running.stop()
