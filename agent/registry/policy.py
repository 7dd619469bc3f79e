"""The one entitlement decision: who may see a capability and who may use it.

Cards, the router and the executor all ask these two functions and nothing else, so what a
caller is shown and what a caller may run can never drift apart.
"""

from __future__ import annotations

from agent.registry.manifest import Manifest, State, Visibility
from agent.security.principal import ANONYMOUS, Principal

PREVIEW_SCOPE = "preview"


def entitled(manifest: Manifest, principal: Principal) -> bool:
    """May this principal use the capability right now (scopes, tenant, lifecycle)?"""
    if manifest.state is State.REMOVED or manifest.visibility is Visibility.INTERNAL:
        return False
    restricted = (
        manifest.requires_scopes or manifest.state is State.PREVIEW or manifest.tenants is not None
    )
    if restricted and not principal.authenticated:
        return False
    if manifest.state is State.PREVIEW and PREVIEW_SCOPE not in principal.scopes:
        return False
    if manifest.tenants is not None and principal.tenant not in manifest.tenants:
        return False
    return manifest.requires_scopes <= principal.scopes


def visible(manifest: Manifest, principal: Principal) -> bool:
    """Would this principal's card list the capability?

    Public GA and deprecated skills are listed for everyone, so a caller can learn which scopes
    to ask for; everything else is listed only to those entitled to use it.
    """
    if manifest.state is State.REMOVED or manifest.visibility is Visibility.INTERNAL:
        return False
    if manifest.visibility is Visibility.PUBLIC and manifest.state is not State.PREVIEW:
        return True
    return entitled(manifest, principal)


def publicly_visible(manifest: Manifest) -> bool:
    """Belongs on the unauthenticated card: public and visible without any identity."""
    return manifest.visibility is Visibility.PUBLIC and visible(manifest, ANONYMOUS)
