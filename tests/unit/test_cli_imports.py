"""The command line imports what a command needs when it runs it, not at start.

``netagent --help`` or ``netagent token`` must answer in well under a second: importing the
application (scikit-learn, SQLAlchemy, the a2a-sdk's server, FastAPI) took seconds. Each
module is imported, or each command run, in a fresh interpreter and ``sys.modules`` walked
afterwards.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_process import run_netagent
from tests.unit.test_cli_reads import migrate

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sklearn", "scipy", "sqlalchemy", "alembic", "a2a.server", "fastapi", "grpc", "httpx")
"""Top-level packages (or a2a's server side) no command line module may import at start."""


def _imported_after(statement: str) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(out))


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize("module", ["agent.cli", "netops.cli"])
def test_importing_the_command_line_imports_no_heavy_dependency(module: str) -> None:
    modules = _imported_after(f"import {module}")
    assert module in modules
    heavy = _heavy(modules)
    assert not heavy, f"{module} imports at start: {sorted({m.split('.')[0] for m in heavy})}"


def test_the_command_line_does_not_import_the_deployment_at_start() -> None:
    """netops.deployment pulls the registry and the SDK in: built when a command needs it."""
    modules = _imported_after("import netops.cli")
    assert "netops.deployment" not in modules
    assert "agent.registry.cards" not in modules


