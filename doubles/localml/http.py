"""A tiny routed HTTP(S) server on the standard library: routes, JSON answers, a request log.

Every request is logged (method, path, status). A request no route matches gets 501 with a body
naming the method and path, in Azure's error shape so azure-core raises an HttpResponseError
that carries the message.
"""

from __future__ import annotations

import json
import logging
import re
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

log = logging.getLogger("localml")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)  # named groups of the route

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


@dataclass
class Response:
    status: int = 200
    body: Any = None  # JSON-serialisable, or bytes
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Response]


def error(status: int, code: str, message: str) -> Response:
    """Azure's error envelope: {"error": {"code", "message"}}."""
    return Response(status, {"error": {"code": code, "message": message}})


class Router:
    def __init__(self) -> None:
        self._routes: list[tuple[str, re.Pattern[str], Handler, str, str]] = []
        self._public: set[str] = set()
        #: Checks a request to a non-public route: None when allowed, else why not (answered 401).
        self.authorize: Callable[[Request], str | None] | None = None
        #: Runs after a route matched and was authorized, with the route's pattern: None to go on, else the
        #: answer (doubles/localml/workspaces.py answers 404 under a workspace that was deleted).
        self.gate: Callable[[Request, str], Response | None] | None = None

    def add(self, method: str, pattern: str, handler: Handler, doc: str = "", public: bool = False) -> None:
        """``pattern``: a path with ``{name}`` segments (one segment each) and at most one ``{name*}`` (one or
        more segments: an ARM scope, the `x-ms-skip-url-encoding` parameters of extension resource routes such
        as `/{scope}/providers/Microsoft.Authorization/locks/{lockName}`), matched case-insensitively (ARM
        matches names without regard to case). ``public``: served without a bearer token (documents clients
        fetch before they have one)."""
        regex = re.sub(r"\{(\w+)\*\}", r"(?P<\1>.+)", pattern.rstrip("/"))
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", regex)
        self._routes.append((method, re.compile(f"^{regex}/?$", re.IGNORECASE), handler, pattern, doc))
        if public:
            self._public.add(pattern)

    def routes(self) -> list[tuple[str, str, str]]:
        """(method, path pattern, what it is) of every route, in order."""
        return [(m, pattern, doc) for m, _, _, pattern, doc in self._routes]

    def dispatch(self, req: Request) -> Response:
        for method, regex, handler, pattern, _ in self._routes:
            match = regex.match(req.path)
            if match and method == req.method:
                if self.authorize is not None and pattern not in self._public:
                    problem = self.authorize(req)
                    if problem:
                        return error(401, "AuthenticationFailed", problem)
                req.params = match.groupdict()
                if self.gate is not None:
                    blocked = self.gate(req, pattern)
                    if blocked is not None:
                        return blocked
                return handler(req)
        return error(
            501,
            "NotImplemented",
            f"localml does not implement {req.method} {req.path} "
            "(see doubles/localml/README.md for the calls it serves)",
        )


@dataclass
class LoggedRequest:
    method: str
    path: str
    status: int
    query: dict[str, str] = field(default_factory=dict)


class RoutedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, router: Router, name: str, ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _make_handler(router, self))
        self.name = name
        self.log: list[LoggedRequest] = []
        self._log_lock = threading.Lock()
        if ssl_context is not None:
            # The handshake happens in the request thread, not in accept().
            self.socket = ssl_context.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread: threading.Thread | None = None
        self.extra_methods: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {}

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def record(self, method: str, path: str, status: int, query: dict[str, str] | None = None) -> None:
        with self._log_lock:
            self.log.append(LoggedRequest(method, path, status, dict(query or {})))
        log.info("%s %s %s -> %d", self.name, method, path, status)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.2}, name=f"localml-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self.server_close()


def _make_handler(router: Router, server: RoutedServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 120  # seconds a connection may idle; bounds every handler thread

        def setup(self) -> None:
            super().setup()
            if isinstance(self.connection, ssl.SSLSocket):
                self.connection.do_handshake()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass  # requests are recorded by RoutedServer.record

        def _handle(self) -> None:
            special = server.extra_methods.get(self.command)
            if special is not None:
                special(self)
                return
            split = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
            headers = {k.lower(): v for k, v in self.headers.items()}
            req = Request(self.command, split.path, query, headers, body)
            try:
                resp = router.dispatch(req)
            except Exception as exc:  # a bug in a handler: answer 500 with the reason, keep serving
                log.exception("handler failed for %s %s", self.command, split.path)
                resp = error(
                    500, "InternalServerError", f"localml failed on {self.command} {split.path}: {exc!r}"
                )
            self._send(resp)
            server.record(self.command, split.path, resp.status, query)

        def _send(self, resp: Response) -> None:
            if isinstance(resp.body, bytes):
                payload, ctype = resp.body, "application/octet-stream"
            elif resp.body is None:
                payload, ctype = b"", "application/json"
            else:
                payload, ctype = json.dumps(resp.body).encode(), "application/json; charset=utf-8"
            self.send_response(resp.status)
            headers = {"Content-Type": ctype, "x-ms-request-id": "localml"} | resp.headers
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_CONNECT = _handle

    return _Handler
