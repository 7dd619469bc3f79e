"""Arguments of ``link_headroom`` from plain text: the link id, nothing else."""

from __future__ import annotations

from typing import Any

from skills.common.text import link_ids, total


@total
def extract(text: str) -> dict[str, Any]:
    """``{"link_id": ...}`` for the first link id in ``text`` (``acme-lnk-00001``), else ``{}``."""
    found = link_ids(text)
    return {"link_id": found[0]} if found else {}
