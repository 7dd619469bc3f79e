"""The inventory's error, in a module of its own.

A skill's handler catches it without importing the inventory's queries (``db/inventory.py``:
SQLAlchemy and the ORM models), which every command that loads the registry, ``netagent
card`` and ``validate`` among them, would otherwise import with the handlers.

The network deployment's exception classes, drawn under the core's families
(``agent/base/errors.py`` draws the core's; a test reads both drawings and fails when they no
longer match the classes):

* NetagentError                                  agent.base.errors
  + ConfigurationError                           agent.base.errors
    - SeedError (RuntimeError)                   db.simulator
  + InventoryError (ValueError)                  db.errors
"""

from __future__ import annotations

from agent.sdk import NetagentError


class InventoryError(NetagentError, ValueError):
    """The caller misused the API (bad tenant, naive datetime, unknown choice...)."""
