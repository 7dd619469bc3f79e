"""The fuzz plan: at least 10,000 generated requests, each target owned by a module that
checks its own share when it ends (``harness.closing_checks``)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.fuzz.harness import MINIMUM_TOTAL, PLANNED

HERE = Path(__file__).parent


def _targets_with_closing_checks() -> dict[str, str]:
    """TARGET of each fuzz module that ends with a call to closing_checks."""
    found: dict[str, str] = {}
    for path in sorted(HERE.glob("test_fuzz_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        target = next(
            (
                node.value.value
                for node in tree.body
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "TARGET" for t in node.targets)
                and isinstance(node.value, ast.Constant)
            ),
            None,
        )
        tests = [
            n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
        ]
        last = tests[-1] if tests else None
        closes = last is not None and "closing_checks" in ast.unparse(last)
        if target is not None and closes:
            found[target] = path.name
    return found


def test_the_plan_reaches_the_minimum() -> None:
    assert sum(PLANNED.values()) >= MINIMUM_TOTAL


def test_every_planned_target_has_a_module_that_checks_it_last() -> None:
    assert set(_targets_with_closing_checks()) == set(PLANNED)
