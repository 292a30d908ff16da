"""`make smoke` (`python -m doubles.localml smoke`): the deploy workflow on the dev stack, offline, with the
real Pulumi CLI: `pulumi up` into localml, `pulumi stack output`, `jobs check-deploy` of the cluster `pulumi
up` made, the smoke job on it, `pulumi destroy` (doubles/localml/smoke.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow


def _smoke(tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "doubles.localml", "smoke", "--json", "--work", str(tmp_path / "work")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_pulumi_up_of_dev_then_check_deploy_and_smoke_job_then_destroy(tmp_path: Path) -> None:
    r = _smoke(tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    report = json.loads(r.stdout)
    assert (report["command"], report["stack"], report["ok"], report["exit_code"]) == (
        "smoke",
        "dev",
        True,
        0,
    )
    steps = {s["step"]: s for s in report["steps"]}
    assert list(steps) == [
        "pulumi up",
        "pulumi stack output",
        "jobs check-deploy",
        "jobs submit smoke --cluster t4-dev",
        "pulumi destroy",
    ]
    assert all(s["exit_code"] == 0 for s in report["steps"])
    # The engine created every resource of the dev stack (the stack and its components included), the
    # policy pack ran (its advisories on dev are reported, none mandatory).
    assert steps["pulumi up"]["ops"] == {"create": 13}
    assert {v["enforcement"] for v in steps["pulumi up"]["violations"]} == {"advisory"}
    # check-deploy read the cluster `pulumi up` PUT to the control plane, with the stack's size.
    (t4,) = steps["jobs check-deploy"]["report"]["clusters"]
    assert (t4["cluster"], t4["ok"]) == ("t4-dev", True)
    size = {f["field"]: f for f in t4["fields"]}["size"]
    assert size["live"] == size["stack"] == "Standard_NC4as_T4_v3"
    # The smoke job ran on that cluster and its logs were verified.
    (job,) = steps["jobs submit smoke --cluster t4-dev"]["report"]["jobs"]
    assert job["status"] == "Completed" and job["verify"]["ok"] is True
    # `pulumi destroy` deleted everything `pulumi up` made.
    assert steps["pulumi destroy"]["left_in_store"] == []
    # Progress for people on stderr.
    assert "[localml smoke] pulumi up: exit 0" in r.stderr
    assert "python -m jobs check-deploy --outputs" in r.stderr
    assert "0 resources left" in r.stderr


def test_without_a_pulumi_cli_the_first_step_fails_with_exit_2_and_says_how_to_get_one(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "AZML_GPU_PULUMI": str(tmp_path / "no-such-pulumi")}
    r = _smoke(tmp_path, env)
    assert r.returncode == 2, r.stderr[-3000:]
    report = json.loads(r.stdout)
    assert report["exit_code"] == 2 and [s["step"] for s in report["steps"]] == ["pulumi up"]
    assert "AZML_GPU_PULUMI" in report["steps"][0]["error"]
    assert "Traceback" not in r.stderr
