"""The gate's integration tests share their gate runs (tests/integration/gate/runner.py): one session-wide
`Gates`, two runs at a time. They need the Pulumi CLI the gate finds (`make engine` builds one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.gate.runner import Gates


@pytest.fixture(scope="session")
def gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gates]:
    from preflight import pulumicli

    try:
        pulumicli.find()
    except pulumicli.CliMissing as e:
        pytest.fail(f"the gate's integration tests need a Pulumi CLI (`make engine`): {e}")
    runs = Gates(tmp_path_factory.mktemp("gate-runs"))
    yield runs
    runs.close()
