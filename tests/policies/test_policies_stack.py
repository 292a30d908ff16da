"""Stack policies called directly (StackValidationArgs of PolicyResources built as the servicer builds them):
locks, quota reservation and its advisory companion, cross-region clusters."""

from __future__ import annotations

from typing import Any

import pytest
from policies_helpers import (
    COMPUTE,
    LOCK_AT_RESOURCE,
    LOCK_AT_RG,
    LOCK_AT_SUB,
    LOCK_BY_SCOPE,
    SUB,
    SUBNET,
    WORKSPACE,
    Recorder,
    cluster,
    stack_args,
    stack_resource,
    urn,
    workspace,
)
from pulumi_policy import PolicyResource

from policies import (
    cross_region_compute,
    no_locks_on_cluster_network,
    no_resource_group_locks,
    quota_reservation,
)
from vmsizes import UnknownSize

P = "properties__properties__"
WS = stack_resource(WORKSPACE, "ws-llm-mlw", workspace())
VNET = SUBNET.split("/subnets/")[0]
NET = f"{SUB}/resourceGroups/rg-net/providers/Microsoft.Network"
RG_TAIL = (
    " applies to the Azure ML workspace's clusters: Azure ML cannot resize them, so clusters stick at "
    "'resizing "
    "0 -> 0' and jobs queue forever. Fix: lock individual resources (storage, key vault, registry) with the "
    "locks config instead."
)
NET_TAIL = (
    " used by cluster(s) h100-x4: Azure ML creates, updates and deletes these network resources as it "
    "scales, "
    "so scaling fails and the cluster sticks at 'resizing'. Fix: remove the lock; lock the storage, key "
    "vault "
    "and registry instead."
)


def run(validate: Any, resources: list[PolicyResource], config: dict[str, Any] | None = None) -> list[tuple]:
    rec = Recorder()
    validate(stack_args(resources, config), rec)
    return rec.calls


def lock(type_: str, props: dict[str, Any], name: str = "l") -> PolicyResource:
    return stack_resource(type_, name, {"level": "CanNotDelete", **props})


RG_CASES = [
    (
        "pass: lock on a storage account",
        [
            WS,
            lock(
                LOCK_BY_SCOPE,
                {"scope": f"{SUB}/resourceGroups/rg-train/providers/Microsoft.Storage/storageAccounts/st"},
            ),
        ],
        [],
    ),
    (
        "pass: resource-group lock without a workspace",
        [lock(LOCK_AT_RG, {"resourceGroupName": "rg-train"})],
        [],
    ),
    (
        "fail: at resource group level",
        [WS, lock(LOCK_AT_RG, {"resourceGroupName": "rg-train"}, "rg-lock")],
        [("CanNotDelete lock 'rg-lock' on resource group rg-train" + RG_TAIL, urn(LOCK_AT_RG, "rg-lock"))],
    ),
    (
        "fail: at subscription level",
        [WS, lock(LOCK_AT_SUB, {"level": "ReadOnly"}, "sub-lock")],
        [("ReadOnly lock 'sub-lock' on the subscription" + RG_TAIL, urn(LOCK_AT_SUB, "sub-lock"))],
    ),
    (
        "fail: by scope on a resource group id",
        [WS, lock(LOCK_BY_SCOPE, {"scope": f"{SUB}/resourceGroups/rg-train"})],
        [(f"CanNotDelete lock 'l' on {SUB}/resourceGroups/rg-train" + RG_TAIL, urn(LOCK_BY_SCOPE, "l"))],
    ),
    (
        "fail: by scope on the subscription id",
        [WS, lock(LOCK_BY_SCOPE, {"scope": SUB + "/"})],
        [(f"CanNotDelete lock 'l' on {SUB}/" + RG_TAIL, urn(LOCK_BY_SCOPE, "l"))],
    ),
]


@pytest.mark.parametrize(("resources", "expected"), [c[1:] for c in RG_CASES], ids=[c[0] for c in RG_CASES])
def test_no_resource_group_locks(resources: list[PolicyResource], expected: list[tuple]) -> None:
    assert run(no_resource_group_locks.validate, resources) == expected


