"""The Docker files, checked without a Docker engine where none runs, and built where one does.

What is checked by reading the files: the build context that ``.dockerignore`` leaves (matched
with Docker's rules against a simulated checkout: a ``.venv``, an agent home with its database
and key, compose's ``.env``, caches, ``.git``); the ``Dockerfile``: its base image pinned by
version and digest, the dependency layer installed from ``docker/requirements.lock`` alone
(checked against ``pyproject.toml``) before any code, the agent installed from its wheel (not
editable) and compiled, the unprivileged user, the ports its header publishes and its cards
advertise, and the token setting (``netagent serve`` is run with the image's settings, and
prints no token); the entry point's refusal of an unwritable data folder; and
``compose.yaml``, parsed and interpolated as compose does with ``.env`` (the password required,
the public URL behind a load balancer, no demo seed unless asked). Where ``docker info``
answers, the image is built and run; elsewhere that test is skipped and says why
(docs/operations.md, Docker).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from agent.base.settings import Settings
from tests.conftest import free_port
from tests.serving import serving

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
CODE = ("agent", "skills", "schemas", "db", "netops")
LOCK = "docker/requirements.lock"
NETAGENT = str(Path(sys.executable).with_name("netagent"))
JWT = re.compile(r"eyJ[\w-]+\.[\w-]+\.[\w-]+")


# --- .dockerignore, with Docker's matching rules (moby/patternmatcher) ---------------------


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker's pattern syntax: ``**`` any number of directories, ``*`` and ``?`` within one
    path element, ``[...]`` a class; matched against the whole slash-separated path."""
    out = ""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            index += 2
            if pattern.startswith("/", index):
                out += "(.*/)?"
                index += 1
            else:
                out += ".*"
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.index("]", index)
            out += "[" + pattern[index + 1 : end].replace("\\", "\\\\") + "]"
            index = end
        else:
            out += re.escape(char)
        index += 1
    return re.compile(f"^{out}$")


