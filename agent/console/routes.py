"""The console's pages and its two small JSON endpoints.

Every page is rendered on the server for the verified caller in ``request.scope["user"]`` (set
by the edge from the session cookie or a bearer header) and reads only through the agent's
governed paths: cards and policy for what the caller may see, the registry's compiled
validators, the caller's own tasks over the agent's A2A endpoint with the caller's token, the
audit log restricted to the caller's tenant, and a domain :class:`TopologySource`.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import jwt
from a2a.types import InvalidParamsError
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from agent.base.settings import Limits
from agent.console.export import csv_response
from agent.console.pages import ConsolePage, PageAnswer, PageSource, page_query
from agent.console.recent_views import RecentViews, is_refresh
from agent.console.results import error_summary, summarize
from agent.console.ring_layout import overview
from agent.console.schemas import BRANCHING, explain, form, summary, tree
from agent.console.session import PREFIX, session_cookie
from agent.console.site_layout import site_view
from agent.console.tasks import (
    SKILL_PAGES,
    STATES,
    TASK_PAGE_SIZE,
    TaskFilters,
    read_filters,
    task_view,
)
from agent.console.topology import (
    CHART_HEIGHT,
    CHART_PAD,
    CHART_WIDTH,
    DEFAULT_WINDOW,
    FIGURES_LIMIT,
    LINK_FILTERS,
    WINDOWS,
    Edge,
    EdgeDetail,
    Graph,
    TopologyRefusedError,
    TopologySource,
    TopologyView,
    busiest_now,
    drawing_filters,
    group_of,
    hover_bands,
    link_page,
    load_class,
    polyline,
    time_ticks,
)
from agent.edge.limits import check_json
from agent.edge.strings import queryable
from agent.interfaces import EXTENSION_URI, error_details
from agent.interfaces.order import in_schema_order
from agent.registry.cards import JSONRPC_PATH, CardFactory, card_to_json
from agent.registry.loader import Capability, Registry
from agent.registry.policy import entitled, visible
from agent.security.principal import Principal, principal_of
from agent.storage.audit import NOT_FOUND, AuditLog, AuditRecord

log = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
AUDIT_SCOPE = "audit.read"
"""Holders see their whole tenant's audit trail; everyone else only their own rows."""
AUDIT_LIMIT = 200
AUDIT_EXPORT_LIMIT = 10_000
"""The newest rows a CSV of the audit trail holds (the page shows AUDIT_LIMIT)."""
CONSOLE_TOOL = "console"
"""The audit rows the console writes itself (one per topology page view)."""
CORE_PAGES = frozenset({"login", "logout", "skills", "try", "tasks", "audit", "api", "static"})
"""The console's own paths: a deployment's topology page takes another."""
_PAGE_PATH = re.compile(r"[a-z][a-z0-9-]{0,31}", re.ASCII)
FIT_LIMIT = 30
"""Up to this many sites the overview is scaled to the page; past it, it keeps its size (its
labels stay readable) and scrolls in its box."""
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
LOOKBACK_UNITS = {"m": 60, "h": 3600, "d": 86400}
_LOOKBACK = re.compile(r"([0-9]{1,12})([mhd])", re.ASCII)


def _own_path(path: str, taken: set[str], page: str = "console page") -> str:
    """A deployment page's path, when it is one lower-case word no other page has."""
    if path in taken or not _PAGE_PATH.fullmatch(path):
        raise ValueError(f"the {page}'s path {path!r} is the console's, taken or no word")
    return path


def _secure_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"  # no-referrer would send Origin: null
    return response


def _since(value: str, now: datetime) -> datetime | None:
    """An ISO time (UTC when no offset) or a look-back such as 30m, 24h, 7d; None if neither.

    Look-backs are ASCII digits only (``str.isdigit`` also takes superscripts, which ``int``
    refuses), and a time is kept only when it is a moment every backend can store in UTC:
    anything before 0001-01-01 or after 9999-12-31 in UTC (a far look-back, an offset that
    pushes the year out of range) is no time at all.
    """
    value = value.strip()
    lookback = _LOOKBACK.fullmatch(value)
    try:
        if lookback is not None:
            amount, unit = lookback.groups()
            return now - timedelta(seconds=int(amount) * LOOKBACK_UNITS[unit])
        moment = datetime.fromisoformat(value)
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _keyed(items: Any) -> dict[str, Any] | None:
    """A list of objects each named by ``id`` or ``skill_id``, as a mapping; else None."""
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return None
    keys = [i.get("id", i.get("skill_id")) for i in items]
    if not all(isinstance(k, str) for k in keys) or len(set(keys)) != len(keys):
        return None
    return dict(zip(keys, items, strict=True))


