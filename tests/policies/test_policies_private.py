"""no-privileged-role-assignments (+ by-dependency) and private-network (+ cost): each case one change from a
compliant stack, judged on what the engine sends (Analyze: inputs; AnalyzeStack: preview outputs and property
dependencies), in a first preview (unknowns) and once deployed."""

from __future__ import annotations

from typing import Any

import pytest

import azroles
from policies import no_privileged_role_assignments as roles
from policies import no_privileged_role_assignments_by_dependency as roles_by_dependency
from policies import private_network, private_network_inputs
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    STORAGE,
    SUB,
    SUBNET,
    WORKSPACE,
    cluster,
    resource_args,
    stack_resource,
    workspace,
)

ASSIGNMENT = roles.ROLE_ASSIGNMENT
RG_ID = f"{SUB}/resourceGroups/rg-train"
ST_ID = f"{RG_ID}/providers/Microsoft.Storage/storageAccounts/stllm"
P = "properties__properties__"


def assignment(role: str, scope: Any) -> dict[str, Any]:
    return {
        "roleAssignmentName": "8b1b5a4e-0000-4000-8000-000000000001",
        "scope": scope,
        "principalId": "00000000-0000-0000-0000-00000000a001",
        "principalType": "Group",
        "roleDefinitionId": azroles.definition_id(role, SUB.rsplit("/", 1)[-1]) if role else UNKNOWN,
    }


def broad(role: str, scope: str) -> str:
    return roles.message("ra", role, scope)


ROLE_CASES = [
    ("pass: data role on a storage account", assignment("Storage Blob Data Contributor", ST_ID), []),
    ("pass: Contributor on one resource", assignment("Contributor", ST_ID), []),
    ("pass: Reader on the resource group", assignment("Reader", RG_ID), []),
    ("fail: Owner on the resource group", assignment("Owner", RG_ID), [broad("Owner", RG_ID)]),
    ("fail: Contributor on the subscription", assignment("Contributor", SUB), [broad("Contributor", SUB)]),
    (
        "fail: Owner by bare GUID, trailing slash",
        dict(assignment("Owner", SUB + "/"), roleDefinitionId=azroles.BUILT_IN["Owner"]),
        [broad("Owner", SUB + "/")],
    ),
    ("pass: scope unknown (the companion decides)", assignment("Owner", UNKNOWN), []),
]


@pytest.mark.parametrize(("props", "expected"), [c[1:] for c in ROLE_CASES], ids=[c[0] for c in ROLE_CASES])
def test_no_privileged_role_assignments_on_inputs(props: dict, expected: list[str]) -> None:
    assert roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {}) == expected
    roles._UNDECIDED.clear()


def test_an_unknown_role_definition_is_reported_not_skipped() -> None:
    (message,) = roles.validate(resource_args(ASSIGNMENT, assignment("", ST_ID), name="ra"), {})
    assert message.startswith("cannot decide during preview whether role assignment 'ra' grants Owner")


RG = stack_resource("azure-native:resources:ResourceGroup", "ws-llm-rg", {"resourceGroupName": "rg-train"})
ST = stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm", "location": "eastus"})


@pytest.mark.parametrize(
    ("deps", "expected"),
    [
        ({"scope": [RG]}, [roles.message("ra", "Owner", "resource group 'ws-llm-rg' of this stack")]),
        ({"scope": [ST]}, []),
        ({}, ["cannot decide during preview whether role assignment 'ra' (Owner) is scoped"]),
    ],
    ids=["from a resource group of the stack", "from a storage account", "from nothing in the stack"],
)
def test_no_privileged_role_assignments_by_dependency(deps: dict, expected: list[str]) -> None:
    """First preview of a new stack: the scope is unknown at Analyze, the companion judges its source."""
    props = assignment("Owner", UNKNOWN)
    assert roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {}) == []
    found = [
        v.message for v in roles_by_dependency.validate([stack_resource(ASSIGNMENT, "ra", props, deps)], {})
    ]
    assert [m[: len(e)] for m in found for e in expected][: len(expected)] == expected


def test_the_companion_ignores_assignments_decided_at_analyze() -> None:
    props = assignment("Owner", RG_ID)
    roles.validate(resource_args(ASSIGNMENT, props, name="ra"), {})
    assert roles_by_dependency.validate([stack_resource(ASSIGNMENT, "ra", props, {"scope": [RG]})], {}) == []


