"""The core's tables, on one ``MetaData``: what ``agent/storage/migrations`` builds and checks.

The stores (bindings, audit, the client's correlations) import their table from here, and the
core's Alembic environment targets ``metadata``, so autogenerate and the schema test compare the
database with exactly these definitions. The SDK's own task tables are not here: the SDK
creates and migrates them itself.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, Index, Integer, LargeBinary, MetaData, String, Table, Text

from agent.storage.types import UTCDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""The first deployment's convention: databases made while it migrated these tables keep
their names."""

metadata = MetaData(naming_convention=NAMING_CONVENTION)

task_binding = Table(
    "task_binding",
    metadata,
    Column("task_id", String(64), primary_key=True),
    Column("owner", String(255), nullable=False),
    Column("phase", String(16), nullable=False),
    Column("skill_id", String(64), nullable=True),
    Column("candidates", JSON, nullable=False),
    Column("arguments", JSON, nullable=False),
    Column("text", Text, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

principal_audit = Table(
    "principal_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", UTCDateTime, nullable=False),
    Column("tenant", String(64)),
    Column("principal", String(255), nullable=False),
    Column("actor_chain", JSON, nullable=False),
    Column("skill_id", String(64)),
    Column("skill_version", String(16)),
    Column("interface_digest", String(80)),
    Column("task_id", String(64)),
    Column("tool", String(64), nullable=False),
    Column("operation", String(64), nullable=False),
    Column("resource_ids", JSON, nullable=False),
    Column("decision", String(8), nullable=False),
    Column("reason", String(255), nullable=False),
    Column("token_id", String(64)),
    Column("projection", String(8)),
    Index("ix_principal_audit_ts", "ts"),
    Index("ix_principal_audit_task", "task_id"),
    Index("ix_principal_audit_principal", "tenant", "principal", "ts"),
    Index("ix_principal_audit_skill", "skill_id", "ts"),
)
"""Append-only: the migrations add triggers that refuse updates and deletes."""

task_correlation = Table(
    "task_correlation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", UTCDateTime, nullable=False),
    Column("workflow_id", String(64), nullable=False),
    Column("upstream_agent", String(512), nullable=False),
    Column("upstream_endpoint", String(512), nullable=False),
    Column("upstream_task_id", String(64), nullable=False),
    Column("upstream_skill", String(64), nullable=False),
    Column("downstream_agent", String(512), nullable=False),
    Column("downstream_endpoint", String(512), nullable=False),
    Column("downstream_task_id", String(64), nullable=False),
    Column("downstream_skill", String(64), nullable=False),
    Index("ix_task_correlation_workflow", "workflow_id"),
    Index("ix_task_correlation_upstream", "upstream_task_id"),
    Index("ix_task_correlation_downstream", "downstream_task_id"),
)


replica_lease = Table(
    "replica_lease",
    metadata,
    Column("replica", String(64), primary_key=True),
    Column("started_at", UTCDateTime, nullable=False),
    Column("heartbeat_at", UTCDateTime, nullable=False),
    Index("ix_replica_lease_heartbeat_at", "heartbeat_at"),
)
"""One row per serving process sharing the database: its lease, renewed by a heartbeat."""

task_runner = Table(
    "task_runner",
    metadata,
    Column("task_id", String(64), primary_key=True),
    Column("replica", String(64), nullable=False),
    Column("owner", String(255), nullable=False),
    Column("principal", String(255), nullable=False),
    Column("tenant", String(64), nullable=True),
    Column("skill_id", String(64), nullable=True),
    Column("since", UTCDateTime, nullable=False),
    Index("ix_task_runner_replica", "replica"),
)
"""Which process runs a task whose id has reached a client before it settled.

Written with the task's first durable (accepted) state, deleted with its settled state, in
the same transaction; a survivor ends the tasks of a replica whose lease expired, and the
principal, tenant and skill here are what the audit row of such a task names.
"""
push_notification_configs = Table(
    "push_notification_configs",
    metadata,
    Column("task_id", String(36), primary_key=True),
    Column("config_id", String(255), primary_key=True),
    Column("config_data", LargeBinary, nullable=False),
    Column("owner", String(255), nullable=True),
    Column("protocol_version", String(16), nullable=True),
    Index("ix_push_notification_configs_owner", "owner"),
)
"""The a2a-sdk's push config table (``DatabasePushNotificationConfigStore`` reads and writes
it, as its model declares it), made here by a migration so that it exists before any replica
serves and the outbox's triggers can read it."""

push_outbox = Table(
    "push_outbox",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_id", String(36), nullable=False),
    Column("config_id", String(255), nullable=False),
    Column("owner", String(255), nullable=True),
    Column("status", JSON, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("due_at", UTCDateTime, nullable=True),
    Column("claimed_until", UTCDateTime, nullable=True),
    Index("ix_push_outbox_task_id", "task_id", "config_id"),
)
"""Notifications not yet delivered: one row per (config, task status) written by a trigger on
the task table in the transaction that changed the task (agent/push/outbox.py); deleted once
delivered or given up. ``due_at`` NULL: due now; ``claimed_until``: a replica is sending it."""

TABLES: tuple[str, ...] = tuple(metadata.tables)
