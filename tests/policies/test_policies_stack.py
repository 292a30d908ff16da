"""Stack policies called directly (StackValidationArgs of PolicyResources built as the servicer builds them
from what the engine sends AnalyzeStack: outputs and property dependencies), and the lock policy on a lock's
inputs (Analyze), which records what it saw for the stack policies: locks, quota reservation and its advisory
companion, cross-region clusters. UNKNOWN is the engine's sentinel for a value unknown during the preview."""

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
    resource_args,
    stack_args,
    stack_resource,
    urn,
    workspace,
)
from policies_helpers import (
    STORAGE as STORAGE_ACCOUNT,
)
from pulumi_policy import PolicyResource

from policies import (
    cross_region_compute,
    no_locks_on_cluster_network,
    no_resource_group_locks,
    quota_reservation,
)
from preflight.azure_native import UNKNOWN
from vmsizes import UnknownSize

RESOURCE_GROUP = "azure-native:resources:ResourceGroup"

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
    """One preview: Analyze every lock's inputs (as the engine does for every resource, before AnalyzeStack),
    then the stack policy."""
    analyze_locks([r.lock_inputs for r in resources if hasattr(r, "lock_inputs")])
    rec = Recorder()
    validate(stack_args(resources, config), rec)
    return rec.calls


def analyze_locks(locks: list[tuple[str, dict[str, Any], str]]) -> list[tuple[str, str | None]]:
    """Analyze each lock's inputs with no-resource-group-locks, as the engine does before AnalyzeStack."""
    rec = Recorder()
    for type_, props, name in locks:
        no_resource_group_locks.validate(resource_args(type_, props, name=name), rec)
    return rec.calls


def lock_inputs(type_: str, props: dict[str, Any], name: str = "l") -> tuple[str, dict[str, Any], str]:
    return (type_, {"level": "CanNotDelete", **props}, name)


def lock(type_: str, props: dict[str, Any], name: str = "l", deps: dict | None = None) -> PolicyResource:
    """A lock as AnalyzeStack gets it (outputs: no scope); `run` Analyzes its inputs first."""
    resource = stack_resource(type_, name, {"level": "CanNotDelete", **props}, deps)
    resource.lock_inputs = lock_inputs(type_, props, name)  # type: ignore[attr-defined]
    return resource


RG_CASES = [
    (
        "pass: lock on a storage account",
        lock_inputs(
            LOCK_BY_SCOPE,
            {"scope": f"{SUB}/resourceGroups/rg-train/providers/Microsoft.Storage/storageAccounts/st"},
        ),
        [],
    ),
    (
        "fail: at resource group level",
        lock_inputs(LOCK_AT_RG, {"resourceGroupName": "rg-train"}, "rg-lock"),
        ["CanNotDelete lock 'rg-lock' on resource group rg-train" + RG_TAIL],
    ),
    (
        "fail: at resource group level, its name unknown in preview",
        lock_inputs(LOCK_AT_RG, {"resourceGroupName": UNKNOWN}, "rg-lock"),
        ["CanNotDelete lock 'rg-lock' on a resource group (name not known until deployment)" + RG_TAIL],
    ),
    (
        "fail: at subscription level",
        lock_inputs(LOCK_AT_SUB, {"level": "ReadOnly"}, "sub-lock"),
        ["ReadOnly lock 'sub-lock' on the subscription" + RG_TAIL],
    ),
    (
        "fail: by scope on a resource group id (an adopted group, known in every preview)",
        lock_inputs(LOCK_BY_SCOPE, {"scope": f"{SUB}/resourceGroups/rg-train"}),
        [f"CanNotDelete lock 'l' on {SUB}/resourceGroups/rg-train" + RG_TAIL],
    ),
    (
        "fail: by scope on the subscription id",
        lock_inputs(LOCK_BY_SCOPE, {"scope": SUB + "/"}),
        [f"CanNotDelete lock 'l' on {SUB}/" + RG_TAIL],
    ),
    (
        "pass: scope unknown in preview: left to the stack companion",
        lock_inputs(LOCK_BY_SCOPE, {"scope": UNKNOWN}),
        [],
    ),
]


@pytest.mark.parametrize(("lock_", "expected"), [c[1:] for c in RG_CASES], ids=[c[0] for c in RG_CASES])
def test_no_resource_group_locks_on_inputs(lock_: tuple, expected: list[str]) -> None:
    assert [m for m, _ in analyze_locks([lock_])] == expected