def _diff(public: Any, extended: Any, path: str = "") -> list[tuple[str, str, str]]:
    """Leaf differences between two JSON values, as (path, public, extended).

    Objects are compared member by member, lists of named objects (skills, bindings) name by
    name, other lists of one length item by item, so a difference is shown where it is.
    """
    found: list[tuple[str, str, str]] = []
    if isinstance(public, dict) and isinstance(extended, dict):
        for key in sorted(set(public) | set(extended)):
            found += _diff(public.get(key), extended.get(key), f"{path}.{key}" if path else key)
        return found
    if public == extended:
        return []
    named_public, named_extended = _keyed(public), _keyed(extended)
    if named_public is not None and named_extended is not None:
        for name in sorted(set(named_public) | set(named_extended)):
            found += _diff(named_public.get(name), named_extended.get(name), f"{path}[{name}]")
        return found
    if isinstance(public, list) and isinstance(extended, list) and len(public) == len(extended):
        for index, (a, b) in enumerate(zip(public, extended, strict=True)):
            found += _diff(a, b, f"{path}[{index}]")
        return found

    def show(value: Any) -> str:
        text = "(absent)" if value is None else json.dumps(value, sort_keys=True)
        return text if len(text) <= 240 else text[:237] + "..."

    return [(path, show(public), show(extended))]


