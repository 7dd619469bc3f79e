"""The ``netagent`` command's core: serve, mcp, token, tokens, card, audit, usage, validate,
new-skill (agent side) and describe, invoke, chain, check, listen (client side: the
schema-governed procedure against any agent).

A deployment runs it with :func:`run`, handing in its :class:`~agent.ports.Deployment`, and
may add commands of its own to :data:`app` (such as ``seed`` and ``demo``). Each module of this
package adds its commands to :data:`app` as it is imported; they are imported here in the
order ``--help`` lists them.
"""

from __future__ import annotations

# isort: off
from agent.cli.common import app, run
from agent.cli import serving, tokens, cards, audit  # noqa: F401  (agent side)
from agent.cli import invoking, chaining, checking, notifications  # noqa: F401  (client side)
from agent.cli import authoring  # noqa: F401  (validate, new-skill)

# isort: on

__all__ = ["app", "run"]
