"""components/gpu_cluster.py: one AmlCompute cluster per configured cluster, as the real program declares it
(Pulumi mocks, program_mocks.py): the wire body, the idle timer, cross-region clusters
(docs/azure-behaviour.md, "Cross-region clusters"), the resource options (immutable settings replace, delete
first; scale settings update in place) and the component's catalog outputs."""

from __future__ import annotations

import inspect
import re

import isodate
import pytest

import vmsizes
from components import idle_duration
from preflight.provider import model
from stackconfig import load_stack_file

from .components_helpers import CLUSTER_COMPONENT, COMPUTE, ML_WORKSPACE, SUB, compute, ns, one, variant
from .program_mocks import REPO, run_program

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
SUBNET = (
    f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/"
    "subnets/training"
)


def _has_path(inputs: dict, path: str) -> bool:
    node = inputs
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def typed_key(stack: str, cluster: str) -> str:
    """The example RSA key of a stack file's cluster, read through the config schema."""
    ssh = load_stack_file(REPO / f"Pulumi.{stack}.yaml").cluster(cluster).ssh
    assert ssh.public_key.startswith("ssh-rsa ")
    return ssh.public_key


# --- the wire body ------------------------------------------------------------------------------------------


def test_every_cluster_wire_inputs_follow_its_config(run, typed):
    ws = typed.workspace
    assert {r.inputs["computeName"] for r in run.of_type(COMPUTE)} == {c.name for c in typed.clusters}
    for cluster in typed.clusters:
        r = compute(run, cluster.name)
        size = vmsizes.describe(cluster.size)
        aml = r.inputs["properties"]
        props = aml["properties"]
        assert r.inputs["workspaceName"] == ws.name
        assert r.inputs["resourceGroupName"] == ws.resource_group.name
        assert r.inputs["identity"] == {"type": "SystemAssigned"}
        assert aml["computeType"] == "AmlCompute"
        # Local auth IS SSH on Azure ML computes: azure-ai-ml sends disableLocalAuth = not ssh_settings.
        assert aml["disableLocalAuth"] is (not cluster.ssh_enabled)
        assert props["vmSize"] == size.name
        assert props["vmPriority"] == {"dedicated": "Dedicated", "low_priority": "LowPriority"}[cluster.tier]
        assert props["osType"] == "Linux"
        assert props["enableNodePublicIp"] is cluster.node_public_ip
        scale = props["scaleSettings"]
        assert scale["minNodeCount"] == cluster.min_instances
        assert scale["maxNodeCount"] == cluster.max_instances
        idle = isodate.parse_duration(scale["nodeIdleTimeBeforeScaleDown"])
        assert idle.total_seconds() == cluster.idle_time_before_scale_down
        if cluster.ssh_enabled:
            assert props["userAccountCredentials"] == {
                "adminUserName": cluster.ssh.admin_user,
                "adminUserSshPublicKey": cluster.ssh.public_key,
            }
            assert props["remoteLoginPortPublicAccess"] == "Enabled"
        else:
            assert "userAccountCredentials" not in props
            # Explicit, never "NotSpecified" (which becomes Enabled or Disabled after creation).
            assert props["remoteLoginPortPublicAccess"] == "Disabled"
        assert "adminUserPassword" not in props.get("userAccountCredentials", {})
        assert ("subnet" in props) is (cluster.subnet_id is not None)


def test_prod_reference_cluster_exact_wire_body(runs):
    """The seed's reference cluster h100-x4, the whole body the program sends."""
    assert compute(runs["prod"], "h100-x4").inputs == {
        "computeName": "h100-x4",
        "workspaceName": "ws-llm",
        "resourceGroupName": "rg-train",
        "location": "eastus",
        "identity": {"type": "SystemAssigned"},
        "tags": {"project": "azml-gpu", "env": "prod"},
        "properties": {
            "computeType": "AmlCompute",
            "computeLocation": "eastus",
            # SSH off (no-public-IP nodes in a managed network), so local auth off too.
            "disableLocalAuth": True,
            "properties": {
                "vmSize": "Standard_ND96isr_H100_v5",
                "vmPriority": "Dedicated",
                "osType": "Linux",
                "enableNodePublicIp": False,  # in the managed network
                "remoteLoginPortPublicAccess": "Disabled",
                "scaleSettings": {
                    "minNodeCount": 0,
                    "maxNodeCount": 4,
                    "nodeIdleTimeBeforeScaleDown": "PT5M",
                },
            },
        },
    }


