"""Test files are named after the module they test (test_network.py for stackconfig/network.py), and
tests/components has files of the same names for its own modules. Under pytest's default import mode a test
file is imported by its bare name, so the second `test_network` would be refused as "import file mismatch":
`pytest_collectstart` forgets the other folder's module of that name just before this folder's is imported
(a Module's collection imports it).
Helpers are in stackconfig_factory.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def pytest_collectstart(collector: pytest.Collector) -> None:
    if not isinstance(collector, pytest.Module):
        return
    module = sys.modules.get(collector.path.stem)
    if module is not None and Path(getattr(module, "__file__", None) or "") != collector.path:
        del sys.modules[collector.path.stem]
