"""The policy pack on another program (tests/fixtures/programs/hand-built: raw azure-native resources of the
kinds the azml-gpu components never declare), through the real gate: `evaluate(stack, root=<program>)`.
Locks on the resource group and on a cluster's subnet, Owner on the resource group, SSH and idle-timer
settings set by hand; what only the first deploy cannot know (a scope from the group's id) is decided from
the dependencies there and from the value in the update."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.gate.runner import Command, Gates, Outcome
from tests.integration.gate.specs import FOREIGN, FOREIGN_GROUP_LOCK, HAND_BUILT, SUB

GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-hand"
SUBNET = f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-ml/"
SUBNET += "subnets/snet"
STACK = "urn:pulumi:raw::hand-built-azure::pulumi:pulumi:Stack::hand-built-azure-raw"
# In both evaluations: the cluster settings, the locks known from literals, the quota.
BOTH = [
    ("idle-timer-parseable", "h100-hand"),
    ("idle-timer-parseable", "spot-a100"),
    ("no-locks-on-cluster-network", "subnet-lock"),
    ("no-locks-on-granted-resources", "rg-lock-by-id"),
    ("no-resource-group-locks", "rg-lock"),
    ("quota-reservation", "hand-built-azure-raw"),
    ("ssh-decided-at-creation", "h100-hand"),
    ("ssh-decided-at-creation", "h100-hand"),
]


@pytest.fixture(scope="module")
def runs(gates: Gates) -> dict[str, Outcome]:
    return {o.name: o for o in gates.run(FOREIGN, FOREIGN_GROUP_LOCK)}


def mandatory(evaluation: dict) -> list[tuple[str, str]]:
    return sorted(
        (v["policy"], v["urn"].split("::")[-1])
        for v in evaluation["violations"]
        if v["enforcement"] == "mandatory"
    )


def test_the_pack_judges_another_programs_resources_in_both_evaluations(runs: dict[str, Outcome]) -> None:
    """The first deploy decides the lock and the role assignment on the group created in the stack from their
    dependencies (the scope is unknown); the update from the scope itself."""
    outcome = runs[FOREIGN.name]
    assert outcome.errors == [] and outcome.exit_code == 1
    first, update = outcome.document["evaluations"]
    assert mandatory(first) == sorted(
        [
            *BOTH,
            ("no-privileged-role-assignments-by-dependency", "owner-on-rg"),
            ("no-resource-group-locks-by-dependency", "rg-lock-by-id"),
        ]
    )
    assert mandatory(update) == sorted(
        [
            *BOTH,
            ("no-privileged-role-assignments", "owner-on-rg"),
            ("no-resource-group-locks", "rg-lock-by-id"),
        ]
    )
    assert outcome.document["policy_config"]["file"] == str(HAND_BUILT / "policies" / "config" / "raw.json")
    assert all(
        r["urn"].startswith("urn:pulumi:raw::hand-built-azure::") for r in outcome.document["resources"]
    )


def test_the_messages_name_the_resources_and_the_fix(runs: dict[str, Outcome]) -> None:
    violations = runs[FOREIGN.name].evaluation("update")["violations"]

    def message(policy: str, name: str) -> list[str]:
        return sorted(
            v["message"] for v in violations if v["policy"] == policy and v["urn"].endswith(f"::{name}")
        )

    assert message("no-locks-on-cluster-network", "subnet-lock") == [
        f"ReadOnly lock 'subnet-lock' on the subnet ({SUBNET}) used by cluster(s) h100-hand: Azure ML "
        f"creates, "
        "updates and deletes these network resources as it scales, so scaling fails and the cluster sticks "
        "at "
        "'resizing'. Fix: remove the lock; lock the storage, key vault and registry instead."
    ]
    # the admin password is a secret in the program: the policy still sees its value (the engine sends
    # secrets to Analyze, pulumi-policy unwraps them)
    ssh = message("ssh-decided-at-creation", "h100-hand")
    assert ssh[0] == (
        "an admin password is set on the nodes: it ends up in the stack state and allows password logins on "
        "every node. Fix: remove the password and use ssh.public_key."
    )
    assert ssh[1].startswith(
        "remoteLoginPortPublicAccess is 'NotSpecified': Azure then opens or closes the SSH"
    )
    assert message("idle-timer-parseable", "spot-a100")[0].startswith(
        "nodeIdleTimeBeforeScaleDown 'P1M' is not an ISO-8601 duration of fixed length"
    )
    assert message("no-resource-group-locks", "rg-lock")[0].startswith(
        f"CanNotDelete lock 'rg-lock' on {GROUP} "
    )
    assert message("no-privileged-role-assignments", "owner-on-rg")[0].startswith(
        f"role assignment 'owner-on-rg' grants Owner on {GROUP}: "
    )
    first = runs[FOREIGN.name].evaluation("first-deploy")["violations"]
    (by_dependency,) = [v for v in first if v["policy"] == "no-privileged-role-assignments-by-dependency"]
    assert by_dependency["message"].startswith(
        "role assignment 'owner-on-rg' grants Owner on resource group 'rg' of this stack: "
    )


def test_the_plan_reads_clusters_as_the_policies_do(runs: dict[str, Outcome]) -> None:
    """Priority in any case, the region in any spelling, the idle timer by the policies' one parser (a
    month has no fixed length); the quota rows from the quota policy's own reservation."""
    summary = runs[FOREIGN.name].document["summary"]
    spot = next(c for c in summary["clusters"] if c["name"] == "spot-a100")
    assert {k: v for k, v in spot.items() if k != "urn"} == {
        "name": "spot-a100",
        "size": "Standard_NC24ads_A100_v4",
        "gpus_per_node": 1,
        "vcpus_per_node": 24,
        "quota_family": "StandardNCADSA100v4Family",
        "min_nodes": 0,
        "max_nodes": 1,
        "region": "eastus",
        "tier": "low_priority",
        "idle": "P1M",
        "idle_seconds": None,
        "ssh": "Disabled",
    }
    assert [
        (q["region"], q["kind"], q["reserved_vcpus"], q["quota"], q["status"], q["clusters"])
        for q in summary["quota"]
    ] == [
        ("eastus", "family", 192, 192, "full", ["h100-hand"]),
        ("eastus", "regional-total", 192, 500, "ok", ["h100-hand"]),
        ("eastus", "low-priority", 24, 16, "over", ["spot-a100"]),
    ]
    (quota,) = [v for v in runs[FOREIGN.name].document["violations"] if v["policy"] == "quota-reservation"]
    assert quota["urn"] == STACK
    assert quota["message"].startswith(
        "eastus low-priority vCPUs (all families): spot-a100 (1 x 24 vCPUs of Standard_NC24ads_A100_v4) "
        "reserves "
        "24 vCPUs, quota is 16"
    )


