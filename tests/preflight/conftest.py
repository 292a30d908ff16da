"""One policy pack process for the whole directory: started exactly as the Pulumi engine starts it
(policies/.venv/bin/python -u -m pulumi.policy <engine-address> . in policies/), reused by every gRPC test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from preflight.analyzer import PolicyPack


@pytest.fixture(scope="session")
def pack() -> Iterator[PolicyPack]:
    with PolicyPack("azml-gpu", "fixtures") as running:
        yield running