IN_VNET = stack_resource(COMPUTE, "h100-x4", cluster(**{P + "subnet": {"id": SUBNET}}))
NET_CASES = [
    (
        "pass: cluster without subnet",
        [stack_resource(COMPUTE, "h100-x4", cluster()), lock(LOCK_BY_SCOPE, {"scope": SUBNET})],
        [],
    ),
    (
        "pass: another virtual network",
        [
            IN_VNET,
            lock(
                LOCK_BY_SCOPE,
                {
                    "scope": f"{NET}/virtualNetworks/vnet-other"
                },
            ),
        ],
        [],
    ),
    (
        "pass: public IP in another resource group",
        [
            IN_VNET,
            lock(
                LOCK_BY_SCOPE,
                {"scope": f"{SUB}/resourceGroups/rg-other/providers/Microsoft.Network/publicIPAddresses/pip"},
            ),
        ],
        [],
    ),
    (
        "fail: the subnet by scope",
        [IN_VNET, lock(LOCK_BY_SCOPE, {"scope": SUBNET})],
        [(f"CanNotDelete lock 'l' on the subnet ({SUBNET})" + NET_TAIL, urn(LOCK_BY_SCOPE, "l"))],
    ),
    (
        "fail: the virtual network by scope",
        [IN_VNET, lock(LOCK_BY_SCOPE, {"scope": VNET, "level": "ReadOnly"})],
        [(f"ReadOnly lock 'l' on the virtual network ({VNET})" + NET_TAIL, urn(LOCK_BY_SCOPE, "l"))],
    ),
    (
        "fail: the subnet at resource level",
        [
            IN_VNET,
            lock(
                LOCK_AT_RESOURCE,
                {
                    "resourceGroupName": "rg-net",
                    "resourceProviderNamespace": "Microsoft.Network",
                    "parentResourcePath": "virtualNetworks/vnet-ml",
                    "resourceType": "subnets",
                    "resourceName": "snet-train",
                },
            ),
        ],
        [
            (
                "CanNotDelete lock 'l' on the subnet "
                "(/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/"
                "vnet-ml/subnets/snet-train)" + NET_TAIL,
                urn(LOCK_AT_RESOURCE, "l"),
            )
        ],
    ),
    (
        "fail: a load balancer in the VNet's resource group",
        [
            IN_VNET,
            lock(
                LOCK_AT_RESOURCE,
                {
                    "resourceGroupName": "rg-net",
                    "resourceProviderNamespace": "Microsoft.Network",
                    "resourceType": "loadBalancers",
                    "resourceName": "aml-lb",
                },
            ),
        ],
        [
            (
                "CanNotDelete lock 'l' on a load balancer in the virtual network's resource group "
                "(/resourceGroups/rg-net/"
                "providers/Microsoft.Network/loadBalancers/aml-lb)" + NET_TAIL,
                urn(LOCK_AT_RESOURCE, "l"),
            )
        ],
    ),
    (
        "fail: an NSG in the VNet's resource group",
        [
            IN_VNET,
            lock(
                LOCK_BY_SCOPE,
                {
                    "scope": f"{NET}/networkSecurityGroups/nsg"
                },
            ),
        ],
        [
            (
                "CanNotDelete lock 'l' on a network security group in the virtual network's resource group "
                f"({SUB}/resourceGroups/rg-net/providers/Microsoft.Network/networkSecurityGroups/nsg)"
                + NET_TAIL,
                urn(LOCK_BY_SCOPE, "l"),
            )
        ],
    ),
]


@pytest.mark.parametrize(("resources", "expected"), [c[1:] for c in NET_CASES], ids=[c[0] for c in NET_CASES])
def test_no_locks_on_cluster_network(resources: list[PolicyResource], expected: list[tuple]) -> None:
    assert run(no_locks_on_cluster_network.validate, resources) == expected


def compute(name: str, **overrides: Any) -> PolicyResource:
    return stack_resource(COMPUTE, name, cluster(computeName=name, **overrides))


