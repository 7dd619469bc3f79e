"""One error root: every exception class the project defines descends from it, and the trees
drawn in ``agent/base/errors.py``'s docstring (the core's) and ``db/errors.py``'s (the network
deployment's) are exactly the classes as they are."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from types import ModuleType

import pytest
from jsonschema.exceptions import ValidationError, best_match

import agent.base.errors
import db.errors
from agent.base.errors import NetagentError
from agent.interfaces.validation import compile_validator

PACKAGES = ("agent", "db", "skills", "netops")
NOT_IMPORTABLE = frozenset({"db.migrations.env", "agent.storage.migrations.env"})
"""Alembic's env script: it runs only inside an Alembic command (it reads ``context.config``)."""

_LINE = re.compile(
    r"^(?P<indent> *)[*+.-] (?P<name>\w+)(?: \((?P<also>[\w, ]+)\))? +(?P<module>[a-z_][\w.]*)$"
)


def _modules() -> list[ModuleType]:
    """Every module of the project's packages, imported; a module that fails to import fails."""
    found = []
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        found.append(package)
        for info in pkgutil.walk_packages(package.__path__, f"{package_name}."):
            if info.name not in NOT_IMPORTABLE:
                found.append(importlib.import_module(info.name))
    return found


def _exception_classes() -> dict[str, type[BaseException]]:
    """Exception classes by name, each counted in the module that defines it."""
    classes: dict[str, type[BaseException]] = {}
    for module in _modules():
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                assert classes.get(name, value) is value, f"two exception classes named {name}"
                classes[name] = value
    return classes


CLASSES = _exception_classes()


@dataclass(frozen=True)
class Drawn:
    """One line of the docstring's tree."""

    parent: str | None
    module: str
    also: tuple[str, ...]


DRAWINGS = (agent.base.errors, db.errors)
"""The core's drawing, and the network deployment's of its own classes under the core's."""


def _drawn(doc: str) -> dict[str, Drawn]:
    """One docstring's tree, by class name."""
    drawn: dict[str, Drawn] = {}
    path: list[str] = []  # the names on the way down to the current line
    for line in doc.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        depth = len(match["indent"]) // 2
        del path[depth:]
        also = tuple(name.strip() for name in (match["also"] or "").split(",") if name.strip())
        assert match["name"] not in drawn, f"{match['name']} is drawn twice"
        drawn[match["name"]] = Drawn(path[-1] if path else None, match["module"], also)
        path.append(match["name"])
    return drawn


def _drawing() -> dict[str, Drawn]:
    """Every drawing's classes; a class two of them show (a family a deployment draws under)
    must be drawn alike in both."""
    drawn: dict[str, Drawn] = {}
    for module in DRAWINGS:
        for name, where in _drawn(module.__doc__ or "").items():
            assert drawn.setdefault(name, where) == where, f"{name} is drawn in two places"
    return drawn


def test_the_walk_finds_the_known_families() -> None:
    # A walk that missed a package would pass the tests below vacuously.
    assert {"SkillError", "InventoryError", "ScaffoldError", "_FalseSchemaError"} <= set(CLASSES)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_exception_descends_from_the_root(name: str) -> None:
    assert issubclass(CLASSES[name], NetagentError)


def test_the_drawing_names_every_class_and_no_other() -> None:
    assert set(_drawing()) == set(CLASSES)


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_the_drawing_shows_each_class_where_it_is(name: str) -> None:
    cls, drawn = CLASSES[name], _drawing()[name]
    family = [base for base in cls.__bases__ if issubclass(base, NetagentError)]
    assert drawn.module == cls.__module__
    assert drawn.parent == (family[0].__name__ if family else None)
    others = [base for base in cls.__bases__ if base not in family and base is not Exception]
    assert drawn.also == tuple(base.__name__ for base in others)


@pytest.mark.parametrize(
    ("name", "stdlib"),
    [
        ("InventoryError", ValueError),
        ("NotRepresentableError", ValueError),
        ("SchemaCheckError", ValueError),
        ("ReferenceRefusedError", LookupError),
        ("ToolRefusedError", PermissionError),
        ("SeedError", RuntimeError),
    ],
)
def test_a_stdlib_base_is_kept_beside_the_family(name: str, stdlib: type[Exception]) -> None:
    assert issubclass(CLASSES[name], stdlib)


def test_a_false_schema_error_is_still_a_jsonschema_error() -> None:
    validator = compile_validator({"properties": {"legacy": False}})
    (error,) = validator.iter_errors({"legacy": 1})
    assert isinstance(error, ValidationError) and isinstance(error, NetagentError)
    assert best_match([error]) is error
    assert (error.message, list(error.absolute_path)) == ("false schema", ["legacy"])
