"""The studio's door (an ASGI middleware in front of the whole application).

The studio is local and single-user: it listens on 127.0.0.1 only, and it answers only its own
page. Every request must name the server itself in ``Host`` (``127.0.0.1:PORT`` or
``localhost:PORT``) — a page of another site that resolves its own name to 127.0.0.1 (DNS
rebinding) sends its own name and is refused. A request carrying an ``Origin`` must come from
the studio's own origin — a page of another origin that posts to the studio (cross-site
request forgery) is refused before anything runs; a request that changes something and carries
no ``Origin`` is refused when the browser says it comes from another site
(``Sec-Fetch-Site``), and a browser sends ``Origin`` with every such request anyway.
Bodies are bounded: an upload by the ``--max-upload-mb`` the studio was started with (checked
on its ``Content-Length``, and again while it streams), anything else by :data:`MAX_BODY`;
a body of unknown length is refused (411).

Every response gets headers that keep it to itself: a content security policy (scripts,
styles and images of the studio only, no frames), ``nosniff``, no referrer, no caching.
Refusals are JSON ``{"error": ...}`` with status 403, 411 or 413.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

#: the largest body of a request that is not an upload (JSON from the page)
MAX_BODY = 1 << 20
#: paths whose body is an upload
UPLOAD_PATHS = ("/api/upload",)
#: the page's content security policy (a response may set its own, e.g. a report page)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
           (b"x-frame-options", b"DENY"), (b"cross-origin-opener-policy", b"same-origin"),
           (b"cross-origin-resource-policy", b"same-origin"), (b"cache-control", b"no-store")]
#: methods that change nothing
SAFE_METHODS = ("GET", "HEAD")


class Guard:
    """ASGI middleware (module docstring). ``hosts`` is filled with the server's own
    ``HOST:PORT`` names once its port is known; until then every request is refused."""

    def __init__(self, app: Any, *, max_upload: int) -> None:
        self.app = app
        self.max_upload = int(max_upload)
        self.hosts: set[str] = set()

    def allow(self, port: int) -> None:
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}

    @property
    def origins(self) -> set[str]:
        return {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                       send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            status, message = refusal
            await _refuse(send, status, message)
            return
        limit = self.max_upload if scope.get("path") in UPLOAD_PATHS else MAX_BODY
        seen = 0

        async def bounded() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:  # a body longer than it said: cut it off
                    return {"type": "http.disconnect"}
            return message

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                hs = list(message.get("headers", []))
                names = {k.lower() for k, _ in hs}
                hs += [(k, v) for k, v in HEADERS if k not in names]
                if b"content-security-policy" not in names:
                    hs.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": hs}
            await send(message)

        await self.app(scope, bounded, with_headers)

    def refusal(self, scope: dict[str, Any], headers: dict[str, str]) -> tuple[int, str] | None:
        """``(status, message)`` for a request the studio does not answer, else ``None``."""
        host = headers.get("host", "")
        if host not in self.hosts:
            return 403, (f"refused: this is openbook studio on {', '.join(sorted(self.hosts)) or 'a local port'}; "
                         f"a request for host {host or '(none)'!r} is not for it (DNS rebinding?)")
        origin = headers.get("origin")
        method = scope.get("method", "GET")
        if origin is not None and origin not in self.origins:
            return 403, (f"refused: a request from another origin ({origin}) may not use the studio; open the studio's "
                         f"own page, {sorted(self.origins)[0]}/")
        if method not in SAFE_METHODS:
            site = headers.get("sec-fetch-site")
            if origin is None and site not in (None, "same-origin", "none"):
                return 403, f"refused: a request from another site ({site}) may not change the studio"
            length = headers.get("content-length")
            limit = self.max_upload if scope.get("path") in UPLOAD_PATHS else MAX_BODY
            if length is None:
                if "chunked" in headers.get("transfer-encoding", ""):
                    return 411, "refused: send the body with its length (Content-Length)"
            elif not length.isdigit():
                return 400, "refused: a malformed Content-Length"
            elif int(length) > limit:
                what = "upload" if scope.get("path") in UPLOAD_PATHS else "request"
                return 413, (f"refused: the {what} is {int(length) / (1 << 20):.1f} MB, above the studio's limit of "
                             f"{limit / (1 << 20):.0f} MB" + (" (start it with --max-upload-mb N for more, or give "
                                                              "the file's path instead)" if what == "upload" else ""))
        return None


async def _refuse(send: Callable[[dict[str, Any]], Awaitable[None]], status: int, message: str) -> None:
    body = json.dumps({"error": message, "kind": "refused"}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *HEADERS, (b"content-security-policy", CSP.encode())]})
    await send({"type": "http.response.body", "body": body})
