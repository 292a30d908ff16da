"""Fixtures (stack_fixtures.py): the real program (`__main__.py`) under Pulumi mocks (program_mocks.py), once
per shipped stack."""

from __future__ import annotations

from .stack_fixtures import run, runs, stack, stack_configs, typed, typed_configs  # noqa: F401
