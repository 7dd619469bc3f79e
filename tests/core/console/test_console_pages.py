"""A deployment's further console pages (agent/console/pages.py), with a warehouse's words: the
core serves each under its path, hands it only the query values it reads (cut, and refused when
no backend binds them), audits each view, and keeps paths apart."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agent.console.pages import MAX_QUERY_VALUE, ConsolePage, PageAnswer
from agent.console.routes import Console
from agent.console.topology import TopologyRefusedError
from agent.security.principal import Principal
from agent.storage.audit import InMemoryAuditLog
from tests.core.console.test_topology_view import NOW, Shelves, client, view

BIN = """{% extends "base.html" %}
{% block main %}{% if refused %}<p id="refused">{{ refused }}</p>{% else %}
<p id="bin">{{ name }} {{ query | dictsort }}</p>{% endif %}{% endblock %}
"""


class Bins:
    """A bin page: ``id`` names one of two bins; ``locked`` is refused."""

    seen: list[Mapping[str, str]] = []

    async def __call__(
        self, principal: Principal, query: Mapping[str, str], now: datetime
    ) -> PageAnswer:
        Bins.seen.append(dict(query))
        ref = query.get("id", "")
        if ref == "locked":
            raise TopologyRefusedError("bins need the scope stock.read")
        missing = bool(ref) and ref not in ("b1", "b2")
        return PageAnswer({"name": ref or "all bins"}, named=(ref,) if ref else (), missing=missing)


def served(tmp_path: Path, audit: InMemoryAuditLog, *pages: ConsolePage) -> TestClient:
    (tmp_path / "bin.html").write_text(BIN, "utf-8")
    registry: Any = []
    console = Console(
        registry,
        None,  # type: ignore[arg-type]
        audit,
        Shelves(),
        lambda: NOW,
        view=view(tmp_path),
        pages=[(page, page.source(None)) for page in pages],  # type: ignore[arg-type]
    )
    return client(console)


BIN_PAGE = ConsolePage("bin", "Bins", "bin.html", lambda engine: Bins(), frozenset({"id"}))


async def test_a_page_answers_in_its_template_and_each_view_is_audited(tmp_path: Path) -> None:
    audit = InMemoryAuditLog()
    pages = served(tmp_path, audit, BIN_PAGE)
    found = pages.get("/bin", params={"id": " b1 ", "other": "not handed"})
    assert found.status_code == 200
    assert "b1 [(&#39;id&#39;, &#39;b1&#39;)]" in found.text  # stripped; "other" never handed
    assert '<a href="/console/bin" aria-current="page">Bins</a>' in found.text
    assert pages.get("/bin", params={"id": "b9"}).status_code == 404
    refused = pages.get("/bin", params={"id": "locked"})
    assert refused.status_code == 403 and "bins need the scope stock.read" in refused.text
    rows = await audit.query(tenant="acme")
    assert [(r["operation"], r["decision"], r["resource_ids"]) for r in rows] == [
        ("bin", "deny", ["b9"]),
        ("bin", "allow", ["b1"]),
    ]
    assert rows[0]["reason"] == "not found in the caller's tenant"


@pytest.mark.parametrize("value", ["a\x00b", "\x00"])
def test_a_value_no_backend_binds_is_refused_before_the_source_runs(
    tmp_path: Path, value: str
) -> None:
    Bins.seen.clear()
    answer = served(tmp_path, InMemoryAuditLog(), BIN_PAGE).get("/bin", params={"id": value})
    assert answer.status_code == 400 and "U+0000" in answer.text
    assert Bins.seen == []


def test_a_long_value_is_cut(tmp_path: Path) -> None:
    Bins.seen.clear()
    served(tmp_path, InMemoryAuditLog(), BIN_PAGE).get("/bin", params={"id": "é" * 10_000})
    assert Bins.seen == [{"id": "é" * MAX_QUERY_VALUE}]


def test_a_page_without_a_label_is_served_but_not_in_the_navigation(tmp_path: Path) -> None:
    hidden = ConsolePage("bin", "", "bin.html", lambda engine: Bins(), frozenset())
    pages = served(tmp_path, InMemoryAuditLog(), hidden)
    assert pages.get("/bin").status_code == 200
    assert 'href="/console/bin"' not in pages.get("/bin").text


@pytest.mark.parametrize("path", ["warehouse", "tasks", "static", "Bin", "b/in", ""])
def test_a_path_taken_by_the_view_or_the_console_or_no_word_is_refused(
    tmp_path: Path, path: str
) -> None:
    page = ConsolePage(path, "X", "bin.html", lambda engine: Bins())
    with pytest.raises(ValueError, match="console page's path"):
        served(tmp_path, InMemoryAuditLog(), page)
    with pytest.raises(ValueError, match="console page's path"):
        served(tmp_path, InMemoryAuditLog(), BIN_PAGE, BIN_PAGE)
