"""Alembic environment for the inventory schema (see ``db.migrate``)."""
