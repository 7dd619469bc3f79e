"""``netagent`` run in a fresh interpreter, as a person runs it: its exit code, its output and
what it imported (the command line imports what a command needs when it runs it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Ran:
    """One command, run in a fresh interpreter: its exit code, its output, what it imported."""

    code: int
    stdout: str
    modules: list[str]

    def imported(self, names: Iterable[str]) -> list[str]:
        """Which of ``names`` (a package, or a module and its submodules) it imported."""
        return sorted({n for n in names for m in self.modules if m == n or m.startswith(n + ".")})


def run_netagent(home: Path, *args: str) -> Ran:
    """``netagent ARGS`` with its own ``NETAGENT_HOME`` (no other ``NETAGENT_`` setting)."""
    code = (
        "import contextlib, io, json, sys\n"
        "from netops.cli import main\n"
        f"sys.argv = ['netagent', *{list(args)!r}]\n"
        "code, out = 0, io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit as exc:\n"
        "        code = exc.code\n"
        "print(json.dumps([code, out.getvalue(), sorted(sys.modules)]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"NETAGENT_HOME": str(home), "COLUMNS": "200"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    status, stdout, modules = json.loads(out.splitlines()[-1])
    return Ran(status, stdout, modules)
