"""Fixtures for the tests of the stack program (`__main__.py`): the component tests' helpers and shipped-stack
fixtures (tests/components: program_mocks.py, components_helpers.py, stack_fixtures.py), one run per stack
shared with them."""

from __future__ import annotations

import sys
from pathlib import Path

_COMPONENT_TESTS = str(Path(__file__).resolve().parents[1] / "components")
if _COMPONENT_TESTS not in sys.path:
    sys.path.insert(0, _COMPONENT_TESTS)

from stack_fixtures import run, runs, stack, stack_configs, typed, typed_configs  # noqa: E402, F401
