"""The schema-governed client: verify everything before trusting anything.

``GovernedClient`` follows the draft's eleven-step validation sequence against one target
agent; ``chain`` composes two skills only when their schemas are the same by reference.
"""

from agent.client.cache import InterfaceCache, VerifiedInterface
from agent.client.compose import (
    ChainResult,
    CorrelationStore,
    chain,
    composition_differences,
)
from agent.client.errors import (
    CompositionRefusedError,
    CredentialRefusedError,
    GovernedClientError,
    InputInvalidError,
    InterfaceInvalidError,
    OutputInvalidError,
    RemoteTaskError,
    SkillNotAdvertisedError,
    refusal_in,
)
from agent.client.governed import BINDINGS, ClientStats, GovernedClient, Invocation, Record

__all__ = [
    "BINDINGS",
    "ChainResult",
    "ClientStats",
    "CompositionRefusedError",
    "CorrelationStore",
    "CredentialRefusedError",
    "GovernedClient",
    "GovernedClientError",
    "InputInvalidError",
    "InterfaceCache",
    "InterfaceInvalidError",
    "Invocation",
    "OutputInvalidError",
    "Record",
    "RemoteTaskError",
    "SkillNotAdvertisedError",
    "VerifiedInterface",
    "chain",
    "composition_differences",
    "refusal_in",
]
