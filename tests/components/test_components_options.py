"""Resource options and the component tree: immutable cluster settings replace (delete first), scale
settings update in place, every child is parented to its component."""

from __future__ import annotations

from components_helpers import (
    ACCESS_COMPONENT,
    CLUSTER_COMPONENT,
    COMPUTE,
    DIAGNOSTIC_SETTING,
    DIAGNOSTICS_COMPONENT,
    DNS_ZONE_GROUP,
    ENDPOINTS_COMPONENT,
    LOCK,
    LOCKS_COMPONENT,
    PRIVATE_ENDPOINT,
    ROLE_ASSIGNMENT,
    WORKSPACE_COMPONENT,
    compute,
    ns,
    variant,
)

from preflight.program import run_program

# Written out here, not imported from the component, so a change there must be made on purpose.
EXPECTED_REPLACE_ON_CHANGES = {
    "properties.computeLocation",
    "properties.disableLocalAuth",
    "properties.properties.vmSize",
    "properties.properties.vmPriority",
    "properties.properties.userAccountCredentials",
    "properties.properties.remoteLoginPortPublicAccess",
    "properties.properties.subnet",
    "properties.properties.enableNodePublicIp",
}


def _has_path(inputs: dict, path: str) -> bool:
    node = inputs
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_immutable_cluster_settings_replace_and_delete_first(run):
    clusters = run.of_type(COMPUTE)
    assert clusters
    for r in clusters:
        assert set(r.replace_on_changes) == EXPECTED_REPLACE_ON_CHANGES, r.name
        assert r.delete_before_replace is True, r.name
        assert r.options["deleteBeforeReplaceDefined"] is True


def test_scale_settings_stay_in_place_updates(run):
    for r in run.of_type(COMPUTE):
        assert _has_path(r.inputs, "properties.properties.scaleSettings.maxNodeCount")
        assert not any("scaleSettings" in p for p in r.replace_on_changes), r.replace_on_changes
        assert not r.ignore_changes and not r.protect


def test_replace_paths_are_real_wire_paths(stack_configs):
    """With every optional setting present (subnet, SSH), each replace path names an input sent."""
    base = stack_configs["prod"]
    cluster = dict(
        ns(base, "clusters")[0],
        ssh=ns(stack_configs["capacity"], "clusters")[0]["ssh"],  # prod's clusters have none
        name="vnet-x",
        node_public_ip=False,
        subnet_id="/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-net/providers/"
        "Microsoft.Network/virtualNetworks/vnet/subnets/training",
    )
    # Your own subnet, so no managed network (Azure refuses both: stackconfig.combinations).
    network = {"private_endpoints": ns(base, "network")["private_endpoints"]}
    result = run_program("prod", config=variant(base, clusters=[cluster], network=network))
    assert result.ok, result.problems
    r = compute(result, "vnet-x")
    for path in r.replace_on_changes:
        assert _has_path(r.inputs, path), path
    props = r.inputs["properties"]["properties"]
    assert props["subnet"] == {"id": cluster["subnet_id"]}
    assert props["enableNodePublicIp"] is False


def test_only_clusters_carry_replace_options(run):
    for r in run.declared:
        if r.type != COMPUTE:
            assert r.replace_on_changes == [] and r.delete_before_replace is False, r.urn


def test_every_child_is_parented_to_its_component(run):
    stack_urn = run.resources[0].urn
    assert run.resources[0].type == "pulumi:pulumi:Stack"
    expected_parent_type = {
        "azure-native:resources:ResourceGroup": WORKSPACE_COMPONENT,
        "azure-native:storage:StorageAccount": WORKSPACE_COMPONENT,
        "azure-native:keyvault:Vault": WORKSPACE_COMPONENT,
        "azure-native:operationalinsights:Workspace": WORKSPACE_COMPONENT,
        "azure-native:applicationinsights:Component": WORKSPACE_COMPONENT,
        "azure-native:containerregistry:Registry": WORKSPACE_COMPONENT,
        "azure-native:machinelearningservices:Workspace": WORKSPACE_COMPONENT,
        COMPUTE: CLUSTER_COMPONENT,
        LOCK: LOCKS_COMPONENT,
        PRIVATE_ENDPOINT: ENDPOINTS_COMPONENT,
        DNS_ZONE_GROUP: ENDPOINTS_COMPONENT,
        ROLE_ASSIGNMENT: ACCESS_COMPONENT,
        DIAGNOSTIC_SETTING: DIAGNOSTICS_COMPONENT,
    }
    for r in run.declared:
        if r.custom:
            assert r.type in expected_parent_type, f"unexpected type {r.type}"
            parent = run.by_urn(r.parent)
            assert parent.type == expected_parent_type[r.type], r.urn
        else:
            assert r.type in {
                WORKSPACE_COMPONENT,
                CLUSTER_COMPONENT,
                LOCKS_COMPONENT,
                ENDPOINTS_COMPONENT,
                ACCESS_COMPONENT,
                DIAGNOSTICS_COMPONENT,
            }
            assert r.parent == stack_urn
            assert run.children(r), f"component {r.name} declared no children"


def test_cluster_component_per_cluster_with_catalog_outputs(run, typed):
    import vmsizes

    components = {r.name: r for r in run.of_type(CLUSTER_COMPONENT)}
    assert set(components) == {c.name for c in typed.clusters}
    for cluster in typed.clusters:
        size = vmsizes.describe(cluster.size)
        out = components[cluster.name].outputs
        assert out["gpusPerNode"] == size.gpus
        assert out["vcpusPerNode"] == size.vcpus
        assert out["reservedVcpus"] == cluster.max_instances * size.vcpus
        assert out["quotaFamily"] == size.quota_family
        assert out["rdmaUsable"] is size.rdma_usable
        assert out["computeId"] == compute(run, cluster.name).id


def test_reference_cluster_reserves_384_vcpus(runs):
    """The seed: a four-node Standard_ND96isr_H100_v5 cluster needs 384 cores of quota."""
    out = next(r for r in runs["prod"].of_type(CLUSTER_COMPONENT) if r.name == "h100-x4").outputs
    assert out["reservedVcpus"] == 384
    assert out["rdmaUsable"] is True and out["gpusPerNode"] == 8


def test_clusters_depend_on_the_workspace(run):
    mlw = run.of_type("azure-native:machinelearningservices:Workspace")[0]
    for r in run.of_type(COMPUTE):
        assert mlw.urn in r.dependencies, r.name
