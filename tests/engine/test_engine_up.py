"""`make engine-up STACK=dev`: the real `pulumi up` of the dev stack against the local Azure ML control
plane, then `jobs check-deploy` and the smoke job on the cluster `pulumi up` made, then `pulumi destroy`
(doubles/localml/stackup.py): what a user runs after a deploy, with the CLI built from Pulumi's Go modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_pulumi_up_of_dev_then_check_deploy_and_smoke_job_then_destroy(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "engine", "up", "dev", "--json", "--work", str(tmp_path / "work")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-6000:]
    report = json.loads(r.stdout)
    steps = {s["step"].split(" --")[0]: s for s in report["steps"]}
    assert list(steps) == [
        "pulumi up",
        "pulumi stack output",
        "jobs check-deploy",
        "jobs submit smoke",
        "pulumi destroy",
    ]
    # The engine created every resource of the dev stack, the stack itself included.
    assert steps["pulumi up"]["creates"] >= 13
    # check-deploy read the cluster the stand-in PUT to the control plane, with the stack's size.
    deployed = steps["jobs check-deploy"]["report"]
    (t4,) = deployed["clusters"]
    assert (t4["cluster"], t4["ok"]) == ("t4-dev", True)
    size = {f["field"]: f for f in t4["fields"]}["size"]
    assert size["live"] == size["stack"] == "Standard_NC4as_T4_v3"
    # The smoke job ran on that cluster and its logs were verified.
    (job,) = steps["jobs submit smoke"]["report"]["jobs"]
    assert job["status"] == "Completed"
    assert job["verify"]["ok"] is True
    assert steps["pulumi destroy"]["exit_code"] == 0
