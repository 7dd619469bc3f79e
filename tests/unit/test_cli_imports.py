"""The command line imports what a command needs when it runs it, not at start.

``netagent --help`` or ``netagent token`` must answer in well under a second: importing the
application (scikit-learn, SQLAlchemy, the a2a-sdk's server, FastAPI) took seconds. Each
module is imported in a fresh interpreter and ``sys.modules`` walked afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
    heavy = _heavy(_imported_after(statement))
    assert not heavy, sorted({m.split(".")[0] for m in heavy})


def test_the_app_imports_no_scikit_learn_nor_numpy() -> None:
    """scikit-learn is imported by the classifier's first training, in the background after
    start-up (agent/app.py), not on the way to the first served card."""
    modules = _imported_after("import netops.app")
    assert not [m for m in modules if m.split(".")[0] in ("sklearn", "scipy", "numpy")]
