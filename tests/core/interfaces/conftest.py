"""Fixtures for the interface tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest


@pytest.fixture
def spy_port() -> Iterator[tuple[int, socket.socket]]:
    """A listening socket on an ephemeral port; a test asserts nobody ever connected."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1], server
