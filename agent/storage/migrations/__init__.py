"""Alembic environment for the core's tables (see ``agent.storage.schema``)."""
