"""One real agent per fuzz module and backend, a counting client, and a crash log.

Each module is its own unit of work (it can run beside the others on another worker) and ends
with the closing checks of its target (``harness.closing_checks``).

The SDK logs every refused request (with tracebacks for parse failures); at thousands of
requests that is noise and time, so its logger is quieted while a module runs. The agent's own
loggers are watched instead: an ERROR from ``agent.*`` means an unexpected exception reached
a guard (a correlation-id answer), which the closing checks count as a crash.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BACKENDS, RunningAgent, postgres_available, start_agent, use_backend
from tests.fuzz.harness import CrashLog, Fuzzer, for_backend

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each fuzz test runs on each backend with that backend's planned number of examples
    (``harness.fuzz``): chosen here, once, so every run of an item is the same Hypothesis test."""
    for item in items:
        if not isinstance(item, pytest.Function) or item.path.parent != HERE:
            continue
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("backend") if callspec is not None else None
        if backend is not None:
            item.obj = for_backend(item.obj, str(backend))


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Every fuzz module runs on SQLite and on PostgreSQL (the share ``harness.PLANNED`` says)."""
    if request.param == "postgresql" and not postgres_available():
        pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
    use_backend(str(request.param))
    return str(request.param)


@pytest.fixture(scope="module")
def fuzz_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """A seeded agent on its default limits, for one fuzz module."""
    sdk = logging.getLogger("a2a")
    level = sdk.level
    sdk.setLevel(logging.CRITICAL)
    running = start_agent(tmp_path_factory.mktemp("fuzz-agent"), backend=backend)
    yield running
    running.stop()
    sdk.setLevel(level)


@pytest.fixture(scope="module")
def crash_log() -> Iterator[CrashLog]:
    """ERROR records of the agent's loggers while one fuzz module runs."""
    handler = CrashLog()
    logger = logging.getLogger("agent")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture(scope="module")
def fuzzer(fuzz_agent: RunningAgent, crash_log: CrashLog, backend: str) -> Iterator[Fuzzer]:
    """alice's keep-alive client; its counts are the module's request totals."""
    client = Fuzzer(fuzz_agent, backend)
    yield client
    client.client.close()
