"""Settings from the environment, resolved once at start-up.

Every knob an operator may turn lives here, with its environment variable, so that the
CLI, the app factory and the tests read one object instead of the environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from agent.edge.limits import Limits

N = TypeVar("N", int, float)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
EMBEDDED_ISSUER = "netagent-embedded"
DEFAULT_AUDIENCE = "netagent"


@dataclass(frozen=True)
class Settings:
    """What one agent process needs to know about its deployment."""

    home: Path = field(default_factory=lambda: Path(".netagent"))
    database_url: str | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    public_url: str | None = None
    issuer: str = EMBEDDED_ISSUER
    audience: str = DEFAULT_AUDIENCE
    jwks_url: str | None = None
    skills_dir: Path | None = None
    seed_on_start: bool = True
    log_level: str = "info"
    route_threshold: float = 0.6
    limits: Limits = field(default_factory=Limits)
    live_telemetry: bool = True
    token_exchange_url: str | None = None
    agent_credential: str | None = None
    tool_issuer: str | None = None
    tool_jwks_url: str | None = None
    metrics: bool = True
    otel: bool = False
    log_format: str = "text"
    cluster: bool | None = None
    conformance: bool = False

    @property
    def resolved_database_url(self) -> str:
        """The database the agent uses: the configured one, or the embedded SQLite file."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.home / 'netagent.db').resolve()}"

    @property
    def cluster_stores(self) -> bool:
        """Replica-safe task stores: on when set, else whenever the database is PostgreSQL.

        Several processes can only share PostgreSQL, so that is where the versioned store and
        the shared event stream pay for themselves; a SQLite file serves one process.
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
    def embedded_issuer(self) -> bool:
        """True when tokens are signed by this agent's own key rather than an external issuer."""
        return self.jwks_url is None

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with the given fields replaced; None values leave a field as it was."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Read the NETAGENT_* variables; unset ones keep their defaults."""
        env = os.environ if environ is None else environ
        skills_dir = env.get("NETAGENT_SKILLS_DIR")
        return cls(
            home=Path(env.get("NETAGENT_HOME", ".netagent")),
            database_url=env.get("NETAGENT_DATABASE_URL") or None,
            host=env.get("NETAGENT_HOST", DEFAULT_HOST),
            port=_number(env, "NETAGENT_PORT", DEFAULT_PORT, int),
            public_url=env.get("NETAGENT_PUBLIC_URL") or None,
            issuer=env.get("NETAGENT_ISSUER", EMBEDDED_ISSUER),
            audience=env.get("NETAGENT_AUDIENCE", DEFAULT_AUDIENCE),
            jwks_url=env.get("NETAGENT_JWKS_URL") or None,
            skills_dir=Path(skills_dir) if skills_dir else None,
            seed_on_start=env.get("NETAGENT_SEED", "1") not in ("0", "false", "no"),
            log_level=env.get("NETAGENT_LOG_LEVEL", "info"),
            route_threshold=_number(env, "NETAGENT_ROUTE_THRESHOLD", 0.6, float),
            limits=Limits.from_env(env),
            live_telemetry=env.get("NETAGENT_LIVE_TELEMETRY", "1") not in ("0", "false", "no"),
            token_exchange_url=env.get("NETAGENT_TOKEN_EXCHANGE_URL") or None,
            agent_credential=env.get("NETAGENT_AGENT_CREDENTIAL") or None,
            tool_issuer=env.get("NETAGENT_TOOL_ISSUER") or None,
            tool_jwks_url=env.get("NETAGENT_TOOL_JWKS_URL") or None,
            metrics=env.get("NETAGENT_METRICS", "on").lower() not in ("0", "false", "no", "off"),
            otel=env.get("NETAGENT_OTEL", "off").lower() in ("1", "true", "yes", "on"),
            log_format=env.get("NETAGENT_LOG_FORMAT", "text").lower(),
            cluster=_tristate(env.get("NETAGENT_CLUSTER")),
            conformance=env.get("NETAGENT_CONFORMANCE", "0").lower() in ("1", "true", "yes", "on"),
        )


def _number(env: Mapping[str, str], name: str, default: N, kind: Callable[[str], N]) -> N:
    """A numeric variable, or a ValueError that names it (the CLI prints it on one line)."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise ValueError(f"{name} must be {noun}") from None


def _tristate(value: str | None) -> bool | None:
    """'1'/'0' style switches where unset (or 'auto') means: decide from the deployment."""
    if value is None or value.strip().lower() in ("", "auto"):
        return None
    return value.strip().lower() not in ("0", "false", "no", "off")
