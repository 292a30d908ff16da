"""no-locks-on-cluster-network (mandatory, stack): SHOULD PASS / SHOULD FAIL from the happy path: the cluster
h100-x4 in subnet snet-train of vnet-ml (resource group rg-net) and a lock on a storage account. Each lock's
inputs are Analyzed first, as the engine does (policies/locks.py)."""

from __future__ import annotations

from typing import Any

import pytest

from policies import no_locks_on_cluster_network as policy
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    LOCK_AT_RESOURCE,
    LOCK_BY_SCOPE,
    STORAGE,
    SUB,
    SUBNET,
    SUBNET_ID,
    cluster,
    facts,
    resource_args,
    stack_resource,
    stack_verdict,
    urn,
)

VNET = SUBNET.split("/subnets/")[0]
NET = f"{SUB}/resourceGroups/rg-net/providers/Microsoft.Network"
ST_ID = f"{SUB}/resourceGroups/rg-train/providers/Microsoft.Storage/storageAccounts/st"
IN_VNET = stack_resource(COMPUTE, "h100-x4", cluster(**{SUBNET_ID: {"id": SUBNET}}))
NO_SUBNET = stack_resource(COMPUTE, "h100-x4", cluster())
COST = "so scaling fails and the cluster sticks at 'resizing'"
SUBNET_AT_RESOURCE = {
    "resourceGroupName": "rg-net",
    "resourceProviderNamespace": "Microsoft.Network",
    "parentResourcePath": "virtualNetworks/vnet-ml",
    "resourceType": "subnets",
    "resourceName": "snet-train",
}


def preview(
    cluster_: Any,
    lock_inputs: dict[str, Any],
    type_: str = LOCK_BY_SCOPE,
    deps: dict | None = None,
    extra: tuple = (),
) -> list[tuple[str, str | None]]:
    inputs = {"level": "CanNotDelete", **lock_inputs}
    lock = stack_resource(type_, "l", inputs, deps)
    return stack_verdict(policy, [cluster_, *extra, lock], analyzed=[resource_args(type_, inputs, name="l")])


SHOULD_PASS: dict[str, tuple[Any, dict[str, Any], str]] = {
    "happy path: a storage lock": (IN_VNET, {"scope": ST_ID}, LOCK_BY_SCOPE),
    "a cluster without a subnet": (NO_SUBNET, {"scope": SUBNET}, LOCK_BY_SCOPE),
    "another virtual network": (IN_VNET, {"scope": f"{NET}/virtualNetworks/vnet-other"}, LOCK_BY_SCOPE),
    "another subnet of the same network": (IN_VNET, {"scope": f"{VNET}/subnets/snet-other"}, LOCK_BY_SCOPE),
    "a public IP in another resource group": (
        IN_VNET,
        {"scope": f"{SUB}/resourceGroups/rg-other/providers/Microsoft.Network/publicIPAddresses/pip"},
        LOCK_BY_SCOPE,
    ),
    "a route table in the VNet's group (not one Azure ML creates)": (
        IN_VNET,
        {"scope": f"{NET}/routeTables/rt"},
        LOCK_BY_SCOPE,
    ),
    "a lock on the VNet's resource group (no-resource-group-locks' case)": (
        IN_VNET,
        {"scope": f"{SUB}/resourceGroups/rg-net"},
        LOCK_BY_SCOPE,
    ),
}

