"""The documentation tells the truth: its marked commands run, and its links resolve.

Every fenced block whose info string is ``sh test`` in ``docs/*.md`` and ``README.md`` is run
with bash (``set -euo pipefail``) from the repository root, with ``.venv/bin`` first on PATH,
against a real agent this module starts with ``netagent serve`` on a free loopback port. The
blocks see ``NETAGENT_URL`` (that agent's base URL) and ``NETAGENT_HOME`` (the agent's own home,
so tokens minted with ``netagent token`` are signed with the agent's key, and ``netagent audit``
reads the agent's database). Blocks fenced plain ``sh`` are shown, not run.

The README's tour is fenced ``sh tour``: its blocks run as one script, in order (a later step
uses the tokens and shell functions an earlier one made), exactly as written, with only the
README's address (``http://127.0.0.1:8000``) replaced by the test agent's; each block must show
its answer, in a few lines.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.serving import serving

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
VENV_BIN = ROOT / ".venv" / "bin"
BIN = VENV_BIN if VENV_BIN.is_dir() else Path(sys.executable).parent
BLOCK_TIMEOUT_S = 180
START_TIMEOUT_S = 300
MIN_TESTED_BLOCKS = 15
REQUIRED_DOCS = (
    "architecture.md",
    "adding-a-skill.md",
    "manifest.md",
    "schema-interfaces.md",
    "security.md",
    "operations.md",
    "interop.md",
)

FENCE = re.compile(r"^(`{3,})([^`\n]*)\n(.*?)^\1[ \t]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def doc_files() -> list[Path]:
    """The files whose blocks and links are checked."""
    return [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]


@dataclass(frozen=True)
class Block:
    """One ``sh test`` block: where it is and what it runs."""

    path: Path
    line: int
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def first_line(self) -> str:
        return next((s for s in self.body.splitlines() if s.strip()), "").strip()


def find_blocks() -> list[Block]:
    """Every ``sh test`` block, in file order."""
    found = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(2).split() == ["sh", "test"]:
                line = text.count("\n", 0, match.start()) + 1
                found.append(Block(path, line, match.group(3)))
    return found


BLOCKS = find_blocks()
README_ADDRESS = "http://127.0.0.1:8000"
TOUR_BLOCK_MAX_LINES = 60
"""A tour step shows the part that matters: no step prints more (step 4 printed 216 lines)."""
TOUR_ANSWERS = (
    "skills: describe_skill, lookup_inventory",  # 1: the public card
    "no signing key in",  # 2: no key, no token, exit 2
    "exit 2",
    "link_headroom, lookup_inventory, plan_link_upgrade",  # 3: paula's extended card
    "TASK_STATE_COMPLETED evaluate_resource_condition 1.0 sha256:",  # 4: describe_skill
    '"result": "condition_not_met"',  # 5: the worked example, its variants
    '"instance_path": "/condition/unit", "keyword": "required"',
    "authorization_failed: resource not found or not accessible",
    "TASK_STATE_COMPLETED - routing: model check_link_capacity",  # 6: plain text
    "TASK_STATE_INPUT_REQUIRED - routing: clarification",
    "TASK_STATE_COMPLETED - routing: task_binding check_link_capacity",
    "- /link_id: one of: link_id",
    "principal audit (10 rows, newest first",  # 7: audit and usage
    "capability usage, from the audit trail",
    "verdict: 5 Gbit/s fits:",  # 8: the governed client, check, chain
    "(JSONRPC, with --token) conforms",
    "recommendation: upgrade",
    "task correlations (1 row, newest first)",
)


def tour_blocks() -> list[Block]:
    """The README's ``sh tour`` blocks, in order."""
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, text.count("\n", 0, match.start()) + 1, match.group(3))
        for match in FENCE.finditer(text)
        if match.group(2).split() == ["sh", "tour"]
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _clean_environment() -> dict[str, str]:
    """The caller's environment without any NETAGENT_* setting that could leak in."""
    return {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}


@dataclass(frozen=True)
class DocsAgent:
    """The agent the blocks run against."""

    url: str
    home: Path


@pytest.fixture(scope="module")
def docs_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocsAgent]:
    """``netagent serve`` on its embedded defaults, in a fresh home, on a free port."""
    home = tmp_path_factory.mktemp("docs-agent")
    port = _free_port()
    env = _clean_environment() | {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NETAGENT_HOME": str(home),
        "NETAGENT_HOST": "127.0.0.1",
        "NETAGENT_PORT": str(port),
        "NETAGENT_GRPC_PORT": str(_free_port()),  # interop.md calls it; not the default port
        "NETAGENT_LOG_LEVEL": "warning",
    }
    url = f"http://127.0.0.1:{port}"
    with serving(
        [str(BIN / "netagent"), "serve"],
        cwd=ROOT,
        env=env,
        log_path=home / "serve.log",
        ready_url=f"{url}/healthz",
        timeout_s=START_TIMEOUT_S,
    ):
        yield DocsAgent(url, home)


