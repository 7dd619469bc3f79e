"""The core's public surface for skills and tools: the only ``agent`` module they may import.

A skill (``skills/<id>/handler.py``) needs its context, the draft's error codes, a clock
format and, for an answer that is the same on every call, ``FixedResult``; a tool (``db/``,
a domain's database) needs the principal, the tool-token claims and their verifier, the audit log
and the shared storage helpers. Everything here is stable for forks; whatever is not listed in
``__all__`` is the core's own business and may change.
tests/test_architecture.py holds ``db/`` and ``skills/`` to importing this module only.

Every name is imported from its module when first asked for (``from agent.sdk import
make_engine`` works as ever), so a module takes only what it names: the storage helpers and
the token types bring SQLAlchemy, Alembic, PyJWT and cryptography, which a skill's handler
does not need (every command that loads the registry, ``netagent card`` or ``validate``,
imports the handlers); the error codes bring jsonschema, which the commands that only read the
database (``netagent audit``, ``chain list``: the deployment is built for its migrations).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.lazy import on_first_use

if TYPE_CHECKING:
    from agent.console.topology import (
        Edge,
        EdgeDetail,
        Graph,
        Group,
        Node,
        Series,
        TopologyRefusedError,
        TopologySource,
        TopologyView,
    )
    from agent.errors import ConfigurationError, NetagentError
    from agent.interfaces import ErrorCode, SkillError
    from agent.registry.fixed_result import FixedResult
    from agent.routing.alternation import Alternation, Alternative
    from agent.routing.extractors import plain, total
    from agent.security.auth import TokenError
    from agent.security.credentials import ToolClaims, ToolGrant, ToolTokenVerifier
    from agent.security.principal import Principal
    from agent.security.token_cache import VerifiedTokens
    from agent.server.skill_context import SkillContext, ToolRefusedError, rfc3339
    from agent.storage.audit import AuditLog, AuditRecord
    from agent.storage.coordination import claim_for_transaction, exclusively
    from agent.storage.engine import async_url, make_engine
    from agent.storage.history import MigrationHistory, run_environment
    from agent.storage.reads import Reader, reader
    from agent.storage.types import UTCDateTime
    from agent.units import bit_rate

_ON_FIRST_USE = {
    "Alternation": "agent.routing.alternation",
    "Alternative": "agent.routing.alternation",
    "Edge": "agent.console.topology",
    "EdgeDetail": "agent.console.topology",
    "Graph": "agent.console.topology",
    "Group": "agent.console.topology",
    "Node": "agent.console.topology",
    "Series": "agent.console.topology",
    "TopologyRefusedError": "agent.console.topology",
    "TopologySource": "agent.console.topology",
    "TopologyView": "agent.console.topology",
    "ConfigurationError": "agent.errors",
    "NetagentError": "agent.errors",
    "ErrorCode": "agent.interfaces",
    "SkillError": "agent.interfaces",
    "FixedResult": "agent.registry.fixed_result",
    "plain": "agent.routing.extractors",
    "total": "agent.routing.extractors",
    "TokenError": "agent.security.auth",
    "ToolClaims": "agent.security.credentials",
    "ToolGrant": "agent.security.credentials",
    "ToolTokenVerifier": "agent.security.credentials",
    "Principal": "agent.security.principal",
    "VerifiedTokens": "agent.security.token_cache",
    "SkillContext": "agent.server.skill_context",
    "ToolRefusedError": "agent.server.skill_context",
    "rfc3339": "agent.server.skill_context",
    "AuditLog": "agent.storage.audit",
    "AuditRecord": "agent.storage.audit",
    "claim_for_transaction": "agent.storage.coordination",
    "exclusively": "agent.storage.coordination",
    "async_url": "agent.storage.engine",
    "make_engine": "agent.storage.engine",
    "MigrationHistory": "agent.storage.history",
    "run_environment": "agent.storage.history",
    "Reader": "agent.storage.reads",
    "reader": "agent.storage.reads",
    "UTCDateTime": "agent.storage.types",
    "bit_rate": "agent.units",
}
"""The names imported on first use, and their modules (the same as under TYPE_CHECKING)."""


if not TYPE_CHECKING:  # type checkers read the imports above (a misspelt name stays an error)
    __getattr__ = on_first_use(__name__, _ON_FIRST_USE, globals())


__all__ = [
    "Alternation",
    "Alternative",
    "AuditLog",
    "AuditRecord",
    "ConfigurationError",
    "Edge",
    "EdgeDetail",
    "ErrorCode",
    "FixedResult",
    "Graph",
    "Group",
    "MigrationHistory",
    "NetagentError",
    "Node",
    "Principal",
    "Reader",
    "Series",
    "SkillContext",
    "SkillError",
    "TokenError",
    "ToolClaims",
    "ToolGrant",
    "ToolRefusedError",
    "ToolTokenVerifier",
    "TopologyRefusedError",
    "TopologySource",
    "TopologyView",
    "UTCDateTime",
    "VerifiedTokens",
    "async_url",
    "bit_rate",
    "claim_for_transaction",
    "exclusively",
    "make_engine",
    "plain",
    "reader",
    "rfc3339",
    "run_environment",
    "total",
]