def _same_reference(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two Schema References name the same schema (docs/schema-interfaces.md)."""
    return all(a.get(k) == b.get(k) for k in ("schema_uri", "version", "dialect", "digest"))


UNQUERYABLE = "Filters may not contain U+0000 or unpaired surrogates."
UNREACHABLE = "the console cannot reach this agent's A2A endpoint (it listens on no TCP address)"
UNANSWERED = "this agent's A2A endpoint did not answer the console"


def own_client(timeout: float | httpx.Timeout) -> httpx.AsyncClient:
    """A client for this agent's own endpoint (``_agent_base``), carrying the caller's token:
    nothing from the environment applies (no ``HTTP_PROXY``, no netrc), the request goes
    straight to the address the agent listens on and never leaves its host."""
    return httpx.AsyncClient(timeout=timeout, trust_env=False)


def _agent_base(request: Request) -> str | None:
    """This server's own address for the connection at hand, to reach its A2A endpoint.

    None when the server listens on no TCP address (a Unix socket): there is nothing to call.
    """
    server = request.scope.get("server")
    if not server or server[1] is None:
        return None
    host, port = server
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _a2a_headers(request: Request, stream: bool = False) -> dict[str, str]:
    return {
        "Authorization": request.headers["authorization"],
        "A2A-Version": "1.0",
        "A2A-Extensions": EXTENSION_URI,
        "Content-Type": "application/json",
        "Accept": "text/event-stream" if stream else "application/json",
    }


class Console:
    """The console's handlers, holding the agent's shared pieces."""

    def __init__(
        self,
        registry: Registry,
        cards: CardFactory,
        audit: AuditLog,
        topology: TopologySource | None,
        clock: Callable[[], datetime],
        limits: Limits | None = None,
        *,
        view: TopologyView | None = None,
        pages: Sequence[tuple[ConsolePage, PageSource]] = (),
    ) -> None:
        """``topology`` and ``view`` come together (``view.source`` built ``topology``): the
        page's data, and its path, name and template (the deployment's words); ``pages``: the
        view's further pages, each with the source its ``source`` built."""
        if (topology is None) != (view is None):
            raise ValueError("the console's topology needs its view, and the view its topology")
        taken = set(CORE_PAGES)
        for path in [view.path] if view is not None else []:
            taken.add(_own_path(path, taken, "topology page"))
        for page, _ in pages:
            taken.add(_own_path(page.path, taken))
        self.pages = list(pages)
        self.limits = limits or Limits()
        self.registry = registry
        self.cards = cards
        self.audit = audit
        self.recent_views = RecentViews()
        self.topology = topology
        self.view = view
        self.clock = clock
        folders = [HERE / "templates", *([view.templates] if view is not None else [])]
        self.templates = Jinja2Templates(directory=folders)
        self.templates.env.globals["topology_page"] = (
            (view.path, view.label) if view is not None else None
        )
        self.templates.env.globals["deployment_pages"] = [
            (page.path, page.label) for page, _ in self.pages if page.label
        ]

    # ------------------------------------------------------------------ helpers

    def _page(
        self, request: Request, name: str, status: int = 200, *, view: str = "", **context: Any
    ) -> Response:
        """``view``: the page's path, for the navigation (default: the template's name)."""
        return self._render(request, name, status, view, context)

    def _render(
        self, request: Request, name: str, status: int, view: str, context: dict[str, Any]
    ) -> Response:
        """The template with ``context`` (any keys: a deployment's page names its own) and the
        console's own, which win."""
        principal = principal_of(request.scope.get("user"))
        context = context | {
            "principal": principal,
            "scopes": sorted(principal.scopes),
            "prefix": PREFIX,
            "view": view or name.removesuffix(".html"),
        }
        response = self.templates.TemplateResponse(request, name, context, status_code=status)
        return _secure_headers(response)

    def _artifact_schema(self, skill_id: str, kind: str) -> dict[str, Any] | None:
        """The schema of a skill's result (``kind`` ``result``) or of one of its record kinds."""
        capability = self.registry.get(skill_id)
        if capability is None or capability.interface is None:
            return None
        document = capability.interface.document
        if kind == "result":
            reference = document["output_schema"]
        else:
            reference = document.get("supporting_record_schemas", {}).get(kind)
        schema = reference["resolution"]["schema"] if reference else None
        return schema if isinstance(schema, dict) else None

    def _visible(self, principal: Principal) -> list[Capability]:
        return [c for c in self.registry if visible(c.manifest, principal)]

    def _capability(self, principal: Principal, skill_id: str) -> Capability | None:
        capability = self.registry.get(skill_id)
        if capability is None or not visible(capability.manifest, principal):
            return None
        return capability

    def _over_limits(self, arguments: Any, where: str = "arguments") -> Response | None:
        """Arguments past the A2A endpoint's limits for a Data Part: 400, naming the limit."""
        try:
            check_json(arguments, self.limits, [where])
        except InvalidParamsError as refusal:
            error = {"code": "invalid_params", "message": refusal.message, **(refusal.data or {})}
            return _secure_headers(JSONResponse({"error": error}, status_code=400))
        return None

    @staticmethod
    def _principal(request: Request) -> Principal:
        return principal_of(request.scope.get("user"))

    # ------------------------------------------------------------------- session

    async def login_page(self, request: Request) -> Response:
        """The token form; the token goes in a POST header, never in a URL."""
        expired = request.query_params.get("expired") == "1"
        return self._page(request, "login.html", expired=expired)

    async def login(self, request: Request) -> Response:
        """Set the session cookie from the bearer token the edge has just verified."""
        principal = self._principal(request)
        if not principal.authenticated or not principal.token:
            return JSONResponse(
                {"error": {"code": "unauthenticated", "message": "send Authorization: Bearer"}},
                status_code=401,
            )
        claims = jwt.decode(principal.token, options={"verify_signature": False})
        max_age = int(claims.get("exp", 0)) - int(datetime.now(UTC).timestamp())
        response = JSONResponse({"subject": principal.subject, "tenant": principal.tenant})
        secure = request.url.scheme == "https"
        response.headers["Set-Cookie"] = session_cookie(principal.token, max_age, secure)
        return _secure_headers(response)

    async def home(self, request: Request) -> Response:
        """The topology page is the console's front page; the skills, for a domain without one."""
        front = self.view.path if self.view is not None else "skills"
        return RedirectResponse(f"{PREFIX}/{front}", status_code=303)

    # ------------------------------------------------------------------ topology

    def _topology_page(self, request: Request, status: int = 200, **context: Any) -> Response:
        assert self.view is not None  # the route exists only with a view
        return self._page(request, self.view.template, status, view=self.view.path, **context)

    async def topology_page(self, request: Request) -> Response:
        """The overview (groups and bundles) or one group's view, the edges table, and the
        selected edge's capacity and chart of its series (the deployment's template words them)."""
        assert self.topology is not None and self.view is not None
        principal = self._principal(request)
        now = self.clock()
        q = TopologyQuery.read(request.query_params)
        if not all(map(queryable, (q.link_id, q.site_id, q.peer_id, q.text))):
            return self._topology_page(request, status=400, refused=UNQUERYABLE)
        try:
            graph = await self.topology.graph(principal, now)
            detail = None
            if q.link_id:
                since = now - WINDOWS[q.window]
                detail = await self.topology.edge(principal, q.link_id, since, now)
        except TopologyRefusedError as exc:
            return self._topology_page(request, status=403, refused=str(exc))
        site = site_view(graph, q.site_id) if q.site_id else None
        missing = bool(q.link_id and detail is None) or bool(q.site_id and site is None)
        await self._audit_view(principal, missing, (q.site_id, q.link_id))
        edges = _edges_in_view(graph, q.site_id if site is not None else "", q.peer_id)
        if request.query_params.get("format") == "csv":
            return _links_csv(edges, q.text, q.load, self.view.path)
        return self._topology_page(
            request,
            status=404 if missing else 200,
            graph=graph,
            drawing=None if site is not None else overview(graph),
            fit_limit=FIT_LIMIT,
            filters=drawing_filters(graph),
            figures_limit=FIGURES_LIMIT,
            site=site,
            site_id=q.site_id,
            peer_id=q.peer_id,
            table=link_page(edges, text=q.text, load=q.load, page=q.page),
            text=q.text,
            load=q.load,
            link_filters=LINK_FILTERS,
            here=q.linker(f"{PREFIX}/{self.view.path}", site is not None),
            link_id=q.link_id,
            detail=detail,
            detail_load=load_class(detail.edge) if detail else "",
            load_of=load_class,
            chart=_chart(detail, now - WINDOWS[q.window], now) if detail else None,
            window=q.window,
            windows=list(WINDOWS),
            chart_box=(CHART_WIDTH, CHART_HEIGHT, CHART_PAD),
            busiest_now=busiest_now(edges),
        )

    async def _audit_view(
        self, principal: Principal, missing: bool, resources: tuple[str, ...]
    ) -> None:
        """One audit row per view of the topology page; a thing not found is said as such."""
        assert self.view is not None
        await self.audit.write(
            AuditRecord(
                principal=principal.subject,
                tenant=principal.tenant,
                tool=CONSOLE_TOOL,
                operation=self.view.path,
                decision="deny" if missing else "allow",
                reason=NOT_FOUND if missing else "ok",
                resource_ids=tuple(i for i in resources if i),
            )
        )

    # ---------------------------------------------------------- deployment pages

    async def deployment_page(
        self, page: ConsolePage, source: PageSource, request: Request
    ) -> Response:
        """One of the deployment's pages: its source's answer in its template, audited."""
        principal = self._principal(request)
        query = page_query(request.query_params, page.accepts)
        if not all(map(queryable, query.values())):
            return self._page(request, page.template, 400, view=page.path, refused=UNQUERYABLE)
        try:
            answer = await source(principal, query, self.clock())
        except TopologyRefusedError as exc:
            return self._page(request, page.template, 403, view=page.path, refused=str(exc))
        await self._audit_page_view(request, principal, page.path, query, answer)
        status = 404 if answer.missing else 200
        context = {**answer.context, "query": query}
        return self._render(request, page.template, status, page.path, context)

    async def _audit_page_view(
        self,
        request: Request,
        principal: Principal,
        path: str,
        query: Mapping[str, str],
        answer: PageAnswer,
    ) -> None:
        """One audit row per view of a deployment's page; its live refreshes write none while
        the view they refresh was audited a moment ago (agent/console/recent_views.py)."""
        view = (principal.tenant, principal.subject, path, tuple(sorted(query.items())))
        if is_refresh(request) and self.recent_views.covers(view):
            return
        await self.audit.write(
            AuditRecord(
                principal=principal.subject,
                tenant=principal.tenant,
                tool=CONSOLE_TOOL,
                operation=path,
                decision="deny" if answer.missing else "allow",
                reason=NOT_FOUND if answer.missing else "ok",
                resource_ids=answer.named,
            )
        )
        self.recent_views.audited(view)

    # -------------------------------------------------------------------- skills

    async def skills(self, request: Request) -> Response:
        """Public and extended card side by side, and each visible skill's interface."""
        principal = self._principal(request)
        public = card_to_json(self.cards.public_card)
        extended = card_to_json(self.cards.extended_card(principal))
        public_ids = [s["id"] for s in public.get("skills", [])]
        extended_ids = [s["id"] for s in extended.get("skills", [])]
        # (each card's signature is over its own content: they always differ, and say nothing)
        compared = ("skills", "signatures")
        rest = {k: v for k, v in public.items() if k not in compared}
        differences = _diff(rest, {k: v for k, v in extended.items() if k not in compared})
        skills = []
        for capability in self._visible(principal):
            manifest = capability.manifest
            interface = capability.interface
            document = interface.document if interface is not None else None
            skills.append(
                {
                    "id": capability.id,
                    "name": manifest.skill.get("name", capability.id),
                    "description": manifest.skill.get("description", ""),
                    "state": manifest.state.value,
                    "replacement": manifest.replacement,
                    "visibility": manifest.visibility.value,
                    "requires": sorted(manifest.requires_scopes),
                    "tenants": sorted(manifest.tenants) if manifest.tenants else ["*"],
                    "entitled": entitled(manifest, principal),
                    "on_public": capability.id in public_ids,
                    "document": document,
                    "digest": interface.interface_digest if interface is not None else "",
                    "input": tree(document["input_schema"]["resolution"]["schema"])
                    if document
                    else None,
                    "output": tree(document["output_schema"]["resolution"]["schema"])
                    if document
                    else None,
                    "records": [
                        (kind, ref, tree(ref["resolution"]["schema"]))
                        for kind, ref in sorted(document["supporting_record_schemas"].items())
                    ]
                    if document
                    else [],
                    "json": json.dumps(document, indent=2) if document else "",
                }
            )
        return self._page(
            request,
            "skills.html",
            public=public,
            extended=extended,
            public_ids=public_ids,
            extended_ids=extended_ids,
            only_extended=[i for i in extended_ids if i not in public_ids],
            differences=differences,
            public_json=json.dumps(public, indent=2),
            extended_json=json.dumps(extended, indent=2),
            skills=skills,
        )

    # -------------------------------------------------------------------- try it

    async def try_page(self, request: Request) -> Response:
        """A form generated from the chosen skill's input schema."""
        principal = self._principal(request)
        usable = [c for c in self._visible(principal) if entitled(c.manifest, principal)]
        chosen_id = request.query_params.get("skill", "")
        then = request.query_params.get("then", "")
        chosen = next((c for c in usable if c.id == chosen_id), None)
        fields = None
        alternatives: tuple[str, list[str]] | None = None
        feeds: list[str] = []
        producers: list[str] = []
        if chosen is not None and chosen.interface is not None:
            document = chosen.interface.document
            schema = document["input_schema"]["resolution"]["schema"]
            fields = form(schema)
            choice = next((k for k in BRANCHING if isinstance(schema, dict) and k in schema), "")
            alternatives = (choice, [summary(b) for b in schema[choice]]) if choice else None
            # Skills whose input is exactly this one's output (the composition rule: the same
            # Schema Reference) can take its result as their arguments.
            feeds = [
                c.id
                for c in usable
                if c.interface is not None
                and _same_reference(c.interface.document["input_schema"], document["output_schema"])
            ]
            # And the skills whose output is this one's input: a person fills theirs by hand.
            producers = [
                c.id
                for c in usable
                if c.interface is not None
                and _same_reference(c.interface.document["output_schema"], document["input_schema"])
            ]
        return self._page(
            request,
            "try.html",
            status=404 if chosen_id and chosen is None else 200,
            usable=usable,
            chosen=chosen,
            chosen_id=chosen_id,
            fields=fields,
            alternatives=alternatives,
            feeds=feeds,
            producers=producers,
            then=then if then in feeds else "",
        )

    async def validate(self, request: Request) -> Response:
        """Validate arguments with the skill's own compiled input validator (as the executor)."""
        principal = self._principal(request)
        body = await _json_body(request)
        capability = self._capability(principal, str(body.get("skill", "")))
        if capability is None or capability.interface is None:
            return _secure_headers(
                JSONResponse({"error": {"code": "skill_not_advertised"}}, status_code=404)
            )
        refused = self._over_limits(body.get("arguments"))
        if refused is not None:
            return refused
        validator = capability.interface.input_validator
        details: list[dict[str, Any]] = list(error_details(validator, body.get("arguments")))
        schema = capability.interface.document["input_schema"]["resolution"]["schema"]
        for detail in details:  # a oneOf/anyOf failure says which alternative failed, and why
            explain(validator, schema, body.get("arguments"), detail)
        return _secure_headers(JSONResponse({"valid": not details, "details": details}))

    async def summary(self, request: Request) -> Response:
        """A result (or a task's error object) in one line, as the tasks page shows it, for
        the Try-it page to lead with (agent/console/results.py)."""
        body = await _json_body(request)
        refused = self._over_limits(body)
        if refused is not None:
            return refused
        line = error_summary(body["error"]) if "error" in body else summarize(body.get("result"))
        return _secure_headers(JSONResponse({"summary": line}))

    async def ordered(self, request: Request) -> Response:
        """A run's artifacts in their schemas' member order, for the Try-it page to print (a
        Struct keeps no order; the CLI prints the same order, agent/interfaces/order.py):
        ``{"skill", "artifacts": [{"artifactId", "name", "data"}]}`` -> the same, ordered."""
        principal = self._principal(request)
        body = await _json_body(request)
        capability = self._capability(principal, str(body.get("skill", "")))
        artifacts = body.get("artifacts")
        if capability is None:
            return _secure_headers(
                JSONResponse({"error": {"code": "skill_not_advertised"}}, status_code=404)
            )
        if not isinstance(artifacts, list):
            error = {"code": "invalid_params", "message": "'artifacts' must be a list"}
            return _secure_headers(JSONResponse({"error": error}, status_code=400))
        refused = self._over_limits(artifacts, "artifacts")
        if refused is not None:
            return refused
        ordered = [
            {
                "artifactId": str(a.get("artifactId", "")),
                "data": in_schema_order(a.get("data"), self._artifact_schema(capability.id, kind)),
            }
            for a in artifacts
            if isinstance(a, dict)
            for kind in ["result" if a.get("artifactId") == "result" else str(a.get("name", ""))]
        ]
        return _secure_headers(JSONResponse({"artifacts": ordered}))

    async def invoke(self, request: Request) -> Response:
        """Relay SendStreamingMessage to the agent's own A2A endpoint with the caller's token."""
        principal = self._principal(request)
        body = await _json_body(request)
        capability = self._capability(principal, str(body.get("skill", "")))
        if capability is None or capability.interface is None:
            return _secure_headers(
                JSONResponse({"error": {"code": "skill_not_advertised"}}, status_code=404)
            )
        refused = self._over_limits(body.get("arguments"))
        if refused is not None:
            return refused
        interface = capability.interface
        payload = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": {
                "message": {
                    "messageId": f"console-{uuid.uuid4().hex}",
                    "role": "ROLE_USER",
                    "parts": [
                        {
                            "mediaType": "application/json",
                            "data": {
                                "skill": capability.id,
                                "skill_version": interface.skill_version,
                                "interface_digest": interface.interface_digest,
                                "arguments": body.get("arguments"),
                            },
                        }
                    ],
                },
                "configuration": {"acceptedOutputModes": ["application/json"]},
            },
        }
        base = _agent_base(request)
        if base is None:
            error = {"error": {"code": "unavailable", "message": UNREACHABLE}}
            return _secure_headers(JSONResponse(error, status_code=503))
        url = base + JSONRPC_PATH
        headers = _a2a_headers(request, stream=True)
        return _secure_headers(
            StreamingResponse(_relay(url, headers, payload), media_type="text/event-stream")
        )

    # --------------------------------------------------------------------- tasks

    async def tasks(self, request: Request) -> Response:
        """The caller's tasks, asked of the agent's A2A endpoint (ListTasks), newest first,
        filtered by state, skill and time, a page at a time."""
        principal = self._principal(request)
        params = request.query_params
        skills = sorted(c.id for c in self._visible(principal))
        if not all(map(queryable, params.values())):
            return self._tasks_page(request, TaskFilters(problem=UNQUERYABLE), skills, 400)
        since_text = params.get("since", "").strip()
        since = _since(since_text, datetime.now(UTC)) if since_text else None
        filters = read_filters(params, set(skills), since, since_text)
        base = _agent_base(request)
        if base is None:
            error = {"message": UNREACHABLE}
            return self._tasks_page(request, filters, skills, 503, error=error)
        try:
            tasks, next_token, error = await self._list_tasks(request, base, filters)
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("console tasks page: ListTasks failed: %s", type(exc).__name__)
            error = {"message": UNANSWERED}
            return self._tasks_page(request, filters, skills, 503, error=error)
        status = 400 if error and filters.page_token else 200
        return self._tasks_page(
            request, filters, skills, status, tasks=tasks, next_token=next_token, error=error
        )

    def _tasks_page(
        self,
        request: Request,
        filters: TaskFilters,
        skills: list[str],
        status: int = 200,
        **context: Any,
    ) -> Response:
        context = {"tasks": [], "next_token": "", "error": None} | context
        return self._page(
            request,
            "tasks.html",
            status,
            filters=filters,
            skills=skills,
            states=STATES,
            page_size=TASK_PAGE_SIZE,
            link=lambda **changes: f"{PREFIX}/tasks?{urlencode(filters.query(**changes))}",
            **context,
        )

    async def _list_tasks(
        self, request: Request, base: str, filters: TaskFilters
    ) -> tuple[list[dict[str, Any]], str, Any]:
        """One console page of the caller's tasks: ListTasks pages until it is full (with a
        skill filter, at most SKILL_PAGES of them), the token of the next, any error."""
        found: list[dict[str, Any]] = []
        token = filters.page_token
        async with own_client(timeout=30) as client:
            for _ in range(SKILL_PAGES if filters.skill else 1):
                params = filters.params(token)
                payload = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
                answer = await client.post(
                    base + JSONRPC_PATH, json=payload, headers=_a2a_headers(request)
                )
                reply = answer.json()
                if not isinstance(reply, dict):
                    raise ValueError("ListTasks answered no object")
                if reply.get("error"):
                    return found, "", reply["error"]
                result = reply.get("result") or {}
                views = [task_view(t, self._artifact_schema) for t in result.get("tasks", [])]
                found += [v for v in views if not filters.skill or v["skill"] == filters.skill]
                token = str(result.get("nextPageToken") or "")
                if not token or len(found) >= TASK_PAGE_SIZE:
                    break
        found.sort(key=lambda t: t["timestamp"], reverse=True)  # newest first, as ListTasks
        return found, token, None

    # --------------------------------------------------------------------- audit

    async def audit_page(self, request: Request) -> Response:
        """The audit trail of the caller's tenant (own rows only without audit.read)."""
        principal = self._principal(request)
        params = request.query_params
        task = params.get("task", "").strip()
        since_text = params.get("since", "").strip()
        whole_tenant = AUDIT_SCOPE in principal.scopes
        who = params.get("principal", "").strip() if whole_tenant else principal.subject
        since = _since(since_text, datetime.now(UTC)) if since_text else None
        # The console records every topology page view; they would bury everything else, so
        # the page leaves them out unless asked (a task filter shows its rows whatever tool).
        views = params.get("views") == "1"
        problem = (
            "Since takes an ISO time or a look-back like 30m, 24h, 7d."
            if since_text and since is None
            else ""
        )
        if not all(map(queryable, (task, who))):
            return self._page(
                request,
                "audit.html",
                status=400,
                rows=[],
                task="",
                who="",
                since=since_text,
                whole_tenant=whole_tenant,
                problem=UNQUERYABLE,
                limit=AUDIT_LIMIT,
                audit_scope=AUDIT_SCOPE,
                views=views,
                not_found=NOT_FOUND,
                export_limit=AUDIT_EXPORT_LIMIT,
            )
        export = params.get("format") == "csv"
        rows = await self.audit.query(
            tenant=principal.tenant,
            principal=who or None,
            task_id=task or None,
            since=since,
            limit=AUDIT_EXPORT_LIMIT if export else AUDIT_LIMIT,
            exclude_tool=None if views or task else CONSOLE_TOOL,
        )
        if export:
            return _secure_headers(_audit_csv(rows, principal.tenant or "tenant"))
        return self._page(
            request,
            "audit.html",
            rows=rows,
            task=task,
            who=who,
            since=since_text,
            whole_tenant=whole_tenant,
            problem=problem,
            limit=AUDIT_LIMIT,
            audit_scope=AUDIT_SCOPE,
            views=views,
            not_found=NOT_FOUND,
            export_limit=AUDIT_EXPORT_LIMIT,
        )

    def routes(self) -> list[Route | Mount]:
        """The console's routing table, relative to its mount point."""
        topology = []
        if self.view is not None:
            topology = [Route(f"/{self.view.path}", self.topology_page, methods=["GET"])]
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/login", self.login_page, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            *topology,
            *[
                Route(f"/{page.path}", partial(self.deployment_page, page, source), methods=["GET"])
                for page, source in self.pages
            ],
            Route("/skills", self.skills, methods=["GET"]),
            Route("/try", self.try_page, methods=["GET"]),
            Route("/tasks", self.tasks, methods=["GET"]),
            Route("/audit", self.audit_page, methods=["GET"]),
            Route("/api/validate", self.validate, methods=["POST"]),
            Route("/api/invoke", self.invoke, methods=["POST"]),
            Route("/api/summary", self.summary, methods=["POST"]),
            Route("/api/ordered", self.ordered, methods=["POST"]),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]


