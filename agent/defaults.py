"""Where the agent listens unless told otherwise: the numbers the command line prints and
builds its snapshot from, importable without the ``Settings`` class (settings.py), whose
forty-odd fields cost every command that never reads them (2 % of ``netagent check``)."""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_GRPC_PORT = 50051
"""The A2A gRPC binding's port, on ``host`` beside the HTTP one; NETAGENT_GRPC_PORT=0 or off
turns the binding off (the card then declares only the two HTTP bindings)."""