def test_a_resource_group_level_lock_is_judged_in_both_evaluations(runs: dict[str, Outcome]) -> None:
    outcome = runs[FOREIGN_GROUP_LOCK.name]
    assert outcome.errors == []
    for evaluation in outcome.document["evaluations"]:
        assert ("no-resource-group-locks", "rg-lock") in mandatory(evaluation)
    assert outcome.exit_code == 1


def test_the_cli_runs_another_program_with_program_dir(gates: Gates, tmp_path: Path) -> None:
    """`python -m preflight raw --program DIR`, from a folder that is neither the program nor this repository:
    the program's own stack file, policy config and project name, and the same verdict as above."""
    outcome = gates.one(
        Command("cli-program", ("raw", "--json", "--program", str(HAND_BUILT)), cwd=str(tmp_path))
    )
    document = json.loads(outcome.stdout)
    assert outcome.exit_code == 1, outcome.stderr
    assert document["stack"] == "raw"
    assert document["policy_config"]["file"] == str(HAND_BUILT / "policies" / "config" / "raw.json")
    assert {r["urn"].split("::")[1] for r in document["resources"]} == {"hand-built-azure"}
    first, update = document["evaluations"]
    assert ("no-resource-group-locks-by-dependency", "rg-lock-by-id") in mandatory(first)
    assert ("no-resource-group-locks", "rg-lock-by-id") in mandatory(update)
