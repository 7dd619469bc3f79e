"""The network agent's ASGI app: the core's ``create_app`` with the network deployment."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from agent.app import create_app as create_core_app
from agent.base.settings import Settings
from netops.deployment import network_deployment


def create_app(
    settings: Settings, *, live_telemetry: bool | None = None, **options: Any
) -> FastAPI:
    """``agent.app.create_app(settings, network_deployment(live_telemetry), **options)``."""
    return create_core_app(settings, network_deployment(live_telemetry), **options)
