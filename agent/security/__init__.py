"""Principals, tokens, token exchange, the embedded token endpoint and token cache."""
