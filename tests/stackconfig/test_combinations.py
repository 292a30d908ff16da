"""stackconfig/combinations.py: the network and identity combinations Azure refuses (or that cannot work),
each from the happy-path config (stackconfig_factory.good_raw) changing one thing and asserting the exact key
path and the message's reason and fix; the lock decision [LOCK] (unset locks lock what carries no grant, none
next to a managed network; a lock set against it is refused naming the grants); the rejected stack files of
tests/fixtures/stacks/rejected/; and the module's place in the package (it reads the config through a
protocol, so models -> combinations is the only edge between them).

Sources of the rules (quoted in stackconfig/combinations.py): how-to-managed-network.md "Limitations" (no
cluster in another region than a managed-network workspace; no compute in your own VNet; no FQDN rule to a
storage account with AllowOnlyApprovedOutbound; no scope locks), how-to-network-security-overview.md
"Limitations" (a cluster in a VNet is in the workspace's region), how-to-disable-local-auth-storage.md (keys
off needs identity-based datastores), lock-resources.md (a CanNotDelete lock blocks deleting a role assignment
on the resource it locks)."""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from stackconfig import ConfigError, StackConfig, load_stack_file, validate

from .stackconfig_factory import good_raw, problems

SUB = "00000000-0000-0000-0000-000000000000"
VNET = f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet"
SUBNET = f"{VNET}/subnets/snet"
DATA = f"/subscriptions/{SUB}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/stdata"
PE_SUBNET = f"{VNET}/subnets/snet-pe"
MANAGED = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
GROUP = {"principal_id": "00000000-0000-0000-0000-00000000a001", "principal_type": "Group"}


def same_region() -> dict:
    """good_raw with both clusters in the workspace's region (the second is in westus3 there)."""
    raw = good_raw()
    raw["clusters"][1].pop("region")
    return raw


def public() -> dict[str, Any]:
    """good_raw with one eastus cluster without SSH (the cross-region one would trip the network rules)."""
    raw = good_raw()
    raw["clusters"] = [dict(raw["clusters"][0], ssh="disabled")]
    return raw


def private(**network: Any) -> dict[str, Any]:
    """A private workspace: managed network, no node public IPs, a workspace private endpoint."""
    raw = public()
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["clusters"][0]["node_public_ip"] = False
    raw["network"] = {**copy.deepcopy(MANAGED), "private_endpoints": {"subnet_id": PE_SUBNET}, **network}
    return raw


MANAGED_NETWORK_REFUSAL = (
    "true, and the workspace has a managed network: Azure ML asks for no scope locks on its resources, since "
    "internal operations of the managed network might be blocked (how-to-managed-network.md, Limitations); "
    "set it to false or leave it unset (unset locks are off with a managed network)"
)


def managed(registry: bool) -> dict[str, Any]:
    """A public workspace with a managed network (locks are refused next to one)."""
    raw = public()
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    raw["workspace"]["container_registry"] = registry
    raw["locks"] = {"container_registry": True}
    return raw


def principal(i: int) -> str:
    return f"00000000-0000-0000-0000-00000000a00{i}"


# --- network combinations -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["AllowOnlyApprovedOutbound", "AllowInternetOutbound"])
def test_a_managed_network_refuses_a_cluster_in_another_region(mode):
    raw = good_raw()
    raw["network"] = {"managed": {"isolation_mode": mode}}
    (p,) = problems(raw)
    assert p.startswith(
        "azml-gpu:clusters[1].region: 'westus3' differs from the workspace region (eastus), and Azure ML "
        "does not create a compute cluster in another region"
    )
    assert p.endswith("put the cluster in eastus, or give that region its own workspace (stack) and quota")


def test_a_managed_network_keeps_clusters_in_its_region():
    raw = same_region()
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    assert problems(raw) == []


def test_a_cluster_naming_the_workspace_region_explicitly_is_in_it():
    raw = same_region()
    raw["clusters"][1]["region"] = "eastus"
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    assert problems(raw) == []


def test_a_managed_network_refuses_a_cluster_subnet():
    raw = same_region()
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    raw["clusters"][0]["subnet_id"] = SUBNET
    (p,) = problems(raw)
    assert p.startswith(
        "azml-gpu:clusters[0].subnet_id: a workspace with a managed network can't put computes"
    )
    assert p.endswith("remove subnet_id (the cluster joins the managed network) or remove network.managed")


