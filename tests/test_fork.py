"""The forking guide works as written, and the core stands without the network deployment.

Every command of docs/forking.md runs, in order, in a copy of the repository (its tracked files
and the untracked ones git does not ignore), as a person would type it: ``serve`` in the
background until its card answers, the tokens it prints exported. The guide deletes ``db/``,
``netops/`` and ``skills/`` and then runs the core's tests and the example's: they must pass
there, so nothing of the core or its tests leans on the network.

The copy runs in a virtual environment of its own that sees this one's packages as a plain
path, without their ``.pth`` hooks: the editable install maps ``db``, ``netops`` and ``skills``
to this checkout through such a hook, which would otherwise find the deleted folders here (in
the guide's commands and in every interpreter the tests start).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "forking.md"
SERVE = "examples.invoices serve"
TIMEOUT_S = 900


def guide_commands(text: str) -> list[str]:
    """The guide's ``sh`` blocks as commands: comments dropped, continued lines joined."""
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [
            line.split(" #")[0].strip()
            for line in joined.splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
    return commands


def copy_repository(target: Path) -> None:
    """This checkout's files as git knows them, into ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source, copied = ROOT / name, target / name
        copied.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # agent/_schemas links to schemas/, as in a checkout
            copied.symlink_to(source.readlink())
        elif source.is_file():
            shutil.copy2(source, copied)


def bare_environment(target: Path) -> Path:
    """A virtual environment whose ``python`` imports this one's packages but runs none of their
    site hooks; returns its ``bin`` folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    bare_packages = Path(
        sysconfig.get_paths(vars={"base": str(target), "platbase": str(target)})["purelib"]
    )
    # a .pth line that is a path adds it to sys.path; the .pth files inside it are not read
    (bare_packages / "parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return target / "bin"


def environment(copy: Path, bin_dir: Path, home: Path, port: int) -> dict[str, str]:
    """The copy's code first, the bare environment's ``python`` on the PATH."""
    env = {
        k: v
        for k, v in os.environ.items()
        # the copy's tests start a PostgreSQL cluster of their own: this run's workers' database
        # names (gw0, gw1, ...) would collide in a shared one
        if not k.startswith(("PYTEST_", "NETAGENT_", "NETOPS_TEST_"))
    }
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(copy),
        NETAGENT_HOME=str(home),
        NETAGENT_PORT=str(port),
        NETAGENT_GRPC_PORT="off",
    )
    return env


def as_typed(command: str, port: int) -> str:
    """The command as the guide has it, on the free port instead of the default one."""
    return command.replace("127.0.0.1:8000", f"127.0.0.1:{port}")


def _failures(output: str) -> list[str]:
    """What a failed pytest run says went wrong: its FAILED and ERROR lines and its last line."""
    lines = output.splitlines()
    return [line for line in lines if line.startswith(("FAILED", "ERROR"))] + lines[-1:]


class Session:
    """One shell session through the guide: its environment, and a server it left running."""

    def __init__(self, copy: Path, env: dict[str, str], port: int) -> None:
        self.copy, self.env, self.port = copy, env, port
        self.server: subprocess.Popen[bytes] | None = None

    def run(self, command: str) -> None:
        if command.startswith("export ") and "=" in command:
            name, _, value = command.removeprefix("export ").partition("=")
            self.env[name] = value.replace("$PWD", str(self.copy))
        elif SERVE in command:
            self._serve(command)
        else:
            done = subprocess.run(
                ["bash", "-c", as_typed(command, self.port)],
                cwd=self.copy,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
            assert done.returncode == 0, (command, *_failures(done.stdout), done.stderr[-3000:])

    def _serve(self, command: str) -> None:
        log = self.copy / "serve.log"
        with log.open("w") as output:  # the child keeps its own copy of the descriptor
            self.server = subprocess.Popen(
                ["bash", "-c", f"exec {as_typed(command, self.port)}"],
                cwd=self.copy,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 120
        card = f"http://127.0.0.1:{self.port}/.well-known/agent-card.json"
        while time.monotonic() < deadline:
            assert self.server.poll() is None, log.read_text()
            try:
                if httpx.get(card, timeout=2).json().get("name") == "Invoice Agent":
                    break
            except (httpx.HTTPError, ValueError):
                time.sleep(0.25)
        else:
            pytest.fail(f"the invoice agent did not serve its card:\n{log.read_text()}")
        for name, value in re.findall(r"^export (\w+_TOKEN)=(\S+)$", log.read_text(), re.M):
            self.env[name] = value

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=30)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    copy = tmp_path / "fork"
    copy_repository(copy)
    port = free_port()
    bin_dir = bare_environment(tmp_path / "venv")
    started = Session(copy, environment(copy, bin_dir, tmp_path / "home", port), port)
    yield started
    started.stop()


def test_the_guide_has_the_steps_the_check_needs() -> None:
    commands = guide_commands(GUIDE.read_text(encoding="utf-8"))
    assert any(SERVE in c for c in commands)
    assert "rm -rf db netops skills" in commands
    assert commands[-1].startswith("python -m pytest") and "tests/core" in commands[-1]


def test_every_command_of_the_forking_guide_runs_in_a_copy_without_the_network(
    session: Session,
) -> None:
    for command in guide_commands(GUIDE.read_text(encoding="utf-8")):
        if command == "rm -rf db netops skills":
            session.stop()  # the agent it served is done with; the core's tests follow
        session.run(command)
        if command == "rm -rf db netops skills":
            found = subprocess.run(
                ["bash", "-c", as_typed(_NETWORK_GONE, session.port)],
                cwd=session.copy,
                env=session.env,
                capture_output=True,
                text=True,
            )
            assert found.stdout.strip() == "[]", found.stderr


_NETWORK_GONE = (
    "python -c 'import importlib.util as u; "
    'print([m for m in ("db", "netops", "skills") if u.find_spec(m)])\''
)
