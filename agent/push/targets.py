"""Which URLs a push notification may go to: screened when a config is stored, and again
before each delivery (what a host name resolves to can change in between).

By default a target is an ``https`` URL whose host resolves to public unicast addresses only
(a2a-sdk's ``validate_push_notification_url``: no private, loopback, link-local, shared,
reserved or multicast address, so a caller cannot make the agent POST to the hosts beside it).
An operator trusts more with ``NETAGENT_PUSH_ALLOW``: comma-separated host names and IP
ranges (``hooks.internal, 10.1.0.0/16, 127.0.0.1``); a URL whose host is one of the names,
or whose every address falls in one of the ranges, is accepted over ``http`` too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from a2a.utils.push_url_validator import validate_push_notification_url

MAX_URL_CHARS = 2048
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class AddressRange:
    """A CIDR range (``10.1.0.0/16``; one address without ``/``), matching addresses of its
    own IP version."""

    base: Address
    prefix: int

    @classmethod
    def parse(cls, text: str) -> AddressRange:
        """Raises ValueError when ``text`` is not an address with an optional ``/prefix``."""
        address, _, prefix = text.strip("[]").partition("/")
        base = ipaddress.ip_address(address)
        bits = base.max_prefixlen
        length = int(prefix) if prefix else bits
        if not 0 <= length <= bits:
            raise ValueError(f"{text}: prefix out of range")
        return cls(base, length)

    def __contains__(self, address: object) -> bool:
        if not isinstance(address, Address) or address.version != self.base.version:
            return False
        shift = self.base.max_prefixlen - self.prefix
        return int(address) >> shift == int(self.base) >> shift


@dataclass(frozen=True)
class PushTargets:
    """The screening rule: the SDK's policy, https only, and the operator's allowlist."""

    names: frozenset[str] = frozenset()
    ranges: tuple[AddressRange, ...] = ()

    @classmethod
    def parse(cls, allow: str) -> PushTargets:
        """``NETAGENT_PUSH_ALLOW``'s value; raises ValueError on an empty item."""
        names: set[str] = set()
        ranges: list[AddressRange] = []
        for item in (part.strip() for part in allow.split(",")):
            if not item:
                continue
            try:
                ranges.append(AddressRange.parse(item))
            except ValueError:
                names.add(item.lower().rstrip("."))
        return cls(frozenset(names), tuple(ranges))

    async def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be a push target (fixed text, the URL not quoted); None if it may."""
        if len(url) > MAX_URL_CHARS or not all(0x21 <= ord(c) < 0x7F for c in url):
            return f"it is over {MAX_URL_CHARS} characters or not printable ASCII (RFC 3986)"
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises ValueError on a port out of range)
        except ValueError:
            return "it is not a URL"
        host = (parts.hostname or "").rstrip(".")
        if parts.scheme not in ("http", "https") or not host:
            return "it is not an http(s) URL with a host"
        if parts.username is not None or parts.password is not None:
            return "it holds credentials"
        if await self._allowed(host, parts.port or (443 if parts.scheme == "https" else 80)):
            return None
        if parts.scheme != "https":
            return "it is not https (NETAGENT_PUSH_ALLOW lists the hosts that may use http)"
        if not await validate_push_notification_url(url):
            return "its host does not resolve to public addresses only"
        return None

    async def _allowed(self, host: str, port: int) -> bool:
        """Whether the operator trusts ``host``: by name, or every address it has."""
        if host in self.names:
            return True
        if not self.ranges:
            return False
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
            except OSError:
                return False
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        return bool(addresses) and all(
            any(address in allowed for allowed in self.ranges) for address in addresses
        )
