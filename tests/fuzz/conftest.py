"""One real agent for the whole fuzz session, a counting client, and a crash log.

The SDK logs every refused request (with tracebacks for parse failures); at thousands of
requests that is noise and time, so its logger is quieted for the session. The agent's own
loggers are watched instead: an ERROR from ``agent.*`` means an unexpected exception reached
a guard (a correlation-id answer), which the totals test counts as a crash.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.conftest import RunningAgent, start_agent
from tests.fuzz.harness import Fuzzer


class CrashLog(logging.Handler):
    """Keeps the ERROR records the agent's own modules log."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="session")
def fuzz_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """A seeded agent on its default limits, shared by every fuzz module."""
    sdk = logging.getLogger("a2a")
    level = sdk.level
    sdk.setLevel(logging.CRITICAL)
    running = start_agent(tmp_path_factory.mktemp("fuzz-agent"), backend=backend)
    yield running
    running.stop()
    sdk.setLevel(level)


@pytest.fixture(scope="session")
def crash_log() -> Iterator[CrashLog]:
    """ERROR records of the agent's loggers during the fuzz session."""
    handler = CrashLog()
    logger = logging.getLogger("agent")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture(scope="session")
def fuzzer(fuzz_agent: RunningAgent, crash_log: CrashLog) -> Iterator[Fuzzer]:
    """alice's keep-alive client; its counts are the session's request totals."""
    client = Fuzzer(fuzz_agent)
    yield client
    client.client.close()
