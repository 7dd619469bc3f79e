"""RecentViews: a refresh is covered only by a view audited recently, and memory stays bounded
however many distinct views a caller makes up."""

from __future__ import annotations

from agent.console.recent_views import RecentViews


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_view_covers_its_refreshes_until_it_is_too_old() -> None:
    clock = Clock()
    views = RecentViews(audited_for=60.0, clock=clock)
    assert not views.covers("problems")
    views.audited("problems")
    clock.now = 59.0
    assert views.covers("problems") and not views.covers("search")
    clock.now = 60.0
    assert not views.covers("problems")  # audited again: one row per period, not per refresh


def test_the_oldest_view_is_forgotten_first_when_full() -> None:
    views = RecentViews(capacity=3, clock=Clock())
    for n in range(10_000):  # a caller inventing queries cannot grow it
        views.audited(("problems", str(n)))
    assert [views.covers(("problems", str(n))) for n in (9_996, 9_997, 9_998, 9_999)] == [
        False,
        True,
        True,
        True,
    ]
    views.audited(("problems", "9997"))  # seen again: now the newest
    views.audited(("problems", "new"))
    assert views.covers(("problems", "9997")) and not views.covers(("problems", "9998"))
