"""Arguments of ``plan_link_upgrade`` from plain text: the link id, nothing else.

The input is a whole ``check_link_capacity`` result; its other fields (status, capacity,
available bandwidth, the verdict...) cannot come from text, so the agent asks for them.
"""

from __future__ import annotations

from typing import Any

from skills.common.text import link_ids, total


@total
def extract(text: str) -> dict[str, Any]:
    """``{"link_id": ...}`` for the first link id in ``text`` (``acme-lnk-00002``), else ``{}``."""
    found = link_ids(text)
    return {"link_id": found[0]} if found else {}