H100_X4 = compute("h100-x4")
H100_WUS3 = compute(
    "h100-wus3", properties__computeLocation="westus3", **{P + "scaleSettings__maxNodeCount": 2}
)
A100_SPOT = compute(
    "a100-spot",
    **{
        P + "vmSize": "Standard_NC24ads_A100_v4",
        P + "vmPriority": "LowPriority",
        P + "scaleSettings__maxNodeCount": 1,
    },
)
QUOTAS = {
    "quotas": {
        "eastus": {"standardNDSH100v5Family": 384, "total": 500, "lowPriority": 100},
        "westus3": {"standardNDSH100v5Family": 192, "total": 200},
    }
}
H100 = "vCPUs of Standard_ND96isr_H100_v5"
OVER = (
    ": clusters hold quota even at zero nodes, so jobs queue for hours once the pool is exhausted. Fix: "
    "lower "
    "max_instances, delete unused clusters, or request {} more vCPUs of quota."
)
UNKNOWN = (
    ", but the policy config gives no quota for this pool, so nothing checks that jobs can get nodes. Fix: "
    "add "
    "quotas.eastus.{} to the quota-reservation config: `python -m jobs quota --stack STACK --write "
    "policies/config/STACK.json` writes the Azure ML quotas."
)

NOT_A_SIZE = UnknownSize("gpu-large", "it must start with 'Standard_'")

QUOTA_CASES = [
    ("pass: the prod plan fits", [H100_X4, H100_WUS3, A100_SPOT], QUOTAS, [], []),
    (
        "fail: a second eastus H100 cluster",
        [H100_X4, compute("h100-x2", **{P + "scaleSettings__maxNodeCount": 2})],
        QUOTAS,
        [
            f"eastus standardNDSH100v5Family: h100-x4 (4 x 96 {H100}), h100-x2 (2 x 96 {H100}) reserve 576 "
            "vCPUs, "
            "quota is 384" + OVER.format(192),
            f"eastus total regional dedicated vCPUs: h100-x4 (4 x 96 {H100}), h100-x2 (2 x 96 {H100}) "
            "reserve 576 "
            "vCPUs, quota is 500" + OVER.format(76),
        ],
        [],
    ),
    (
        "fail: family quota below, case-insensitive key",
        [H100_X4],
        {"quotas": {"East US": {"STANDARDndsh100v5family": 300, "total": 500}}},
        [
            f"eastus standardNDSH100v5Family: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs, quota is 300"
            + OVER.format(84)
        ],
        [],
    ),
    (
        "fail: family key with spaces and other case matches its pool",
        [H100_X4],
        {"quotas": {"eastus": {"Standard NDSH100v5 Family": 300, "total": 500}}},
        [
            f"eastus standardNDSH100v5Family: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs, quota is 300"
            + OVER.format(84)
        ],
        [],
    ),
    (
        "fail: a misspelt family key is a mandatory config problem, not only an advisory",
        [H100_X4],
        {"quotas": {"eastus": {"standardNDSH100v5Famly": 384, "total": 500}}},
        [
            "policy config quota-reservation.quotas.eastus.standardNDSH100v5Famly: not a quota family the "
            "size catalog knows, nor total or lowPriority, so it checks no cluster's quota; did you mean "
            "standardNDSH100v5Family? (in the --policy-pack-config file)"
        ],
        [
            f"eastus standardNDSH100v5Family: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs"
            + UNKNOWN.format("standardNDSH100v5Family")
        ],
    ),
    (
        "fail: a key that resembles no family lists what is accepted",
        [H100_X4],
        {"quotas": {"eastus": {"standardNDSH100v5Family": 384, "total": 500, "gpus": 8}}},
        [
            "policy config quota-reservation.quotas.eastus.gpus: not a quota family the size catalog knows, "
            "nor total or lowPriority, so it checks no cluster's quota; use a quota_family of "
            "vmsizes/data/sizes.yaml, total or lowPriority (in the --policy-pack-config file)"
        ],
        [],
    ),
    (
        "fail: low-priority pool over",
        [A100_SPOT],
        {"quotas": {"eastus": {"lowPriority": 12}}},
        [
            "eastus low-priority vCPUs (all families): a100-spot (1 x 24 vCPUs of Standard_NC24ads_A100_v4) "
            "reserves "
            "24 vCPUs, quota is 12" + OVER.format(12)
        ],
        [],
    ),
    (
        "advisory: no quotas configured",
        [H100_X4, A100_SPOT],
        {"quotas": {}},
        [],
        [
            f"eastus standardNDSH100v5Family: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs"
            + UNKNOWN.format("standardNDSH100v5Family"),
            f"eastus total regional dedicated vCPUs: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs"
            + UNKNOWN.format("total"),
            "eastus low-priority vCPUs (all families): a100-spot (1 x 24 vCPUs of Standard_NC24ads_A100_v4) "
            "reserves 24 "
            "vCPUs" + UNKNOWN.format("lowPriority"),
        ],
    ),
    (
        "advisory: family unknown to the catalog",
        [compute("x", **{P + "vmSize": "Standard_ND200isr_X_v9", P + "scaleSettings__maxNodeCount": 2})],
        QUOTAS,
        [],
        [
            "eastus unknown family of Standard_ND200isr_X_v9: x (2 x 200 vCPUs of Standard_ND200isr_X_v9) "
            "reserves 400 "
            "vCPUs in a quota family the size catalog does not know, so nothing checks that jobs can get "
            "nodes. Fix: "
            "find the family with `az vm list-skus -l eastus --size Standard_ND200isr_X_v9`, add it to "
            "vmsizes/data/sizes.yaml and its quota to the quota-reservation config."
        ],
    ),
    (
        "advisory: a size that is not a VM size, the others still checked",
        [H100_X4, compute("typo", **{P + "vmSize": "gpu-large"})],
        {"quotas": {"eastus": {"standardNDSH100v5Family": 300, "total": 500}}},
        [
            f"eastus standardNDSH100v5Family: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs, quota is 300"
            + OVER.format(84)
        ],
        [
            f"cluster typo: cannot compute its quota reservation ({NOT_A_SIZE}). Fix: use a size from the "
            "catalog (vmsizes/data/sizes.yaml)."
        ],
    ),
]


