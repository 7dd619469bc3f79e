"""The core's public surface for skills and tools: the only ``agent`` module they may import.

A skill (``skills/<id>/handler.py``) needs its context, the draft's error codes, a clock
format and, for an answer that is the same on every call, ``FixedResult``; a tool (``db/``,
a domain's database) needs the principal, the tool-token claims and their verifier, the audit log
and the shared storage helpers. Everything here is stable for forks; whatever is not listed in
``__all__`` is the core's own business and may change.
tests/test_architecture.py holds ``db/`` and ``skills/`` to importing this module only.
"""

from __future__ import annotations

from agent.base.errors import ConfigurationError, NetagentError
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
from agent.console.units import bit_rate
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
from agent.storage.engine import async_url, claim_for_transaction, exclusively, make_engine
from agent.storage.reads import Reader, reader
from agent.storage.schema import MigrationHistory, UTCDateTime, run_environment

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
