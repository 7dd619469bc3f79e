"""A deployment's own console pages, beside the topology page: what they are and how the
core serves them.

The core knows nothing of what a page shows; the deployment gives each page a path, a name
for the navigation, a template (in the topology view's template folder) and a source that
answers for the verified caller. The core does the rest the same way for every page: it
refuses query values no backend can bind (400), turns a :class:`TopologyRefusedError` into
403, writes one audit row per view (tool ``console``, operation the page's path; a live refresh of
a view it audited a moment ago writes none: ``agent/console/recent_views.py``), and renders
the template inside the console's frame with the source's context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from agent.security.principal import Principal

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

MAX_QUERY_VALUE = 200
"""The longest query value a page is handed; longer ones are cut (a search needs no more)."""


@dataclass(frozen=True)
class PageAnswer:
    """What a page source hands back: its template's context, and what the audit row says.

    ``named``: the ids the view was asked for (its audit row's resources); ``missing``: one of
    them is not the caller's, so the page answers 404 and the row says it was not found.
    """

    context: Mapping[str, Any]
    named: tuple[str, ...] = ()
    missing: bool = False


class PageSource(Protocol):
    """Implemented by the deployment: answers one page for the caller, reading only what the
    caller may see; raises ``TopologyRefusedError`` (its message says what is missing)."""

    async def __call__(
        self, principal: Principal, query: Mapping[str, str], now: datetime
    ) -> PageAnswer:
        """The page's context for these (already queryable, length-capped) query values."""
        ...


@dataclass(frozen=True)
class ConsolePage:
    """One page of the deployment's at ``/console/<path>``."""

    path: str
    """One lower-case word, not one of the console's own paths."""
    label: str
    """Its name in the navigation; "" keeps it out (a page reached by its links only)."""
    template: str
    """Its template, in the topology view's template folder; it extends ``base.html``."""
    source: Callable[[AsyncEngine], PageSource]
    """Builds the page's source from the agent's engine, once, when the console mounts."""
    accepts: frozenset[str] = field(default_factory=frozenset)
    """The query parameters the page reads; others are not handed to it."""


def page_query(params: Mapping[str, str], accepts: frozenset[str]) -> dict[str, str]:
    """The values a page reads, stripped and cut to ``MAX_QUERY_VALUE`` characters."""
    return {k: params[k].strip()[:MAX_QUERY_VALUE] for k in accepts if k in params}
