"""Fixtures: the real program run under Pulumi mocks (preflight.program.run_program), once per stack.

Runs are module-independent and cached per session: each evaluates __main__.py exactly as
`pulumi preview` would, with realistic ARM ids from preflight/mocks.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from preflight.program import ProgramResult, read_stack_config, run_program

STACKS = ("dev", "prod", "capacity")  # capacity: the public stack that carries the locks


@pytest.fixture(scope="session")
def stack_configs() -> dict[str, dict[str, Any]]:
    return {stack: read_stack_config(stack) for stack in STACKS}


@pytest.fixture(scope="session")
def runs() -> dict[str, ProgramResult]:
    results = {stack: run_program(stack) for stack in STACKS}
    for stack, result in results.items():
        assert result.ok, f"{stack}: {result.error}"
    return results


@pytest.fixture(params=STACKS)
def stack(request) -> str:
    return request.param


@pytest.fixture
def run(runs, stack) -> ProgramResult:
    return runs[stack]


@pytest.fixture
def config(stack_configs, stack) -> dict[str, Any]:
    return copy.deepcopy(stack_configs[stack])


@pytest.fixture(scope="session")
def typed_configs():
    """The validated StackConfig of each stack file (stackconfig's contract), for expected values."""
    from preflight.program import REPO_ROOT
    from stackconfig import load_stack_file

    return {stack: load_stack_file(REPO_ROOT / f"Pulumi.{stack}.yaml") for stack in STACKS}


@pytest.fixture
def typed(typed_configs, stack):
    return typed_configs[stack]
