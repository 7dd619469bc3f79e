"""The import rules of docs/architecture.md, checked on every module's source.

Every import counts, wherever it stands (module level, inside a function, under
``TYPE_CHECKING``): a rule is about what a module knows, not about when Python loads it.

1. The core knows no domain: nothing under ``agent/`` imports ``db``, ``skills``, ``netops`` or
   ``examples``.
2. Skills and tools see the core through its public surface: ``db/``, ``skills/`` and every
   other deployment's skills folder (``examples/*/skills/``) import ``agent.sdk`` and no other
   ``agent`` module; nothing imports a deployment (``netops``, ``examples``) but itself.
3. One module touches a2a-sdk internals: only ``agent/_sdk.py`` imports a private a2a name or
   module, or reads a private attribute that no module of ours defines; and only the core
   imports ``agent._sdk``.
4. No import cycles between units (each of ``db``, ``skills``, ``netops``, each subpackage of
   ``agent`` and each top-level module of ``agent``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "db", "skills", "netops", "examples")
DOMAIN = ("db", "skills", "netops", "examples")
DEPLOYMENTS = ("netops", "examples")
PUBLIC_SURFACE = "agent.sdk"
SDK_ADAPTER = "agent._sdk"


@dataclass(frozen=True)
class Import:
    """One imported module (and, for ``from`` imports, the names taken from it)."""

    module: str
    names: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Source:
    """One module of ours: its dotted name and its parsed tree."""

    name: str
    path: Path
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.name.split(".")[0]

    @property
    def sees_only_the_public_surface(self) -> bool:
        """A tool (``db``) or a skill, of the network or of another deployment."""
        return self.package in ("db", "skills") or "skills" in self.name.split(".")[1:]

    def imports(self) -> Iterator[Import]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(alias.name, (), node.lineno)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = tuple(alias.name for alias in node.names)
                if node.module in PACKAGES:  # ``from agent import sdk``: the module agent.sdk
                    for name in names:
                        yield Import(f"{node.module}.{name}", (), node.lineno)
                else:
                    yield Import(node.module, names, node.lineno)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def sources(root: Path = ROOT) -> list[Source]:
    """Every module of the packages, the test folders excluded."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "tests" in path.relative_to(root).parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            found.append(Source(module_name(path, root), path, tree))
    return found


