"""The fuzz plan: what each target covers on each backend, and how many examples it runs.

Every target runs on SQLite and on PostgreSQL (``conftest.py`` parametrizes each module's
agent). SQLite runs the whole plan, at least 10,000 requests. PostgreSQL runs ``hostile`` in
full (its classes are about the database) and a planned share of the others, weighted to the
requests that reach the database (task ids and filters looked up, tasks stored); requests the
edge or a parser refuses before any query run there only as a sample, since the backend
cannot change their answer. Each test's count per backend is its own ``max_examples``
(``harness.fuzz``), fixed at collection. The closing checks (the planned requests sent, 0 5xx
or -32603, no crash logged, the agent still works, no task lost) and each test's own checks
(no echoed input beyond the bounded pointers; the markers of ``messages`` and ``hostile``
never in an error) hold on both backends.

What each target covers:

* ``jsonrpc``: envelopes, params of every method, mutated SendMessage params, garbage and
  truncated bodies, odd A2A headers. PostgreSQL: mostly params of every method and send params.
* ``rest``: every HTTP+JSON route and method with odd ids, tenants, query parameters and
  bodies; send bodies; bytes and versions. PostgreSQL: mostly routes and send bodies.
* ``skill_arguments``: arguments that break each skill's input schema, broken skill requests,
  arguments past the message limits. PostgreSQL: mostly schema mutations (stored tasks).
* ``messages``: each message limit at each place, malformed messages, plain text, lone
  surrogates. PostgreSQL: mostly plain text (stored tasks) and lone surrogates.
* ``body_limits``: oversize, deep and junk bodies, all refused before any query.
  PostgreSQL: a sample.
* ``hostile``: issue 18's classes (NUL everywhere, console pages and APIs, follow-ups racing a
  cancel, non-object arguments). The same on both.

Examples per test and requests planned per target (``test_the_table_is_the_code`` checks it):

```
test                                                         sqlite  postgresql
body_limits::test_oversize_bodies                               150          15
body_limits::test_deep_bodies                                   600          30
body_limits::test_junk_within_the_limit                         500          30
body_limits: requests planned                                  1250          75
hostile::test_nul_in_every_a2a_string                           200         200
hostile::test_nul_in_every_rest_query_parameter                  80          80
hostile::test_console_pages                                      80          80
hostile::test_console_apis                                       60          60
hostile: requests planned                                       480         480
jsonrpc::test_envelopes                                         700          80
jsonrpc::test_params_of_every_method                            600         200
jsonrpc::test_send_params                                       600         150
jsonrpc::test_garbage_bytes                                    1100          50
jsonrpc::test_truncated_requests                                400          25
jsonrpc::test_headers                                           400          25
jsonrpc: requests planned                                      3800         530
messages::test_limits_name_the_limit_and_the_place              700          60
messages::test_malformed_messages                               200          40
messages::test_plain_text                                       200          80
messages::test_lone_surrogates                                  100          40
messages: requests planned                                     1200         220
rest::test_routes                                              1800         300
rest::test_send_bodies                                          600         100
rest::test_bytes_and_versions                                   500          25
rest: requests planned                                         2900         425
skill_arguments::test_arguments_that_break_the_input_schema     800         150
skill_arguments::test_broken_skill_requests                     300          40
skill_arguments::test_arguments_beyond_the_message_limits       200          20
skill_arguments: requests planned                              1300         210
total requests planned                                        10930        1940
```
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.conftest import BACKENDS
from tests.fuzz.harness import MINIMUM_TOTAL, PLANNED, TASKS_AT_LEAST, for_backend

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


def _modules() -> dict[str, ModuleType]:
    """Each target's module, imported."""
    return {
        target: importlib.import_module(f"tests.fuzz.{name.removesuffix('.py')}")
        for target, name in _targets_with_closing_checks().items()
    }


def _fuzz_tests(module: ModuleType) -> list[tuple[str, Any]]:
    """(name, test) of the module's ``@fuzz`` tests, in source order."""
    return [
        (name, value)
        for name, value in vars(module).items()
        if name.startswith("test_") and hasattr(value, "fuzz_examples")
    ]


def _table() -> str:
    """The plan's table, from the code."""
    rows = [("test", "sqlite", "postgresql")]
    for target, module in sorted(_modules().items()):
        for name, test in _fuzz_tests(module):
            counts = test.fuzz_examples
            rows.append((f"{target}::{name}", counts["sqlite"], counts["postgresql"]))
        rows.append((f"{target}: requests planned", *PLANNED[target].values()))
    totals = [sum(PLANNED[t][b] for t in PLANNED) for b in ("sqlite", "postgresql")]
    rows.append(("total requests planned", *totals))
    width = max(len(str(row[0])) for row in rows) + 2
    return "\n".join(f"{a:<{width}}{b:>6}{c:>12}" for a, b, c in rows)


def test_the_plan_reaches_the_minimum(backend: str) -> None:
    assert sum(PLANNED[target][backend] for target in PLANNED) >= MINIMUM_TOTAL[backend]


def test_every_planned_target_has_a_module_that_checks_it_last(backend: str) -> None:
    assert set(_targets_with_closing_checks()) == set(PLANNED)
    assert all(set(PLANNED[target]) == set(BACKENDS) for target in PLANNED)
    assert all(set(TASKS_AT_LEAST[target]) == set(BACKENDS) for target in TASKS_AT_LEAST)


def test_the_table_is_the_code() -> None:
    assert _table() in __doc__, _table()


def test_each_backend_runs_its_own_count(backend: str) -> None:
    """What the collection hook runs: the same test, with this backend's max_examples and the
    rest of its settings unchanged."""
    for module in _modules().values():
        for name, test in _fuzz_tests(module):
            chosen = for_backend(test, backend)
            settings = chosen._hypothesis_internal_use_settings
            assert settings.max_examples == test.fuzz_examples[backend], name
            assert settings.derandomize and settings.database is None and settings.deadline is None
            assert chosen.hypothesis.inner_test is test.hypothesis.inner_test
            if test.fuzz_examples[backend] == test.fuzz_examples["sqlite"]:
                assert chosen is test
