"""The one root every exception of the project descends from, and its families.

``except NetagentError`` catches anything this project raises on purpose and nothing it does not (a
library's error, a bug). A class keeps a standard base beside its family where callers catch it by
that base (``except ValueError`` still catches a ``ValueError`` of a family). None subclasses an
a2a-sdk error: the SDK maps its errors by exact class. The core's hierarchy, each class with the
module that defines it and any second base in parentheses (a deployment draws its own classes under
these in the docstring of its own errors module):

* NetagentError                                  agent.base.errors
  + ConfigurationError                           agent.base.errors
    - RegistryError                              agent.registry.manifests
    - ScaffoldError                              agent.devtools.scaffold
    - UnknownRevisionError                       agent.storage.schema
  + SchemaInterfaceError                         agent.base.errors
    - InterfaceBuildError                        agent.interfaces.document
    - NotRepresentableError (ValueError)         agent.interfaces.digest
    - SchemaCheckError (ValueError)              agent.interfaces.validation
    - ReferenceRefusedError (LookupError)        agent.interfaces.validation
  + SkillError                                   agent.interfaces.errors
  + SecurityError                                agent.base.errors
    - TokenError                                 agent.security.auth
    - IssuerUnavailableError                     agent.security.auth
    - CardSignatureError                         agent.security.card_signatures
    - NotificationRefusedError                   agent.push.listener
    - ExchangeError                              agent.security.credentials
    - ToolRefusedError (PermissionError)         agent.server.skill_context
    - TopologyRefusedError                       agent.console.topology
  + ClientError                                  agent.base.errors
    - GovernedClientError                        agent.client.errors
      . SkillNotAdvertisedError                  agent.client.errors
      . InterfaceInvalidError                    agent.client.errors
      . CardSignatureRefusedError                agent.client.errors
      . InputInvalidError                        agent.client.errors
      . OutputInvalidError                       agent.client.errors
    - CompositionRefusedError                    agent.client.errors
    - RemoteTaskError                            agent.client.errors
    - CredentialRefusedError                     agent.client.errors
  + StaleTaskError                               agent.storage.settlement
  + _ExceededError                               agent.edge.limits
  + _FallbackError                               agent.edge.proto_parse
  + _FalseSchemaError (ValidationError)          agent.interfaces.draft2020
  + _UnsupportedError                            agent.interfaces.fast_check

How an invocation ends: ``SkillError`` carries the draft's error code and is the task's error
object; the executor also maps ``ToolRefusedError`` and ``ExchangeError`` to codes, and any
other exception to ``execution_failed`` (``agent/server/executor.py``, ``terminal_error``).
The underscored classes are signals that never leave their module; ``_FalseSchemaError`` is
also a jsonschema ``ValidationError``, which is yielded, never raised. A test reads this
drawing and fails when it no longer matches the classes.
"""

from __future__ import annotations

__all__ = [
    "ClientError",
    "ConfigurationError",
    "NetagentError",
    "SchemaInterfaceError",
    "SecurityError",
]


class NetagentError(Exception):
    """The root: defines no state, so it can sit beside any other base (even jsonschema's)."""


class ConfigurationError(NetagentError):
    """The deployment as given (skills, database, files) cannot start or take the command.

    Reported to the operator at start-up or by a CLI command, never to a caller.
    """


class SchemaInterfaceError(NetagentError):
    """An interface document or one of its schemas cannot be built, encoded or checked.

    Raised at start-up for the agent's own skills, and by the client and the conformance
    tool for a document that came from elsewhere.
    """


class SecurityError(NetagentError):
    """A token, a credential or an access decision went against the caller, or could not be made."""


class ClientError(NetagentError):
    """The calling side stopped: a local check failed, or the remote task did not complete."""
