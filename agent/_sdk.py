"""The one module that reads a2a-sdk internals; every other module uses only its public API.

Each function here names what it needs from the SDK's private surface, so an SDK upgrade that
moves one of them breaks here, with a clear name, and nowhere else. The import-rules test
(tests/test_architecture.py) holds every other module to that.
"""

from __future__ import annotations

from typing import Any

from a2a.server.routes.agent_card_routes import _etag_for, _if_none_match_hits

__all__ = ["card_etag", "etag_matches"]


def card_etag(card: dict[str, Any]) -> str:
    """The SDK card route's ETag for a rendered card, so ours revalidates exactly as the SDK's."""
    return str(_etag_for(card))


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an If-None-Match header selects ``etag`` (the SDK's own RFC 9110 reading)."""
    return bool(_if_none_match_hits(if_none_match, etag))
