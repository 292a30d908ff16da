"""The engine's checked inputs of the prod stack (and the capacity stack's locks), recorded from the gate's
real run by tests/fixtures/provider/record.py: what the provider's Check returned for each resource, the
starting point of the tests that break one value at a time."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "provider" / "checked-inputs.json"


@cache
def _document() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def prod_resources() -> list[dict[str, Any]]:
    """Every resource of prod's update evaluation: urn, type, custom, inputs (a fresh copy)."""
    return copy.deepcopy(_document()["prod"]["resources"])


def prod_config() -> dict[str, Any]:
    """Pulumi.prod.yaml's `config:` block when the inputs were recorded."""
    return copy.deepcopy(_document()["prod"]["config"])


def inputs(typ: str) -> dict[str, Any]:
    """The checked inputs of prod's first resource of type `typ` (a lock: the capacity stack's first)."""
    for r in [*_document()["prod"]["resources"], *_document()["capacity_locks"]]:
        if r["custom"] and r["type"] == typ:
            return copy.deepcopy(r["inputs"])
    raise KeyError(f"no {typ} recorded in {FIXTURE}")


def of_type(typ: str) -> list[dict[str, Any]]:
    return [r for r in prod_resources() if r["custom"] and r["type"] == typ]
