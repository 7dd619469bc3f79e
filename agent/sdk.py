"""The core's public surface for skills and tools: the only ``agent`` module they may import.

A skill (``skills/<id>/handler.py``) needs its context, the draft's error codes, a clock
format and, for an answer that is the same on every call, ``FixedResult``; a tool (``db/``,
the inventory) needs the principal, the tool-token claims and their verifier, the audit log
and the shared storage helpers. Everything here is stable for forks; whatever is not listed in
``__all__`` is the core's own business and may change.
tests/test_architecture.py holds ``db/`` and ``skills/`` to importing this module only.

The storage helpers and the token types are imported when first asked for (``from agent.sdk
import make_engine`` works as ever): they bring SQLAlchemy, Alembic, PyJWT and cryptography,
which a skill's handler does not need, and every command that loads the registry (``netagent
card``, ``validate``) imports the handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.console.topology import (
    Edge,
    EdgeDetail,
    Graph,
    Group,
    Node,
    Series,
    TopologyRefusedError,
    TopologySource,
)
from agent.errors import ConfigurationError, NetagentError
from agent.interfaces import ErrorCode, SkillError
from agent.lazy import on_first_use
from agent.registry.fixed_result import FixedResult
from agent.routing.extractors import plain, total
from agent.routing.features import FeatureProvider, TextFeatures
from agent.security.principal import Principal
from agent.security.token_cache import VerifiedTokens
from agent.server.skill_context import SkillContext, ToolRefusedError, rfc3339
from agent.units import bit_rate

if TYPE_CHECKING:
    from agent.security.auth import TokenError
    from agent.security.credentials import ToolClaims, ToolGrant, ToolTokenVerifier
    from agent.storage.audit import AuditLog, AuditRecord
    from agent.storage.coordination import claim_for_transaction, exclusively
    from agent.storage.engine import async_url, make_engine
    from agent.storage.history import MigrationHistory, run_environment
    from agent.storage.reads import Reader, reader
    from agent.storage.types import UTCDateTime

_ON_FIRST_USE = {
    "TokenError": "agent.security.auth",
    "ToolClaims": "agent.security.credentials",
    "ToolGrant": "agent.security.credentials",
    "ToolTokenVerifier": "agent.security.credentials",
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
}
"""The names imported on first use, and their modules (the same as under TYPE_CHECKING)."""


if not TYPE_CHECKING:  # type checkers read the imports above (a misspelt name stays an error)
    __getattr__ = on_first_use(__name__, _ON_FIRST_USE, globals())


__all__ = [
    "AuditLog",
    "AuditRecord",
    "ConfigurationError",
    "Edge",
    "EdgeDetail",
    "ErrorCode",
    "FeatureProvider",
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
    "TextFeatures",
    "TokenError",
    "ToolClaims",
    "ToolGrant",
    "ToolRefusedError",
    "ToolTokenVerifier",
    "TopologyRefusedError",
    "TopologySource",
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