def _links_csv(edges: list[Edge], text: str, load: str, path: str) -> Response:
    """Every edge the table's filters match (not one page), in the table's order, as CSV."""
    table = link_page(edges, text=text, load=load, page=1, size=max(len(edges), 1))
    rows = [
        (e.id, e.label, e.status, e.capacity, f"{e.ratio * 100:.1f}" if e.ratio is not None else "")
        for e in table.rows
    ]
    header = ("id", "ends", "status", "capacity", "load_percent_now")
    return _secure_headers(csv_response(header, rows, f"{path}-links.csv"))


AUDIT_COLUMNS = (
    "time_utc",
    "principal",
    "acting",
    "skill",
    "skill_version",
    "task",
    "tool",
    "operation",
    "resources",
    "decision",
    "reason",
)


def _audit_csv(rows: list[dict[str, Any]], tenant: str) -> Response:
    """The audit rows asked for, newest first, as CSV (a not-found check reads "not found")."""
    lines = [
        (
            r["ts"].strftime("%Y-%m-%dT%H:%M:%SZ"),
            r["principal"],
            " > ".join(r["actor_chain"] or ()),
            r["skill_id"] or "",
            r["skill_version"] or "",
            r["task_id"] or "",
            r["tool"],
            r["operation"],
            " ".join(r["resource_ids"] or ()),
            "not found" if (r["decision"], r["reason"]) == ("deny", NOT_FOUND) else r["decision"],
            r["reason"],
        )
        for r in rows
    ]
    return csv_response(AUDIT_COLUMNS, lines, f"audit-{tenant}.csv")


