"""The inventory gate on a real seeded SQLite database: scopes, tokens, tenants, audit."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DatabaseError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.base.settings import Settings
from agent.security.auth import SIGNING_ALGORITHM, SigningKey, TokenVerifier, issue_token
from agent.security.auth import load_or_create_signing_key as load_key
from agent.security.credentials import AGENT_SUBJECT, TOOL_ISSUER, LocalIssuer, ToolTokenVerifier
from agent.server.skill_context import ToolRefusedError
from agent.storage.audit import DatabaseAuditLog, principal_audit
from agent.storage.engine import make_engine
from agent.storage.schema import upgrade as upgrade_core
from db.gate import InventoryClient, InventoryGate
from db.inventory import Inventory, InventoryError
from db.migrate import upgrade
from db.simulator import seed
from tests.conftest import FIXED_NOW

FOREIGN_LINK = "globex-lnk-00006"
TOPOLOGY = frozenset(
    {
        "sites",
        "devices",
        "device",
        "interfaces",
        "links",
        "link",
        "link_between",
        "resource_exists",
    }
)
# Written out here, not read from db.gate, so a change to the product's table shows up.
ALLOWED: dict[str, frozenset[str]] = {
    "inventory.read": TOPOLOGY,
    "assurance.read": TOPOLOGY | {"latest_metric", "latest_link_utilization"},
    "capacity.read": TOPOLOGY | {"utilization_samples"},
    "capacity.plan": TOPOLOGY | {"utilization_samples", "hot_links"},
}
TELEMETRY = {"latest_metric", "latest_link_utilization", "utilization_samples", "hot_links"}
OPERATIONS = sorted(TOPOLOGY | TELEMETRY)


@dataclass
class World:
    engine: AsyncEngine
    settings: Settings
    key: SigningKey
    issuer: LocalIssuer
    gate: InventoryGate
    acme: dict[str, str]
    globex: dict[str, str]

    def tool_token(self, scopes: list[str], subject: str = "alice", tenant: str = "acme") -> str:
        caller = issue_token(self.key, self.settings, subject=subject, tenant=tenant, scopes=scopes)
        return self.issuer.exchange_tokens(
            subject_token=caller,
            actor_token=self.issuer.agent_credential(),
            audience="inventory",
            scopes=scopes,
            context={"skill_id": "probe", "task_id": uuid.uuid4().hex},
        ).access_token


async def _resources(engine: AsyncEngine, tenant: str, link_id: str) -> dict[str, str]:
    inventory = Inventory(engine, tenant)
    link = await inventory.link(link_id)
    assert link is not None
    device = await inventory.device(link["a_device"])
    assert device is not None
    (interface, *_) = await inventory.interfaces(link["a_device"])
    return {
        "link": link_id,
        "a_device": link["a_device"],
        "b_device": link["b_device"],
        "device_resource_id": device["resource_id"],
        "interface_resource_id": interface["resource_id"],
    }


@pytest.fixture(scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    home: Path = tmp_path_factory.mktemp("gate")
    url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
    await upgrade_core(url)
    await upgrade(url)
    engine = make_engine(url)
    await seed(engine, scale="small", until=FIXED_NOW)
    settings = Settings(home=home)
    key = load_key(home)
    issuer = LocalIssuer(key, TokenVerifier(settings, key), audiences={"inventory"})
    verifier = ToolTokenVerifier("inventory", TOOL_ISSUER, key=key.private_key.public_key())
    gate = InventoryGate(engine, verifier, DatabaseAuditLog(engine))
    acme = await _resources(engine, "acme", "acme-lnk-00001")
    globex = await _resources(engine, "globex", FOREIGN_LINK)
    yield World(engine, settings, key, issuer, gate, acme, globex)
    await engine.dispose()


def call_arguments(operation: str, resources: dict[str, str]) -> tuple[tuple, dict]:
    """Valid arguments for each read, naming the given tenant's resources."""
    return {
        "sites": ((), {}),
        "devices": ((), {}),
        "device": ((resources["a_device"],), {}),
        "interfaces": ((resources["a_device"],), {}),
        "links": ((), {"device": resources["a_device"]}),
        "link": ((resources["link"],), {}),
        "link_between": ((resources["a_device"], resources["b_device"]), {}),
        "resource_exists": ((resources["device_resource_id"],), {}),
        "latest_metric": ((resources["device_resource_id"], "cpu"), {}),
        "latest_link_utilization": ((resources["link"],), {}),
        "utilization_samples": (
            (resources["link"],),
            {"since": FIXED_NOW - timedelta(hours=1), "until": FIXED_NOW},
        ),
        "hot_links": ((0.5,), {"since": FIXED_NOW - timedelta(days=7)}),
    }[operation]


