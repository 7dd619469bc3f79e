"""Record timestamps: the UTC fast path writes what the general conversion writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from agent.server.skill_context import rfc3339

ZONES = st.one_of(
    st.just(UTC),
    st.just(timezone(timedelta(0))),  # UTC, but not the UTC object
    st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m))),
)


@given(st.datetimes(min_value=datetime(1971, 1, 2), max_value=datetime(9998, 12, 30)), ZONES)
def test_any_aware_moment_is_written_in_utc_with_a_z(naive: datetime, zone: timezone) -> None:
    moment = naive.replace(tzinfo=zone)
    written = rfc3339(moment)
    assert written == moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    assert written.endswith("Z") and datetime.fromisoformat(written) == moment