@dataclass(frozen=True)
class TopologyQuery:
    """What the topology page was asked for, read leniently (an unknown window or load filter
    is the default, a page that is no small number is the first)."""

    window: str
    link_id: str
    site_id: str
    peer_id: str
    text: str
    load: str
    page: int

    @classmethod
    def read(cls, params: Mapping[str, str]) -> TopologyQuery:
        window = params.get("window", DEFAULT_WINDOW)
        load = params.get("load", "")
        site_id = params.get("site", "")
        page_text = params.get("page", "1")
        plain = page_text.isascii() and page_text.isdigit() and len(page_text) <= 9
        return cls(
            window=window if window in WINDOWS else DEFAULT_WINDOW,
            link_id=params.get("link", ""),
            site_id=site_id,
            peer_id=params.get("peer", "") if site_id else "",
            text=params.get("q", ""),
            load=load if load in LINK_FILTERS else "",
            page=int(page_text) if plain else 1,
        )

    def linker(self, base: str, in_site: bool) -> Callable[..., str]:
        """The page's own address with some of its query changed (``here(link=...)``)."""
        state = {
            "site": self.site_id if in_site else "",
            "peer": self.peer_id if in_site else "",
            "q": self.text,
            "load": self.load,
            "window": self.window,
            "link": self.link_id,
        }

        def here(fragment: str = "", **changes: Any) -> str:
            merged = {k: v for k, v in (state | changes).items() if v not in ("", None, 1)}
            query = urlencode(merged)
            return base + (f"?{query}" if query else "") + fragment

        return here


