"""The A2A bindings a client can use, as a card's ``protocolBinding`` names them: their own
module, so that a command can check ``--binding`` before it imports the a2a-sdk's client."""

from __future__ import annotations

GRPC = "GRPC"
JSONRPC = "JSONRPC"
BINDINGS = (JSONRPC, "HTTP+JSON", GRPC)
"""The A2A bindings a client can use, as the card's ``protocolBinding`` names them."""

__all__ = ["BINDINGS", "GRPC", "JSONRPC"]