def test_a_disabled_managed_network_allows_a_subnet_and_another_region_without_one():
    raw = good_raw()  # the second cluster is in westus3, with no subnet
    raw["network"] = {"managed": {"isolation_mode": "Disabled"}}
    raw["clusters"][0]["subnet_id"] = SUBNET
    assert problems(raw) == []


def test_a_cluster_in_your_vnet_must_be_in_the_workspace_region():
    raw = good_raw()
    raw["clusters"][1]["subnet_id"] = SUBNET
    (p,) = problems(raw)
    assert p.startswith(
        "azml-gpu:clusters[1].region: 'westus3' differs from the workspace region (eastus); a cluster in a "
        "virtual network must be in the workspace's region"
    )
    assert p.endswith("put it in eastus or drop subnet_id")


def test_a_cluster_in_your_vnet_in_the_workspace_region_is_fine():
    raw = same_region()
    raw["clusters"][1]["subnet_id"] = SUBNET
    assert problems(raw) == []


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"outbound_rules": [{"name": "pypi", "type": "fqdn", "destination": "pypi.org"}]}, "outbound_rules"),
        ({"firewall_sku": "Standard"}, "firewall_sku"),
    ],
)
def test_a_disabled_managed_network_refuses_rules_and_a_firewall(extra, key):
    raw = good_raw()
    raw["network"] = {"managed": {"isolation_mode": "Disabled", **extra}}
    (p,) = problems(raw)
    assert p == (
        f"azml-gpu:network.managed.{key}: outbound rules and the firewall SKU belong to a managed network, "
        "and isolation_mode is Disabled; remove them or set isolation_mode: AllowOnlyApprovedOutbound"
    )


@pytest.mark.parametrize(
    ("destination", "refused"),
    [
        ("stdata.blob.core.windows.net", True),
        ("STDATA.FILE.CORE.WINDOWS.NET", True),  # host names are case-insensitive
        ("stdata.dfs.core.windows.net", True),
        ("pypi.org", False),
        ("core.windows.net.example.com", False),  # only a suffix match is a storage host
    ],
)
def test_approved_outbound_refuses_an_fqdn_rule_to_storage(destination, refused):
    raw = same_region()
    rules = [
        {"name": "pypi", "type": "fqdn", "destination": "files.pythonhosted.org"},
        {"name": "st", "type": "fqdn", "destination": destination},
    ]
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound", "outbound_rules": rules}}
    got = problems(raw)
    if refused:
        (p,) = got
        assert p.startswith(
            f"azml-gpu:network.managed.outbound_rules[1].destination: '{destination}' is an Azure Storage "
            "host"
        )
        assert p.endswith("use a private_endpoint rule with the account's id and subresource_target blob")
    else:
        assert got == []


def test_the_storage_host_rule_is_only_about_approved_outbound():
    # with AllowInternetOutbound an FQDN rule is refused as needless (every destination is allowed), not as
    # a storage host
    raw = same_region()
    rules = [{"name": "st", "type": "fqdn", "destination": "stdata.blob.core.windows.net"}]
    raw["network"] = {"managed": {"isolation_mode": "AllowInternetOutbound", "outbound_rules": rules}}
    assert not [p for p in problems(raw) if "is an Azure Storage host" in p]


@pytest.mark.parametrize(("registry", "refused"), [(False, True), (True, False)])
def test_a_registry_endpoint_needs_a_registry(registry, refused):
    raw = same_region()
    raw["workspace"]["container_registry"] = registry
    raw["network"] = {
        "private_endpoints": {"subnet_id": SUBNET, "targets": ["workspace", "container_registry"]}
    }
    got = problems(raw)
    if refused:
        assert got == [
            "azml-gpu:network.private_endpoints.targets: container_registry is listed but the stack declares "
            "no registry; set workspace.container_registry: true or remove container_registry from targets"
        ]
    else:
        assert got == []


