"""The network agent as a deployment of the core: its skills, the inventory tool, the console's
topology, the inventory's tables and demo data, live telemetry and the demo callers.

This is the module a fork replaces (with ``db/`` and ``skills/``) to build another domain's
agent on the same core; ``docs/adding-a-skill.md`` shows how.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import skills
from agent.base.config import flag
from agent.base.settings import Settings
from agent.console.pages import ConsolePage
from agent.console.topology import TopologyView
from agent.ports import (
    DemoCaller,
    Deployment,
    Service,
    ToolClientFactory,
    ToolEnvironment,
    ToolPort,
)
from db.migrate import INVENTORY as INVENTORY_HISTORY
from netops.identity import IDENTITY as IDENTITY  # re-exported: the card names it

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Sequence

    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.console.pages import PageSource
    from agent.ports import SkillFiles, SkillRequest
    from agent.sdk import TopologySource

log = logging.getLogger(__name__)

SKILLS_DIR = Path(skills.__file__).resolve().parent
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
INVENTORY = "inventory"
"""The inventory tool's name in manifests and its tokens' audience."""
LIVE_TELEMETRY_SECONDS = 300
LIVE_TELEMETRY_VARIABLE = "NETAGENT_LIVE_TELEMETRY"

DEMO_CALLERS = (
    DemoCaller("alice", "acme", ("inventory.read", "assurance.read", "capacity.read")),
    DemoCaller(
        "paula",
        "acme",
        ("inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"),
    ),
    DemoCaller("gary", "globex", ("inventory.read", "assurance.read", "capacity.read")),
    DemoCaller("vic", "acme", ("inventory.read",)),
    DemoCaller("nora", "acme", ("inventory.read", "assurance.read", "capacity.read", "audit.read")),
)
"""The demo's callers; nora is the tenant's operator: she reads what alice reads and, with
``audit.read``, the tenant's whole audit trail in the console."""


def connect_inventory(environment: ToolEnvironment) -> ToolClientFactory:
    """One gate per app (it checks every tool token and audits every call); a client per call."""
    from db.gate import InventoryClient, InventoryGate

    gate = InventoryGate(environment.engine, environment.verifier, environment.audit)
    return lambda token: InventoryClient(gate, token)


async def migrate_inventory(settings: Settings, engine: AsyncEngine) -> None:
    """The inventory's own Alembic history (its version table is its own)."""
    await INVENTORY_HISTORY.upgrade(settings.resolved_database_url)


async def seed_demo_inventory(settings: Settings, engine: AsyncEngine) -> None:
    """The small simulated network, on a first start only."""
    from db.simulator import is_seeded, seed

    if not await is_seeded(engine):
        report = await seed(engine, scale="small")
        rows = report.counts.items()
        counts = ", ".join(f"{n} {kind}s" for kind, n in rows if "sample" not in kind)
        log.info("seeded the demo inventory (%s scale): %s", report.scale, counts)


def live_telemetry_from(environ: Mapping[str, str]) -> bool:
    """NETAGENT_LIVE_TELEMETRY, read as the core reads its switches (on when unset or blank);
    a value that is no flag word is a ValueError naming the variable and the words."""
    return flag(environ, LIVE_TELEMETRY_VARIABLE, True)


class LiveTelemetry:
    """Demo only: extend the simulated series up to now, at start and every few minutes."""

    def __init__(self, enabled: bool, every_seconds: float = LIVE_TELEMETRY_SECONDS) -> None:
        self._enabled = enabled
        self._every = every_seconds
        self._task: asyncio.Task[None] | None = None

    async def start(self, settings: Settings, engine: AsyncEngine) -> None:
        """Runs only when enabled (NETAGENT_LIVE_TELEMETRY, unless the deployment was given)."""
        import asyncio  # in the methods: the CLI's offline commands import this module too

        if self._enabled:
            self._task = asyncio.create_task(self._loop(engine))

    async def stop(self) -> None:
        """Cancel the loop and wait for it, so no refresh runs on a closed engine."""
        import asyncio

        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _loop(self, engine: AsyncEngine) -> None:
        import asyncio

        from db.live import extend_telemetry

        while True:
            try:
                added = await extend_telemetry(engine, datetime.now(UTC))
                if added:
                    log.debug("simulated telemetry extended by %d samples", added)
            except Exception:  # a failed refresh must not take the agent down
                log.exception("could not extend the simulated telemetry")
            await asyncio.sleep(self._every)


def _topology(engine: AsyncEngine) -> TopologySource:
    from netops.topology import InventoryTopology

    return InventoryTopology(engine)


def _problems(engine: AsyncEngine) -> PageSource:
    from netops.problems import ProblemsPage

    return ProblemsPage(engine)


def _device(engine: AsyncEngine) -> PageSource:
    from netops.device_page import DevicePage

    return DevicePage(engine)


def _search(engine: AsyncEngine) -> PageSource:
    from netops.device_page import SearchPage

    return SearchPage(engine)


CONSOLE_PAGES = (
    ConsolePage(
        "problems", "Problems", "problems.html", _problems, frozenset({"site", "severity"})
    ),
    ConsolePage("search", "Search", "search.html", _search, frozenset({"q"})),
    ConsolePage("device", "", "device.html", _device, frozenset({"id"})),
)
"""What is wrong now, search by name, and a device's page (reached from the others)."""

NETWORK_VIEW = TopologyView(
    source=_topology,
    path="network",
    label="Network",
    templates=TEMPLATES_DIR,
    template="network.html",
    pages=CONSOLE_PAGES,
)
"""The console's network page: sites, devices and links, each link's utilization over time;
and its further pages (``CONSOLE_PAGES``)."""


def _services(live_telemetry: bool) -> Callable[[], Sequence[Service]]:
    return lambda: [LiveTelemetry(live_telemetry)]


class _InventoryTemplate:
    """``netagent new-skill``'s template (``netops/scaffold.py``), imported when the command
    runs: the other commands build the deployment without it."""

    def default_scopes(self, skill_id: str) -> tuple[str, ...]:
        """The template's own (reading the inventory)."""
        from netops.scaffold import InventoryTemplate

        return InventoryTemplate().default_scopes(skill_id)

    def render(self, request: SkillRequest) -> SkillFiles:
        """The template's files for ``request``."""
        from netops.scaffold import InventoryTemplate

        return InventoryTemplate().render(request)


def network_deployment(live_telemetry: bool | None = None) -> Deployment:
    """The network agent's parts, for ``agent.app.create_app`` and the ``netagent`` CLI.

    ``live_telemetry``: whether the simulated series are kept current while the agent serves;
    None reads NETAGENT_LIVE_TELEMETRY (on when unset; a value that is no flag word is a
    ValueError, as a core setting's is).
    """
    if live_telemetry is None:
        live_telemetry = live_telemetry_from(os.environ)
    return Deployment(
        identity=IDENTITY,
        skills_dir=SKILLS_DIR,
        tools=(ToolPort(INVENTORY, INVENTORY, connect_inventory),),
        migrate=migrate_inventory,
        migrated=(INVENTORY_HISTORY,),
        seed=seed_demo_inventory,
        topology=NETWORK_VIEW,
        services=_services(live_telemetry),
        demo_callers=DEMO_CALLERS,
        routing_data=Path(__file__).resolve().parent / "routing.json",
        scaffold=_InventoryTemplate(),
    )
