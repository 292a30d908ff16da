"""Fixtures for the tests of the stack program (`__main__.py`): the component tests' helpers and shipped-stack
fixtures (tests/components: program_mocks.py, components_helpers.py, stack_fixtures.py), one run per stack
shared with them."""

from __future__ import annotations

from tests.components.stack_fixtures import run, runs, stack, stack_configs, typed, typed_configs  # noqa: F401
