"""Test doubles at the HTTP boundary: an azure-core transport that answers with recorded-shape JSON,
and a credential that hands out a token. The MLClient and everything above the transport is real."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import requests
from azure.core.credentials import AccessToken, AccessTokenInfo
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest._requests_basic import RestRequestsTransportResponse


class StaticCredential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("test-token", 4_102_444_800)

    def get_token_info(self, *scopes: str, **kwargs: Any) -> AccessTokenInfo:
        return AccessTokenInfo("test-token", 4_102_444_800)


class RoutedTransport(HttpTransport):
    """Answers each request with `route(method, url) -> (status, json body)` or `(status, json body,
    headers)`; a body of None is an empty answer. Records every request."""

    def __init__(self, route: Callable[[str, str], tuple[Any, ...]]) -> None:
        self.route = route
        self.requests: list[Any] = []

    def __enter__(self) -> RoutedTransport:
        return self

    def __exit__(self, *args: Any) -> None:
        pass

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def send(self, request: Any, **kwargs: Any) -> Any:
        self.requests.append(request)
        status, body, *more = self.route(request.method, request.url)
        raw = requests.Response()
        raw.status_code = status
        raw.headers["Content-Type"] = "application/json"
        raw.headers.update(more[0] if more else {})
        raw._content = b"" if body is None else json.dumps(body).encode()
        raw.raw = io.BytesIO(raw._content)
        raw.url = request.url
        return RestRequestsTransportResponse(request=request, internal_response=raw)


def ml_client(transport: RoutedTransport, **kwargs: Any) -> Any:
    """A real MLClient over `transport`; kwargs go to azure-core's pipeline (e.g. `retry_total=0`)."""
    from azure.ai.ml import MLClient

    return MLClient(
        StaticCredential(),
        "00000000-0000-0000-0000-000000000000",
        "rg-train",
        "ws-llm",
        transport=transport,
        **kwargs,
    )
