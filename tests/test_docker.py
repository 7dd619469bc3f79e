"""The Docker files, checked without a Docker engine (none runs on these machines).

What is checked: the build context that ``.dockerignore`` leaves (matched with Docker's rules
against a simulated checkout: a ``.venv``, an agent home with its database and key, caches,
``.git``), the ``Dockerfile``'s order (dependencies installed from ``pyproject.toml`` before
the code is copied, so a code edit reuses that layer) and its instructions, the entry point's
refusal of an unwritable data folder, and ``compose.yaml`` (parsed, and naming the services
and settings of the scale-out recipe in docs/operations.md). What is not: building the image,
running a container, ``docker compose up`` (docs/operations.md, Docker, says so).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
CODE = ("agent", "skills", "schemas", "db", "netops")


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


def test_the_build_context_excludes_the_venv_databases_caches_and_homes() -> None:
    rules = dockerignore_rules((ROOT / ".dockerignore").read_text())
    kept = [path for path in UNTRACKED if not excluded(path, rules)]
    assert not kept, f"in the build context: {kept}"


def test_the_build_context_keeps_what_the_dockerfile_copies() -> None:
    rules = dockerignore_rules((ROOT / ".dockerignore").read_text())
    sources = [
        src
        for instruction in dockerfile()
        if instruction[0] == "COPY"
        for src in instruction[1].split()[:-1]
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


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
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


def test_the_dockerfile_lints() -> None:
    instructions = dockerfile()
    assert instructions[0][0] == "FROM"
    unknown = [k for k, _ in instructions if not INSTRUCTIONS.fullmatch(k)]
    assert not unknown, unknown
    for keyword in ("CMD", "ENTRYPOINT"):
        forms = [json.loads(a) for k, a in instructions if k == keyword]
        assert len(forms) == 1 and isinstance(forms[0], list), f"{keyword}: one, exec form"
    user = [a for k, a in instructions if k == "USER"]
    assert user == ["netagent"], "runs as the unprivileged user"
    assert any(k == "ARG" and a.startswith("NETAGENT_UID=") for k, a in instructions)
    (healthcheck,) = [a for k, a in instructions if k == "HEALTHCHECK"]
    assert re.search(r"--start-period=\d+s", healthcheck), "a start period: the first start seeds"
    exposed = " ".join(a for k, a in instructions if k == "EXPOSE").split()
    assert {"8000", "50051"} <= set(exposed), "HTTP and gRPC"
    env = " ".join(a for k, a in instructions if k == "ENV")
    assert "NETAGENT_GRPC_PORT=50051" in env and "NETAGENT_HOST=0.0.0.0" in env


def test_dependencies_are_installed_before_the_code_is_copied() -> None:
    instructions = dockerfile()
    deps = [i for i, (k, a) in enumerate(instructions) if k == "RUN" and "-r " in a]
    assert len(deps) == 1, "one RUN installs the dependencies from a requirements list"
    before = [a for k, a in instructions[: deps[0]] if k in ("COPY", "ADD")]
    assert before == ["pyproject.toml ./"], f"only pyproject.toml before the deps: {before}"
    code = [i for i, (k, a) in enumerate(instructions) if k == "COPY" and a.split()[0] in CODE]
    assert sorted(instructions[i][1].split()[0] for i in code) == sorted(CODE)
    assert min(code) > deps[0]
    (install,) = [a for k, a in instructions if k == "RUN" and "-e ." in a]
    assert "--no-deps" in install, "the code's own install reinstalls nothing"


def test_the_requirements_the_image_installs_are_pyprojects(tmp_path: Path) -> None:
    """Runs the Dockerfile's own extraction command here, on this checkout's pyproject."""
    (run,) = [a for k, a in dockerfile() if k == "RUN" and "-r " in a]
    extract = run.split(" > ")[0]
    argv = shlex.split(extract)
    assert argv[:2] == ["python", "-c"]
    (tmp_path / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    out = subprocess.run(
        [sys.executable, "-c", argv[2]], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert out.splitlines() == declared
    assert any(line.startswith("uvloop") for line in declared)
    assert any(line.startswith("httptools") for line in declared)


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


def _agents(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if "NETAGENT_DATABASE_URL" in (service.get("environment") or {})
    }


def test_compose_runs_two_replicas_on_postgresql(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["postgres"]["image"].startswith("postgres:")
    assert "healthcheck" in services["postgres"]
    agents = _agents(compose)
    assert len(agents) == 2, sorted(services)
    pg = services["postgres"]["environment"]
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
        published += agent["ports"]
    assert len(homes) == 1 and homes <= set(compose["volumes"]), "one shared signing key"
    assert len(set(published)) == len(published), "each replica on its own host ports"


def test_the_docs_describe_the_docker_files(compose: dict[str, Any]) -> None:
    docs = (ROOT / "docs" / "operations.md").read_text()
    section = docs.split("\n## Docker\n", 1)[1].split("\n## ", 1)[0]
    for name in [*_agents(compose), "compose.yaml", ".dockerignore", "10001", "not run"]:
        assert name in section, f"docs/operations.md, Docker, does not mention {name}"
    for setting in ("NETAGENT_DATABASE_URL", "NETAGENT_GRPC_PORT", "NETAGENT_CLUSTER"):
        assert setting in section, setting
