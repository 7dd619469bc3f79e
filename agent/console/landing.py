"""How a person finds the console: ``/`` in a browser, and ``/console`` without its slash.

A browser at ``/`` (a ``GET`` whose ``Accept`` names ``text/html``) gets a small page linking
the agent card, the console and the documentation; every other request to ``/`` goes on to
the edge, which answers it as before (401, in the binding's error shape). ``/console`` is
redirected to ``/console/`` (308, query kept), with or without a token: the redirect says
nothing the console's login page does not.

The documentation is the project's ``docs/*.md`` and ``README.md``, served as plain text at
``/docs/NAME.md`` when the agent runs from a source checkout (a wheel ships no docs: the
page then names the files instead of linking them). Only the files found at start-up are
served; the names are fixed then, so no request path reaches the file system.
"""

from __future__ import annotations

from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from agent.console.session import PREFIX

CHECKOUT = Path(__file__).resolve().parents[2]
DOCS_PREFIX = "/docs/"
PAGE_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'none'; style-src 'self'; frame-ancestors 'none'; "
        b"base-uri 'none'; form-action 'none'",
    ),
]


def find_docs(root: Path = CHECKOUT) -> dict[str, bytes]:
    """``/docs/NAME.md`` paths and their bytes: README.md and docs/*.md, when present."""
    found: dict[str, bytes] = {}
    readme = root / "README.md"
    docs = root / "docs"
    if not (readme.is_file() and docs.is_dir()):
        return found
    found[DOCS_PREFIX + "README.md"] = readme.read_bytes()
    for path in sorted(docs.glob("*.md")):
        found[DOCS_PREFIX + path.name] = path.read_bytes()
    return found


def _wants_html(scope: Scope) -> bool:
    accept = dict(scope["headers"]).get(b"accept", b"")
    return scope["method"] in ("GET", "HEAD") and b"text/html" in accept


class LandingMiddleware:
    """Pure ASGI, outside the edge: the landing page, the docs, and the console's redirect."""

    def __init__(self, app: ASGIApp, *, page: bytes, docs: dict[str, bytes]) -> None:
        self.app = app
        self.page = page
        self.docs = docs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path == PREFIX and scope["method"] in ("GET", "HEAD"):
            query = scope.get("query_string", b"")
            location = PREFIX.encode() + b"/" + (b"?" + query if query else b"")
            await _send(send, scope, 308, [(b"location", location)], b"")
            return
        if path == "/" and _wants_html(scope):
            await _send(send, scope, 200, PAGE_HEADERS, self.page)
            return
        if path in self.docs and scope["method"] in ("GET", "HEAD"):
            headers = [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"x-content-type-options", b"nosniff"),
            ]
            await _send(send, scope, 200, headers, self.docs[path])
            return
        await self.app(scope, receive, send)


async def _send(
    send: Send, scope: Scope, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    length = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + length})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
