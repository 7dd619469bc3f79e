"""The local database a command reads or writes (``audit``, ``usage``, ``chain``): through
the stores ``serve`` writes with, migrated first as ``serve`` does."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from agent.cli.common import cli_settings, current_deployment, fail, require_database, run_async

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.base.settings import Settings

T = TypeVar("T")


async def on_database(work: Callable[[AsyncEngine], Awaitable[T]], database_url: str | None) -> T:
    """``work(engine)`` on the local database, migrated first (as ``netagent serve`` does)."""
    from agent.storage.engine import make_engine

    settings = cli_settings(database_url=database_url)
    await _migrate(settings)
    engine = make_engine(settings.resolved_database_url)
    try:
        return await work(engine)
    finally:
        await engine.dispose()


async def _migrate(settings: Settings) -> None:
    """The core's history, then the deployment's ``migrate``, as ``netagent serve`` runs them
    (a database at every head is left alone); a database this version cannot migrate is one
    line."""
    from agent.base.errors import ConfigurationError
    from agent.storage.engine import make_engine
    from agent.storage.schema import at_heads
    from agent.storage.schema import upgrade as upgrade_core

    if settings.database_url is None:
        settings.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.resolved_database_url)
    try:
        if await at_heads(engine, current_deployment().histories()):
            return
        await upgrade_core(settings.resolved_database_url)
        migrate = current_deployment().migrate
        if migrate is not None:
            await migrate(settings, engine)
    except ConfigurationError as exc:
        raise fail(str(exc)) from None
    finally:
        await engine.dispose()


def read_database(database_url: str | None, work: Callable[[AsyncEngine], Awaitable[T]]) -> T:
    """What a command that only reads reads, through the stores ``serve`` writes with.

    A database at every head is read at once; any other (an older revision, a deployment whose
    heads are unknown, a newer version's database) is migrated first, as ``serve`` does, which
    refuses a revision it does not know. A SQLite file that is not there is refused (exit 2):
    one made here would read as an agent that never ran.
    """
    from agent.storage.engine import sqlite_file

    settings = cli_settings(database_url=database_url)
    path = sqlite_file(settings.resolved_database_url)
    if path is None:
        return run_async(on_database(work, database_url))
    require_database(settings)
    return run_async(_read_sqlite(settings, path, work))


async def _read_sqlite(
    settings: Settings, path: Path, work: Callable[[AsyncEngine], Awaitable[T]]
) -> T:
    """``work`` on the SQLite file at ``path``, migrated first where it is not at its heads.
    In a folder this process may not write (a read-only mount) a file with nothing left in its
    WAL is read as it is (``immutable``): SQLite could not make the WAL reader's shared-memory
    file there. Whatever SQLite says of a file it cannot read is one line."""
    from sqlalchemy.exc import DBAPIError

    from agent.base.errors import ConfigurationError
    from agent.storage.engine import make_engine, read_only_sqlite_url
    from agent.storage.schema import at_heads

    url = settings.resolved_database_url
    wal = path.with_name(path.name + "-wal")
    if not os.access(path.parent, os.W_OK) and not wal.exists():
        url = read_only_sqlite_url(path)
    engine = make_engine(url)
    try:
        if not await at_heads(engine, current_deployment().histories()):
            _refuse_unwritable(path)
            await engine.dispose()  # no connection of ours open while it is migrated
            await _migrate(settings)
        return await work(engine)
    except ConfigurationError as exc:
        raise fail(str(exc)) from None
    except DBAPIError as exc:
        raise fail(f"cannot read the database {path}: {exc.orig}") from None
    finally:
        await engine.dispose()


def _refuse_unwritable(path: Path) -> None:
    """A database to make or migrate where this process may not write: one line, not
    SQLite's "unable to open database file" from inside the migration."""
    from agent.base.errors import ConfigurationError

    folder = path.parent
    if not path.exists():
        if folder.is_dir() and not os.access(folder, os.W_OK):
            raise ConfigurationError(
                f"the database {path} does not exist and {folder} cannot be written: "
                "it cannot be made here"
            )
        return
    if not (os.access(folder, os.W_OK) and os.access(path, os.W_OK)):
        raise ConfigurationError(
            f"the database {path} is not at the revisions this version reads (older, newer, "
            f"or not made by it) and {folder} cannot be written: it cannot be migrated here"
        )
