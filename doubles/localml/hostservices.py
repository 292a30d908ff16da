"""What a compute host's environment offers besides the control plane, on a plain-http loopback listener.

- The managed-identity token endpoint, App Service style (azure-identity reads ``IDENTITY_ENDPOINT``
  and ``IDENTITY_HEADER``; MSAL sends GET ``?api-version=2019-08-01&resource=...`` with header
  ``X-IDENTITY-HEADER`` and reads ``access_token`` and ``expires_on``).
- An HTTPS ``CONNECT`` proxy (``HTTPS_PROXY``) that sends ``<account>.blob.<storage suffix>:443`` to
  Azurite. azure-ai-ml builds datastore URLs as ``https://<account>.blob.<suffix>`` (the suffix comes
  from the cloud metadata); no DNS resolves such a name on a bare machine, and the proxy is the knob
  ``requests`` already honours. Any other CONNECT target is refused (403), so nothing leaves loopback.
"""

from __future__ import annotations

import secrets
import select
import socket
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

from doubles.localml.http import Request, Response, RoutedServer, Router, error

TOKEN_PATH = "/msi/token"
IDLE_TUNNEL_SECONDS = 300.0


class HostServices:
    def __init__(self, storage_suffix: str, azurite_port: Callable[[], int]) -> None:
        self.identity_header = secrets.token_hex(16)
        self.storage_suffix = storage_suffix
        self._azurite_port = azurite_port
        router = Router()
        router.add("GET", TOKEN_PATH, self._token, "managed-identity token (App Service style)")
        self.server = RoutedServer(router, "host")
        self.server.extra_methods["CONNECT"] = self._connect
        self.tunnels = 0
        self._issued: set[str] = set()

    @property
    def identity_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.port}{TOKEN_PATH}"

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def _token(self, req: Request) -> Response:
        if req.headers.get("x-identity-header") != self.identity_header:
            return error(401, "Unauthorized", "missing or wrong X-IDENTITY-HEADER")
        resource = req.query.get("resource")
        if not resource:
            return error(400, "BadRequest", "resource is required")
        expires_on = int(time.time()) + 3600
        token = f"doubles.localml.{secrets.token_urlsafe(24)}"
        self._issued.add(token)
        return Response(
            200,
            {
                "access_token": token,
                "expires_on": str(expires_on),
                "resource": resource,
                "token_type": "Bearer",
                "client_id": "localml",
            },
        )

    def check_bearer(self, req: Request) -> str | None:
        """For the control plane: a request must carry a token this identity endpoint issued."""
        scheme, _, token = req.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return "no bearer token: authenticate with the managed identity (IDENTITY_ENDPOINT)"
        if token not in self._issued:
            return "bearer token not issued by this session's identity endpoint"
        return None

    def _connect(self, handler: BaseHTTPRequestHandler) -> None:
        host, _, port = handler.path.rpartition(":")
        allowed = host.lower().endswith(f".blob.{self.storage_suffix}") and port == "443"
        if not allowed:
            handler.send_error(403, f"localml proxy only tunnels *.blob.{self.storage_suffix}:443")
            self.server.record("CONNECT", handler.path, 403)
            return
        upstream = socket.create_connection(("127.0.0.1", self._azurite_port()), timeout=10)
        handler.send_response(200, "Connection Established")
        handler.end_headers()
        handler.wfile.flush()
        self.server.record("CONNECT", handler.path, 200)
        self.tunnels += 1
        try:
            _pipe(handler.connection, upstream)
        finally:
            upstream.close()
            handler.close_connection = True


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until one side closes or the tunnel idles out."""
    last = time.monotonic()
    while time.monotonic() - last < IDLE_TUNNEL_SECONDS:
        readable, _, _ = select.select([a, b], [], [], 1.0)
        for src in readable:
            data = src.recv(65536)
            if not data:
                return
            (b if src is a else a).sendall(data)
            last = time.monotonic()
