"""What a database's schema is, read back from the database, so two databases can be compared."""

from __future__ import annotations

import re
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, MetaData, inspect, text

from agent.storage.engine import make_engine

CASTS = re.compile(r"::(?:character varying|text)(?:\[\])?")
"""PostgreSQL deparses ``x IN ('a', 'b')`` on a VARCHAR as ``x::text = ANY (ARRAY['a'::character
varying, ...]::text[])``; restored from a dump, the same check reads ``ARRAY['a'::character
varying::text, ...]``. Same constraint, other casts: they are left out of the comparison."""


def describe(connection: Connection) -> dict[str, Any]:
    """Every table's columns, keys, indexes and checks, and the triggers (and their functions)."""
    inspector = inspect(connection)
    tables: dict[str, Any] = {}
    for name in sorted(inspector.get_table_names()):
        tables[name] = {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"], c.get("default"))
                for c in inspector.get_columns(name)
            ],
            "primary_key": inspector.get_pk_constraint(name),
            "foreign_keys": sorted(
                (fk["name"] or "", tuple(fk["constrained_columns"]), fk["referred_table"])
                for fk in inspector.get_foreign_keys(name)
            ),
            "unique": sorted(
                (u["name"] or "", tuple(u["column_names"]))
                for u in inspector.get_unique_constraints(name)
            ),
            "checks": sorted(
                (c["name"] or "", CASTS.sub("", c["sqltext"]))
                for c in inspector.get_check_constraints(name)
            ),
            "indexes": sorted(
                (
                    i["name"] or "",
                    tuple(str(c) for c in i["column_names"]),
                    tuple(i.get("expressions") or ()),
                    bool(i["unique"]),
                )
                for i in inspector.get_indexes(name)
            ),
        }
    return {"tables": tables, "triggers": triggers(connection)}


def triggers(connection: Connection) -> list[tuple[str, ...]]:
    """The append-only rule lives in triggers, which the inspector does not show."""
    if connection.dialect.name == "postgresql":
        found = connection.execute(
            text(
                "SELECT tgname, pg_get_triggerdef(t.oid), p.proname, p.prosrc FROM pg_trigger t "
                "JOIN pg_proc p ON p.oid = t.tgfoid WHERE NOT t.tgisinternal ORDER BY tgname"
            )
        )
    else:
        found = connection.execute(
            text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        )
    return [tuple(row) for row in found]


def differences(connection: Connection, metadata: MetaData) -> list[Any]:
    """Alembic's autogenerate diff between the database and ``metadata``'s tables."""
    ctx = MigrationContext.configure(
        connection,
        opts={
            "compare_type": True,
            "include_name": lambda name, type_, _: type_ != "table" or name in metadata.tables,
        },
    )
    return list(compare_metadata(ctx, metadata))


async def schema_of(url: str) -> dict[str, Any]:
    """``describe`` for the database at ``url``."""
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(describe)
    finally:
        await engine.dispose()


async def metadata_differences(url: str, metadata: MetaData) -> list[Any]:
    """``differences`` for the database at ``url``."""
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(differences, metadata)
    finally:
        await engine.dispose()