def test_capacity_cross_region_cluster_exact_wire_body(runs):
    """The public stack's a100-wus3: in westus3 (computeLocation), its ARM envelope in the workspace's
    eastus, SSH by key decided at creation."""
    r = compute(runs["capacity"], "a100-wus3")
    key = typed_key("capacity", "a100-wus3")
    assert r.inputs["location"] == "eastus"
    assert r.inputs["properties"] == {
        "computeType": "AmlCompute",
        "computeLocation": "westus3",
        "disableLocalAuth": False,  # SSH is on, and on Azure ML computes local auth is SSH
        "properties": {
            "vmSize": "Standard_NC24ads_A100_v4",
            "vmPriority": "Dedicated",
            "osType": "Linux",
            "enableNodePublicIp": True,
            "remoteLoginPortPublicAccess": "Enabled",
            "scaleSettings": {"minNodeCount": 0, "maxNodeCount": 1, "nodeIdleTimeBeforeScaleDown": "PT5M"},
            "userAccountCredentials": {"adminUserName": "azureuser", "adminUserSshPublicKey": key},
        },
    }


def test_the_provider_checks_the_cluster_at_the_sdks_api_version_and_adds_nothing_else(runs):
    """azure-native v3's Check adds `azureApiVersion` (the resource's API version, here read from the
    installed SDK's class, which says "Uses Azure REST API version ..."); the cluster sends its own location,
    so Check adds no provider default."""
    import pulumi_azure_native.machinelearningservices as ml

    r = compute(runs["prod"], "h100-x4")
    version = re.search(r"Uses Azure REST API version (\S+?)\.\s", inspect.getsource(ml.Compute)).group(1)
    assert version == "2025-12-01"
    assert model.check(COMPUTE, r.inputs, None, "westeurope", None) == {
        **r.inputs,
        "azureApiVersion": version,
    }


@pytest.mark.parametrize(
    ("stack", "cluster", "wire"), [("prod", "h100-x4", "PT5M"), ("dev", "t4-dev", "PT30M")]
)
def test_idle_timer_round_trips_through_isodate(runs, stack, cluster, wire):
    """300 s -> PT5M (prod) and 1800 s -> PT30M (dev), and back to the same seconds."""
    sent = compute(runs[stack], cluster).inputs["properties"]["properties"]["scaleSettings"]
    assert sent["nodeIdleTimeBeforeScaleDown"] == wire
    seconds = {"PT5M": 300, "PT30M": 1800}[wire]
    assert isodate.parse_duration(sent["nodeIdleTimeBeforeScaleDown"]).total_seconds() == seconds


@pytest.mark.parametrize(
    ("seconds", "wire"), [(300, "PT5M"), (1800, "PT30M"), (120, "PT2M"), (3700, "PT1H1M40S")]
)
def test_idle_duration_round_trips(seconds, wire):
    assert idle_duration(seconds) == wire
    assert isodate.parse_duration(wire).total_seconds() == seconds


# --- regions ------------------------------------------------------------------------------------------------


def test_cross_region_cluster_sends_compute_location(stack_configs):
    """The seed's h100-wus3 next to an eastus workspace without a managed network (the public dev stack: a
    private prod workspace can't have it, docs/azure-behaviour.md)."""
    base = stack_configs["dev"]
    wus3 = dict(ns(base, "clusters")[0], name="h100-wus3", region="westus3")
    result = run_program("dev", variant(base, clusters=[*ns(base, "clusters"), wus3]))
    assert result.ok, result.error
    r = compute(result, "h100-wus3")
    assert r.inputs["location"] == "eastus"  # the workspace's region: the ARM envelope of a workspace child
    assert r.inputs["properties"]["computeLocation"] == "westus3"
    component = next(c for c in result.of_type(CLUSTER_COMPONENT) if c.name == "h100-wus3")
    assert component.outputs["region"] == "westus3"
    assert result.outputs["clusters"]["h100-wus3"]["region"] == "westus3"


def test_same_region_clusters_send_the_workspace_region_in_both(run, typed):
    for cluster in typed.clusters:
        r = compute(run, cluster.name)
        assert r.inputs["location"] == typed.workspace.region
        assert r.inputs["properties"]["computeLocation"] == cluster.region


def test_region_follows_config_not_a_constant(stack_configs):
    base = stack_configs["dev"]
    cluster = dict(ns(base, "clusters")[0], region="swedencentral")
    result = run_program("dev", variant(base, clusters=[cluster]))
    (r,) = result.of_type(COMPUTE)
    assert r.inputs["location"] == "eastus"
    assert r.inputs["properties"]["computeLocation"] == "swedencentral"


