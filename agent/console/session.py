"""The console's session: the caller's bearer token in an HttpOnly cookie, scoped to /console.

Why a cookie and not sessionStorage: the console's pages are rendered on the server, and a plain
navigation cannot carry an ``Authorization`` header; an HttpOnly cookie also keeps the token out
of reach of any script on the page. The cookie is set by ``POST /console/login``, which the edge
authenticates like any other request (the login page sends the pasted token as
``Authorization: Bearer``), so no token is verified anywhere but in ``BearerAuthMiddleware``.

This middleware sits outside that one. On /console paths only, it turns the cookie into the
``Authorization`` header the edge verifies, so a forged, expired or foreign cookie is refused
exactly like a bad bearer token. It never does so for any other path: the cookie cannot
authenticate an A2A call. ``POST /console/logout`` clears it without asking for a valid
token, so an expired session can always leave. Cross-site requests cannot use the cookie
either: it is ``SameSite=Strict``, and a cookie-authenticated unsafe request whose ``Origin``
or ``Sec-Fetch-Site`` says it came from another site is refused with 403.
"""

from __future__ import annotations

import json
from http.cookies import SimpleCookie

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PREFIX = "/console"
LOGIN_PATH = f"{PREFIX}/login"
LOGOUT_PATH = f"{PREFIX}/logout"
STATIC_PREFIX = f"{PREFIX}/static/"
API_PREFIX = f"{PREFIX}/api/"
COOKIE = "netagent_console"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def session_cookie(token: str, max_age: int, secure: bool) -> str:
    """The Set-Cookie value carrying the token: HttpOnly, SameSite=Strict, Path=/console."""
    flags = f"{COOKIE}={token}; Max-Age={max(max_age, 0)}; Path={PREFIX}; HttpOnly; SameSite=Strict"
    return flags + ("; Secure" if secure else "")


def clear_cookie(secure: bool) -> str:
    """A Set-Cookie value that removes the session."""
    return session_cookie("", 0, secure)


def _cookie(headers: dict[bytes, bytes]) -> str | None:
    raw = headers.get(b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except Exception:  # a malformed Cookie header is as good as none
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None and morsel.value else None


def _cross_site(scope: Scope, headers: dict[bytes, bytes]) -> bool:
    """Another site's request, by ``Origin`` (host and port against ``Host``) or Fetch metadata.

    Only the host is compared, not the scheme: behind a proxy that terminates TLS the agent
    may see ``http`` where the browser says ``https``.
    """
    origin = headers.get(b"origin")
    if origin is not None:
        _, _, netloc = origin.decode("latin-1").partition("://")
        if netloc != headers.get(b"host", b"").decode("latin-1"):
            return True
    fetch_site = headers.get(b"sec-fetch-site")
    return fetch_site is not None and fetch_site not in (b"same-origin", b"none")


def _wants_page(scope: Scope, headers: dict[bytes, bytes]) -> bool:
    """A browser navigation (answer it with the login page) rather than a script's fetch."""
    return (
        scope["method"] in ("GET", "HEAD")
        and not scope["path"].startswith(API_PREFIX)
        and b"text/html" in headers.get(b"accept", b"")
    )


async def _send_simple(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _forbidden(send: Send) -> None:
    body = json.dumps({"error": {"code": "forbidden", "message": "cross-site request"}})
    await _send_simple(send, 403, [(b"content-type", b"application/json")], body.encode())


class ConsoleSessionMiddleware:
    """Pure ASGI, outermost: cookie -> Authorization on /console, nothing anywhere else."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if path == LOGOUT_PATH and scope["method"] == "POST":
            await self._logout(scope, headers, send)
            return
        if path == LOGIN_PATH or path.startswith(STATIC_PREFIX) or b"authorization" in headers:
            await self.app(scope, receive, send)
            return
        token = _cookie(headers)
        secure = scope.get("scheme") == "https"
        if token is None:
            if _wants_page(scope, headers):
                await self._to_login(send, secure, expired=False)
                return
            await self.app(scope, receive, send)  # the edge answers 401
            return
        if scope["method"] not in SAFE_METHODS and _cross_site(scope, headers):
            await _forbidden(send)
            return
        scope = dict(scope)
        scope["headers"] = [*scope["headers"], (b"authorization", f"Bearer {token}".encode())]
        if not _wants_page(scope, headers):
            await self.app(scope, receive, send)
            return
        started: list[Message] = []

        async def watch(message: Message) -> None:
            # A refused cookie on a page: back to the login page, with the cookie cleared.
            if message["type"] == "http.response.start" and message["status"] == 401:
                started.append(message)
                await self._to_login(send, secure, expired=True)
                return
            if started and message["type"] == "http.response.body":
                return
            await send(message)

        await self.app(scope, receive, watch)

    async def _logout(self, scope: Scope, headers: dict[bytes, bytes], send: Send) -> None:
        """Forget the cookie; needs no valid token (an expired session must be able to leave)."""
        if _cross_site(scope, headers):
            await _forbidden(send)
            return
        await self._to_login(send, scope.get("scheme") == "https", expired=False, clear=True)

    @staticmethod
    async def _to_login(send: Send, secure: bool, *, expired: bool, clear: bool = False) -> None:
        location = LOGIN_PATH + ("?expired=1" if expired else "")
        headers = [(b"location", location.encode()), (b"cache-control", b"no-store")]
        if expired or clear:
            headers.append((b"set-cookie", clear_cookie(secure).encode()))
        await _send_simple(send, 303, headers, b"")
