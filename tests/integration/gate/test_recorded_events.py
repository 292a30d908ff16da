"""The recorded engine event logs (tests/fixtures/engine/<scenario>/*.jsonl, written by record.py) that the
gate's unit tests read are still what the Pulumi CLI writes: each of record.py's scenarios runs again through
the real gate (its stack file written by record.py itself), and the fresh event logs parse
(`preflight.events`) to the same steps (the engine's ops per URN), violations and errors as the recorded ones.
A difference means the recordings, and the unit tests built on them, describe another engine: run
`.venv/bin/python tests/fixtures/engine/record.py SCENARIO` and review the unit tests."""

from __future__ import annotations

import json

import pytest

from preflight import events
from tests.integration.gate.runner import Gates, Outcome
from tests.integration.gate.specs import RECORDED, recorded, scenarios

LOGS = ("first-deploy.jsonl", "update.jsonl")
#: The closing words of a run stopped for a reason reported before (preflight.gate drops them): the SDK's
#: comes or not, depending on when the engine stopped the program.
CLOSING = {"preview failed", "update failed", "Resource monitor has terminated, shutting down"}


@pytest.fixture(scope="module")
def fresh(gates: Gates) -> dict[str, Outcome]:
    return dict(zip(scenarios(), gates.run(*(recorded(name) for name in scenarios())), strict=True))


def reading(run: events.Run) -> dict:
    """What the unit tests read of a run. A preview the engine stopped on an error holds what was registered
    before it, which depends on the order the registrations reached the engine: only its errors compare."""
    errors = sorted(d.message for d in run.errors if d.message not in CLOSING)
    if errors:
        return {"errors": errors}
    return {
        "errors": [],
        "steps": {s.urn: s.ops for s in run.steps},
        "violations": sorted(
            (v.policy, v.enforcement, v.urn, v.description, v.message) for v in run.violations
        ),
        "outputs": run.stack_outputs,
    }


def test_every_scenario_has_its_recording() -> None:
    folders = {p.name for p in RECORDED.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(scenarios())
    versions = json.loads((RECORDED / "versions.json").read_text())
    assert set(versions) == set(scenarios())


@pytest.mark.parametrize("scenario", scenarios())
def test_the_cli_still_writes_the_recorded_events(fresh: dict[str, Outcome], scenario: str) -> None:
    outcome = fresh[scenario]
    versions = json.loads((RECORDED / "versions.json").read_text())[scenario]
    # the recorded run's verdict, with the CLI it was recorded with
    assert outcome.document["engine"]["version"] == versions["engine"]
    assert (outcome.exit_code, len(outcome.errors)) == (versions["exit_code"], versions["errors"])
    recorded_logs = sorted(p.name for p in (RECORDED / scenario).glob("*.jsonl"))
    assert sorted(log for log in LOGS if (outcome.work / log).exists()) == recorded_logs
    for log in recorded_logs:
        then = events.parse(0, events.read(RECORDED / scenario / log))
        now = events.parse(0, events.read(outcome.work / log))
        assert reading(now) == reading(then), log
        assert bool(then.errors) == bool(now.errors)