@pytest.mark.parametrize(
    ("mode", "keys", "refused"),
    [
        ("accessKey", False, True),
        ("identity", False, False),
        ("accessKey", True, False),
        ("identity", True, False),
    ],
)
def test_storage_keys_off_need_identity_datastores(mode, keys, refused):
    raw = same_region()
    raw["identity"] = {"system_datastores_auth_mode": mode, "storage_shared_key_access": keys}
    raw["deploy"] = {"smoke": False}  # no smoke job: no pipeline principal needs the data roles
    got = problems(raw)
    if refused:
        (p,) = got
        assert p.startswith(
            "azml-gpu:identity.storage_shared_key_access: false turns off the storage account"
        )
        assert p.endswith(
            "set identity.system_datastores_auth_mode: identity or storage_shared_key_access: true"
        )
    else:
        assert got == []


def test_every_cluster_is_checked_not_only_the_first():
    raw = good_raw()
    raw["clusters"].append(dict(raw["clusters"][1], name="a100-spot-b"))
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    assert [p.split(": ")[0] for p in problems(raw)] == [
        "azml-gpu:clusters[1].region",
        "azml-gpu:clusters[2].region",
    ]


def test_ssh_on_no_public_ip_nodes_in_a_managed_network_is_refused() -> None:
    raw = private()
    raw["clusters"][0]["ssh"] = good_raw()["clusters"][0]["ssh"]
    assert problems(raw) == [
        "azml-gpu:clusters[0].ssh: SSH on a cluster without node public IPs in a managed network may be "
        "unreachable: Azure documents SSH to such nodes for compute instances only (how-to-managed-"
        "network.md, Limitations), and SSH (with local auth) can't be changed after creation; set ssh: "
        "disabled (debug through the job's logs and `jobs submit health`)"
    ]
    raw["clusters"][0]["node_public_ip"] = True  # public nodes in the managed network: SSH reaches them
    validate(raw)


def test_a_cross_region_cluster_next_to_a_workspace_private_endpoint_is_refused() -> None:
    raw = public()
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["network"] = {"private_endpoints": {"subnet_id": PE_SUBNET}}
    raw["clusters"][0]["region"] = "westus3"
    assert problems(raw) == [
        "azml-gpu:clusters[0].region: 'westus3' differs from the workspace region (eastus), and a cluster in "
        "another region is not available for a workspace with a private endpoint (how-to-create-attach-"
        "compute-cluster.md, Limitations); put the cluster in eastus, or give that region its own workspace "
        "(stack) and quota",
        NO_VNET_REFUSAL.format(name=raw["clusters"][0]["name"]),
    ]
    raw["network"]["private_endpoints"]["targets"] = ["storage_blob"]  # no endpoint to the workspace itself
    validate(raw)


NO_VNET_REFUSAL = (
    "azml-gpu:clusters[0].subnet_id: cluster '{name}' is in no virtual network, and the workspace is reached "
    'only through its private endpoint (public_network_access Disabled, no managed network): "compute '
    "targets ... not behind the same virtual network that the private endpoint is created in ... won't "
    'work" (how-to-configure-private-link.md, Add a private endpoint to a workspace); set subnet_id to a '
    "subnet of the private endpoint's virtual network, or enable network.managed (the cluster then joins the "
    "managed network)"
)


def test_a_private_workspace_refuses_each_cluster_in_no_vnet_without_a_managed_network() -> None:
    raw = public()
    raw["workspace"]["public_network_access"] = "Disabled"
    raw["network"] = {"private_endpoints": {"subnet_id": PE_SUBNET}}
    raw["clusters"] = [dict(raw["clusters"][0], name=n) for n in ("gpu-a", "gpu-b")]
    assert problems(raw) == [
        NO_VNET_REFUSAL.format(name="gpu-a"),
        NO_VNET_REFUSAL.format(name="gpu-b").replace("clusters[0]", "clusters[1]"),
    ]
    # Each way out: the cluster in a subnet, a managed network, public access, no endpoint to the workspace.
    in_vnet = copy.deepcopy(raw)
    for c in in_vnet["clusters"]:
        c["subnet_id"] = PE_SUBNET.replace("snet-pe", "snet-train")
    assert problems(in_vnet) == []
    assert problems(dict(raw, network={**raw["network"], **copy.deepcopy(MANAGED)})) == []
    public_ws = copy.deepcopy(raw)
    public_ws["workspace"]["public_network_access"] = "Enabled"
    assert problems(public_ws) == []
    storage_only = copy.deepcopy(raw)
    storage_only["network"]["private_endpoints"]["targets"] = ["storage_blob"]
    assert problems(storage_only) == []