RG = stack_resource(RESOURCE_GROUP, "ws-llm-rg", {"resourceGroupName": "rg-train", "location": "eastus"})
STORAGE = stack_resource(STORAGE_ACCOUNT, "ws-llm-st", {"accountName": "st", "location": "eastus"})
CANNOT_DECIDE_RG = (
    "cannot decide during preview whether lock 'l' covers a resource group: its scope is not known until "
    "deployment and comes from no resource of this stack (AnalyzeStack carries a lock's outputs, which have "
    "no scope). Fix: give the scope as a literal ARM id, or compute it from the resource it locks."
)


@pytest.mark.parametrize(
    ("scope", "deps", "expected"),
    [
        (
            UNKNOWN,
            {"scope": [RG]},
            [
                (
                    "CanNotDelete lock 'l' on the resource group ws-llm-rg created in this stack" + RG_TAIL,
                    urn(LOCK_BY_SCOPE, "l"),
                )
            ],
        ),
        (UNKNOWN, {"scope": [STORAGE]}, []),
        (UNKNOWN, {}, [(CANNOT_DECIDE_RG, urn(LOCK_BY_SCOPE, "l"))]),
        # known at Analyze (literal or update preview): decided there, not again here
        (f"{SUB}/resourceGroups/rg-train", {"scope": [RG]}, []),
    ],
    ids=[
        "fail: scope from a resource group of the stack",
        "pass: scope from a storage account",
        "undecidable: unknown and from nothing in the stack",
        "known at Analyze: not reported twice",
    ],
)
def test_no_resource_group_locks_by_dependency(scope: str, deps: dict, expected: list[tuple]) -> None:
    """The first preview of a new stack: the lock's scope is the unknown id of a resource being created;
    AnalyzeStack's property dependencies say which."""
    resources = [WS, RG, STORAGE, lock(LOCK_BY_SCOPE, {"scope": scope}, deps=deps)]
    assert run(no_resource_group_locks.validate_stack, resources) == expected


def test_no_resource_group_locks_by_dependency_needs_a_workspace_in_the_stack() -> None:
    assert (
        run(
            no_resource_group_locks.validate_stack,
            [RG, lock(LOCK_BY_SCOPE, {"scope": UNKNOWN}, deps={"scope": [RG]})],
        )
        == []
    )


IN_VNET = stack_resource(COMPUTE, "h100-x4", cluster(**{P + "subnet": {"id": SUBNET}}))
SUBNET_RESOURCE = stack_resource("azure-native:network:Subnet", "snet", {"subnetName": "snet-train"})
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
                {"scope": f"{NET}/virtualNetworks/vnet-other"},
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
                {"scope": f"{NET}/networkSecurityGroups/nsg"},
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


def test_network_lock_and_subnet_from_the_same_stack_resource_fail_while_both_are_unknown() -> None:
    """A subnet created in the stack: the cluster's subnet id and the lock's scope are both unknown in the
    first preview, and both come from the same resource."""
    in_new_subnet = stack_resource(
        COMPUTE, "h100-x4", cluster(**{P + "subnet": {"id": UNKNOWN}}), deps={"properties": [SUBNET_RESOURCE]}
    )
    on_it = lock(LOCK_BY_SCOPE, {"scope": UNKNOWN}, deps={"scope": [SUBNET_RESOURCE]})
    assert run(no_locks_on_cluster_network.validate, [in_new_subnet, SUBNET_RESOURCE, on_it]) == [
        ("CanNotDelete lock 'l' on the network resource (Subnet snet)" + NET_TAIL, urn(LOCK_BY_SCOPE, "l"))
    ]
    elsewhere = lock(LOCK_BY_SCOPE, {"scope": UNKNOWN}, deps={"scope": [STORAGE]})
    assert (
        run(no_locks_on_cluster_network.validate, [in_new_subnet, SUBNET_RESOURCE, STORAGE, elsewhere]) == []
    )


def test_network_lock_with_an_undecidable_scope_is_reported() -> None:
    unknown = lock(LOCK_BY_SCOPE, {"scope": UNKNOWN})
    assert run(no_locks_on_cluster_network.validate, [IN_VNET, unknown]) == [
        (
            "cannot decide during preview whether lock 'l' covers a network resource of cluster(s) h100-x4: "
            "its scope is not known until deployment and comes from no resource of this stack. Fix: give the "
            "scope as a literal ARM id.",
            urn(LOCK_BY_SCOPE, "l"),
        )
    ]