# --- resource options ---------------------------------------------------------------------------------------


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
        assert not r.options["ignoreChanges"] and not r.options["protect"]


def test_replace_paths_are_real_wire_paths(stack_configs):
    """With every optional setting present (subnet, SSH), each replace path names an input sent."""
    base = stack_configs["prod"]
    cluster = dict(
        ns(base, "clusters")[0],
        ssh=ns(stack_configs["capacity"], "clusters")[0]["ssh"],  # prod's clusters have none
        name="vnet-x",
        node_public_ip=False,
        subnet_id=SUBNET,
    )
    # Your own subnet, so no managed network (Azure refuses both: stackconfig.combinations).
    network = {"private_endpoints": ns(base, "network")["private_endpoints"]}
    result = run_program("prod", variant(base, clusters=[cluster], network=network))
    assert result.ok, result.error
    r = compute(result, "vnet-x")
    for path in r.replace_on_changes:
        assert _has_path(r.inputs, path), path
    props = r.inputs["properties"]["properties"]
    assert props["subnet"] == {"id": SUBNET}
    assert props["enableNodePublicIp"] is False


def test_only_clusters_carry_replace_options(run):
    for r in run.declared:
        if r.type != COMPUTE:
            assert r.replace_on_changes == [] and r.delete_before_replace is False, r.urn
            assert r.options["retainOnDelete"] is False and r.options["beforeDelete"] == [], r.urn


def test_every_cluster_is_deleted_by_the_hook_and_never_by_azure_natives_plain_delete(run):
    """azure-native's DELETE carries no `underlyingResourceAction` (provider.go `Delete`); the cluster is
    retained by the engine (no provider Delete: pulumi step.go `DeleteStep.Apply`) and deleted by the named
    before-delete hook, which sends it (components/compute_delete.py)."""
    clusters = run.of_type(COMPUTE)
    assert clusters
    for r in clusters:
        assert r.options["retainOnDelete"] is True, r.name
        assert r.options["beforeDelete"] == ["azml-gpu-compute-delete"], r.name


def test_clusters_depend_on_the_workspace(run):
    mlw = one(run, ML_WORKSPACE)
    for r in run.of_type(COMPUTE):
        assert mlw.urn in r.dependencies, r.name
        assert r.inputs["workspaceName"] == mlw.state["name"]


# --- the component's outputs --------------------------------------------------------------------------------


def test_cluster_component_per_cluster_with_catalog_outputs(run, typed):
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
        assert out["computeName"] == cluster.name


def test_reference_cluster_reserves_384_vcpus(runs):
    """The seed: a four-node Standard_ND96isr_H100_v5 cluster needs 384 cores of quota."""
    out = next(r for r in runs["prod"].of_type(CLUSTER_COMPONENT) if r.name == "h100-x4").outputs
    assert out["reservedVcpus"] == 384
    assert out["rdmaUsable"] is True and out["gpusPerNode"] == 8


# --- re-created when the workspace's isolation changes ----------------------------------------------------


def _triggers(result) -> dict[str, object]:
    return {r.name: r.options["replacementTrigger"] for r in result.of_type(COMPUTE)}


def test_each_cluster_is_replaced_when_its_workspace_gets_a_managed_network_or_private_endpoint(
    runs, stack_configs
):
    """how-to-managed-network.md, "Migration of compute resources": "You'll need to delete all existing
    managed compute resources and recreate them after enabling the managed virtual network"; how-to-configure-
    private-link.md, "Add a private endpoint to a workspace": existing compute targets not behind the
    endpoint's virtual network "won't work". The engine replaces a resource whose replacement trigger
    changed (pulumi step_generator.go `shouldTriggerReplace`): each cluster's is how its workspace is
    reached."""
    public = "managed-network=False;workspace-private-endpoint=False"
    assert set(_triggers(runs["dev"]).values()) == {public}
    assert set(_triggers(runs["prod"]).values()) == {"managed-network=True;workspace-private-endpoint=True"}
    base = stack_configs["dev"]
    managed = run_program(
        "dev", variant(base, network={"managed": {"isolation_mode": "AllowInternetOutbound"}})
    )
    assert managed.ok, managed.error
    assert set(_triggers(managed).values()) == {"managed-network=True;workspace-private-endpoint=False"}
    # Anything else about the network leaves the trigger as it was: no replacement.
    assert _triggers(runs["dev"]) == {r.name: public for r in runs["dev"].of_type(COMPUTE)}