@pytest.mark.parametrize(
    ("rule", "kind"),
    [
        ({"name": "pypi", "type": "fqdn", "destination": "pypi.org"}, "fqdn"),
        (
            {
                "name": "mon",
                "type": "service_tag",
                "service_tag": "AzureMonitor",
                "protocol": "TCP",
                "port_ranges": "443",
            },
            "service_tag",
        ),
    ],
)
def test_fqdn_and_service_tag_rules_need_allow_only_approved_outbound(rule: dict, kind: str) -> None:
    raw = private(managed={"isolation_mode": "AllowInternetOutbound", "outbound_rules": [rule]})
    assert problems(raw) == [
        f"azml-gpu:network.managed.outbound_rules[0].type: {kind} rules are only valid with "
        "AllowOnlyApprovedOutbound (how-to-managed-network.md); with AllowInternetOutbound every destination "
        "is already allowed: remove the rule, or set isolation_mode: AllowOnlyApprovedOutbound"
    ]
    raw["network"]["managed"]["isolation_mode"] = "AllowOnlyApprovedOutbound"
    validate(raw)


def test_a_private_endpoint_rule_is_valid_under_internet_outbound() -> None:
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA,
        "subresource_target": "blob",
    }
    raw = private(managed={"isolation_mode": "AllowInternetOutbound", "outbound_rules": [rule]})
    raw["identity"] = {"workspace_identity_id": WS_IDENTITY}  # its approver grant precedes the workspace
    validate(raw)


def test_a_data_store_under_approved_outbound_needs_a_private_endpoint_rule() -> None:
    raw = private()
    # A user-assigned workspace identity: its approver grant on the rule's target precedes the workspace.
    raw["identity"] = {"data_stores": [DATA], "workspace_identity_id": WS_IDENTITY}
    assert problems(raw) == [
        "azml-gpu:identity.data_stores[0]: the jobs read this storage account, and with "
        "AllowOnlyApprovedOutbound the managed network reaches a storage account only through a "
        "private-endpoint rule (how-to-managed-network.md); add to network.managed.outbound_rules "
        f"{{name: ..., type: private_endpoint, service_resource_id: {DATA}, subresource_target: blob}}"
    ]
    rule = {
        "name": "data",
        "type": "private_endpoint",
        "service_resource_id": DATA.upper().replace(
            "/SUBSCRIPTIONS/", "/subscriptions/"
        ),  # ARM ids: any case
        "subresource_target": "blob",
    }
    raw["network"]["managed"]["outbound_rules"] = [rule]
    validate(raw)
    raw["network"]["managed"] = {"isolation_mode": "AllowInternetOutbound"}  # internet outbound reaches it
    validate(raw)


def _raw(**network) -> dict:
    return {
        "workspace": {"name": "ws-a", "resource_group": {"name": "rg-a"}, "region": "eastus"},
        "clusters": [
            {
                "name": "h100-x2",
                "size": "Standard_ND96isr_H100_v5",
                "max_instances": 2,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
                "region": "westus3",
            }
        ],
        **({"network": network} if network else {}),
    }


def test_a_public_workspace_keeps_its_cross_region_cluster() -> None:
    config = validate(_raw())
    assert config.clusters[0].region == "westus3"


def test_internet_outbound_managed_network_refuses_cross_region_too() -> None:
    with pytest.raises(ConfigError, match=r"clusters\[0\]\.region: .*how-to-managed-network\.md"):
        validate(_raw(managed={"isolation_mode": "AllowInternetOutbound"}))


def test_models_built_directly_apply_the_combinations() -> None:
    raw = _raw(managed={"isolation_mode": "AllowOnlyApprovedOutbound"})
    with pytest.raises(ValidationError, match="how-to-managed-network.md"):
        StackConfig.model_validate(raw)


# --- the lock decision --------------------------------------------------------------------------------------


