"""The core never reaches inside a third-party library (docs/architecture.md, "No reaching
inside"): outside ``agent/_sdk.py``, no module under ``agent/``

1. imports a private module or name of a third-party package (``typer._coercion``,
   ``from click.core import _Param``);
2. reads a private attribute off an imported third-party name (``httpx._main``,
   ``json_format._Printer``), or a private attribute that no class or module of ours defines
   (``param._runtime_param``: an object a library handed us);
3. monkey-patches: assigns or deletes an attribute of an imported third-party module or class
   (``jsonrpc_dispatcher.ParseDict = ...``, ``setattr(typer.core, ...)``), or edits
   ``sys.modules`` (blocking or swapping a library's module);
4. names a private third-party module in a string (``sys.modules["httpx._main"]``,
   ``import_module("typer._coercion")``).

A library's public surface is what its names without a leading underscore are; a leading
underscore says "this may change in any release", which a forker must not inherit. The standard
library is not concerned (``os._exit`` is documented). Each check is shown to fail on a planted
case below.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = frozenset({"agent", "db", "skills", "netops", "examples", "tests", "bench"})
ADAPTER = Path("agent/_sdk.py")
"""The one module allowed to touch the a2a-sdk's internals; each of its entries says why."""
PRIVATE_MODULE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*$")


def private(name: str) -> bool:
    """``_x`` but not a dunder (``__x__``) or an enum sunder (``_value_``)."""
    return name.startswith("_") and not name.endswith("_")


def third_party(module: str) -> bool:
    top = module.split(".")[0]
    return bool(top) and top not in OURS and top not in sys.stdlib_module_names


def private_module(dotted: str) -> bool:
    """A dotted module path of a third-party package with a private part (``httpx._main``)."""
    return (
        PRIVATE_MODULE.match(dotted) is not None
        and third_party(dotted)
        and any(private(part) for part in dotted.split(".")[1:])
    )


@dataclass
class Module:
    """One parsed module and the names its imports bind."""

    path: Path
    tree: ast.Module
    imported: dict[str, str] = field(default_factory=dict)
    """Local name -> the dotted module (or module.name) it was bound from."""

    def __post_init__(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.imported[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def root(self, node: ast.expr) -> str | None:
        """The imported module a ``name.attr.attr`` chain starts from, if it is one."""
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            return self.imported.get(node.id)
        return None


def modules(root: Path) -> list[Module]:
    return [
        Module(path.relative_to(root), ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for path in sorted((root / "agent").rglob("*.py"))
    ]


def our_private_names(found: list[Module]) -> set[str]:
    """Private names our code defines as its own: functions, classes, module and class-level
    names, and attributes set on ``self`` or ``cls`` (never an attribute set on anything else:
    that is how a library's object gets patched)."""
    names: set[str] = set()
    for module in found:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
            elif isinstance(node, ast.keyword) and node.arg:  # a dataclass's field(...) names
                names.add(node.arg)
    return {name for name in names if private(name)}


def imports(module: Module) -> Iterator[str]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if private_module(alias.name):
                    yield f"{module.path}:{node.lineno} imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if private_module(node.module):
                yield f"{module.path}:{node.lineno} imports from {node.module}"
            elif third_party(node.module):
                for alias in node.names:
                    if private(alias.name):
                        yield f"{module.path}:{node.lineno} imports {node.module}.{alias.name}"


def reads(module: Module, ours: set[str]) -> Iterator[str]:
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Attribute) or not private(node.attr):
            continue
        where = f"{module.path}:{node.lineno} reads {ast.unparse(node)}"
        origin = module.root(node.value)
        if origin is not None:
            if third_party(origin):
                yield where
            continue  # the standard library's, or ours
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if node.attr not in ours:
            yield where


def patched_targets(node: ast.AST) -> Iterator[ast.expr]:
    """What an assignment, a ``del`` or a ``setattr``/``delattr`` call writes to."""
    if isinstance(node, ast.Assign):
        yield from node.targets
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        yield node.target
    elif isinstance(node, ast.Delete):
        yield from node.targets
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("setattr", "delattr")
        and node.args
    ):
        yield ast.Attribute(value=node.args[0], attr="?", ctx=ast.Store(), lineno=node.lineno)


def patches(module: Module) -> Iterator[str]:
    for node in ast.walk(module.tree):
        for target in patched_targets(node):
            where = f"{module.path}:{node.lineno} writes {ast.unparse(target)}"
            if isinstance(target, ast.Attribute):
                origin = module.root(target.value)
                if origin is not None and third_party(origin):
                    yield f"{where} (a third-party module or class)"
            elif isinstance(target, ast.Subscript) and ast.unparse(target.value) == "sys.modules":
                yield f"{where} (the import system)"


def named_private_modules(module: Module) -> Iterator[str]:
    for node in ast.walk(module.tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (private_module(node.value))
        ):
            yield f"{module.path}:{node.lineno} names {node.value}"


def reaching_inside(root: Path = ROOT) -> list[str]:
    found = modules(root)
    ours = our_private_names(found)
    problems: list[str] = []
    for module in found:
        if module.path == ADAPTER:
            continue
        problems += imports(module)
        problems += reads(module, ours)
        problems += patches(module)
        problems += named_private_modules(module)
    return sorted(problems)


def test_no_module_of_the_core_reaches_inside_a_third_party_library() -> None:
    assert reaching_inside() == []


def test_each_way_of_reaching_inside_is_caught(tmp_path: Path) -> None:
    planted = {
        "a.py": "import typer._coercion\n",
        "b.py": "from typer._coercion import RuntimeParam\n",
        "c.py": "from click.core import _Param\n",
        "d.py": "import httpx\nhttpx._main\n",
        "e.py": "from google.protobuf import json_format\njson_format._Printer()\n",
        "f.py": "def f(param):\n    param._runtime_param = 1\n",
        "g.py": "from a2a.server.routes import jsonrpc_dispatcher as j\nj.ParseDict = len\n",
        "h.py": "import typer\nsetattr(typer.core, 'x', 1)\n",
        "i.py": "import sys\nsys.modules['grpc'] = None\n",
        "j.py": "import importlib\nimportlib.import_module('typer._coercion')\n",
        "k.py": "from starlette.responses import Response\nResponse.render = str\n",
        "l.py": "from typer.core import TyperGroup\ndel TyperGroup.main\n",
    }
    allowed = {
        "m.py": "import os\nos._exit(0)\n",  # the standard library's documented name
        "n.py": "class A:\n    def __init__(self):\n        self._mine = 1\n"
        "def g(a):\n    return a._mine, a._value_, a.__class__\n",
        "o.py": "import typer\napp = typer.Typer()\napp.info.help = 'x'\n",  # an instance's
        "p.py": "from agent.x import y\ny._z = 1\n",  # ours
        "_sdk.py": "from typer._coercion import RuntimeParam\n",  # the adapter
    }
    for name, text in {**planted, **allowed}.items():
        (tmp_path / "agent").mkdir(exist_ok=True)
        (tmp_path / "agent" / name).write_text(text, encoding="utf-8")
    caught = {Path(problem.split(":")[0]).name for problem in reaching_inside(tmp_path)}
    assert caught == set(planted)
