"""The one check on caller-chosen strings that can reach a database query.

PostgreSQL's text types cannot hold U+0000 (its driver refuses the statement, which would be a
5xx), SQLite's driver cannot encode a lone surrogate, and neither is in any identifier, filter
or name this agent stores. Every string a caller chooses that can reach a query (task and
context ids, decoded page tokens, the console's filters) passes through :func:`queryable`
before the query is built, so both backends answer the same client error and no driver ever
sees such a value. Message content is checked by ``agent.edge.limits`` (which refuses NUL
anywhere in a message with its own pointer).
"""

from __future__ import annotations

NUL = "\x00"


def queryable(value: str) -> bool:
    """Whether ``value`` can be bound in a query on every backend: no NUL, valid UTF-8."""
    if NUL in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON can escape one)
        return False
    return True