# private-network: a workspace, its endpoints and clusters, as AnalyzeStack receives them.
MANAGED = {"managedNetwork": {"isolationMode": "AllowOnlyApprovedOutbound"}}


def ws(deployed: bool = False, **overrides: Any):
    """The workspace as AnalyzeStack gets it; `verdicts` first Analyzes its inputs, as the engine does."""
    props = workspace(**overrides)
    resource = stack_resource(WORKSPACE, "ws-llm-mlw", props, deployed=deployed)
    resource.inputs = props  # type: ignore[attr-defined]
    return resource


def endpoint(target, deployed: bool = False):
    service = (
        f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/ws-llm" if deployed else UNKNOWN
    )
    props = {
        "privateEndpointName": "pe-ws-llm-amlworkspace",
        "resourceGroupName": "rg-train",
        "subnet": {"id": SUBNET},
        "privateLinkServiceConnections": [
            {"name": "pe", "privateLinkServiceId": service, "groupIds": ["amlworkspace"]}
        ],
    }
    deps = {"privateLinkServiceConnections": [target]}  # the engine sends them in every preview
    return stack_resource(
        "azure-native:network:PrivateEndpoint", "ws-llm-pe-workspace", props, deps, deployed=deployed
    )


def node(home, **overrides: Any):
    props = cluster(**{P + "enableNodePublicIp": False, **overrides})
    return stack_resource(COMPUTE, "h100-x4", props, {"workspaceName": [home]})


def verdicts(resources: list, analyze: bool = True) -> tuple[list[str], list[str]]:
    """One preview: Analyze each workspace's inputs (private-network-inputs), then the stack policies."""
    private_network._MODES.clear()
    for r in resources:
        if analyze and hasattr(r, "inputs"):
            assert private_network_inputs.validate(resource_args(WORKSPACE, r.inputs, name=r.name), {}) == []
    mandatory, advisory = private_network.findings(resources, {})
    return [m for m, _ in mandatory], [m for m, _ in advisory]


def test_private_workspace_with_an_endpoint_passes_in_both_previews() -> None:
    first = ws()
    assert verdicts([first, endpoint(first)]) == ([], [])
    deployed = ws(deployed=True)
    assert verdicts([deployed, endpoint(deployed, deployed=True)]) == ([], [])


def test_a_managed_network_does_not_replace_the_workspace_private_endpoint() -> None:
    """how-to-managed-network.md: the managed network isolates outbound; inbound is your VNet's private
    endpoint. Disabled with a managed network and no endpoint: nobody reaches the data plane."""
    (message,), _ = verdicts([ws(**MANAGED)])
    assert message.startswith(
        "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint reaches it (its "
        "managed network isolates outbound traffic only): nobody can reach the workspace API"
    )
    home = ws(**MANAGED)
    assert verdicts([home, endpoint(home)]) == ([], [])


def test_private_workspace_without_endpoint_or_managed_network_fails() -> None:
    (message,), _ = verdicts([ws()])
    assert message.startswith(
        "workspace 'ws-llm-mlw' has publicNetworkAccess Disabled but no private endpoint"
    )


def test_an_endpoint_to_another_resource_does_not_count() -> None:
    other = stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm"})
    mandatory, _ = verdicts([ws(), endpoint(other)])
    assert len(mandatory) == 1


def test_public_workspace_needs_nothing() -> None:
    assert verdicts([ws(publicNetworkAccess="Enabled")]) == ([], [])


def test_nodes_without_public_ip_need_a_subnet_or_a_managed_network() -> None:
    public = ws(publicNetworkAccess="Enabled")
    (message,), _ = verdicts([public, node(public)])
    assert message.startswith("cluster h100-x4: node public IP is off but the cluster has no subnet")
    managed = ws(**MANAGED)
    assert verdicts([managed, endpoint(managed), node(managed)]) == ([], [])


def test_no_public_ip_nodes_in_your_vnet_need_a_workspace_private_endpoint() -> None:
    """how-to-secure-training-vnet.md: "You must use a workspace private endpoint for the compute resource to
    communicate with Azure Machine Learning services from the VNet"."""
    public = ws(publicNetworkAccess="Enabled")
    in_vnet = {P + "subnet": {"id": SUBNET}}
    (message,), _ = verdicts([public, node(public, **in_vnet)])
    assert message.startswith(
        "cluster h100-x4: node public IP is off in your virtual network, but no private endpoint reaches its "
        "workspace"
    )
    assert verdicts([public, endpoint(public), node(public, **in_vnet)]) == ([], [])
    assert verdicts([public, node(public, **{**in_vnet, P + "enableNodePublicIp": True})]) == ([], [])