async def all_rows(engine: AsyncEngine) -> list[dict[str, Any]]:
    async with engine.connect() as connection:
        result = await connection.execute(select(principal_audit).order_by(principal_audit.c.id))
        return [dict(r) for r in result.mappings()]


async def last_id(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int(
            await connection.scalar(select(func.coalesce(func.max(principal_audit.c.id), 0)))
        )


async def rows_after(engine: AsyncEngine, after: int) -> list[dict[str, Any]]:
    return [r for r in await all_rows(engine) if r["id"] > after]


def token_id(token: str) -> str:
    return jwt.decode(token, options={"verify_signature": False})["jti"]


def assert_no_token_text(row: dict[str, Any], token: str) -> None:
    """No column of the row holds the token, or either of its signed halves."""
    pieces = [p for p in token.split(".") if len(p) > 8] + [token]
    for column, value in row.items():
        rendered = json.dumps(value, default=str)
        for piece in pieces:
            assert piece not in rendered, f"token text in audit column {column!r}"


# -- scopes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("scope", sorted(ALLOWED))
async def test_each_operation_needs_its_scope(world: World, scope: str, operation: str) -> None:
    token = world.tool_token([scope])
    args, kwargs = call_arguments(operation, world.acme)
    before = await last_id(world.engine)
    if operation in ALLOWED[scope]:
        result = await world.gate.call(token, operation, *args, **kwargs)
        assert result, f"{scope} may call {operation}, which should find the acme resource"
        (row,) = await rows_after(world.engine, before)
        assert (row["decision"], row["reason"]) == ("allow", "ok")
    else:
        with pytest.raises(ToolRefusedError, match="insufficient_scope"):
            await world.gate.call(token, operation, *args, **kwargs)
        (row,) = await rows_after(world.engine, before)
        assert (row["decision"], row["reason"]) == ("deny", "insufficient_scope")
    assert row["principal"] == "alice" and row["tenant"] == "acme"
    assert row["tool"] == "inventory" and row["operation"] == operation
    assert row["actor_chain"] == [AGENT_SUBJECT]
    assert row["token_id"] == token_id(token)
    assert row["skill_id"] == "probe" and row["task_id"]
    assert_no_token_text(row, token)


@pytest.mark.parametrize(
    ("scope", "operation"),
    [
        ("inventory.read", "latest_metric"),
        ("inventory.read", "utilization_samples"),
        ("inventory.read", "hot_links"),
        ("assurance.read", "utilization_samples"),
        ("assurance.read", "hot_links"),
        ("capacity.read", "hot_links"),
        ("capacity.read", "latest_metric"),
    ],
)
async def test_telemetry_stays_with_its_own_scope(world: World, scope: str, operation: str) -> None:
    """The examples from the design, spelled out."""
    args, kwargs = call_arguments(operation, world.acme)
    with pytest.raises(ToolRefusedError):
        await world.gate.call(world.tool_token([scope]), operation, *args, **kwargs)


async def test_scopes_are_unioned_not_required_together(world: World) -> None:
    token = world.tool_token(["inventory.read", "assurance.read"])
    args, kwargs = call_arguments("latest_metric", world.acme)
    assert await world.gate.call(token, "latest_metric", *args, **kwargs)
    args, kwargs = call_arguments("utilization_samples", world.acme)
    with pytest.raises(ToolRefusedError):
        await world.gate.call(token, "utilization_samples", *args, **kwargs)


@pytest.mark.parametrize("operation", ["exists", "_rows", "__init__", "delete", "seed", "tenant"])
async def test_unknown_operations_are_refused_and_audited(world: World, operation: str) -> None:
    token = world.tool_token(sorted(ALLOWED))
    before = await last_id(world.engine)
    with pytest.raises(ToolRefusedError, match="unknown operation"):
        await world.gate.call(token, operation)
    (row,) = await rows_after(world.engine, before)
    assert (row["decision"], row["reason"], row["operation"]) == (
        "deny",
        "unknown operation",
        operation,
    )


# -- refused tokens ------------------------------------------------------------------------------


def _refused_tokens(world: World, stranger: SigningKey) -> dict[str, tuple[str, str]]:
    """Each refused token, with the subject it claims (as the audit row must show it)."""
    now = int(time.time())

    def claims(**changes: Any) -> dict[str, Any]:
        base = {
            "iss": TOOL_ISSUER,
            "sub": "alice",
            "tenant": "acme",
            "aud": "inventory",
            "scope": "inventory.read",
            "act": {"sub": AGENT_SUBJECT},
            "iat": now,
            "exp": now + 120,
            "jti": uuid.uuid4().hex,
        }
        return base | changes

    def signed(key: SigningKey, body: dict[str, Any]) -> str:
        return jwt.encode(body, key.private_key, SIGNING_ALGORITHM, {"kid": key.kid})

    none_header = jwt.utils.base64url_encode(json.dumps({"alg": "none"}).encode()).decode()
    none_body = jwt.utils.base64url_encode(json.dumps(claims(sub="mallory")).encode()).decode()
    caller = issue_token(
        world.key, world.settings, subject="vic", tenant="acme", scopes=["inventory.read"]
    )
    return {
        "expired": (signed(world.key, claims(exp=now - 600, iat=now - 900)), "alice"),
        "foreign": (signed(stranger, claims(sub="eve", tenant="globex")), "eve"),
        "wrong-audience": (signed(world.key, claims(aud="telemetry")), "alice"),
        "alg-none": (f"{none_header}.{none_body}.", "mallory"),
        "the-callers-own-token": (caller, "vic"),
        "the-agent-credential": (world.issuer.agent_credential(), AGENT_SUBJECT),
        "no-tenant": (
            signed(world.key, {k: v for k, v in claims().items() if k != "tenant"}),
            "alice",
        ),
        "garbage": ("garbage-token-text-0123456789", "?"),
        "empty": ("", "?"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "expired",
        "foreign",
        "wrong-audience",
        "alg-none",
        "the-callers-own-token",
        "the-agent-credential",
        "no-tenant",
        "garbage",
        "empty",
    ],
)
async def test_a_refused_token_is_audited_as_unverified_without_its_text(
    world: World, tmp_path: Path, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    token, claimed = _refused_tokens(world, load_key(tmp_path / "stranger"))[case]
    before = await last_id(world.engine)
    with (
        caplog.at_level(logging.INFO, logger="netagent.audit"),
        pytest.raises(ToolRefusedError) as caught,
    ):
        await world.gate.call(token, "link", world.acme["link"])
    (row,) = await rows_after(world.engine, before)
    assert row["principal"] == f"unverified:{claimed}"
    assert row["tenant"] is None
    assert row["decision"] == "deny"
    assert row["reason"].startswith("token refused: ")
    assert row["operation"] == "link" and row["resource_ids"] == [world.acme["link"]]
    assert row["actor_chain"] == []
    assert row["task_id"] is None and row["skill_id"] is None
    if token:
        assert_no_token_text(row, token)
        assert token not in str(caught.value)
        for record in caplog.records:
            assert token not in record.getMessage()


async def test_no_audit_row_anywhere_holds_a_token(world: World) -> None:
    """After all the calls above (and a few more), scan the whole table for JWT-shaped text."""
    token = world.tool_token(["inventory.read"])
    await world.gate.call(token, "sites")
    rows = await all_rows(world.engine)
    assert rows
    for row in rows:
        rendered = json.dumps(row, default=str)
        assert "eyJ" not in rendered, f"JWT-looking text in audit row {row['id']}"


# -- tenancy comes from the token ----------------------------------------------------------------


async def test_another_tenants_link_is_absent_and_audited(world: World) -> None:
    token = world.tool_token(["inventory.read"])
    before = await last_id(world.engine)
    assert await world.gate.call(token, "link", FOREIGN_LINK) is None
    (row,) = await rows_after(world.engine, before)
    assert row["principal"] == "alice" and row["tenant"] == "acme"
    assert (row["decision"], row["reason"]) == ("deny", "not found in the caller's tenant")
    assert row["resource_ids"] == [FOREIGN_LINK]
    globex = world.tool_token(["inventory.read"], subject="gary", tenant="globex")
    found = await world.gate.call(globex, "link", FOREIGN_LINK)
    assert found is not None and found["link_id"] == FOREIGN_LINK


@pytest.mark.parametrize(
    "operation", ["device", "link", "link_between", "resource_exists", "interfaces"]
)
async def test_every_point_lookup_of_a_foreign_resource_looks_absent(
    world: World, operation: str
) -> None:
    token = world.tool_token(["inventory.read"])
    args, kwargs = call_arguments(operation, world.globex)
    before = await last_id(world.engine)
    assert not await world.gate.call(token, operation, *args, **kwargs)
    (row,) = await rows_after(world.engine, before)
    assert row["tenant"] == "acme"
    if operation != "interfaces":  # a list read: empty is an allowed answer
        assert (row["decision"], row["reason"]) == ("deny", "not found in the caller's tenant")
        assert row["resource_ids"] == list(args)


async def test_telemetry_of_a_foreign_resource_is_never_returned(world: World) -> None:
    token = world.tool_token(["assurance.read", "capacity.plan"])
    args, kwargs = call_arguments("latest_metric", world.globex)
    assert await world.gate.call(token, "latest_metric", *args, **kwargs) is None
    args, kwargs = call_arguments("latest_link_utilization", world.globex)
    assert await world.gate.call(token, "latest_link_utilization", *args, **kwargs) is None
    args, kwargs = call_arguments("latest_link_utilization", world.acme)
    assert await world.gate.call(token, "latest_link_utilization", *args, **kwargs) is not None
    args, kwargs = call_arguments("utilization_samples", world.globex)
    assert await world.gate.call(token, "utilization_samples", *args, **kwargs) == []
    args, kwargs = call_arguments("hot_links", world.acme)
    hot = await world.gate.call(token, "hot_links", *args, **kwargs)
    assert hot and all(h["link_id"].startswith("acme-") for h in hot)


async def test_lists_hold_only_the_token_tenants_rows(world: World) -> None:
    acme = world.tool_token(["inventory.read"])
    globex = world.tool_token(["inventory.read"], subject="gary", tenant="globex")
    acme_links = {r["link_id"] for r in await world.gate.call(acme, "links")}
    globex_links = {r["link_id"] for r in await world.gate.call(globex, "links")}
    assert acme_links and globex_links and not acme_links & globex_links
    assert all(link.startswith("acme-") for link in acme_links)
    acme_devices = {d["resource_id"] for d in await world.gate.call(acme, "devices")}
    assert world.globex["device_resource_id"] not in acme_devices
    assert world.acme["device_resource_id"] in acme_devices


async def test_a_handler_cannot_name_the_tenant(world: World) -> None:
    token = world.tool_token(["inventory.read"])
    with pytest.raises(TypeError):
        await world.gate.call(token, "links", tenant="globex")


async def test_a_call_the_inventory_rejects_is_still_audited(world: World) -> None:
    """The gate promises a row whether it allowed or refused; an erroring call is no exception.

    (evaluate_resource_condition's handler relies on InventoryError for ambiguous device
    names, so such calls happen in normal operation.)
    """
    token = world.tool_token(["inventory.read"])
    before = await last_id(world.engine)
    with pytest.raises(InventoryError):
        await world.gate.call(token, "devices", role="no-such-role")
    rows = await rows_after(world.engine, before)
    assert [(r["operation"], r["token_id"]) for r in rows] == [("devices", token_id(token))]


# -- the audit trail itself ----------------------------------------------------------------------


async def _a_row(world: World) -> int:
    await world.gate.call(world.tool_token(["inventory.read"]), "sites")
    return await last_id(world.engine)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE principal_audit SET decision = 'allow', reason = 'ok' WHERE id = :id",
        "UPDATE principal_audit SET principal = 'someone-else' WHERE id = :id",
        "DELETE FROM principal_audit WHERE id = :id",
        "DELETE FROM principal_audit",
    ],
)
async def test_the_audit_trail_refuses_updates_and_deletes(world: World, statement: str) -> None:
    row_id = await _a_row(world)
    before = await all_rows(world.engine)
    with pytest.raises(DatabaseError, match="append-only"):
        async with world.engine.begin() as connection:
            await connection.execute(text(statement), {"id": row_id})
    assert await all_rows(world.engine) == before


