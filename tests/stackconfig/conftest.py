"""Fixtures for the stackconfig tests."""

from __future__ import annotations

from typing import Any

import pytest
from stackconfig_factory import good_raw


@pytest.fixture
def raw() -> dict[str, Any]:
    return good_raw()