def _run(block: Block, agent: DocsAgent) -> tuple[int, str]:
    """Run one block in its own process group; a timeout kills the whole group."""
    env = _clean_environment() | {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NETAGENT_HOME": str(agent.home),
        "NETAGENT_URL": agent.url,
    }
    process = subprocess.Popen(
        ["bash", "-c", "set -euo pipefail\n" + block.body],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return -1, f"(timed out after {BLOCK_TIMEOUT_S} s)\n{output}"
    return process.returncode, output


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_block_runs(block: Block, docs_agent: DocsAgent) -> None:
    code, output = _run(block, docs_agent)
    assert code == 0, (
        f"{block.where}: the block starting `{block.first_line}` exited {code}\n"
        f"--- output ---\n{output}"
    )


def test_the_readme_tour_runs_in_order_and_each_step_shows_its_answer(
    docs_agent: DocsAgent,
) -> None:
    blocks = tour_blocks()
    assert len(blocks) >= 10, "the README's tour is fenced `sh tour`"
    marker = "--- tour block at "
    script = "".join(
        f"echo '{marker}{block.where}'\n{block.body.replace(README_ADDRESS, docs_agent.url)}"
        for block in blocks
    )
    if not (ROOT / ".venv").is_dir():  # the README's venv: the suite's interpreter's then
        script = script.replace(".venv/bin/", f"{BIN}/")
    code, output = _run(Block(ROOT / "README.md", blocks[0].line, script), docs_agent)
    assert code == 0, f"the README tour exited {code}\n--- output ---\n{output}"
    shown = output.split(marker)[1:]
    assert len(shown) == len(blocks), output
    for step in shown:
        lines = step.splitlines()
        assert 1 < len(lines) <= TOUR_BLOCK_MAX_LINES + 1, f"{len(lines)} lines:\n{step}"
    missing = [answer for answer in TOUR_ANSWERS if answer not in output]
    assert not missing, f"the tour does not show {missing}\n--- output ---\n{output}"
    assert "Traceback" not in output and "{'" not in output, output


def test_the_docs_exist_and_enough_blocks_are_tested() -> None:
    missing = [name for name in REQUIRED_DOCS if not (DOCS / name).is_file()]
    assert not missing, f"missing docs: {missing}"
    assert len(BLOCKS) >= MIN_TESTED_BLOCKS, f"only {len(BLOCKS)} `sh test` blocks"


# -- links -------------------------------------------------------------------------------------


def _prose(text: str) -> str:
    """The text without fenced blocks and inline code (links there are not links)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return INLINE_CODE.sub("", text)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(_prose_headings(path.read_text(encoding="utf-8"))):
        anchor = base = _anchor(heading)
        index = 0
        while anchor in found:
            index += 1
            anchor = f"{base}-{index}"
        found.add(anchor)
    return found


def _prose_headings(text: str) -> str:
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _links(path: Path) -> list[str]:
    return LINK.findall(_prose(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", doc_files(), ids=[str(p.relative_to(ROOT)) for p in doc_files()])
def test_relative_links_resolve(path: Path) -> None:
    broken = []
    for target in _links(path):
        if SCHEME.match(target):
            continue
        file_part, _, fragment = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in _anchors(resolved):
            broken.append(f"{target}: no heading with anchor #{fragment}")
    assert not broken, f"{path.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


# -- the manifest reference covers the manifest schema -----------------------------------------


def _schema_members(schema: dict[str, Any]) -> list[str]:
    """Dotted paths of every named member the manifest schema defines."""
    defs = schema["$defs"]

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref", "")
        return defs[ref.split("/")[-1]] if ref.startswith("#/$defs/") else node

    def walk(node: dict[str, Any], prefix: str) -> Iterator[str]:
        node = resolve(node)
        for name, child in node.get("properties", {}).items():
            path = f"{prefix}{name}"
            yield path
            yield from walk(child, path + ".")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            yield from walk(extra, prefix + "*.")

    return list(walk(schema, ""))


def test_manifest_reference_covers_the_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "capability-manifest.schema.json").read_text())
    reference = (DOCS / "manifest.md").read_text(encoding="utf-8")
    undocumented = [m for m in _schema_members(schema) if f"`{m}`" not in reference]
    assert not undocumented, f"docs/manifest.md does not describe: {undocumented}"
