"""Where ``chain`` records its links: upstream task -> downstream task, in the local database.

A module of its own, without the client: ``netagent chain list`` reads the links and sends
nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.client.governed import Invocation


def correlation_row(
    workflow_id: str,
    upstream: Invocation,
    up_agent: str,
    downstream: Invocation,
    down_agent: str,
) -> dict[str, Any]:
    """One link's ``task_correlation`` row (qualified by agent and endpoint: task ids are per
    agent), whichever way it is written."""
    return {
        "ts": datetime.now(UTC),
        "workflow_id": workflow_id,
        "upstream_agent": up_agent,
        "upstream_endpoint": upstream.endpoint,
        "upstream_task_id": upstream.task_id,
        "upstream_skill": upstream.interface.skill_id,
        "downstream_agent": down_agent,
        "downstream_endpoint": downstream.endpoint,
        "downstream_task_id": downstream.task_id,
        "downstream_skill": downstream.interface.skill_id,
    }


class Correlations:
    """Somewhere ``chain`` records a link: ``record`` makes the link's row
    (``correlation_row``) and gives it to ``insert``, which each store writes its own way."""

    async def record(
        self,
        workflow_id: str,
        upstream: Invocation,
        up_agent: str,
        downstream: Invocation,
        down_agent: str,
    ) -> None:
        """Store one link."""
        await self.insert(correlation_row(workflow_id, upstream, up_agent, downstream, down_agent))

    async def insert(self, row: dict[str, Any]) -> None:
        """Store one ``correlation_row``."""
        raise NotImplementedError


class CorrelationStore(Correlations):
    """Upstream task -> downstream task links, queryable by workflow or by task.

    SQLAlchemy and the table are imported by the methods: a client that records no links
    (``netagent describe``, ``invoke``, ``check``) does not import them with ``chain``.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def insert(self, row: dict[str, Any]) -> None:
        """Store one ``correlation_row``."""
        from agent.storage.schema import task_correlation

        async with self._engine.begin() as connection:
            await connection.execute(task_correlation.insert().values(**row))

    async def query(
        self, *, workflow_id: str | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Links of a workflow, or those touching a task (as upstream or downstream)."""
        from sqlalchemy import select

        from agent.storage.schema import task_correlation

        table = task_correlation
        statement = select(table).order_by(table.c.id.desc()).limit(limit)
        if workflow_id is not None:
            statement = statement.where(table.c.workflow_id == workflow_id)
        if task_id is not None:
            statement = statement.where(
                (table.c.upstream_task_id == task_id) | (table.c.downstream_task_id == task_id)
            )
        async with self._engine.connect() as connection:
            return [dict(r) for r in (await connection.execute(statement)).mappings().all()]