def test_unset_locks_lock_what_carries_no_grant() -> None:
    raw = public()
    raw["workspace"]["container_registry"] = True
    assert validate(raw).locks.model_dump() == {
        "storage": True,
        "key_vault": False,  # the workspace identity's Key Vault Administrator
        "container_registry": True,
        "application_insights": True,
        "workspace": False,
    }


def test_identity_datastores_unlock_the_storage_account_by_default() -> None:
    raw = public()
    raw["identity"] = {"system_datastores_auth_mode": "identity"}
    raw["deploy"] = {"smoke": False}
    assert validate(raw).locks.storage is False


def test_unset_locks_are_off_with_a_managed_network() -> None:
    raw = private()
    raw["locks"] = {}
    assert not any(validate(raw).locks.model_dump().values())


def test_a_lock_on_a_granted_resource_is_refused_with_the_grants_named() -> None:
    raw = public()
    raw["locks"] = {"key_vault": True}
    assert problems(raw) == [
        "azml-gpu:locks.key_vault: true, but the stack grants roles on the key vault (Key Vault "
        "Administrator for the workspace identity), and a CanNotDelete lock blocks deleting a role "
        "assignment on the resource it locks (lock-resources.md): replacing a cluster, removing a grant "
        "or `pulumi destroy` would fail half-way; set it to false or leave it unset (unset, a resource is "
        "locked only when it carries no grant)"
    ]


def test_a_workspace_lock_is_refused_when_people_have_roles_on_it() -> None:
    raw = public()
    raw["locks"] = {"workspace": True}
    assert validate(copy.deepcopy(raw)).locks.workspace is True  # no grant on the workspace: allowed
    raw["identity"] = {"role_assignments": [dict(GROUP, role="AzureML Compute Operator")]}
    (problem,) = problems(raw)
    assert problem.startswith(
        "azml-gpu:locks.workspace: true, but the stack grants roles on the workspace (AzureML Compute "
        "Operator for 00000000-0000-0000-0000-00000000a001)"
    )


def test_a_lock_next_to_a_managed_network_is_refused() -> None:
    raw = private()
    raw["locks"] = {"application_insights": True}
    assert problems(raw) == [
        "azml-gpu:locks.application_insights: true, and the workspace has a managed network: Azure ML asks "
        "for no scope locks on its resources, since internal operations of the managed network might be "
        "blocked (how-to-managed-network.md, Limitations); set it to false or leave it unset (unset locks "
        "are off with a managed network)"
    ]


def test_a_registry_lock_without_a_registry_is_ignored() -> None:
    raw = private()
    raw["locks"] = {"container_registry": False}
    raw["workspace"]["container_registry"] = False
    assert validate(raw).locks.container_registry is False
    raw = public()
    raw["locks"] = {"container_registry": True}
    assert validate(raw).locks.container_registry is True  # nothing locked: components skip it


def test_a_registry_lock_without_a_registry_is_ignored_next_to_a_managed_network() -> None:
    assert validate(managed(registry=False)).locks.container_registry is True  # nothing to lock


def test_a_registry_lock_with_a_registry_is_refused_next_to_a_managed_network() -> None:
    assert problems(managed(registry=True)) == [
        f"azml-gpu:locks.container_registry: {MANAGED_NETWORK_REFUSAL}"
    ]


@pytest.mark.parametrize(("count", "tail"), [(3, ""), (4, " and 1 more"), (5, " and 2 more")])
def test_a_refused_lock_names_three_grants_and_counts_the_rest(count: int, tail: str) -> None:
    raw = public()
    raw["locks"] = {"workspace": True}
    assert validate(copy.deepcopy(raw)).locks.workspace is True  # no grant on the workspace yet
    raw["identity"] = {
        "role_assignments": [
            {"principal_id": principal(i), "principal_type": "Group", "role": "AzureML Compute Operator"}
            for i in range(1, count + 1)
        ]
    }
    named = ", ".join(f"AzureML Compute Operator for {principal(i)}" for i in range(1, 4))
    (problem,) = problems(raw)
    assert problem.startswith(
        f"azml-gpu:locks.workspace: true, but the stack grants roles on the workspace ({named}{tail}), "
    )


# --- the rejected stack files -------------------------------------------------------------------------------


