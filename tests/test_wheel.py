"""The package installs: a wheel of this checkout serves the worked example from any folder.

One wheel is built (``pip wheel --no-deps --no-build-isolation``) from a copy of the files git
knows (building in the checkout would leave ``build/`` there, and setuptools packs that folder's
stale files into later wheels), installed with ``--no-deps`` into a fresh venv in a temporary
directory, and run from another temporary directory without PYTHONPATH. The venv reaches the
dependencies through one ``.pth`` line naming this interpreter's site-packages: a directory that
a ``.pth`` line adds does not get its own ``.pth`` files run, so the editable install's finder
there (which maps ``agent`` to the checkout) stays inert; the import test checks that it does.

The module is one xdist work unit (tests/conftest.py ``work_unit``): one build, one venv, one
server, shared by module-scoped fixtures.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import free_port
from tests.serving import serving

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "db", "netops", "skills")
SETUPTOOLS_WITH_BDIST_WHEEL = (70, 1)  # bdist_wheel is built in from here; no `wheel` needed
RUN_TIMEOUT_S = 180
START_TIMEOUT_S = 300
WORKED_ARGUMENTS = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
# What a caller's own code would see: no variable of this session may point into the checkout.
LEAKY = ("NETAGENT_", "PYTHON", "PYTEST_", "VIRTUAL_ENV")


def _setuptools_version() -> tuple[int, ...]:
    try:
        text = version("setuptools")
    except PackageNotFoundError:
        return ()
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())


@pytest.fixture(scope="module", autouse=True)
def _can_build() -> None:
    """Building without isolation needs a setuptools that makes wheels in this environment."""
    if _setuptools_version() >= SETUPTOOLS_WITH_BDIST_WHEEL:
        return
    message = (
        f"the wheel test needs setuptools>={'.'.join(map(str, SETUPTOOLS_WITH_BDIST_WHEEL))} "
        "in this venv: pip install -e '.[test]'"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _run(command: list[str], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def _outside_env(**extra: str) -> dict[str, str]:
    """This environment less anything that could lead an import back to the checkout."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(LEAKY)}
    return kept | extra


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files git tracks (or would: untracked, not ignored), as they are in the work tree."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    target = tmp_path_factory.mktemp("wheel-source")
    for name in filter(None, listed):
        origin, copy = ROOT / name, target / name
        if not origin.is_symlink() and not origin.is_file():
            continue  # deleted in the work tree, not yet in git
        copy.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            copy.symlink_to(origin.readlink())
        else:
            shutil.copy2(origin, copy)
    return target


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel-dist")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    env = dict(os.environ)  # the build runs in this environment: its setuptools builds
    run = _run([*command, "-q", "-w", str(out), str(source)], cwd=out, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    (built,) = out.glob("*.whl")
    return built


@dataclass(frozen=True)
class Installed:
    """A venv holding only the wheel; its dependencies come from this interpreter's."""

    root: Path
    site_packages: Path
    workdir: Path

    def bin(self, name: str) -> str:
        return str(self.root / "bin" / name)

    def run(self, *command: str, **env: str) -> subprocess.CompletedProcess[str]:
        return _run(list(command), cwd=self.workdir, env=_outside_env(**env))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel-venv") / "venv"
    workdir = tmp_path_factory.mktemp("wheel-elsewhere")
    env = _outside_env()
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(root)], cwd=workdir, env=env)
    assert made.returncode == 0, made.stderr
    python = str(root / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q"]
    run = _run([*pip, "--no-deps", "--no-index", str(wheel)], cwd=workdir, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        cwd=workdir,
        env=env,
    )
    site_packages = Path(purelib.stdout.strip())
    (site_packages / "test-dependencies.pth").write_text(
        "".join(f"{path}\n" for path in site.getsitepackages()), encoding="utf-8"
    )
    return Installed(root, site_packages, workdir)


def _package_files(source: Path) -> set[str]:
    """Every regular file under the package folders; a linked folder is not followed."""
    found = set()
    for top in PACKAGES:
        for folder, _, files in os.walk(source / top):
            for name in files:
                path = Path(folder) / name
                if "__pycache__" not in path.parts and not path.is_symlink():
                    found.add(path.relative_to(source).as_posix())
    return found


def test_the_wheel_holds_every_package_file_and_the_schemas(source: Path, wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = {n for n in archive.namelist() if ".dist-info/" not in n}
    shipped = _package_files(source)
    schemas = {f"agent/_schemas/{p.name}" for p in (source / "schemas").iterdir() if p.is_file()}
    assert schemas, "the checkout has no schemas/"
    assert not schemas - names, f"schemas missing from the wheel: {sorted(schemas - names)}"
    assert names == shipped | schemas, (
        f"not in the wheel: {sorted(shipped - names)}; "
        f"in the wheel only: {sorted(names - shipped - schemas)}"
    )
    assert {n.split("/", 1)[0] for n in names} == set(PACKAGES)  # no top-level schemas/


def test_the_packages_import_from_the_venv_not_the_checkout(installed: Installed) -> None:
    probe = """
import importlib.util, json, sys
import agent, db, netops, skills
from agent.interfaces import SCHEMAS_DIR, TRUSTED_SCHEMA_PATH
print(json.dumps({
    "modules": [m.__file__ for m in (agent, db, netops, skills)],
    "schemas_dir": str(SCHEMAS_DIR),
    "trusted_schema_read": TRUSTED_SCHEMA_PATH.is_file(),
    "top_level_schemas": importlib.util.find_spec("schemas") is not None,
    "finders": [getattr(f, "__name__", type(f).__name__) for f in sys.meta_path],
    "editable_modules": [m for m in sys.modules if "__editable__" in m],
    "path": sys.path,
}))
"""
    run = installed.run(installed.bin("python"), "-c", probe)
    assert run.returncode == 0, run.stderr
    seen: dict[str, Any] = json.loads(run.stdout)
    for module in seen["modules"]:
        assert Path(module).is_relative_to(installed.site_packages), module
    assert Path(seen["schemas_dir"]) == installed.site_packages / "agent" / "_schemas"
    assert seen["trusted_schema_read"]
    assert not seen["top_level_schemas"]
    assert "_EditableFinder" not in seen["finders"] and not seen["editable_modules"], seen
    assert str(ROOT) not in seen["path"], seen["path"]


def test_card_diff_asks_an_installed_package_for_the_snapshot(installed: Installed) -> None:
    """The snapshot is a file of the checkout: installed, the default must not point anywhere."""
    run = installed.run(installed.bin("netagent"), "card", "diff")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "pass --snapshot FILE" in run.stderr.replace("\n", ""), run.stderr


@dataclass(frozen=True)
class Served:
    url: str
    home: Path


@pytest.fixture(scope="module")
def served(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`netagent serve` of the venv on its defaults, in a fresh home, on a free port."""
    home = tmp_path_factory.mktemp("wheel-home")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = _outside_env(
        NETAGENT_HOME=str(home),
        NETAGENT_HOST="127.0.0.1",
        NETAGENT_PORT=str(port),
        NETAGENT_GRPC_PORT=str(free_port()),  # the installed wheel serves gRPC too
        NETAGENT_LOG_LEVEL="warning",
    )
    with serving(
        [installed.bin("netagent"), "serve"],
        cwd=installed.workdir,
        env=env,
        log_path=home / "serve.log",
        ready_url=f"{url}/.well-known/agent-card.json",
        timeout_s=START_TIMEOUT_S,
    ):
        yield Served(url, home)


def _jsonrpc(served: Served, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        f"{served.url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
        json={"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params},
        timeout=60,
    )
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    assert "result" in body, body
    return dict(body["result"])


def test_the_installed_agent_serves_the_worked_example(
    installed: Installed, served: Served
) -> None:
    minted = installed.run(
        installed.bin("netagent"),
        "token",
        *("--subject", "alice", "--tenant", "acme"),
        *("--scope", "inventory.read", "--scope", "assurance.read", "--scope", "capacity.read"),
        NETAGENT_HOME=str(served.home),
    )
    assert minted.returncode == 0, minted.stderr
    token = minted.stdout.strip()
    card = _jsonrpc(served, token, "GetExtendedAgentCard", {})
    [binding] = [
        s
        for s in card["capabilities"]["extensions"][0]["params"]["skills"]
        if s["skill_id"] == "evaluate_resource_condition"
    ]
    data = {
        "skill": "evaluate_resource_condition",
        "skill_version": binding["skill_version"],
        "interface_digest": binding["interface_digest"],
        "arguments": WORKED_ARGUMENTS,
    }
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }
    task = _jsonrpc(served, token, "SendMessage", {"message": message})["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    by_name = {a["name"]: a["parts"][0]["data"] for a in task["artifacts"]}
    result = by_name["evaluate_resource_condition"]
    assert result["result"] == "condition_not_met"
    assert (result["observed_value"], result["unit"]) == (42, "percent")
    assert by_name["resource-observation"]["resource_id"] == "network-resource-123"