def compute(name: str, deps: dict | None = None, **overrides: Any) -> PolicyResource:
    return stack_resource(COMPUTE, name, cluster(computeName=name, **overrides), deps)


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
NO_QUOTA = (
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
            + NO_QUOTA.format("standardNDSH100v5Family")
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
            + NO_QUOTA.format("standardNDSH100v5Family"),
            f"eastus total regional dedicated vCPUs: h100-x4 (4 x 96 {H100}) reserves 384 vCPUs"
            + NO_QUOTA.format("total"),
            "eastus low-priority vCPUs (all families): a100-spot (1 x 24 vCPUs of Standard_NC24ads_A100_v4) "
            "reserves 24 "
            "vCPUs" + NO_QUOTA.format("lowPriority"),
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


QUOTA_CASES.append(
    (
        "fail: a node count unknown in preview cannot be counted",
        [H100_X4, compute("h100-x2", **{P + "scaleSettings__maxNodeCount": UNKNOWN})],
        QUOTAS,
        [
            "cluster h100-x2: its quota reservation cannot decide during preview: "
            "properties.properties.scaleSettings.maxNodeCount is not known until deployment (computed from "
            "another resource's output), so this check would first run during `pulumi up`, after resources "
            "were already created. Fix: give it a literal value in the program (the stack config)."
        ],
        [],
    )
)


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


WS_DEP = {"workspaceName": [WS]}


@pytest.mark.parametrize(
    ("resources", "config", "expected"),
    [
        ([WS, compute("h100-x4", WS_DEP)], {"acknowledged": []}, []),
        (
            [WS, H100_X4, compute("h100-wus3", WS_DEP, properties__computeLocation="westus3")],
            {"acknowledged": []},
            [(CROSS, urn(COMPUTE, "h100-wus3"))],
        ),
        ([WS, H100_X4, H100_WUS3], {"acknowledged": ["h100-wus3"]}, []),
        # computeLocation wins over location (the cluster's envelope stays in the workspace region)
        (
            [WS, compute("h100-wus3", WS_DEP, location="eastus", properties__computeLocation="westus3")],
            {},
            [(CROSS, urn(COMPUTE, "h100-wus3"))],
        ),
        # no computeLocation: the resource location is the cluster region
        (
            [WS, compute("h100-wus3", location="westus3", properties__computeLocation=None)],
            {},
            [(CROSS, urn(COMPUTE, "h100-wus3"))],
        ),
        # the workspace the cluster's workspaceName comes from, not another one in the stack
        (
            [
                WS,
                stack_resource(WORKSPACE, "ws-west", workspace(workspaceName="ws-west", location="westus3")),
                compute("h100-wus3", WS_DEP, properties__computeLocation="westus3"),
            ],
            {},
            [(CROSS, urn(COMPUTE, "h100-wus3"))],
        ),
        (
            [WS, compute("h100-x4", WS_DEP, properties__computeLocation=UNKNOWN, location=UNKNOWN)],
            {},
            [
                (
                    "cluster h100-x4: cannot decide during preview: the cluster region is not known until "
                    "deployment (computed from another resource's output), so this check would first run "
                    "during `pulumi up`, after resources were already created. Fix: give it a literal value "
                    "in the program (the stack config).",
                    urn(COMPUTE, "h100-x4"),
                )
            ],
        ),
    ],
    ids=[
        "pass: same region",
        "fail: westus3",
        "pass: acknowledged",
        "fail: computeLocation",
        "fail: location, the only workspace",
        "fail: its own workspace by dependency",
        "undecidable: region unknown",
    ],
)
def test_cross_region_compute(resources: list[PolicyResource], config: dict, expected: list[tuple]) -> None:
    assert run(cross_region_compute.validate, resources, config) == expected


def test_stack_policies_read_preview_outputs_without_a_cant_run_advisory() -> None:
    """In the first preview the outputs carry unknowns (name, type, ...) that the stack policies never read:
    no UnknownValueError escapes (it would become pulumi-policy's "can't run policy ... during preview")."""
    first_deploy = [
        WS,
        RG,
        STORAGE,
        compute("h100-x4", WS_DEP),
        lock(LOCK_BY_SCOPE, {"scope": UNKNOWN}, deps={"scope": [STORAGE]}),
    ]
    for validate in (
        no_resource_group_locks.validate_stack,
        no_locks_on_cluster_network.validate,
        quota_reservation.validate,
        cross_region_compute.validate,
    ):
        assert run(validate, first_deploy, QUOTAS if validate is quota_reservation.validate else {}) == []
