"""Inventory database of netops-agent.

Modules, one job each:

- ``models`` / ``choices`` / ``types``: the schema (SQLAlchemy 2 declarative).
- ``engine``: async engines for SQLite (aiosqlite) and PostgreSQL (asyncpg).
- ``migrate`` + ``migrations/``: Alembic, runnable in-process without an ini file.
- ``scales`` / ``topology`` / ``telemetry`` / ``simulator``: deterministic demo data.
- ``inventory`` / ``records``: the tenant-scoped read layer the skills use.

Nothing is re-exported here so importing ``db.models`` stays cheap.
"""
