"""Column types shared by the models and the migrations."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always returned timezone-aware.

    PostgreSQL keeps ``timestamptz``; SQLite has no time zones, so values are
    written as naive UTC text and re-tagged with UTC on the way out. Naive
    inputs are rejected: guessing their zone is how off-by-hours bugs start.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Normalise to UTC (naive UTC for SQLite so text comparisons stay ordered)."""
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected datetime, got {type(value).__name__}")
        if value.tzinfo is not UTC:  # fast path for the common case (bulk seeding)
            if value.tzinfo is None or value.utcoffset() is None:
                raise ValueError(f"naive datetime {value.isoformat()} rejected; use a tz-aware one")
            value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Return an aware UTC datetime whatever the backend handed back."""
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