def test_help_builds_without_heavy_imports() -> None:
    statement = (
        "import contextlib, io\n"
        "from netops.cli import main\n"
        "sys.argv = ['netagent', '--help']\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    )
    modules = _imported_after(statement)
    heavy = _heavy(modules)
    assert not heavy, sorted({m.split(".")[0] for m in heavy})
    assert "agent.ports" not in modules


def test_the_app_imports_no_scikit_learn_nor_numpy() -> None:
    """scikit-learn is imported by the classifier's first training, in the background after
    start-up (agent/app/tasks.py), not on the way to the first served card."""
    modules = _imported_after("import netops.app")
    assert not [m for m in modules if m.split(".")[0] in ("sklearn", "scipy", "numpy")]


def test_the_app_imports_no_mcp_sdk() -> None:
    """The MCP SDK (``mcp``, ``mcp_types``, their ``httpx2``) is imported by the ``/mcp``
    endpoint's build, in a worker thread once the app's lifespan has started
    (agent/mcp/endpoint.py), not on the way to the first served card."""
    modules = _imported_after("import netops.app")
    assert not [m for m in modules if m.split(".")[0] in ("mcp", "mcp_types", "httpx2")]
    assert "agent.mcp.server" not in modules


def test_a_sqlite_agent_imports_no_postgresql_machinery(tmp_path: Path) -> None:
    """PostgreSQL's dialect (its upserts) and asyncpg (the cancel relay, the lean reads) are
    imported by an agent on PostgreSQL, not by the app nor a SQLite agent's create_app."""
    statement = (
        "from pathlib import Path\n"
        "from agent.settings import Settings\n"
        "from netops.app import create_app\n"
        f"create_app(Settings(home=Path({str(tmp_path)!r}), grpc_port=0))"
    )
    modules = _imported_after(statement)
    assert "agent.storage.task_store" in modules
    postgres = ("asyncpg", "sqlalchemy.dialects.postgresql")
    assert [m for m in modules if m.startswith(postgres)] == []


# -- each command imports what it needs, and nothing it does not ------------------------------
# Each command runs for real in a fresh interpreter, in a home of its own (the database made
# and migrated by the first command that needs it); the client commands aim at a port nothing
# listens on, so they go through their whole import path and fail to connect (exit 1).

SERVER = ("a2a.server", "fastapi", "uvicorn", "sklearn", "scipy", "numpy", "agent.app")
"""The serving side: only serve and mcp need it."""
DATABASE = ("sqlalchemy", "alembic")
CLIENT = ("a2a.client", "httpx", "grpc")
TOKENS = ("jwt", "cryptography")
GRPC = ("a2a.client.transports.grpc", "a2a.compat.v0_3.types", "grpc")
"""The gRPC binding's client (and the a2a-sdk's 0.3 types, which its 0.3 transport needs)."""
REGISTRY = ("netops.deployment", "agent.registry.loader")
APP = ("fastapi", "uvicorn", "sklearn", "scipy", "numpy", "agent.app", "alembic", "a2a.client")
"""What a command that neither serves, migrates nor calls an agent leaves out (``agent.sdk``,
which every skill imports, brings SQLAlchemy, the SDK's types and the token library)."""
"""The deployment and its registry: what the agent serves, not what a client calls."""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli-imports-home")


@pytest.fixture(scope="module")
def port() -> int:
    """A local port nothing listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def bearer(home: Path) -> str:
    """A caller's token signed with a key made in ``home`` (``token --create-key``)."""
    claims = ["--subject", "alice", "--tenant", "acme", "--scope", "inventory.read"]
    ran = run_netagent(home, "token", *claims, "--create-key")
    assert ran.code == 0, ran.stdout
    return ran.stdout.strip()


def test_token_imports_neither_the_registry_the_database_nor_a_client(home: Path) -> None:
    ran = run_netagent(home, "token", "--subject", "a", "--tenant", "acme", "--create-key")
    assert ran.code == 0
    assert ran.imported(("jwt",)) == ["jwt"]  # what it needs
    assert ran.imported(SERVER + DATABASE + CLIENT + REGISTRY) == []


@pytest.mark.parametrize("args", [["card"], ["card", "diff"], ["validate"]], ids=" ".join)
def test_the_registry_commands_import_no_app_migrations_nor_client(
    home: Path, args: list[str]
) -> None:
    """The card and validate load the registry (manifests, schemas, handlers): not the app
    (FastAPI, uvicorn, the classifier), the migrations nor the SDK's client."""
    ran = run_netagent(home, *args)
    assert ran.code == 0, ran.stdout
    assert "agent.registry.loader" in ran.modules
    assert ran.imported(APP) == []


def test_the_extended_card_imports_the_token_library_and_nothing_heavier(
    home: Path, bearer: str
) -> None:
    ran = run_netagent(home, "card", "--extended", "--token", bearer)
    assert ran.code == 0, ran.stdout
    assert '"extendedAgentCard": true' in ran.stdout
    assert ran.imported(APP) == []


@pytest.fixture(scope="module")
def migrated_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with a database migrated as serve does it (a command that only reads makes
    none: tests/unit/test_cli_state.py)."""
    home = tmp_path_factory.mktemp("cli-imports-database")
    migrate(home)
    return home


@pytest.mark.parametrize("args", [["audit"], ["usage"], ["chain", "list"]], ids=" ".join)
def test_the_database_commands_read_a_current_database_by_sqlite3_alone(
    migrated_home: Path, args: list[str]
) -> None:
    """Every history at its head: read with the standard library's sqlite3, without the
    migrations (Alembic), a server or a client, and without loading the registry."""
    ran = run_netagent(migrated_home, *args)
    assert ran.code == 0, ran.stdout
    assert ran.imported(APP) == []
    assert "sqlite3" in ran.modules
    assert "agent.registry.loader" not in ran.modules


def test_usage_reads_the_manifests_without_loading_the_registry(migrated_home: Path) -> None:
    """usage labels each skill with its state: the manifests, checked against their schema,
    are all it reads of the registry; no handler is imported, no interface built."""
    ran = run_netagent(migrated_home, "usage")
    assert ran.code == 0, ran.stdout
    assert "agent.registry.manifests" in ran.modules
    assert [m for m in ran.modules if m.endswith(".handler")] == []
    assert ran.imported(("agent.builtin", "agent.registry.cards")) == []
    assert "deprecated" in ran.stdout  # a state read from a manifest (link_headroom's)


CLIENT_COMMANDS = {
    "describe": ["describe", "{url}", "lookup_inventory"],
    "invoke": ["invoke", "{url}", "lookup_inventory", "--args", "{{}}"],
    "check": ["check", "{url}"],
}


@pytest.mark.parametrize("command", sorted(CLIENT_COMMANDS))
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
def test_the_client_commands_import_neither_the_server_the_database_nor_the_registry(
    home: Path, port: int, command: str, binding: str
) -> None:
    """A client needs httpx; nothing of an agent. The a2a-sdk's client is imported by the
    calls that need it (agent/client/calls.py), after the card is read: not to find out
    that nothing listens (a unary JSON-RPC call never imports it: integration tests)."""
    url = f"http://127.0.0.1:{port}"
    args = [a.format(url=url) for a in CLIENT_COMMANDS[command]]
    ran = run_netagent(home, *args, "--binding", binding)
    assert ran.code == 4, ran.stdout  # could not connect: unreachable, not a usage error
    assert ran.imported(("a2a.client", "httpx")) == ["httpx"]
    assert ran.imported(SERVER + DATABASE + REGISTRY) == []
    assert ran.imported(GRPC) == []
    assert ran.imported(("agent.ports",)) == []
    if command != "check":  # describe prints its checks' status, and runs none of check's
        assert "agent.devtools.conformance" not in ran.modules


def test_chain_imports_the_client_and_the_database_but_not_the_server(
    home: Path, port: int
) -> None:
    url = f"http://127.0.0.1:{port}"
    ran = run_netagent(home, "chain", url, "--from", "a", "--args", "{}", "--to", "b")
    assert ran.code == 4, ran.stdout  # nothing answers: unreachable
    # A home without a database makes (and migrates) one through SQLAlchemy only to store a
    # link; a current SQLite file gets its link by sqlite3 alone
    # (tests/integration/test_jsonrpc_calls.py). Nothing answered here: neither is imported.
    assert ran.imported(("a2a.client", "sqlalchemy")) == []
    assert ran.imported(SERVER) == []
    assert ran.imported(GRPC) == []
