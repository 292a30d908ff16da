"""The shipped stacks' fixtures for the component and program tests (tests/components/conftest.py and
tests/program/conftest.py import them): each stack file's config, and its program run, once per session."""

from __future__ import annotations

from typing import Any

import pytest

from stackconfig import load_stack_file

from .program_mocks import REPO, Run, read_stack, stack_run

STACKS = ("dev", "prod", "capacity")  # capacity: the public stack that carries the locks


@pytest.fixture(scope="session")
def stack_configs() -> dict[str, dict[str, Any]]:
    """Each shipped stack file's `config:` block (every namespace)."""
    return {stack: read_stack(stack) for stack in STACKS}


@pytest.fixture(scope="session")
def runs() -> dict[str, Run]:
    return {stack: stack_run(stack) for stack in STACKS}


@pytest.fixture(params=STACKS)
def stack(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def run(runs: dict[str, Run], stack: str) -> Run:
    return runs[stack]


@pytest.fixture(scope="session")
def typed_configs():
    """The validated StackConfig of each stack file (stackconfig's contract), for expected values."""
    return {stack: load_stack_file(REPO / f"Pulumi.{stack}.yaml") for stack in STACKS}


@pytest.fixture
def typed(typed_configs, stack: str):
    return typed_configs[stack]
