"""HTTP clients for requests that may carry a token: where the environment's proxies may take them.

httpx sends a request through the proxy ``HTTP_PROXY``, ``HTTPS_PROXY`` or ``ALL_PROXY`` names
(``urllib.request.getproxies``). Over plain http the proxy reads the request whole, a bearer
token or an RFC 8693 form included; to a loopback address it takes a request that was never
meant to leave the machine. Over https to another host it only tunnels (``CONNECT``: it sees
the host and port, the token stays inside TLS). So a client here lets the environment's proxy
carry https to other hosts and nothing else: plain http and loopback hosts go direct, whatever
the environment says. ``NO_PROXY`` still applies as httpx reads it.

The console's calls to the agent's own endpoint use no proxy at all (``trust_env=False``, on
the address the agent listens on): they never leave the process's host.
"""

from __future__ import annotations

import urllib.request
from typing import Final

import httpx

LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "[::1]")
"""Hosts no proxy ever carries a request to (httpx mount patterns: ``all://<host>``)."""


def direct_mounts(direct: httpx.AsyncBaseTransport) -> dict[str, httpx.AsyncBaseTransport]:
    """httpx mounts sending plain http and loopback hosts through ``direct``, never a proxy;
    a mount is more specific than the environment's ``http://`` or ``all://`` proxy, so it wins."""
    return {"http://": direct, **{f"all://{host}": direct for host in LOOPBACK_HOSTS}}


def outbound_client(
    *,
    timeout: float | httpx.Timeout,
    headers: dict[str, str] | None = None,
    direct: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` for requests carrying a token: an environment proxy tunnels
    https to other hosts, plain http and loopback go direct (through ``direct``, default
    httpx's own transport: verified TLS, ``SSL_CERT_FILE`` read). Without a proxy in the
    environment, exactly ``httpx.AsyncClient(transport=direct)``."""
    if not urllib.request.getproxies():  # what httpx reads its environment's proxies from
        return httpx.AsyncClient(headers=headers, timeout=timeout, transport=direct)
    mounts = direct_mounts(direct or httpx.AsyncHTTPTransport())
    return httpx.AsyncClient(headers=headers, timeout=timeout, mounts=mounts)
