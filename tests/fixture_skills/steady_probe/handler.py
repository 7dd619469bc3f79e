"""Test-only skill that sleeps and may not be cancelled (its manifest says so)."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.server.skill_context import SkillContext


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Sleep for the requested time (cancellable at any moment)."""
    await asyncio.sleep(float(arguments["seconds"]))
    return {"slept": arguments["seconds"]}
