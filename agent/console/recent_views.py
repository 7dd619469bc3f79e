"""Which page views this process audited a moment ago: a page's live refresh is not a new view.

The console writes one audit row per page view. A page that refreshes itself (a region marked
``data-live``: console.js fetches the same URL again every few seconds, saying so with
``REFRESH_HEADER``) would write one per refresh, burying the views among the polls. A refresh
is let off its row only when this process audited the same caller's view of the same page and
query less than ``AUDITED_FOR`` seconds ago; the header alone never hides a view (a first view,
one after a restart, or one another replica served is audited), and a page left open all day
writes one row per ``AUDITED_FOR``, not one per refresh.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from starlette.requests import Request

REFRESH_HEADER = "x-console-refresh"
"""Sent (``1``) by console.js on a live refresh's fetch."""
AUDITED_FOR = 3600.0
"""Seconds an audited view covers the refreshes of the same page."""
MAX_VIEWS = 4096
"""Views remembered at most; the oldest is forgotten first (its next refresh is audited)."""


def is_refresh(request: Request) -> bool:
    """Whether the request says it is a live refresh of a page already shown."""
    return request.headers.get(REFRESH_HEADER) == "1"


class RecentViews:
    """The views audited in the last ``audited_for`` seconds, by a key the caller builds."""

    def __init__(
        self,
        audited_for: float = AUDITED_FOR,
        capacity: int = MAX_VIEWS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._audited_for = audited_for
        self._capacity = capacity
        self._clock = clock
        self._audited: OrderedDict[Hashable, float] = OrderedDict()

    def covers(self, view: Hashable) -> bool:
        """Whether ``view`` was audited recently enough for a refresh to need no row."""
        at = self._audited.get(view)
        return at is not None and self._clock() - at < self._audited_for

    def audited(self, view: Hashable) -> None:
        """Remember that ``view`` was audited now."""
        self._audited[view] = self._clock()
        self._audited.move_to_end(view)
        while len(self._audited) > self._capacity:
            self._audited.popitem(last=False)