SHOULD_FAIL: dict[str, tuple[dict[str, Any], str, tuple[str, ...]]] = {
    "the subnet by scope": ({"scope": SUBNET}, LOCK_BY_SCOPE, (f"lock 'l' on the subnet ({SUBNET})", COST)),
    "the subnet id in another case": ({"scope": SUBNET.upper()}, LOCK_BY_SCOPE, ("on the subnet",)),
    "the virtual network by scope, ReadOnly": (
        {"scope": VNET, "level": "ReadOnly"},
        LOCK_BY_SCOPE,
        (f"ReadOnly lock 'l' on the virtual network ({VNET})", "used by cluster(s) h100-x4"),
    ),
    "the subnet at resource level (no subscription)": (
        SUBNET_AT_RESOURCE,
        LOCK_AT_RESOURCE,
        ("on the subnet (/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-ml",),
    ),
    "a load balancer in the VNet's resource group": (
        {"scope": f"{NET}/loadBalancers/aml-lb"},
        LOCK_BY_SCOPE,
        ("on a load balancer in the virtual network's resource group",),
    ),
    "an NSG in the VNet's resource group": (
        {"scope": f"{NET}/networkSecurityGroups/nsg"},
        LOCK_BY_SCOPE,
        ("on a network security group in the virtual network's resource group",),
    ),
    "a public IP in the VNet's resource group": (
        {"scope": f"{NET}/publicIPAddresses/pip"},
        LOCK_BY_SCOPE,
        ("on a public IP address in the virtual network's resource group",),
    ),
    "scope unknown and from no stack resource": (
        {"scope": UNKNOWN},
        LOCK_BY_SCOPE,
        ("cannot decide during preview whether lock 'l' covers a network resource of cluster(s) h100-x4",),
    ),
}


@pytest.mark.parametrize(("cluster_", "lock_inputs", "type_"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(cluster_: Any, lock_inputs: dict[str, Any], type_: str) -> None:
    assert preview(cluster_, lock_inputs, type_) == []


@pytest.mark.parametrize(("lock_inputs", "type_", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(lock_inputs: dict[str, Any], type_: str, expected: tuple[str, ...]) -> None:
    found = preview(IN_VNET, lock_inputs, type_)
    facts([m for m, _ in found], [expected])
    assert [at for _, at in found] == [urn(type_, "l")]


SUBNET_RESOURCE = stack_resource("azure-native:network:Subnet", "snet", {"subnetName": "snet-train"})
ST = stack_resource(STORAGE, "st", {"accountName": "st", "location": "eastus"})
IN_NEW_SUBNET = stack_resource(
    COMPUTE, "h100-x4", cluster(**{SUBNET_ID: {"id": UNKNOWN}}), deps={"properties": [SUBNET_RESOURCE]}
)


def test_first_preview_lock_and_subnet_from_the_same_stack_resource_fail_while_both_are_unknown() -> None:
    found = preview(
        IN_NEW_SUBNET, {"scope": UNKNOWN}, deps={"scope": [SUBNET_RESOURCE]}, extra=(SUBNET_RESOURCE,)
    )
    facts(
        [m for m, _ in found],
        [("lock 'l' on the network resource (Subnet snet) used by cluster(s) h100-x4",)],
    )


def test_first_preview_lock_from_another_stack_resource_passes() -> None:
    assert preview(IN_NEW_SUBNET, {"scope": UNKNOWN}, deps={"scope": [ST]}, extra=(SUBNET_RESOURCE, ST)) == []


def test_no_record_and_a_literal_scope_is_undecidable() -> None:
    """Without the Analyze record (every resource policy disabled) a lock's outputs carry no scope."""
    lock = stack_resource(LOCK_BY_SCOPE, "l", {"level": "CanNotDelete", "scope": SUBNET})
    ((message, _),) = stack_verdict(policy, [IN_VNET, lock])
    assert message.startswith("cannot decide during preview whether lock 'l'")


def test_the_message_in_full() -> None:
    assert preview(IN_VNET, {"scope": SUBNET}) == [
        (
            f"CanNotDelete lock 'l' on the subnet ({SUBNET}) used by cluster(s) h100-x4: Azure ML creates, "
            "updates and deletes these network resources as it scales, so scaling fails and the cluster "
            "sticks at 'resizing'. Fix: remove the lock; lock the storage, key vault and registry instead.",
            urn(LOCK_BY_SCOPE, "l"),
        )
    ]
