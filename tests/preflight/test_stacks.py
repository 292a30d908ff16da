"""preflight/stacks.py and the CI workflows it feeds: valid against GitHub's workflow schema
(check-jsonschema's vendored copy, as a
subprocess), and wired as promised: PRs run `make test` and the offline gate per stack without secrets; main
runs `pulumi preview` per stack with the policy pack through pulumi/actions after an Azure OIDC login."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def load(name: str = "ci.yml") -> dict[str, Any]:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_matches_the_github_schema(path: Path) -> None:
    run = validate(path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok -- validation done" in run.stdout


def test_the_validator_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = load()
    broken["jobs"]["test"]["runs-on"] = {"unexpected": ["mapping"]}
    broken["jobs"]["test"]["steps"][0] = {"uses": "actions/checkout@v4", "wiht": {}}
    path = tmp_path / "broken.yml"
    path.write_text(yaml.safe_dump(broken))
    run = validate(path)
    assert run.returncode == 1
    assert "Schema validation errors were encountered." in run.stdout + run.stderr


def test_stacks_come_from_the_stack_files(tmp_path: Path) -> None:
    """Issue 22: the workflows take the stacks from Pulumi.*.yaml (python3 -m preflight.stacks), so a new
    stack file is gated and deployed without editing a workflow."""
    out = tmp_path / "github_output"
    run = subprocess.run(
        ["python3", "-m", "preflight.stacks", "--github-output"],
        cwd=ROOT,
        env={"GITHUB_OUTPUT": str(out), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == STACKS
    written = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert json.loads(written["stacks"]) == STACKS
    assert json.loads(written["promoted"]) == [s for s in STACKS if s != "dev"]
    for name in ("ci.yml", "deploy.yml"):
        workflow = load(name)
        lister = workflow["jobs"]["stacks"]
        assert [s.get("run") for s in lister["steps"] if "run" in s] == [
            "python3 -m preflight.stacks --github-output"
        ]
        gate = workflow["jobs"]["gate"]
        assert gate["needs"] == "stacks"
        assert gate["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
        # no hard-coded stack list (deploy.yml names only its canary, dev, deployed first)
        text = yaml.safe_dump(workflow["jobs"])
        for stack in STACKS if name == "ci.yml" else [s for s in STACKS if s != "dev"]:
            assert f"{stack}\n" not in text and f"{stack}." not in text, (name, stack)


def test_pull_requests_run_tests_and_the_offline_gate_without_credentials() -> None:
    workflow = load()
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert "pull_request" in triggers
    test = workflow["jobs"]["test"]
    runs = [step.get("run") for step in test["steps"] if "run" in step]
    assert runs == ["make lint", "make test"]
    gate = workflow["jobs"]["gate"]
    install = next(s for s in gate["steps"] if s.get("name") == "Install the Pulumi CLI")
    # the gate runs the real CLI: the release the project tests with (preflight/versions.py)
    from preflight.versions import PULUMI_VERSION

    assert f"sh -s -- --version {PULUMI_VERSION}" in install["run"]
    step = next(s for s in gate["steps"] if "preflight" in s.get("run", ""))
    # --format markdown to the job summary; `shell: bash` runs with -o pipefail, so tee keeps the exit code
    assert step["shell"] == "bash"
    assert step["run"].strip() == (
        '.venv/bin/python -m preflight "${{ matrix.stack }}" --format markdown '
        '| tee -a "$GITHUB_STEP_SUMMARY"'
    )
    for job in (test, gate):
        assert "secrets." not in yaml.safe_dump(job)
    assert workflow["permissions"] == {"contents": "read"}


def test_main_previews_each_stack_with_the_pack_through_oidc() -> None:
    preview = load()["jobs"]["preview"]
    assert preview["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert preview["permissions"]["id-token"] == "write"
    assert preview["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    assert preview["needs"] == ["stacks", "test", "gate"]
    steps = {step.get("uses", "").split("@")[0]: step for step in preview["steps"]}
    assert steps["azure/login"]["with"] == {
        "client-id": "${{ secrets.AZURE_CLIENT_ID }}",
        "tenant-id": "${{ secrets.AZURE_TENANT_ID }}",
        "subscription-id": "${{ secrets.AZURE_SUBSCRIPTION_ID }}",
    }
    pulumi = steps["pulumi/actions"]["with"]
    assert (pulumi["command"], pulumi["stack-name"]) == ("preview", "${{ matrix.stack }}")
    assert pulumi["policyPacks"] == "policies"
    assert pulumi["policyPackConfigs"] == "policies/config/${{ matrix.stack }}.json"
    for stack in STACKS:
        assert (ROOT / "policies" / "config" / f"{stack}.json").is_file()


def test_root_lists_another_programs_stacks_and_refuses_a_folder_without_a_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from preflight.stacks import main

    (tmp_path / "Pulumi.yaml").write_text("name: team\nruntime: python\n")
    for stack in ("qa", "dev", "prod"):
        (tmp_path / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    assert main(["--root", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == ["dev", "prod", "qa"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--root", str(empty)]) == 2
    assert capsys.readouterr().err == (
        f"preflight.stacks: --root: no Pulumi.yaml in {empty}; give the program's folder\n"
    )


# --- the smoke plan (issue 33 item 4) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "stack, smoke, runner",
    [
        ("dev", True, "ubuntu-latest"),  # public
        ("capacity", True, "ubuntu-latest"),  # public
        ("prod", False, None),  # private, no self-hosted runner named
        ("prod-westus3", False, None),
    ],
)
def test_the_smoke_plan_of_each_shipped_stack(
    tmp_path: Path, stack: str, smoke: bool, runner: str | None
) -> None:
    out = tmp_path / "github_output"
    run = subprocess.run(
        [sys.executable, "-m", "preflight.stacks", "--smoke-plan", stack, "--github-output"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"GITHUB_OUTPUT": str(out), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    plan = json.loads(run.stdout)
    assert (plan["stack"], plan["smoke"], plan["runner"]) == (stack, smoke, runner)
    lines = out.read_text().splitlines()
    assert lines[0] == f"smoke={str(smoke).lower()}" and lines[1] == f"runner={runner or ''}"
    assert lines[3] == f"reason={plan['reason']}"
    if not smoke:
        assert "is private (public_network_access: Disabled)" in plan["reason"]


def test_a_stack_file_with_problems_gives_no_plan(tmp_path: Path) -> None:
    from preflight import stacks
    from stackconfig import ConfigError

    (tmp_path / "Pulumi.bad.yaml").write_text("config:\n  azml-gpu:clusters: 3\n")
    with pytest.raises(ConfigError) as caught:
        stacks.smoke_plan("bad", tmp_path)
    assert any(p.startswith("azml-gpu:") for p in caught.value.problems)