def is_ours(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def unit(module: str) -> str:
    """The unit a module belongs to for the cycle rule."""
    parts = module.split(".")
    if parts[0] == "agent" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def domain_violations(modules: Iterable[Source]) -> list[str]:
    """Rules 1 and 2."""
    found = []
    for source in modules:
        for item in source.imports():
            target = item.module.split(".")[0]
            where = f"{source.name}:{item.line} imports {item.module}"
            if source.package == "agent" and target in DOMAIN:
                found.append(f"{where} (the core imports no domain)")
            elif source.sees_only_the_public_surface and target == "agent":
                if item.module != PUBLIC_SURFACE:
                    found.append(f"{where} (only {PUBLIC_SURFACE} is the core's public surface)")
            elif target in DEPLOYMENTS and source.package != target:
                found.append(f"{where} (nothing depends on the deployment)")
    return found


def defined_private_names(modules: Iterable[Source]) -> set[str]:
    """Private names our own code defines: functions, classes and ``self._x`` attributes."""
    names: set[str] = set()
    for source in modules:
        for node in ast.walk(source.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {name for name in names if name.startswith("_")}


def _private(name: str) -> bool:
    """``_x`` but not a dunder (``__x__``) or an enum sunder (``_value_``)."""
    return name.startswith("_") and not name.endswith("_")


def sdk_internals(modules: list[Source]) -> list[str]:
    """Rule 3."""
    ours = defined_private_names(modules)
    found = []
    for source in modules:
        if source.name == SDK_ADAPTER:
            continue
        for item in source.imports():
            where = f"{source.name}:{item.line}"
            if item.module.split(".")[0] == "a2a":
                if any(_private(part) for part in item.module.split(".")):
                    found.append(f"{where} imports the private module {item.module}")
                found += [
                    f"{where} imports the private name {name} from {item.module}"
                    for name in item.names
                    if _private(name)
                ]
            if item.module == SDK_ADAPTER and source.package != "agent":
                found.append(f"{where} imports {SDK_ADAPTER} (the core's own adapter)")
        for node in ast.walk(source.tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr not in ours:
                found.append(f"{source.name}:{node.lineno} reads {ast.unparse(node)}")
    return found


def unit_graph(modules: Iterable[Source]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for source in modules:
        edges = graph.setdefault(unit(source.name), set())
        for item in source.imports():
            if is_ours(item.module) and unit(item.module) != unit(source.name):
                edges.add(unit(item.module))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.fixture(scope="module")
def tree() -> list[Source]:
    return sources()


def test_the_core_imports_no_domain_and_the_domain_only_the_public_surface(
    tree: list[Source],
) -> None:
    assert domain_violations(tree) == []


def test_only_the_adapter_touches_sdk_internals(tree: list[Source]) -> None:
    assert sdk_internals(tree) == []


def test_no_import_cycles_between_units(tree: list[Source]) -> None:
    assert cycles(unit_graph(tree)) == []


def test_the_public_surface_exports_what_it_imports() -> None:
    import agent.sdk

    assert sorted(agent.sdk.__all__) == agent.sdk.__all__
    assert all(hasattr(agent.sdk, name) for name in agent.sdk.__all__)


# -- the checks themselves catch what they are for -----------------------------------------------


def _write(root: Path, files: dict[str, str]) -> list[Source]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
    return sources(root)


def test_a_core_module_importing_the_domain_is_caught_wherever_the_import_stands(
    tmp_path: Path,
) -> None:
    modules = _write(
        tmp_path,
        {
            "agent/a.py": "def f():\n    from db.gate import X\n",
            "agent/b.py": "import typing\nif typing.TYPE_CHECKING:\n    import skills\n",
            "agent/c.py": "from netops import deployment\n",
            "db/x.py": "from agent.server.executor import SkillExecutor\n",
            "skills/s/handler.py": "from agent import sdk\nfrom agent.sdk import SkillContext\n",
            "skills/t/handler.py": "from agent import settings\n",
            "agent/d.py": "from examples.shop.deployment import shop\n",
            "examples/shop/skills/u/handler.py": "from agent.interfaces import SkillError\n",
            "examples/shop/skills/v/handler.py": "from agent.sdk import SkillError\n",
            "examples/shop/deployment.py": "from agent.ports import Deployment\n",
            "netops/n.py": "from examples.shop import deployment\n",
        },
    )
    found = domain_violations(modules)
    assert [entry.split(":")[0] for entry in found] == [
        "agent.a",
        "agent.b",
        "agent.c",
        "agent.d",
        "db.x",
        "skills.t.handler",
        "netops.n",
        "examples.shop.skills.u.handler",
    ]


def test_sdk_internals_are_caught_outside_the_adapter(tmp_path: Path) -> None:
    modules = _write(
        tmp_path,
        {
            "agent/_sdk.py": "from a2a.x import _hidden\nh._queue\n",
            "agent/a.py": "from a2a.server.routes.agent_card_routes import _etag_for\n",
            "agent/b.py": "from a2a.utils._async_queue_compat import QueueShutDown\n",
            "agent/c.py": "def f(handler):\n    return handler._versioned_store\n",
            "agent/d.py": "class A:\n    def __init__(self):\n        self._mine = 1\n"
            "def g(a):\n    return a._mine, a._value_\n",
            "netops/n.py": "from agent._sdk import x\n",
        },
    )
    found = sdk_internals(modules)
    assert [entry.split(":")[0] for entry in found] == ["agent.a", "agent.b", "agent.c", "netops.n"]


def test_a_cycle_between_units_is_caught(tmp_path: Path) -> None:
    modules = _write(
        tmp_path,
        {
            "agent/registry/cards.py": "from agent.console import routes\n",
            "agent/console/routes.py": "from agent.registry.cards import card\n",
            "agent/app.py": "from agent.console import routes\n",
        },
    )
    assert cycles(unit_graph(modules)) == [["agent.console", "agent.registry"]]
