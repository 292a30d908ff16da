"""The deploy pipeline (.github/workflows/deploy.yml calling deploy-stack.yml): dev first, prod only after
dev passed and behind its GitHub environment; each runs `pulumi up` with the pack and the stack's policy
config after an OIDC login, then check-deploy and the smoke job under `jobs run` with a JSON verdict kept
as an artifact. Schema validity is checked for every workflow in tests/preflight/test_stacks.py."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from jobs.cli import build_parser
from preflight.stacks import smoke_cluster

ROOT = Path(__file__).resolve().parents[2]
FLOWS = ROOT / ".github" / "workflows"
SECRETS = {"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_SUBSCRIPTION_ID", "PULUMI_ACCESS_TOKEN"}


def _load(name: str) -> dict[str, Any]:
    return yaml.safe_load((FLOWS / name).read_text())


# Every stack file in the repository is deployed by the pipeline.
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))


def _clusters(stack: str) -> set[str]:
    config = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {c["name"] for c in config["azml-gpu:clusters"]}


def test_main_and_dispatch_deploy_dev_then_the_other_stacks_after_the_gate() -> None:
    flow = _load("deploy.yml")
    assert set(flow[True]) == {"push", "workflow_dispatch"}  # YAML 1.1 reads `on` as True
    assert flow[True]["push"] == {"branches": ["main"]}
    assert flow["concurrency"]["cancel-in-progress"] is False  # never cancel a pulumi up half way
    jobs = flow["jobs"]
    assert [s.get("run") for s in jobs["test"]["steps"] if "run" in s] == ["make test"]
    gate = jobs["gate"]
    assert gate["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    assert any("-m preflight" in s.get("run", "") for s in gate["steps"])
    for name in ("stacks", "test", "gate"):
        assert "secrets." not in yaml.safe_dump(jobs[name])
    # Promotion: dev needs the tests and the gate of every stack; every other stack needs dev.
    assert jobs["dev"]["needs"] == ["test", "gate"] and jobs["dev"]["with"] == {"stack": "dev"}
    promote = jobs["promote"]
    assert promote["needs"] == ["stacks", "dev"]
    assert promote["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.promoted) }}"
    assert promote["with"] == {"stack": "${{ matrix.stack }}"}
    for job in (jobs["dev"], promote):
        assert job["uses"] == "./.github/workflows/deploy-stack.yml" and job["secrets"] == "inherit"
    # the smoke job runs on a cluster each stack declares: its first one
    for stack in STACKS:
        assert smoke_cluster(stack) in _clusters(stack), stack


def test_each_environment_is_held_by_its_github_environment_and_logs_in_by_oidc() -> None:
    flow = _load("deploy-stack.yml")
    assert set(flow[True]["workflow_call"]["inputs"]) == {"stack"}
    job = flow["jobs"]["deploy"]
    assert job["environment"] == "${{ inputs.stack }}"  # prod's required reviewers apply before any step
    assert job["permissions"] == {"contents": "read", "id-token": "write"}
    steps = {s.get("uses", "").split("@")[0]: s for s in job["steps"] if "uses" in s}
    assert steps["azure/login"]["with"] == {
        "client-id": "${{ secrets.AZURE_CLIENT_ID }}",
        "tenant-id": "${{ secrets.AZURE_TENANT_ID }}",
        "subscription-id": "${{ secrets.AZURE_SUBSCRIPTION_ID }}",
    }
    text = (FLOWS / "deploy-stack.yml").read_text() + (FLOWS / "deploy.yml").read_text()
    assert set(re.findall(r"secrets\.([A-Z_]+)", text)) == SECRETS  # nothing beyond the README's four
    assert job["env"]["ARM_USE_OIDC"] == "true" and "ARM_CLIENT_SECRET" not in job["env"]


def test_pulumi_up_with_the_pack_then_check_deploy_and_the_smoke_verdict() -> None:
    flow = _load("deploy-stack.yml")
    job = flow["jobs"]["deploy"]
    names = [s.get("uses", "").split("@")[0] or s.get("name") for s in job["steps"]]
    up = next(s for s in job["steps"] if s.get("uses", "").startswith("pulumi/actions@"))["with"]
    assert (up["command"], up["stack-name"]) == ("up", "${{ inputs.stack }}")
    assert up["policyPacks"] == "policies"
    assert up["policyPackConfigs"] == "policies/config/${{ inputs.stack }}.json"
    runs = [s["run"] for s in job["steps"] if "run" in s]
    check = next(r for r in runs if "jobs check-deploy" in r)
    plan = next(r for r in runs if "preflight.stacks --smoke-plan" in r)
    # order: up, then check-deploy, the outputs kept, the smoke plan, then the artifact
    order = [
        "pulumi/actions",
        "Check the deployed clusters against the stack",
        "Keep the stack outputs for the smoke job",
        "Plan the smoke job",
    ]
    assert [names.index(n) for n in order] == sorted(names.index(n) for n in order)
    assert job["steps"][-1]["name"] == "Keep the verdict"
    assert "> verdict/check-deploy.json" in check and "--github-output" in plan
    upload = next(s for s in job["steps"] if s.get("name") == "Keep the verdict")
    assert upload["if"] == "always()" and upload["with"]["path"] == "verdict/"
    assert job["outputs"] == {
        "smoke": "${{ steps.plan.outputs.smoke }}",
        "runner": "${{ steps.plan.outputs.runner }}",
        "cluster": "${{ steps.plan.outputs.cluster }}",
    }
    skipped = next(s for s in job["steps"] if s.get("name") == "Smoke job skipped")
    assert (
        skipped["if"] == "steps.plan.outputs.smoke != 'true'"
        and "steps.plan.outputs.reason" in skipped["run"]
    )
    # The smoke job: only when planned, on the planned runner, in the stack's environment, after OIDC.
    smoke_job = flow["jobs"]["smoke"]
    assert smoke_job["needs"] == "deploy" and smoke_job["if"] == "needs.deploy.outputs.smoke == 'true'"
    assert smoke_job["runs-on"] == "${{ needs.deploy.outputs.runner }}"
    assert smoke_job["environment"] == "${{ inputs.stack }}"
    assert smoke_job["permissions"] == {"contents": "read", "id-token": "write"}
    smoke_names = [s.get("uses", "").split("@")[0] or s.get("name") for s in smoke_job["steps"]]
    assert smoke_names.index("azure/login") < smoke_names.index(
        "Smoke job (resubmitted after infrastructure failures)"
    )
    smoke = next(s["run"] for s in smoke_job["steps"] if "jobs run smoke" in s.get("run", ""))
    assert "> verdict/smoke.json" in smoke
    # The commands parse with the real CLI, for each stack's inputs.
    for stack in STACKS:
        for command in (check, smoke):
            line = command.replace("\\\n", " ").replace("${{ inputs.stack }}", stack)
            line = line.replace('"$cluster"', smoke_cluster(stack))
            line = next(part for part in line.splitlines() if "-m jobs" in part)
            argv = shlex.split(line.split("-m jobs", 1)[1].split(">", 1)[0])
            args = build_parser().parse_args(argv)
            assert args.json and (args.stack == stack or args.outputs == "stack-outputs.json")