REJECTED = Path(__file__).resolve().parents[1] / "fixtures" / "stacks" / "rejected"
FIXTURES = sorted(REJECTED.glob("Pulumi.*.yaml"))
HEADER = re.compile(r"^# REJECTED at (\S+) \((.+?)\): ")


def test_there_is_a_fixture_per_rejected_combination() -> None:
    assert len(FIXTURES) == 10


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name.split(".")[1] for p in FIXTURES])
def test_rejected_fixture_names_its_key_and_reason(path: Path) -> None:
    key, needle = HEADER.match(path.read_text().splitlines()[0]).groups()
    with pytest.raises(ConfigError) as info:
        load_stack_file(path)
    (problem,) = info.value.problems
    assert problem.startswith(f"azml-gpu:{key}: "), problem
    assert needle in problem
    assert "; " in problem  # what is wrong; the fix


# --- no import cycle in the package (issue 26, "Structure": models <-> combinations was one) ----------------


PACKAGE = Path(__file__).resolve().parents[2] / "stackconfig"


def _imports(path: Path) -> set[str]:
    """The stackconfig modules a module imports (`from stackconfig import x` counts x when it is a module)."""
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "stackconfig":
                out |= {a.name for a in node.names if a.name in modules}
            elif node.module.startswith("stackconfig."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("stackconfig.")}
    return out - {path.stem}


def graph() -> dict[str, set[str]]:
    return {p.stem: _imports(p) for p in sorted(PACKAGE.glob("*.py")) if p.stem != "__init__"}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle found by depth-first search, each starting at its smallest module name."""
    found: set[tuple[str, ...]] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                cycle = path[path.index(nxt) :]
                start = cycle.index(min(cycle))
                found.add(tuple(cycle[start:] + cycle[:start]))
            else:
                visit(nxt, [*path, nxt])

    for node in sorted(edges):
        visit(node, [node])
    return [list(c) for c in sorted(found)]


def test_the_walker_finds_a_cycle_when_there_is_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_walker_sees_the_models_combinations_edge() -> None:
    edges = graph()
    assert "combinations" in edges["models"]  # the edge that used to close the cycle
    assert "models" not in edges["combinations"]


def test_stackconfig_has_no_import_cycle() -> None:
    assert cycles(graph()) == []


PE_RULE_TARGET = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-data/providers/Microsoft.Storage/"
    "storageAccounts/stdata"
)
WS_IDENTITY = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-id/providers/"
    "Microsoft.ManagedIdentity/userAssignedIdentities/id-ws"
)
APPROVER_REFUSAL = (
    "azml-gpu:network.managed.outbound_rules: private_endpoint rules need the workspace identity's Azure AI "
    "Enterprise Network Connection Approver grant on each target before the managed network is provisioned "
    "(with the workspace, or with the first cluster), and a system-assigned identity exists only after the "
    "workspace; set identity.workspace_identity_id to a user-assigned identity (the stack grants it the role "
    "before the workspace), or remove the private_endpoint rules"
)


def _pe_rule_stack(provision: bool, identity: dict[str, Any] | None = None) -> dict[str, Any]:
    rule = {"name": "data", "type": "private_endpoint", "service_resource_id": PE_RULE_TARGET}
    raw = private(
        managed={
            "isolation_mode": "AllowOnlyApprovedOutbound",
            "provision_at_creation": provision,
            "outbound_rules": [dict(rule, subresource_target="blob")],
        }
    )
    if identity is not None:
        raw["identity"] = identity
    return raw


@pytest.mark.parametrize("provision", [True, False])
def test_private_endpoint_rules_with_a_system_identity_are_refused(provision):
    """The approver role is no longer Azure's own grant (how-to-managed-network.md, user-defined outbound
    rules); a system-assigned identity's principal exists only after the workspace, so its grant would follow
    a network provisioned at creation, or at the first cluster (provision_at_creation false)."""
    assert problems(_pe_rule_stack(provision)) == [APPROVER_REFUSAL]


@pytest.mark.parametrize("provision", [True, False])
def test_private_endpoint_rules_are_fine_with_a_user_assigned_identity(provision):
    assert problems(_pe_rule_stack(provision, {"workspace_identity_id": WS_IDENTITY})) == []
