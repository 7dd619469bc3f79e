"""The console's topology page is the deployment's: its path, its name in the navigation and its
template come from a :class:`TopologyView`; the core serves it, audits each view under its path,
and keeps its own pages' paths for itself. A deployment without one has no such page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from agent.console.routes import CORE_PAGES, Console
from agent.console.topology import EdgeDetail, Graph, Group, Node, TopologyView
from agent.security.principal import Principal, PrincipalUser
from agent.storage.audit import InMemoryAuditLog

NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)
ANN = Principal("ann", "acme", frozenset())
PAGE = """{% extends "base.html" %}
{% block main %}<h1>Shelves of {{ principal.tenant }}</h1>
{% if refused %}<p>{{ refused }}</p>{% else %}<p id="count">{{ graph.nodes | length }} shelves</p>
<a id="here" href="{{ here(site='w1') }}">w1</a>{% endif %}{% endblock %}
"""


class Shelves:
    """A warehouse's topology: one aisle of two shelves."""

    async def graph(self, principal: Principal, now: datetime) -> Graph:
        group = Group("w1", "Warehouse 1", "2 shelves", "w1")
        return Graph([group], [Node("s1", "s1", "w1", 0), Node("s2", "s2", "w1", 0)], [])

    async def edge(
        self, principal: Principal, edge_id: str, since: datetime, until: datetime
    ) -> EdgeDetail | None:
        return None


def view(templates: Path, path: str = "warehouse") -> TopologyView:
    (templates / "shelves.html").write_text(PAGE, "utf-8")
    return TopologyView(lambda engine: Shelves(), path, "Warehouse", templates, "shelves.html")


def console(topology_view: TopologyView | None, audit: InMemoryAuditLog | None = None) -> Console:
    source = topology_view.source(None) if topology_view is not None else None  # type: ignore[arg-type]
    registry: Any = []
    return Console(
        registry,
        None,  # type: ignore[arg-type]
        audit or InMemoryAuditLog(),
        source,
        lambda: NOW,
        view=topology_view,
    )


class AsAnn:
    """The edge's part: the verified caller in ``scope["user"]``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["user"] = PrincipalUser(ANN)
        await self.app(scope, receive, send)


def client(served: Console) -> TestClient:
    app = Starlette(routes=served.routes(), middleware=[Middleware(AsAnn)])
    return TestClient(app, follow_redirects=False)


def test_a_deployments_page_is_served_under_its_path_in_its_words(tmp_path: Path) -> None:
    audit = InMemoryAuditLog()
    served = client(console(view(tmp_path), audit))
    assert served.get("/").headers["location"] == "/console/warehouse"
    page = served.get("/warehouse")
    assert page.status_code == 200
    assert "<h1>Shelves of acme</h1>" in page.text and '<p id="count">2 shelves</p>' in page.text
    assert 'href="/console/warehouse?site=w1&amp;window=7d"' in page.text
    assert '<a href="/console/warehouse" aria-current="page">Warehouse</a>' in page.text
    assert served.get("/network").status_code == 404
    audit_page = served.get("/audit").text
    assert '<a href="/console/warehouse">Warehouse</a>' in audit_page
    assert "console page views (<code>console · warehouse</code>) are hidden" in audit_page


async def test_each_view_is_audited_under_the_pages_path(tmp_path: Path) -> None:
    audit = InMemoryAuditLog()
    client(console(view(tmp_path), audit)).get("/warehouse")
    rows = await audit.query(tenant="acme")
    assert [(row["tool"], row["operation"]) for row in rows] == [("console", "warehouse")]


def test_without_a_view_there_is_no_page_and_the_front_is_the_skills() -> None:
    served = client(console(None))
    assert served.get("/").headers["location"] == "/console/skills"
    assert served.get("/network").status_code == 404
    assert "console · " not in served.get("/audit").text


@pytest.mark.parametrize(
    "path",
    [
        *sorted(CORE_PAGES),
        "",
        "Network",
        "a/b",
        "../audit",
        "net work",
        "network?x=1",
        "x" * 33,
        "ré",
        "1st",
        "-x",
        "net\x00",
    ],
)
def test_a_path_that_is_the_consoles_own_or_no_word_is_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(ValueError, match="topology page's path"):
        console(view(tmp_path, path))


def test_a_view_and_its_source_come_together(tmp_path: Path) -> None:
    shown = view(tmp_path)
    registry: Any = []
    with pytest.raises(ValueError, match="needs its view"):
        Console(registry, None, InMemoryAuditLog(), Shelves(), lambda: NOW)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs its view"):
        Console(registry, None, InMemoryAuditLog(), None, lambda: NOW, view=shown)  # type: ignore[arg-type]
