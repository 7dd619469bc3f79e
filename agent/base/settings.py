"""Settings from the environment, resolved once at start-up.

Every knob an operator may turn lives here, with its environment variable, so that the
CLI, the app factory and the tests read one object instead of the environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent.base.config import FLAG_WORDS, flag, number, text

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_GRPC_PORT = 50051
"""The A2A gRPC binding's port, on ``host`` beside the HTTP one; NETAGENT_GRPC_PORT=0 or off
turns the binding off (the card then declares only the two HTTP bindings)."""
DEFAULT_ROUTE_THRESHOLD = 0.55
"""Score below which the router asks rather than runs; the router's default too (it imports
this rather than the other way round, so reading settings never loads the classifier)."""
EMBEDDED_ISSUER = "netagent-embedded"
DEFAULT_AUDIENCE = "netagent"


ENVELOPE_DEPTH = 16
"""Levels a request body may nest beyond ``max_depth``: the envelope around a Data Part's
value (JSON-RPC: 5) and slack, so that a deep Data Part is refused by the message check,
which names where, rather than by the body scan, which cannot."""


@dataclass(frozen=True)
class Limits:
    """The bounds one agent process enforces; every one is a NETAGENT_* setting."""

    max_body_bytes: int = 1024 * 1024
    max_parts: int = 16
    max_string_length: int = 65536
    max_items: int = 1000
    max_depth: int = 32
    max_parked_tasks: int = 100
    """Tasks one caller may have waiting for input (input-required) at once."""
    max_history_messages: int = 64
    """Messages a task's history may hold; a follow-up past it is refused."""
    max_history_bytes: int = 2 * 1024 * 1024
    """Bytes (protobuf size) a task's history may hold; a follow-up past it is refused."""
    max_list_bytes: int = 2 * 1024 * 1024
    """Bytes (protobuf size) of the tasks in one ListTasks page; at least one task is sent."""
    parked_task_ttl: int = 86400
    """Seconds a task may wait for input; then it is ended CANCELED."""

    ENV = {
        "max_body_bytes": "NETAGENT_MAX_BODY_BYTES",
        "max_parts": "NETAGENT_MAX_PARTS",
        "max_string_length": "NETAGENT_MAX_STRING_LENGTH",
        "max_items": "NETAGENT_MAX_ITEMS",
        "max_depth": "NETAGENT_MAX_DEPTH",
        "max_parked_tasks": "NETAGENT_MAX_PARKED_TASKS",
        "max_history_messages": "NETAGENT_MAX_HISTORY_MESSAGES",
        "max_history_bytes": "NETAGENT_MAX_HISTORY_BYTES",
        "max_list_bytes": "NETAGENT_MAX_LIST_BYTES",
        "parked_task_ttl": "NETAGENT_PARKED_TASK_TTL",
    }

    def __post_init__(self) -> None:
        for name in self.ENV:
            if getattr(self, name) < 1:
                raise ValueError(f"{self.ENV[name]} must be a positive integer")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Read the NETAGENT_MAX_* variables; unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        defaults = cls()
        values = {
            name: number(env, variable, getattr(defaults, name), int, positive=True)
            for name, variable in cls.ENV.items()
        }
        return cls(**values)

    @property
    def max_body_depth(self) -> int:
        """Nesting allowed in a whole A2A request body: the envelope plus ``max_depth``."""
        return self.max_depth + ENVELOPE_DEPTH


