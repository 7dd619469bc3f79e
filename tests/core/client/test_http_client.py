"""The governed client's HTTP client (agent/client/governed.py ``http_client``): httpx's own,
except that its TLS context, certifi's CA bundle loaded, is made for the first https request
rather than for every client command that speaks plain http."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import certifi
import httpx
import pytest

from agent.client.governed import http_client

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


@asynccontextmanager
async def answering(tls: ssl.SSLContext | None = None) -> AsyncIterator[tuple[int, list[bytes]]]:
    """A local server answering ``ok`` to anything; yields its port and the request lines."""
    lines: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        lines.append((await reader.readline()).strip())
        while (await reader.readline()).strip():
            pass
        writer.write(ANSWER)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=tls)
    async with server:
        yield server.sockets[0].getsockname()[1], lines


def self_signed(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context for 127.0.0.1 and the certificate file that trusts it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context, cert_file


def called_from_this_module() -> bool:
    """Whether the running call came, through any depth of httpx, from this module's tests:
    not from another task on the session's shared event loop nor from another thread."""
    frame = sys._getframe(1).f_back  # the caller of the function that asks
    while frame is not None:
        if frame.f_code.co_filename == __file__:
            return True
        frame = frame.f_back
    return False


@pytest.fixture
def bundle_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each CA bundle loaded into a verifying TLS context (httpx builds its own with
    ``ssl.create_default_context``) by the test's own calls, with no proxy nor CA file named
    by the environment. The patch is process-wide, so loads made meanwhile by anything else in
    this process (a task another test left on the shared event loop, a server's thread) are
    not the test's and are not counted."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")
    for name in names:
        for spelling in (name, name.lower()):
            monkeypatch.delenv(spelling, raising=False)
    loads: list[str] = []
    create = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        if called_from_this_module():
            loads.append(str(kwargs.get("cafile") or kwargs.get("capath")))
        return create(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    return loads


async def test_plain_http_loads_no_ca_bundle(bundle_loads: list[str]) -> None:
    async with answering() as (port, lines), http_client(timeout=5) as http:
        response = await http.get(f"http://127.0.0.1:{port}/card", headers={"X-A": "1"})
    assert (response.status_code, response.text) == (200, "ok")
    assert lines == [b"GET /card HTTP/1.1"]
    assert bundle_loads == []
    httpx.AsyncClient(timeout=5)  # httpx's own client loads it as it is made
    assert len(bundle_loads) == 1


async def test_https_is_verified_as_by_httpx_itself(
    bundle_loads: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Certifi's bundle is loaded for the first https request, and refuses a certificate it
    does not hold; SSL_CERT_FILE is read as httpx reads it."""
    context, cert_file = self_signed(tmp_path)
    async with answering(context) as (port, lines):
        async with http_client(timeout=5) as http:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.get(f"https://127.0.0.1:{port}/")
        assert bundle_loads == [certifi.where()]
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        async with http_client(timeout=5) as http:
            response = await http.get(f"https://127.0.0.1:{port}/")
    assert response.text == "ok"
    assert lines == [b"GET / HTTP/1.1"]


async def test_a_proxy_in_the_environment_only_tunnels_https_to_other_hosts(
    bundle_loads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller's token must not reach a proxy in the clear (agent/security/outbound.py):
    plain http and loopback go direct, https to another host is tunnelled (``CONNECT`` host and
    port)."""
    async with answering() as (port, lines):
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
        async with (
            answering() as (direct_port, direct_lines),
            http_client(timeout=5, headers={"Authorization": "Bearer t"}) as http,
        ):
            response = await http.get(f"http://127.0.0.1:{direct_port}/card")
            assert response.text == "ok"
            with pytest.raises(httpx.HTTPError):
                await http.get("http://agent.invalid/card")
            with pytest.raises(httpx.HTTPError):  # the proxy answers, then no TLS follows
                await http.get("https://agent.invalid/card")
        assert direct_lines == [b"GET /card HTTP/1.1"]
    # The proxy is the environment's, so for the test's moment anything else in this process
    # that reads it (a task another test left on the shared event loop) goes through it too.
    ours = [line for line in lines if b"agent.invalid" in line]
    assert ours == [b"CONNECT agent.invalid:443 HTTP/1.1"]