async def test_the_audit_trail_cannot_be_rewritten_by_replace(world: World) -> None:
    """INSERT OR REPLACE deletes the old row without firing SQLite's delete trigger."""
    row_id = await _a_row(world)
    before = await all_rows(world.engine)
    try:
        async with world.engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT OR REPLACE INTO principal_audit (id, ts, tenant, principal,"
                    " actor_chain, tool, operation, resource_ids, decision, reason)"
                    " VALUES (:id, '2000-01-01 00:00:00', 'acme', 'someone-else', '[]',"
                    " 'inventory', 'sites', '[]', 'allow', 'ok')"
                ),
                {"id": row_id},
            )
    except DatabaseError:
        pass
    assert await all_rows(world.engine) == before


# -- the client a handler holds ------------------------------------------------------------------


async def test_the_client_exposes_the_read_operations_only(world: World) -> None:
    async def source() -> str:
        raise AssertionError("looking up an attribute must not exchange a token")

    client = InventoryClient(world.gate, source)
    for operation in OPERATIONS:
        assert callable(getattr(client, operation))
    for name in ("exists", "tenant", "_rows", "_engine", "execute", "seed", "__call__", "write"):
        with pytest.raises(AttributeError):
            getattr(client, name)


async def test_the_client_exchanges_once_and_presents_the_token(world: World) -> None:
    issued: list[str] = []

    async def source() -> str:
        issued.append(world.tool_token(["inventory.read"]))
        return issued[-1]

    client = InventoryClient(world.gate, source)
    before = await last_id(world.engine)
    assert await client.link(world.acme["link"])
    assert await client.sites()
    assert await client.link(FOREIGN_LINK) is None
    with pytest.raises(ToolRefusedError):
        await client.hot_links(0.5, since=FIXED_NOW - timedelta(days=1))
    assert len(issued) == 1
    rows = await rows_after(world.engine, before)
    assert [r["operation"] for r in rows] == ["link", "sites", "link", "hot_links"]
    assert [r["decision"] for r in rows] == ["allow", "allow", "deny", "deny"]
    assert {r["token_id"] for r in rows} == {token_id(issued[0])}
