"""Who is calling: the verified identity every decision is made for."""

from __future__ import annotations

from dataclasses import dataclass

from a2a.auth.user import User

from agent.security.identity import owner_key


@dataclass(frozen=True)
class Principal:
    """A caller as the agent knows it after verifying its token (or knowing it has none)."""

    subject: str
    tenant: str | None
    scopes: frozenset[str]
    token: str | None = None

    @property
    def authenticated(self) -> bool:
        """Anonymous callers have no subject."""
        return bool(self.subject)

    @property
    def owner(self) -> str:
        """The task-store owner key of tenant and subject, both from the verified token
        (:func:`agent.security.identity.owner_key`: no other pair has it)."""
        return owner_key(self.tenant, self.subject)

    def __repr__(self) -> str:
        # The raw token never reaches a log line.
        scopes = sorted(self.scopes)
        return f"Principal(subject={self.subject!r}, tenant={self.tenant!r}, scopes={scopes!r})"


ANONYMOUS = Principal(subject="", tenant=None, scopes=frozenset())


class PrincipalUser(User):
    """Adapts a Principal to the a2a-sdk User the request handler and task store see."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        """Authenticated when the token carried a subject."""
        return self.principal.authenticated

    @property
    def user_name(self) -> str:
        """The SDK's default owner resolver keys tasks on this: tenant and subject."""
        return self.principal.owner if self.principal.authenticated else ""


def principal_of(user: object) -> Principal:
    """The principal behind an SDK user; anything we did not build is anonymous."""
    if isinstance(user, PrincipalUser):
        return user.principal
    return ANONYMOUS
