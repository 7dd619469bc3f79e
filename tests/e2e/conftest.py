"""End-to-end fixtures: a real agent on loopback and Debian's headless Chromium (Playwright).

Chromium comes from the system (``/usr/bin/chromium``, installed by ``.ci/run``); Playwright's
own browser downloads are never used. Under ``CI=true`` a missing browser fails the run;
elsewhere the browser tests skip, saying why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BACKENDS, RunningAgent, postgres_available, start_agent

CHROMIUM = Path(os.environ.get("NETAGENT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(
    os.environ.get("NETAGENT_SCREENSHOTS", Path(__file__).resolve().parent / "screenshots")
)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs the end-to-end browser: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The console tests run once on SQLite and once on PostgreSQL, like the integration suite."""
    if request.param == "postgresql" and not postgres_available():
        pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
    return str(request.param)


@pytest.fixture(scope="module")
def console_agent(
    tmp_path_factory: pytest.TempPathFactory, backend: str, _agents_use_backend: None
) -> Iterator[RunningAgent]:
    """One seeded agent per module and backend (its clock stands still at FIXED_NOW).

    Module scope, after ``_agents_use_backend``, so that start_agent already follows the
    backend of this round when the agent starts.
    """
    running = start_agent(tmp_path_factory.mktemp("console-home"), backend=backend)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(console_agent: RunningAgent) -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright's sync API.

    It needs the agent first: Playwright's sync API keeps an event loop running in this
    thread, and seeding the agent's database (``asyncio.run``) cannot start inside it.
    """
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package playwright is missing (pip install -e '.[test]')")
    from playwright.sync_api import expect

    # Waiting, not timing: assertions retry until true, and CI's two cores may be busy.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) per test, at a desktop size."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the run saves one screenshot per view ($NETAGENT_SCREENSHOTS to move it)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
