"""What the app leaves for later: nothing on the way to the first served card waits for
scikit-learn (the classifier trains in the background), the MCP SDK (the ``/mcp`` endpoint is
built once the lifespan has started) or, on SQLite, PostgreSQL's dialect and asyncpg. The app
is imported, or built, in a fresh interpreter and ``sys.modules`` walked afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported_after(statement: str) -> list[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(out))


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
        "from agent.base.settings import Settings\n"
        "from netops.app import create_app\n"
        f"create_app(Settings(home=Path({str(tmp_path)!r}), grpc_port=0))"
    )
    modules = _imported_after(statement)
    assert "agent.storage.task_store" in modules
    postgres = ("asyncpg", "sqlalchemy.dialects.postgresql")
    assert [m for m in modules if m.startswith(postgres)] == []