@dataclass(frozen=True)
class Settings:
    """What one agent process needs to know about its deployment."""

    home: Path = field(default_factory=lambda: Path(".netagent"))
    database_url: str | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    grpc_port: int = DEFAULT_GRPC_PORT
    public_url: str | None = None
    issuer: str = EMBEDDED_ISSUER
    audience: str = DEFAULT_AUDIENCE
    jwks_url: str | None = None
    skills_dir: Path | None = None
    seed_on_start: bool = True
    log_level: str = "info"
    route_threshold: float = DEFAULT_ROUTE_THRESHOLD
    limits: Limits = field(default_factory=Limits)
    token_exchange_url: str | None = None
    agent_credential: str | None = None
    tool_issuer: str | None = None
    tool_jwks_url: str | None = None
    metrics: bool = True
    otel: bool = False
    log_format: str = "auto"
    cluster: bool | None = None
    conformance: bool = False
    body_timeout: float = 30.0
    """Seconds a client has to send a whole request body (NETAGENT_BODY_TIMEOUT); then 408."""
    model_cache: Path | None = None
    """Where trained routing models are kept (NETAGENT_MODEL_CACHE); None: the user's cache
    directory (``agent/routing/model_cache.py``)."""
    print_tokens: bool = True
    """Whether ``serve`` prints the demo callers' bearer tokens at start (NETAGENT_PRINT_TOKENS):
    on for a person at a terminal; off where the output is kept, as a container's logs are."""
    push_allow: str = ""
    """Hosts and address ranges push notifications may go to besides public https ones, over http
    too (NETAGENT_PUSH_ALLOW, comma-separated: ``hooks.internal,10.1.0.0/16``)."""

    @property
    def resolved_database_url(self) -> str:
        """The database the agent uses: the configured one, or the embedded SQLite file."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.home / 'netagent.db').resolve()}"

    @property
    def cluster_stores(self) -> bool:
        """One of several replicas: on when set, else whenever the database is PostgreSQL.

        A replica holds a lease and its tasks are ended by a survivor if it dies; a single
        process ends what its previous run left running at start. Several processes can only
        share PostgreSQL; a SQLite file serves one process.
        """
        if self.cluster is not None:
            return self.cluster
        return not self.resolved_database_url.startswith("sqlite")

    @property
    def resolved_public_url(self) -> str:
        """The base URL the card advertises; without a setting, the address we listen on."""
        if self.public_url:
            return self.public_url.rstrip("/")
        return f"http://{self.host}:{self.port}"

    @property
    def resolved_grpc_url(self) -> str | None:
        """The gRPC interface the card advertises (``host:port``), or None when it is off.

        The host is the public URL's when one is set (the address callers reach), else the
        address we listen on.
        """
        if not self.grpc_port:
            return None
        host = urlsplit(self.public_url).hostname if self.public_url else None
        host = host or self.host
        return f"[{host}]:{self.grpc_port}" if ":" in host else f"{host}:{self.grpc_port}"

    @property
    def embedded_issuer(self) -> bool:
        """True when tokens are signed by this agent's own key rather than an external issuer."""
        return self.jwks_url is None

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with the given fields replaced; None values leave a field as it was."""
        given: dict[str, Any] = {k: v for k, v in changes.items() if v is not None}
        return replace(self, **given)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the NETAGENT_* variables; unset or empty ones keep the field's default."""
        env = os.environ if environ is None else environ
        defaults = cls()
        values = {
            name: read(env, variable, getattr(defaults, name))
            for name, (variable, read) in VARIABLES.items()
        }
        return cls(limits=Limits.from_env(env), **values)


Reader = Callable[[Mapping[str, str], str, Any], Any]
"""Reads one variable: (environment, variable name, the field's default) -> the value."""


def _path(env: Mapping[str, str], name: str, default: Path | None) -> Path | None:
    raw = text(env, name, None)
    return Path(raw) if raw else default


def _port_or_off(env: Mapping[str, str], name: str, default: int) -> int:
    """A port number, or 0 for off (``0``, ``off``, ``false``, ``no``)."""
    word = env.get(name, "").strip().lower()
    if word and FLAG_WORDS.get(word) is False:
        return 0
    value = number(env, name, default, int)
    if not 0 <= value <= 65535:
        raise ValueError(f"{name} must be a port (1-65535), or 0 or off")
    return value


def _lowered(env: Mapping[str, str], name: str, default: str) -> str:
    return text(env, name, default).lower()


VARIABLES: Mapping[str, tuple[str, Reader]] = {
    "home": ("NETAGENT_HOME", _path),
    "database_url": ("NETAGENT_DATABASE_URL", text),
    "host": ("NETAGENT_HOST", text),
    "port": ("NETAGENT_PORT", partial(number, kind=int)),
    "grpc_port": ("NETAGENT_GRPC_PORT", _port_or_off),
    "public_url": ("NETAGENT_PUBLIC_URL", text),
    "issuer": ("NETAGENT_ISSUER", text),
    "audience": ("NETAGENT_AUDIENCE", text),
    "jwks_url": ("NETAGENT_JWKS_URL", text),
    "skills_dir": ("NETAGENT_SKILLS_DIR", _path),
    "seed_on_start": ("NETAGENT_SEED", flag),
    "log_level": ("NETAGENT_LOG_LEVEL", text),
    "route_threshold": ("NETAGENT_ROUTE_THRESHOLD", partial(number, kind=float)),
    "token_exchange_url": ("NETAGENT_TOKEN_EXCHANGE_URL", text),
    "agent_credential": ("NETAGENT_AGENT_CREDENTIAL", text),
    "tool_issuer": ("NETAGENT_TOOL_ISSUER", text),
    "tool_jwks_url": ("NETAGENT_TOOL_JWKS_URL", text),
    "metrics": ("NETAGENT_METRICS", flag),
    "otel": ("NETAGENT_OTEL", flag),
    "log_format": ("NETAGENT_LOG_FORMAT", _lowered),
    "cluster": ("NETAGENT_CLUSTER", flag),
    "conformance": ("NETAGENT_CONFORMANCE", flag),
    "body_timeout": ("NETAGENT_BODY_TIMEOUT", partial(number, kind=float, positive=True)),
    "model_cache": ("NETAGENT_MODEL_CACHE", _path),
    "print_tokens": ("NETAGENT_PRINT_TOKENS", flag),
    "push_allow": ("NETAGENT_PUSH_ALLOW", text),
}
"""Every field but ``limits`` (``Limits.from_env``: NETAGENT_MAX_*), with its variable and
reader; defaults are the dataclass's, so each is written once. ``cluster`` defaults to None,
which ``flag`` reads as its third state, ``auto``."""