def test_keyless_storage_needs_identity_datastores() -> None:
    storage = stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm", "allowSharedKeyAccess": False})
    home = stack_resource(
        WORKSPACE,
        "ws-llm-mlw",
        workspace(publicNetworkAccess="Enabled", systemDatastoresAuthMode="AccessKey"),
        {"storageAccount": [storage]},
    )
    (message,), _ = verdicts([storage, home])
    assert message.startswith("storage account 'ws-llm-st' has shared key access off")
    fixed = stack_resource(
        WORKSPACE,
        "ws-llm-mlw",
        workspace(publicNetworkAccess="Enabled", systemDatastoresAuthMode="Identity"),
        {"storageAccount": [storage]},
    )
    assert verdicts([storage, fixed]) == ([], [])


def test_fqdn_rules_are_advisory_and_locks_next_to_a_managed_network_mandatory() -> None:
    """how-to-managed-network.md: "Pricing" (the firewall) and "Limitations" ("Make sure there are no scope
    locks on the Azure Machine Learning resources and resource group")."""
    rules = {"pypi": {"type": "FQDN", "category": "UserDefined", "destination": "pypi.org"}}
    home = ws(managedNetwork={"isolationMode": "AllowOnlyApprovedOutbound", "outboundRules": rules})
    lock = stack_resource(
        "azure-native:authorization:ManagementLockByScope", "lock-st", {"level": "CanNotDelete"}
    )
    mandatory, advisory = verdicts([home, endpoint(home), lock])
    assert mandatory == [
        "lock 'lock-st' in a stack whose workspace 'ws-llm-mlw' has a managed network: Azure ML asks for no "
        "scope locks on its resources and resource group, since internal operations of the managed network "
        "might be blocked (how-to-managed-network.md, Limitations). Fix: remove the lock (azml-gpu:locks: "
        "false; unset flags are off with a managed network)."
    ]
    (fqdn,) = advisory
    assert fqdn.startswith(
        "workspace 'ws-llm-mlw': FQDN outbound rules (pypi) make Azure deploy an Azure Firewall"
    )
    plain = ws(publicNetworkAccess="Enabled")
    assert verdicts([plain, lock]) == ([], [])  # no managed network: the lock is not this policy's


def test_unknown_managed_network_is_reported_not_passed() -> None:
    home = ws(managedNetwork=UNKNOWN)
    (message,), _ = verdicts([home, endpoint(home), node(home)], analyze=False)
    assert (
        message == "cluster h100-x4: cannot decide during preview: its workspace's managedNetwork is unknown"
    )


def test_an_absent_managed_network_is_known_from_the_inputs() -> None:
    """In a first preview an output the inputs do not set is unknown: without the Analyze record the policy
    could not tell "no managed network" from "not known yet", and says so."""
    public = ws(publicNetworkAccess="Enabled")
    (message,), _ = verdicts([public, node(public)])
    assert message.startswith("cluster h100-x4: node public IP is off but the cluster has no subnet")
    (message,), _ = verdicts([public, node(public)], analyze=False)
    assert (
        message == "cluster h100-x4: cannot decide during preview: its workspace's managedNetwork is unknown"
    )


def test_an_endpoint_with_a_literal_workspace_id_counts() -> None:
    home = ws(deployed=True)
    props = {
        "privateEndpointName": "pe",
        "resourceGroupName": "rg-train",
        "privateLinkServiceConnections": [
            {
                "privateLinkServiceId": f"{RG_ID}/providers/Microsoft.MachineLearningServices/workspaces/"
                "WS-LLM-MLW"
            }
        ],
    }
    literal = stack_resource("azure-native:network:PrivateEndpoint", "pe", props, deployed=True)
    assert verdicts([home, literal]) == ([], [])


def test_policies_are_registered_with_their_levels() -> None:
    from policies.registry import POLICIES

    levels = {p.name: p.enforcement_level.value for p in POLICIES}
    assert levels["no-privileged-role-assignments"] == "mandatory"
    assert levels["no-privileged-role-assignments-by-dependency"] == "mandatory"
    assert levels["private-network"] == "mandatory"
    assert levels["private-network-cost"] == "advisory"
    assert levels["private-network-inputs"] == "advisory"  # the recorder: reports nothing
    names = [p.name for p in POLICIES]
    assert names.index("private-network-inputs") < names.index("private-network")
