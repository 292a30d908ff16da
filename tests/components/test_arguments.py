"""Component arguments checked by stackconfig's rules (components/arguments.py): a program that builds the
components itself gets the stack file's checks and messages at construction, every problem at once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pulumi
import pytest

import vmsizes
from components import GpuClusterArgs, SshAccess, WorkspaceArgs
from components.arguments import ArgumentsError, renamed
from stackconfig import ConfigError, validate

KEYS = Path(__file__).resolve().parents[1] / "fixtures" / "sshkeys"
RSA = (KEYS / "rsa3072.pub").read_text().strip()
ED25519 = (KEYS / "ed25519.pub").read_text().strip()


def cluster(**changes: Any) -> GpuClusterArgs:
    """A valid cluster as a team's own program writes it: plain values, the size by name."""
    values: dict[str, Any] = {
        "name": "h100-x2",
        "size": "Standard_ND96isr_H100_v5",
        "workspace_name": "ws-team",
        "resource_group_name": "rg-team",
        "workspace_region": "eastus",
        "max_instances": 2,
        "idle_seconds": 300,
    }
    return GpuClusterArgs(**{**values, **changes})


def workspace(**changes: Any) -> WorkspaceArgs:
    values: dict[str, Any] = {
        "name": "ws-team",
        "region": "eastus",
        "resource_group": "rg-team",
        "public_network_access": "Disabled",
    }
    return WorkspaceArgs(**{**values, **changes})


def problems(build: Any, **changes: Any) -> list[str]:
    with pytest.raises(ArgumentsError) as raised:
        build(**changes)
    return raised.value.problems


def test_a_size_by_name_becomes_its_catalog_entry() -> None:
    args = cluster(size="standard_nd96isr_h100_v5")
    assert args.size == vmsizes.describe("Standard_ND96isr_H100_v5")
    assert (args.size.name, args.size.gpus) == ("Standard_ND96isr_H100_v5", 8)


def test_a_catalog_entry_is_kept() -> None:
    entry = vmsizes.describe("Standard_NC24ads_A100_v4")
    assert cluster(size=entry).size is entry


@pytest.mark.parametrize(("maximum", "ok"), [(0, False), (1, True), (2, True)])
def test_max_instances_at_and_around_the_lower_bound(maximum: int, ok: bool) -> None:
    if ok:
        assert cluster(max_instances=maximum).max_instances == maximum
    else:
        assert problems(cluster, max_instances=maximum) == [
            "GpuClusterArgs.max_instances: 0 is below 1; use at least 1 (min_instances: 0 still scales to "
            "zero)"
        ]


def test_every_problem_at_once_with_the_arguments_names() -> None:
    found = problems(
        cluster,
        region="eastuss",
        workspace_region="westeurop",
        idle_seconds=-1,
        ssh=SshAccess(admin_user="azureuser", public_key=ED25519),
    )
    assert [p.split(":", 1)[0] for p in found] == [
        "GpuClusterArgs.region",
        "GpuClusterArgs.idle_seconds",
        "GpuClusterArgs.ssh.public_key",
        "GpuClusterArgs.workspace_region",
    ]
    assert found[0] == "GpuClusterArgs.region: 'eastuss' is not a known Azure region; did you mean eastus?"
    assert found[3] == (
        "GpuClusterArgs.workspace_region: 'westeurop' is not a known Azure region; did you mean westeurope?"
    )
    assert "Azure ML compute takes RSA keys only" in found[2]


def test_the_error_lists_each_problem_on_its_own_line() -> None:
    with pytest.raises(ArgumentsError) as raised:
        cluster(max_instances=0, region="eastuss")
    assert str(raised.value).splitlines()[0] == "GpuClusterArgs: 2 invalid argument(s):"
    assert str(raised.value).splitlines()[1].startswith("  - GpuClusterArgs.region: ")


def test_messages_are_the_stack_files_for_the_same_cluster() -> None:
    """One implementation: the stack file's message for the same mistake, with the argument's path."""
    stack = {
        "workspace": {"name": "ws-team", "resource_group": {"name": "rg-team"}, "region": "eastus"},
        "clusters": [
            {
                "name": "h100-x2",
                "size": "Standard_ND96isr_H100_v4x",
                "max_instances": 3,
                "min_instances": 4,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
            }
        ],
    }
    with pytest.raises(ConfigError) as raised:
        validate(stack)
    from_stack = sorted(p.replace("azml-gpu:clusters[0].", "GpuClusterArgs.") for p in raised.value.problems)
    assert sorted(problems(cluster, size="Standard_ND96isr_H100_v4x", max_instances=3, min_instances=4)) == (
        from_stack
    )
    assert len(from_stack) == 2


def test_a_size_without_a_gpu_is_refused() -> None:
    (found,) = problems(cluster, size="Standard_HB176rs_v4")
    assert found.startswith("GpuClusterArgs.size: ")
    assert "no GPU" in found


def test_ssh_with_an_rsa_key_and_low_priority_pass() -> None:
    args = cluster(ssh=SshAccess(admin_user="azureuser", public_key=RSA), tier="low_priority")
    assert args.ssh is not None and args.tier == "low_priority"


def test_an_invalid_tier_is_named() -> None:
    assert problems(cluster, tier="spot") == [
        "GpuClusterArgs.tier: 'spot' is not allowed; use one of dedicated, low_priority"
    ]


def test_values_known_only_at_deployment_are_left_to_the_pack() -> None:
    """A subnet id from another resource is an Output: not checked here (the pack judges it)."""
    loop = asyncio.new_event_loop()  # an Output needs one (other tests leave none set)
    asyncio.set_event_loop(loop)
    try:
        subnet = pulumi.Output.from_input("not-an-arm-id")
        assert cluster(subnet_id=subnet, node_public_ip=False).subnet_id is subnet
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    (found,) = problems(cluster, subnet_id="not-an-arm-id")
    assert found.startswith("GpuClusterArgs.subnet_id: ")


def test_workspace_arguments_by_the_stack_files_rules() -> None:
    assert workspace().name == "ws-team"
    found = problems(workspace, name="w", region="westeurop", resource_group="", key_vault_soft_delete_days=6)
    assert [p.split(":", 1)[0] for p in found] == [
        "WorkspaceArgs.name",
        "WorkspaceArgs.resource_group",
        "WorkspaceArgs.region",
        "WorkspaceArgs.key_vault_soft_delete_days",
    ]
    assert (
        found[2] == "WorkspaceArgs.region: 'westeurop' is not a known Azure region; did you mean westeurope?"
    )


@pytest.mark.parametrize(("days", "ok"), [(6, False), (7, True), (90, True), (91, False)])
def test_soft_delete_days_bounds(days: int, ok: bool) -> None:
    if ok:
        assert workspace(key_vault_soft_delete_days=days).key_vault_soft_delete_days == days
    else:
        (found,) = problems(workspace, key_vault_soft_delete_days=days)
        assert found.startswith("WorkspaceArgs.key_vault_soft_delete_days: ")


def test_renamed_maps_whole_paths_before_their_first_part() -> None:
    names = {"resource_group.name": "resource_group", "idle": "idle_seconds"}
    assert renamed(["resource_group.name: x", "idle: y", "ssh.public_key: z"], names) == [
        "resource_group: x",
        "idle_seconds: y",
        "ssh.public_key: z",
    ]
