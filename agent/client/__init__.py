"""The schema-governed client: verify everything before trusting anything.

``GovernedClient`` follows the draft's eleven-step validation sequence against one target
agent; ``chain`` composes two skills only when their schemas are the same by reference.

Each name is imported from its module when first asked for (PEP 562): ``netagent chain list``
takes only ``CorrelationStore``, and must not import the a2a-sdk's client for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.lazy import on_first_use

if TYPE_CHECKING:
    from agent.client.bindings import BINDINGS
    from agent.client.cache import InterfaceCache, VerifiedInterface
    from agent.client.compose import ChainResult, chain, composition_differences
    from agent.client.correlation import Correlations, CorrelationStore, FileCorrelationStore
    from agent.client.errors import (
        CardSignatureRefusedError,
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
    from agent.client.governed import ClientStats, GovernedClient, Invocation, Record

_MODULES = {
    "InterfaceCache": "agent.client.cache",
    "VerifiedInterface": "agent.client.cache",
    "ChainResult": "agent.client.compose",
    "chain": "agent.client.compose",
    "composition_differences": "agent.client.compose",
    "CorrelationStore": "agent.client.correlation",
    "Correlations": "agent.client.correlation",
    "FileCorrelationStore": "agent.client.correlation",
    "CardSignatureRefusedError": "agent.client.errors",
    "CompositionRefusedError": "agent.client.errors",
    "CredentialRefusedError": "agent.client.errors",
    "GovernedClientError": "agent.client.errors",
    "InputInvalidError": "agent.client.errors",
    "InterfaceInvalidError": "agent.client.errors",
    "OutputInvalidError": "agent.client.errors",
    "RemoteTaskError": "agent.client.errors",
    "SkillNotAdvertisedError": "agent.client.errors",
    "refusal_in": "agent.client.errors",
    "BINDINGS": "agent.client.bindings",
    "ClientStats": "agent.client.governed",
    "GovernedClient": "agent.client.governed",
    "Invocation": "agent.client.governed",
    "Record": "agent.client.governed",
}
"""Each exported name and the module it is imported from (the same as under TYPE_CHECKING)."""

if not TYPE_CHECKING:  # type checkers read the imports above (a misspelt name stays an error)
    __getattr__ = on_first_use(__name__, _MODULES, globals())


__all__ = [
    "BINDINGS",
    "CardSignatureRefusedError",
    "ChainResult",
    "ClientStats",
    "CompositionRefusedError",
    "CorrelationStore",
    "Correlations",
    "CredentialRefusedError",
    "FileCorrelationStore",
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
