"""Principals, tokens, token exchange, the embedded token endpoint and token cache, and the
HTTP clients that may carry a token (``outbound``)."""