@pytest.mark.parametrize(
    ("resources", "config", "mandatory", "advisory"),
    [c[1:] for c in QUOTA_CASES],
    ids=[c[0] for c in QUOTA_CASES],
)
def test_quota_reservation(
    resources: list[PolicyResource], config: dict, mandatory: list[str], advisory: list[str]
) -> None:
    assert [m for m, _ in run(quota_reservation.validate, resources, config)] == mandatory
    assert [m for m, _ in run(quota_reservation.validate_companion, resources, config)] == advisory


CROSS = (
    "cluster h100-wus3 runs in westus3 but its workspace is in eastus: every read of data in the workspace's "
    "storage crosses regions, adding latency and egress charges per job. Fix: copy the data to westus3 first "
    "and "
    "add 'h100-wus3' to cross-region-compute.acknowledged, or create the cluster in eastus."
)


@pytest.mark.parametrize(
    ("resources", "config", "expected"),
    [
        ([WS, H100_X4], {"acknowledged": []}, []),
        ([WS, H100_X4, H100_WUS3], {"acknowledged": []}, [(CROSS, urn(COMPUTE, "h100-wus3"))]),
        ([WS, H100_X4, H100_WUS3], {"acknowledged": ["h100-wus3"]}, []),
        # computeLocation wins over location (the cluster's envelope stays in the workspace region)
        (
            [WS, compute("h100-wus3", location="eastus", properties__computeLocation="westus3")],
            {},
            [(CROSS, urn(COMPUTE, "h100-wus3"))],
        ),
        # no computeLocation: the resource location is the cluster region
        (
            [WS, compute("h100-wus3", location="westus3", properties__computeLocation=None)],
            {},
            [(CROSS, urn(COMPUTE, "h100-wus3"))],
        ),
    ],
    ids=[
        "pass: same region",
        "fail: westus3",
        "pass: acknowledged",
        "fail: computeLocation",
        "fail: location",
    ],
)
def test_cross_region_compute(resources: list[PolicyResource], config: dict, expected: list[tuple]) -> None:
    assert run(cross_region_compute.validate, resources, config) == expected
