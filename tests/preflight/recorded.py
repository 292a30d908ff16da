"""The recorded engine event logs (tests/fixtures/engine, record.py), parsed as the gate parses them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from preflight import events

ENGINE = Path(__file__).resolve().parents[1] / "fixtures" / "engine"


@cache
def run(scenario: str, evaluation: str) -> events.Run:
    """The recorded run of `evaluation` ("first-deploy" | "update") of `scenario`. The exit code is the
    CLI's: 255 for a failed preview (an error or a mandatory violation), else 0."""
    parsed = events.parse(0, events.read(ENGINE / scenario / f"{evaluation}.jsonl"))
    failed = parsed.summary.get("result") == "failed"
    return events.parse(255 if failed else 0, events.read(ENGINE / scenario / f"{evaluation}.jsonl"))


def step(scenario: str, evaluation: str, name: str, type_suffix: str) -> events.Step:
    found = [s for s in run(scenario, evaluation).steps if s.name == name and s.type.endswith(type_suffix)]
    assert len(found) == 1, [s.urn for s in run(scenario, evaluation).steps if s.name == name]
    return found[0]
