"""The core's own storage, per backend one write path and one read path.

Writes: a ``Settlement`` (``settlement.py``) is made durable by a ``TaskWriter``: on a SQLite
file a thread of its own, on PostgreSQL (and SQLite in memory) an asyncio task, both running
``settlement.py``'s batch statements (``group_commit.py``); on in-memory stores
``StoreTaskWriter``. Reads: ``reader(engine)`` (``reads.py``): an inline ``sqlite3`` connection
on a SQLite file, asyncpg connections of its own on PostgreSQL (``reads_postgres.py``), the
engine otherwise. Beside them: ``engine.py`` (the engine, the cluster-wide locks), ``schema.py``
(the column type, the tables, their Alembic histories), ``task_store.py`` (the SDK's task table,
parked tasks), ``recovery.py`` (the end of a dead process's tasks, the replica leases), and
``audit.py`` and ``bindings.py`` (each interface with its database and in-memory forms).
"""