def _edges_in_view(graph: Graph, site_id: str, peer_id: str) -> list[Edge]:
    """The edges a view shows: all of them, a group's, or those between a group and a peer."""
    edges: list[Edge] = list(graph.edges)
    if not site_id:
        return edges
    groups = group_of(graph)
    edges = [e for e in edges if site_id in (groups.get(e.a), groups.get(e.b))]
    if peer_id:
        edges = [e for e in edges if peer_id in (groups.get(e.a), groups.get(e.b))]
    return edges


def _chart(detail: EdgeDetail, since: datetime, now: datetime) -> dict[str, Any] | None:
    """The selected edge's chart: a polyline per series, time ticks, hover bands."""
    if not detail.series:
        return None
    return {
        "lines": [(s.name, polyline(s.points, since, now)) for s in detail.series],
        "since": since.strftime("%Y-%m-%d %H:%M"),
        "until": now.strftime("%Y-%m-%d %H:%M UTC"),
        "peak": max((p[1] for s in detail.series for p in s.points), default=0.0),
        "ticks": time_ticks(since, now),
        "bands": hover_bands(detail.series, since, now),
    }


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


async def _relay(
    url: str, headers: dict[str, str], payload: dict[str, Any]
) -> AsyncIterator[bytes]:
    """The agent's SSE stream, as is; a plain JSON answer (an error) becomes one SSE event."""
    try:
        async with (
            own_client(timeout=httpx.Timeout(30, read=None)) as client,
            client.stream("POST", url, json=payload, headers=headers) as upstream,
        ):
            if upstream.headers.get("content-type", "").startswith("text/event-stream"):
                async for chunk in upstream.aiter_raw():
                    yield chunk
                return
            body = (await upstream.aread()).decode("utf-8", "replace")
            yield f"data: {json.dumps(json.loads(body)) if body else '{}'}\n\n".encode()
    except (httpx.HTTPError, ValueError) as exc:
        log.warning("console relay failed: %s", type(exc).__name__)
        error = {"error": {"code": -32603, "message": "the agent's endpoint could not be reached"}}
        yield f"data: {json.dumps(error)}\n\n".encode()