def dockerignore_rules(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    """(is an exception ``!``, regex) per rule, in order; comments and blanks skipped."""
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = os.path.normpath(line.removeprefix("!").strip()).lstrip("/")
        rules.append((negated, _pattern_regex(pattern)))
    return rules


def excluded(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's MatchesOrParentMatches: a rule matching the path or a parent folder of it
    applies; the last rule that applies decides."""
    parts = path.split("/")
    candidates = ["/".join(parts[: end + 1]) for end in range(len(parts))]
    result = False
    for negated, regex in rules:
        if any(regex.match(candidate) for candidate in candidates):
            result = not negated
    return result


def test_the_pattern_matcher_follows_docker() -> None:
    rules = dockerignore_rules("**/*.db\n.venv\n!keep/*.db\n")
    assert excluded("a/b/x.db", rules) and excluded("x.db", rules)
    assert excluded(".venv/lib/site.py", rules) and not excluded("sub/.venv/x", rules)
    assert not excluded("keep/x.db", rules) and excluded("keep/deeper/x.db", rules)


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if line]


# What a checkout set up as the README says holds beside the files git knows.
UNTRACKED = (
    ".venv/bin/python",
    ".venv/lib/python3.11/site-packages/sklearn/__init__.py",
    "venv/pyvenv.cfg",
    ".netagent/netagent.db",
    ".netagent/netagent.db-wal",
    ".netagent/signing-key.pem",
    ".env",
    "netagent.db",
    "data/netagent.db",
    "home/alice/.bashrc",
    ".git/HEAD",
    ".git/objects/ab/cdef",
    "agent/__pycache__/app.cpython-311.pyc",
    "skills/port_report/__pycache__/handler.cpython-311.pyc",
    "netops_agent.egg-info/PKG-INFO",
    ".pytest_cache/v/cache/lastfailed",
    ".mypy_cache/3.11/agent/app.data.json",
    ".ruff_cache/CACHEDIR.TAG",
    ".hypothesis/examples/x",
    "build/lib/agent/app.py",
    "tests/e2e/artifacts/medium.png",
)


def test_the_build_context_excludes_the_venv_databases_secrets_caches_and_homes() -> None:
    rules = dockerignore_rules((ROOT / ".dockerignore").read_text())
    kept = [path for path in UNTRACKED if not excluded(path, rules)]
    assert not kept, f"in the build context: {kept}"


def test_the_build_context_keeps_what_the_dockerfile_copies() -> None:
    rules = dockerignore_rules((ROOT / ".dockerignore").read_text())
    sources = [
        source
        for keyword, arguments in dockerfile()
        if keyword == "COPY" and not arguments.startswith("--from=")
        for source in arguments.split()[:-1]
    ]
    assert sources, "the Dockerfile copies nothing"
    files = tracked_files()
    for source in sources:
        wanted = [f for f in files if f == source or f.startswith(source.rstrip("/") + "/")]
        assert wanted, f"COPY {source}: no such file in the checkout"
        dropped = [f for f in wanted if excluded(f, rules)]
        assert not dropped, f"COPY {source}: .dockerignore drops {dropped[:5]}"


# --- Dockerfile -----------------------------------------------------------------------------

INSTRUCTIONS = re.compile(
    r"FROM|ARG|LABEL|RUN|WORKDIR|COPY|ADD|USER|ENV|VOLUME|EXPOSE|HEALTHCHECK|ENTRYPOINT|CMD"
    r"|SHELL|STOPSIGNAL|ONBUILD"
)
Instruction = tuple[str, str]


def dockerfile() -> list[Instruction]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions: list[Instruction] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, arguments = line.partition(" ")
        instructions.append((keyword, arguments.strip()))
    assert not pending, "the Dockerfile ends in a continuation"
    return instructions


def stages() -> dict[str, list[Instruction]]:
    """Each build stage's instructions after its FROM, by its name; the last one (the image)
    is ``""``. What precedes the first FROM (global ARGs) is under ``"global"``."""
    found: dict[str, list[Instruction]] = {"global": []}
    current = found["global"]
    for keyword, arguments in dockerfile():
        if keyword == "FROM":
            words = arguments.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else ""
            assert name not in found, f"two stages named {name!r}: the image must be last"
            current = found.setdefault(name, [])
            continue
        current.append((keyword, arguments))
    return found


def image() -> list[Instruction]:
    return stages()[""]


def env_of(instructions: list[Instruction]) -> dict[str, str]:
    """The ``ENV key=value ...`` settings (values without spaces, as the Dockerfile writes)."""
    pairs = " ".join(a for k, a in instructions if k == "ENV").split()
    assert all("=" in pair for pair in pairs), pairs
    return dict(pair.split("=", 1) for pair in pairs)


def header() -> list[str]:
    """The commands in the Dockerfile's opening comment (lines of ``#   command``)."""
    lines = []
    for raw in (ROOT / "Dockerfile").read_text().splitlines():
        if not raw.startswith("#"):
            break
        if raw.startswith("#   "):
            lines.append(raw[4:].strip())
    return lines


def test_the_dockerfile_lints() -> None:
    instructions = dockerfile()
    unknown = [k for k, _ in instructions if not INSTRUCTIONS.fullmatch(k)]
    assert not unknown, unknown
    assert {k for k, _ in stages()["global"]} <= {"ARG"}, "only ARGs before the first FROM"
    for keyword in ("CMD", "ENTRYPOINT"):
        forms = [json.loads(a) for k, a in image() if k == keyword]
        assert len(forms) == 1 and isinstance(forms[0], list), f"{keyword}: one, exec form"
    (healthcheck,) = [a for k, a in image() if k == "HEALTHCHECK"]
    assert re.search(r"--start-period=\d+s", healthcheck), "a start period: the first start seeds"


def test_the_image_runs_as_the_unprivileged_user() -> None:
    users = [a for k, a in image() if k == "USER"]
    assert users == ["netagent"], "one USER, the unprivileged one, and no way back to root"
    assert any(k == "ARG" and a.startswith("NETAGENT_UID=") for k, a in image())
    (useradd,) = [a for k, a in image() if k == "RUN" and "useradd" in a]
    assert '--uid "$NETAGENT_UID" netagent' in useradd and "chown netagent /data" in useradd
    user_at = image().index(("USER", "netagent"))
    after = [a for k, a in image()[user_at:] if k == "RUN"]
    assert not after, f"nothing is installed as the agent's user: {after}"


def test_the_base_image_is_pinned_by_version_and_digest() -> None:
    (argument,) = [a for k, a in stages()["global"] if a.startswith("PYTHON_IMAGE=")]
    reference = argument.removeprefix("PYTHON_IMAGE=")
    pinned = re.fullmatch(r"python:(3\.\d+)\.\d+-slim-\w+@sha256:[0-9a-f]{64}", reference)
    assert pinned, f"{reference}: python:X.Y.Z-slim-DEBIAN@sha256:DIGEST"
    bases = [a.split()[0] for k, a in dockerfile() if k == "FROM"]
    assert bases and set(bases) == {"${PYTHON_IMAGE}"}, f"every stage on the pinned base: {bases}"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    # The lock is resolved for the Python the code is checked for (mypy's python_version).
    assert pinned.group(1) == pyproject["tool"]["mypy"]["python_version"]


def test_the_dependency_layer_is_the_lock_alone_and_comes_before_the_code() -> None:
    steps = image()
    installs = [i for i, (k, a) in enumerate(steps) if k == "RUN" and "--requirement" in a]
    assert len(installs) == 1, "one RUN installs the dependencies from the lock"
    install = steps[installs[0]][1]
    copies = [a for k, a in steps[: installs[0]] if k in ("COPY", "ADD")]
    assert len(copies) == 1 and copies[0].split()[0] == LOCK, f"only the lock before: {copies}"
    destination = copies[0].split()[-1]
    assert f"--requirement {destination}" in install
    assert "--no-deps" in install, "exactly the lock: pip resolves nothing new"
    assert "--compile" in install and "--no-compile" not in install
    later = [a for k, a in steps[installs[0] :] if k in ("COPY", "ADD")]
    assert later and later[0].startswith("--from=wheel "), "then the agent's wheel"


def test_the_agent_is_installed_from_its_wheel_not_editable_and_compiled() -> None:
    built = stages()["wheel"]
    copied = sorted(a.split()[0] for k, a in built if k == "COPY" and a.split()[0] in CODE)
    assert copied == sorted(CODE), "the wheel is built from every package"
    (wheel,) = [a for k, a in built if k == "RUN" and "pip wheel" in a]
    assert "--no-deps" in wheel and "--no-build-isolation" in wheel
    (backend,) = [a for k, a in built if k == "RUN" and "setuptools==" in a]
    pinned = Version(re.search(r"setuptools==([\w.]+)", backend).group(1))
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    for requirement in map(Requirement, requires):
        assert requirement.name != "setuptools" or pinned in requirement.specifier, requirement
    assert pinned >= Version("70.1"), "bdist_wheel built in: no `wheel` package needed"

    steps = image()
    assert not [a for k, a in steps if k == "COPY" and a.split()[0] in CODE], "no sources"
    (install,) = [a for k, a in steps if k == "RUN" and ".whl" in a]
    assert "--no-deps" in install and "--compile" in install and "&& pip check" in install
    every_run = " ".join(a for k, a in dockerfile() if k == "RUN")
    assert not re.search(r"(^|\s)(-e|--editable)(\s|=)", every_run), "nothing editable"


# --- docker/requirements.lock ---------------------------------------------------------------


def lock_pins() -> dict[str, tuple[str, Version]]:
    """The lock's pins by canonical name: (the name as written, the version)."""
    pins: dict[str, tuple[str, Version]] = {}
    lines = (ROOT / LOCK).read_text().splitlines()
    for line in lines:
        if not line or line.startswith("#"):
            continue
        pinned = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)", line)
        assert pinned, f"{LOCK}: {line!r} is not name==version"
        name = canonicalize_name(pinned.group(1))
        assert name not in pins, f"{LOCK}: {name} twice"
        pins[name] = (pinned.group(1), Version(pinned.group(2)))
    written = [written for written, _ in pins.values()]
    assert written == sorted(written, key=str.lower), f"{LOCK}: not in pip freeze's order"
    return pins


def test_the_lock_pins_every_declared_dependency_within_its_range() -> None:
    pins = lock_pins()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert canonicalize_name(pyproject["project"]["name"]) not in pins, "not the project itself"
    linux = {**default_environment(), "sys_platform": "linux", "platform_system": "Linux"}
    linux |= {"python_version": "3.11", "python_full_version": "3.11.16"}
    for line in pyproject["project"]["dependencies"]:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate(linux):
            continue
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{LOCK} has no {requirement.name} (scripts/lock_image.py)"
        assert pins[name][1] in requirement.specifier, f"{LOCK}: {pins[name]} vs {line}"
    for test_only in ("pytest", "playwright", "mypy", "ruff", "hypothesis"):
        assert test_only not in pins, f"{LOCK}: {test_only} is a test tool, not the agent's"


def test_the_lock_is_what_its_script_writes() -> None:
    spec = importlib.util.spec_from_file_location("lock_image", ROOT / "scripts" / "lock_image.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.LOCK == ROOT / LOCK
    assert (ROOT / LOCK).read_text().startswith(script.HEADER)
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert script.runtime_requirements() == declared


# --- ports and tokens -------------------------------------------------------------------------


def _published(command: str) -> set[str]:
    words = shlex.split(command)
    return {words[i + 1] for i, word in enumerate(words[:-1]) if word in ("-p", "--publish")}


def test_the_header_publishes_the_ports_the_card_advertises() -> None:
    env = env_of(image())
    settings = Settings.from_env(env)
    http, grpc = settings.port, settings.grpc_port
    (run,) = [line for line in header() if line.startswith("docker run ")]
    assert _published(run) == {f"{http}:{http}", f"{grpc}:{grpc}"}, run
    # What the cards advertise is what a caller on the host reaches through those ports.
    assert settings.resolved_public_url == f"http://localhost:{http}"
    assert settings.resolved_grpc_url == f"localhost:{grpc}"
    assert f"netagent:{env['NETAGENT_HOME']}" in shlex.split(run), "the named volume"
    exposed = " ".join(a for k, a in image() if k == "EXPOSE").split()
    assert {str(http), str(grpc)} <= set(exposed), "HTTP and gRPC"
    assert settings.host == "0.0.0.0", "reachable from outside the container"


def test_the_routing_model_is_kept_in_the_volume() -> None:
    """Under the user's home it would be in the container's own layer, trained again by every
    new container; in the volume, replicas sharing it train once."""
    env = env_of(image())
    volumes = " ".join(a for k, a in image() if k == "VOLUME").split()
    cache = Settings.from_env(env).model_cache
    assert cache is not None and any(cache.is_relative_to(v) for v in volumes), cache


def test_the_image_prints_no_token_and_the_header_says_how_to_make_one() -> None:
    from netops.deployment import DEMO_CALLERS

    env = env_of(image())
    assert env["NETAGENT_PRINT_TOKENS"] == "off"
    assert Settings.from_env(env).print_tokens is False
    (exec_line,) = [line for line in header() if line.startswith("docker exec ")]
    (run,) = [line for line in header() if line.startswith("docker run ")]
    words = shlex.split(exec_line)
    assert words[2] == shlex.split(run)[shlex.split(run).index("--name") + 1], "that container"
    subject, tenant, scopes = _token_claims(words[3:])
    assert any(
        (caller.subject, caller.tenant) == (subject, tenant) and set(scopes) <= set(caller.scopes)
        for caller in DEMO_CALLERS
    ), f"{exec_line}: a demo caller's own claims"
    assert "NETAGENT_PRINT_TOKENS=on" in (ROOT / "Dockerfile").read_text(), "how to ask"


def _token_claims(command: list[str]) -> tuple[str, str, list[str]]:
    assert command[:2] == ["netagent", "token"], command
    options: dict[str, list[str]] = {}
    for flag, value in zip(command[2::2], command[3::2], strict=True):
        options.setdefault(flag, []).append(value)
    return options["--subject"][0], options["--tenant"][0], options["--scope"]


@pytest.fixture(scope="module")
def served_as_in_the_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``netagent serve`` with the image's settings; only where it listens and what it may
    write differ (a free loopback port, a temporary home), and no demo seed (quicker)."""
    home = tmp_path_factory.mktemp("image-home")
    port = free_port()
    env = {
        **os.environ,
        **env_of(image()),
        "NETAGENT_HOME": str(home),
        "NETAGENT_HOST": "127.0.0.1",
        "NETAGENT_PORT": str(port),
        "NETAGENT_GRPC_PORT": str(free_port()),
        "NETAGENT_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "NETAGENT_SEED": "off",
    }
    base = f"http://127.0.0.1:{port}"
    log = home / "serve.log"
    with serving(
        [NETAGENT, "serve"],
        cwd=home,
        env=env,
        log_path=log,
        ready_url=f"{base}/healthz",
        timeout_s=180,
    ):
        yield {"env": env, "base": base, "log": log.read_text()}


def test_serve_with_the_images_settings_prints_no_token(
    served_as_in_the_image: dict[str, Any],
) -> None:
    log = served_as_in_the_image["log"]
    assert "_TOKEN=" not in log and not JWT.search(log), log
    assert "Demo bearer tokens: not printed (NETAGENT_PRINT_TOKENS is off)" in log
    assert "(sign in with a bearer token)" in log and "tokens above" not in log


def test_the_command_serve_names_instead_makes_a_token_it_accepts(
    served_as_in_the_image: dict[str, Any],
) -> None:
    (command,) = re.findall(r"`(netagent token [^`]+)`", served_as_in_the_image["log"])
    words = shlex.split(command)
    made = subprocess.run(
        [NETAGENT, *words[1:]],
        env=served_as_in_the_image["env"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert JWT.fullmatch(made), made
    card = httpx.get(
        f"{served_as_in_the_image['base']}/a2a/rest/extendedAgentCard",
        headers={"Authorization": f"Bearer {made}", "A2A-Version": "1.0"},
        timeout=30,
    )
    assert card.status_code == 200, card.text


# --- the image, where a Docker engine runs -----------------------------------------------------


def _no_docker_engine() -> str | None:
    """Why no image can be built here, or None when a Docker engine answers."""
    if shutil.which("docker") is None:
        return "no `docker` command on PATH"
    probe = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        return f"no Docker engine answers `docker info` here: {said}"
    return None


def _docker(*arguments: str, timeout: float = 120) -> str:
    done = subprocess.run(
        ["docker", *arguments], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"docker {' '.join(arguments)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def built_image() -> Iterator[str]:
    reason = _no_docker_engine()
    if reason is not None:
        pytest.skip(f"the image is not built: {reason}")
    tag = f"netops-agent-test:{uuid.uuid4().hex[:12]}"
    _docker("build", "--tag", tag, str(ROOT), timeout=1800)
    try:
        yield tag
    finally:
        subprocess.run(["docker", "rmi", "--force", tag], capture_output=True, check=False)


INSPECT_INSTALL = """
import importlib.util, json, os, agent.app, netops.cli
modules = (agent.app, netops.cli)
print(json.dumps({
    "file": agent.app.__file__,
    "compiled": all(os.path.exists(importlib.util.cache_from_source(m.__file__)) for m in modules),
}))
"""
"""Run as the agent's user, which cannot write beside the modules: any bytecode found there
was compiled when the image was built."""


def test_the_image_runs_the_installed_agent_as_its_user(built_image: str) -> None:
    uid = _docker("run", "--rm", "--entrypoint", "id", built_image, "-u")
    assert uid == "10001"
    seen = json.loads(
        _docker("run", "--rm", "--entrypoint", "python", built_image, "-c", INSPECT_INSTALL)
    )
    assert "/site-packages/agent/" in seen["file"], f"installed, not a checkout: {seen}"
    assert seen["compiled"], f"no bytecode beside the installed modules: {seen}"


def test_the_containers_logs_hold_no_token(built_image: str) -> None:
    name = f"netops-agent-test-{uuid.uuid4().hex[:12]}"
    _docker("run", "--detach", "--name", name, "--env", "NETAGENT_SEED=off", built_image)
    try:
        deadline = time.monotonic() + 180
        logs = ""
        while "Console:" not in logs and time.monotonic() < deadline:
            time.sleep(1)
            done = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
            logs = done.stdout + done.stderr
        assert "Console:" in logs, logs
        assert "_TOKEN=" not in logs and not JWT.search(logs), logs
        made = _docker("exec", name, *shlex.split(_header_token_command())[3:])
        assert JWT.fullmatch(made), made
    finally:
        subprocess.run(["docker", "rm", "--force", name], capture_output=True, check=False)


def _header_token_command() -> str:
    (exec_line,) = [line for line in header() if line.startswith("docker exec ")]
    return exec_line


# --- the entry point -------------------------------------------------------------------------


def test_the_entrypoint_refuses_an_unwritable_home_and_names_the_uid(tmp_path: Path) -> None:
    script = ROOT / "docker" / "entrypoint.sh"
    # A folder that cannot be created (under a file): unwritable for root too.
    (tmp_path / "file").write_text("")
    locked = tmp_path / "file" / "home"
    env = {**os.environ, "NETAGENT_HOME": str(locked)}
    refused = subprocess.run(
        ["sh", str(script), "echo", "started"], env=env, capture_output=True, text=True
    )
    assert refused.returncode == 2 and "started" not in refused.stdout
    assert f"not writable by uid {os.getuid()}" in refused.stderr
    assert f"chown {os.getuid()}" in refused.stderr
    env["NETAGENT_HOME"] = str(tmp_path / "fresh")
    ran = subprocess.run(
        ["sh", str(script), "echo", "started"], env=env, capture_output=True, text=True, check=True
    )
    assert ran.stdout == "started\n"


# --- compose.yaml -----------------------------------------------------------------------------


def _scalar(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    if text.startswith("["):
        return json.loads(text)  # the flow lists here are lists of double-quoted strings
    if text[0] in "\"'":
        assert text[-1] == text[0], text
        return text[1:-1]
    if re.fullmatch(r"\d+", text):
        return int(text)
    special = re.fullmatch(r"(?i)on|off|yes|no|y|n|true|false|~|null", text) or (
        re.fullmatch(r"[-+]?[\d.][\d._eE:+-]*", text) and re.search(r"\d", text)
    )
    assert not special, f"{text!r}: quote it (YAML would read a boolean, null or number)"
    assert ": " not in text and " #" not in text, text
    return text


def parse_block_yaml(text: str) -> Any:
    """The YAML subset compose.yaml is written in (PyYAML is not installed here): block
    mappings and sequences by two-space indents, plain or quoted scalars, flow lists of
    strings. Anything else (tabs, anchors, multi-line scalars) fails the test."""
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        assert "\t" not in raw, f"line {number}: a tab"
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        assert indent % 2 == 0, f"line {number}: odd indent"
        assert not re.search(r"(^|\s)[&*!|>]", raw.strip()), f"line {number}: outside the subset"
        lines.append((indent, raw.strip(), number))

    def block(start: int, indent: int) -> tuple[Any, int]:
        if lines[start][1].startswith("- "):
            items: list[Any] = []
            index = start
            while index < len(lines) and lines[index][0] == indent:
                assert lines[index][1].startswith("- "), f"line {lines[index][2]}"
                items.append(_scalar(lines[index][1][2:]))
                index += 1
            return items, index
        mapping: dict[str, Any] = {}
        index = start
        while index < len(lines) and lines[index][0] == indent:
            _, content, number = lines[index]
            key, sep, rest = content.partition(":")
            assert sep and (not rest or rest.startswith(" ")), f"line {number}: not key: value"
            assert key not in mapping, f"line {number}: duplicate key {key}"
            index += 1
            if rest.strip():
                mapping[key] = _scalar(rest)
            elif index < len(lines) and lines[index][0] > indent:
                assert lines[index][0] == indent + 2, f"line {lines[index][2]}: indent"
                mapping[key], index = block(index, indent + 2)
            else:
                mapping[key] = None
        return mapping, index

    parsed, end = block(0, 0)
    assert end == len(lines), f"line {lines[end][2]}: unexpected indent"
    return parsed


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    text = (ROOT / "compose.yaml").read_text()
    parsed = parse_block_yaml(text)
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        pass
    else:  # where PyYAML is installed, it must read the same document
        assert yaml.safe_load(text) == parsed
    return parsed


# Compose's interpolation (the compose specification, "Interpolation"), the forms this file
# uses: ${VAR}, ${VAR:-default} (unset or empty: the default), ${VAR:?error} (unset or empty:
# compose refuses to run, printing the error), and $$ for a dollar sign.
SUBSTITUTION = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_]\w*)(?:(?P<op>:-|:\?)(?P<arg>[^}]*))?\}")


class MissingVariableError(LookupError):
    """A ${VAR:?error} whose variable is unset or empty: compose stops with the error."""


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """``value`` with every substitution replaced as compose replaces it from ``env``."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        given = env.get(match["name"], "")
        if given:
            return given
        if match["op"] == ":?":
            raise MissingVariableError(f"required variable {match['name']}: {match['arg']}")
        return match["arg"] or ""

    replaced = SUBSTITUTION.sub(substitute, value)
    assert "${" not in replaced, f"{value!r}: a form compose reads that this test does not"
    return replaced


def env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines, as compose reads .env (comments and blanks skipped)."""
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition("=")
            assert sep and re.fullmatch(r"[A-Za-z_]\w*", key), line
            pairs[key] = value
    return pairs


PASSWORD = "0f3a9c2be17d4e6a"  # what `openssl rand -hex 8` might print


def resolved(compose: dict[str, Any], **settings: str) -> dict[str, Any]:
    """compose.yaml as compose runs it with .env.example filled in (the password) and
    ``settings`` added, as a person's .env would have them."""
    env = env_file(ROOT / ".env.example") | {"POSTGRES_PASSWORD": PASSWORD} | settings
    return interpolate(compose, env)


def test_the_interpolation_follows_compose() -> None:
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate("a${SET}b $$SET ${EMPTY:-d} ${UNSET:-d}", env) == "axb $SET d d"
    assert interpolate(["${SET:?why}"], env) == ["x"]
    for missing in ("${EMPTY:?why}", "${UNSET:?why}"):
        with pytest.raises(MissingVariableError, match="why"):
            interpolate(missing, env)


def _agents(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if "NETAGENT_DATABASE_URL" in (service.get("environment") or {})
    }


def test_compose_runs_two_replicas_on_postgresql(compose: dict[str, Any]) -> None:
    running = resolved(compose)
    services = running["services"]
    assert services["postgres"]["image"].startswith("postgres:")
    assert "healthcheck" in services["postgres"]
    agents = _agents(running)
    assert len(agents) == 2, sorted(services)
    pg = services["postgres"]["environment"]
    assert pg["POSTGRES_PASSWORD"] == PASSWORD, "the password is the one in .env"
    url = (
        f"postgresql+asyncpg://{pg['POSTGRES_USER']}:{pg['POSTGRES_PASSWORD']}"
        f"@postgres/{pg['POSTGRES_DB']}"
    )
    homes = set()
    published = []
    for name, agent in agents.items():
        env = agent["environment"]
        assert agent["build"] == ".", name
        assert env["NETAGENT_DATABASE_URL"] == url, name
        assert env["NETAGENT_CLUSTER"] == "on", name
        assert agent["depends_on"] == {"postgres": {"condition": "service_healthy"}}, name
        (home,) = [v for v in agent["volumes"] if v.endswith(":" + env["NETAGENT_HOME"])]
        homes.add(home.split(":")[0])
        http, grpc = env["NETAGENT_PORT"], env["NETAGENT_GRPC_PORT"]
        # The card advertises NETAGENT_PUBLIC_URL and its host with the gRPC port: the ports
        # inside must be the ports published.
        assert env["NETAGENT_PUBLIC_URL"] == f"http://localhost:{http}", name
        assert sorted(agent["ports"]) == sorted([f"{http}:{http}", f"{grpc}:{grpc}"]), name
        settings = Settings.from_env(env)
        assert (settings.seed_on_start, settings.print_tokens) == (False, False), name
        published += agent["ports"]
    assert len(homes) == 1 and homes <= set(running["volumes"]), "one shared signing key"
    assert len(set(published)) == len(published), "each replica on its own host ports"


def test_compose_asks_for_the_password_and_holds_none(compose: dict[str, Any]) -> None:
    example = env_file(ROOT / ".env.example")
    assert example["POSTGRES_PASSWORD"] == "", ".env.example holds no password"
    for env in (example, {}):
        with pytest.raises(MissingVariableError, match=r"POSTGRES_PASSWORD.*\.env"):
            interpolate(compose, env)
    text = (ROOT / "compose.yaml").read_text()
    references = re.findall(r"\$\{POSTGRES_PASSWORD([^}]*)\}", text)
    assert len(references) == 3, "postgres and both replicas read it"
    assert all(form.startswith(":?") for form in references), f"each one required: {references}"
    assert "POSTGRES_PASSWORD: netagent" not in text and ":netagent@" not in text


def test_the_env_file_stays_out_of_git_and_the_image_and_its_example_is_complete(
    compose: dict[str, Any],
) -> None:
    ignored = subprocess.run(["git", "check-ignore", "--quiet", ".env"], cwd=ROOT, check=False)
    assert ignored.returncode == 0, ".env is not in .gitignore"
    example = subprocess.run(
        ["git", "check-ignore", "--quiet", ".env.example"], cwd=ROOT, check=False
    )
    assert example.returncode == 1, ".env.example is committed"
    assert excluded(".env", dockerignore_rules((ROOT / ".dockerignore").read_text()))
    used = set(re.findall(r"\$\{([A-Za-z_]\w*)", (ROOT / "compose.yaml").read_text()))
    listed = set(env_file(ROOT / ".env.example"))
    listed |= set(re.findall(r"^#([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert used == listed, f".env.example lists {sorted(listed)}, compose.yaml reads {sorted(used)}"


def test_compose_behind_a_load_balancer_advertises_its_address(compose: dict[str, Any]) -> None:
    balancer = "https://netops.example.net"
    agents = _agents(resolved(compose, NETAGENT_PUBLIC_URL=balancer))
    advertised = {name: Settings.from_env(a["environment"]) for name, a in agents.items()}
    assert {s.resolved_public_url for s in advertised.values()} == {balancer}
    # gRPC: the balancer's host with each replica's own port (compose.yaml says to forward both).
    grpc = sorted(s.resolved_grpc_url or "" for s in advertised.values())
    assert grpc == ["netops.example.net:50061", "netops.example.net:50062"]
    text = (ROOT / "compose.yaml").read_text()
    assert "ports 50061 and 50062" in text and balancer in text


def test_compose_seeds_the_demo_only_when_asked(compose: dict[str, Any]) -> None:
    for asked, seeded in (({}, False), ({"NETAGENT_SEED": "on"}, True)):
        agents = _agents(resolved(compose, **asked))
        assert {Settings.from_env(a["environment"]).seed_on_start for a in agents.values()} == {
            seeded
        }, asked
    asked = _agents(resolved(compose, NETAGENT_PRINT_TOKENS="on"))
    assert all(Settings.from_env(a["environment"]).print_tokens for a in asked.values())


def test_the_docs_describe_the_docker_files(compose: dict[str, Any]) -> None:
    docs = (ROOT / "docs" / "operations.md").read_text()
    section = docs.split("\n## Docker\n", 1)[1].split("\n## ", 1)[0]
    (base,) = [a for k, a in stages()["global"] if a.startswith("PYTHON_IMAGE=")]
    names = [*_agents(compose), "compose.yaml", ".dockerignore", "10001", "not run", LOCK]
    names += ["scripts/lock_image.py", ".env.example", base.removeprefix("PYTHON_IMAGE=")]
    for name in names:
        assert name in section, f"docs/operations.md, Docker, does not mention {name}"
    for setting in (
        "NETAGENT_DATABASE_URL",
        "NETAGENT_GRPC_PORT",
        "NETAGENT_CLUSTER",
        "NETAGENT_PRINT_TOKENS",
        "NETAGENT_PUBLIC_URL",
        "NETAGENT_SEED",
        "POSTGRES_PASSWORD",
    ):
        assert setting in section, setting
    (run,) = [line for line in header() if line.startswith("docker run ")]
    assert run in section, "the docs' docker run is the Dockerfile's"
