"""examples/team-gpu: a team's own Pulumi program using the components as a library. It runs under Pulumi's
unit-test mocks (`pulumi.runtime.set_mocks`) and through the real gate (`python -m preflight dev --program`),
and README's "Use it from your own code" is its code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.components.program_mocks import read_stack, run_program

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "team-gpu"
COMPUTE = "azure-native:machinelearningservices:Compute"


def test_the_program_runs_under_pulumi_mocks_with_its_own_project() -> None:
    run = run_program("dev", read_stack("dev", EXAMPLE), program=EXAMPLE / "__main__.py", project="team-gpu")
    assert run.ok, run.error
    (compute,) = run.of_type(COMPUTE)
    inner = compute.inputs["properties"]["properties"]
    assert inner["vmSize"] == "Standard_ND96isr_H100_v5"
    assert inner["scaleSettings"]["maxNodeCount"] == 2
    assert inner["scaleSettings"]["nodeIdleTimeBeforeScaleDown"] == "PT5M"
    assert compute.urn.startswith("urn:pulumi:dev::team-gpu::")
    assert run.outputs["gpus_per_node"] == 8


def test_a_bad_argument_fails_the_program_naming_it() -> None:
    config = {**read_stack("dev", EXAMPLE), "team-gpu:max_nodes": "0"}
    run = run_program("dev", config, program=EXAMPLE / "__main__.py", project="team-gpu")
    assert run.error is not None
    assert "GpuClusterArgs.max_instances: 0 is below 1; use at least 1" in run.error


def test_the_gate_passes_it_from_another_folder(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "preflight", "dev", "--json", "--program", str(EXAMPLE)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    document = json.loads(r.stdout)
    assert [e["kind"] for e in document["evaluations"]] == ["first-deploy", "update"]
    mandatory = [
        v for e in document["evaluations"] for v in e["violations"] if v["enforcement"] == "mandatory"
    ]
    assert mandatory == []
    assert {r["urn"].split("::")[1] for r in document["resources"]} == {"team-gpu"}


def test_readme_shows_the_examples_code() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Use it from your own code", 1)[1].split("\n## ", 1)[0]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    code = (EXAMPLE / "__main__.py").read_text()
    assert block.strip() in code
    assert len(block.strip().splitlines()) >= 15


@pytest.mark.parametrize(
    "name", ["Pulumi.yaml", "Pulumi.dev.yaml", "policies/config/dev.json", "__main__.py"]
)
def test_the_example_is_a_whole_program_folder(name: str) -> None:
    assert (EXAMPLE / name).is_file()
