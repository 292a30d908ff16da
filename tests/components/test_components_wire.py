"""Wire-format inputs (camelCase, as the engine receives them) of every resource type, both stacks.

Expected values come from the stack file through stackconfig (the config contract) and from the
Azure facts each component cites; the resources come from the real program under mocks.
"""

from __future__ import annotations

import re
from pathlib import Path

import isodate
import pytest
from components_helpers import (
    APP_INSIGHTS,
    COMPUTE,
    KEY_VAULT,
    LOG_ANALYTICS,
    ML_WORKSPACE,
    REGISTRY,
    RESOURCE_GROUP,
    STORAGE,
    compute,
    one,
)

import vmsizes
from preflight.mocks import FAKE_TENANT_ID
from stackconfig import load_stack_file

ROOT = Path(__file__).resolve().parents[2]


def test_resource_group_created_with_region_and_tags(run, typed):
    rg = one(run, RESOURCE_GROUP)
    ws = typed.workspace
    assert rg.program_inputs == {
        "resourceGroupName": ws.resource_group.name,
        "location": ws.region,
        "tags": ws.tags,
    }
    sub = run.config["azure-native:subscriptionId"]
    assert rg.id == f"/subscriptions/{sub}/resourceGroups/{ws.resource_group.name}"


def test_storage_account_https_only_tls12_no_public_blobs(run, typed):
    st = one(run, STORAGE)
    ws = typed.workspace
    assert re.fullmatch(r"[a-z0-9]{3,24}", st.inputs["accountName"])
    assert st.program_inputs == {
        "accountName": st.inputs["accountName"],
        "resourceGroupName": ws.resource_group.name,
        "location": ws.region,
        "kind": "StorageV2",
        "sku": {"name": "Standard_LRS"},
        "enableHttpsTrafficOnly": True,
        "minimumTlsVersion": "TLS1_2",
        "allowBlobPublicAccess": False,
        # Sent explicitly either way; prod turns account keys off (identity-based datastores).
        "allowSharedKeyAccess": typed.identity.storage_shared_key_access,
        "tags": ws.tags,
    }


def test_key_vault_rbac_soft_delete_purge_protection(run, typed):
    kv = one(run, KEY_VAULT)
    ws = typed.workspace
    name = kv.inputs["vaultName"]
    # 3-24, letter first, letter/digit last, no "--" (resource-name-rules, Microsoft.KeyVault/vaults).
    assert re.fullmatch(r"[a-z][a-z0-9-]{1,22}[a-z0-9]", name) and "--" not in name
    props = kv.inputs["properties"]
    assert props["tenantId"] == FAKE_TENANT_ID  # from authorization.get_client_config()
    assert props["sku"] == {"family": "A", "name": "standard"}
    assert props["enableRbacAuthorization"] is True
    assert props["enableSoftDelete"] is True
    assert props["softDeleteRetentionInDays"] == ws.key_vault_soft_delete_days
    assert props.get("enablePurgeProtection") is (True if ws.key_vault_purge_protection else None)
    assert kv.inputs["location"] == ws.region


def test_dev_can_be_recreated_the_same_day_prod_keeps_protection(typed_configs):
    """A deleted vault's name stays taken while soft-deleted; purge protection forbids freeing it early."""
    dev, prod = typed_configs["dev"].workspace, typed_configs["prod"].workspace
    assert (dev.key_vault_purge_protection, dev.key_vault_soft_delete_days) == (False, 7)
    assert (prod.key_vault_purge_protection, prod.key_vault_soft_delete_days) == (True, 90)


def test_log_analytics_and_workspace_based_app_insights(run, typed):
    log = one(run, LOG_ANALYTICS)
    appi = one(run, APP_INSIGHTS)
    assert log.inputs["sku"] == {"name": "PerGB2018"}
    assert log.inputs["retentionInDays"] == 30
    assert appi.inputs["workspaceResourceId"] == log.id
    name = log.inputs["workspaceName"]
    assert log.id.endswith(f"/providers/Microsoft.OperationalInsights/workspaces/{name}")
    assert appi.inputs["ingestionMode"] == "LogAnalytics"
    assert appi.inputs["applicationType"] == "web" and appi.inputs["kind"] == "web"
    assert appi.inputs["location"] == typed.workspace.region


def test_container_registry_only_when_configured(run, typed):
    registries = run.of_type(REGISTRY)
    if not typed.workspace.container_registry:
        assert registries == []
        assert "containerRegistry" not in one(run, ML_WORKSPACE).inputs
        return
    (acr,) = registries
    assert re.fullmatch(r"[a-z0-9]{5,50}", acr.inputs["registryName"])
    assert acr.inputs["adminUserEnabled"] is False
    # Premium when the workspace is private: private endpoints need it (container-registry-private-link).
    private = typed.network.managed_enabled or typed.network.private_endpoints is not None
    assert acr.inputs["sku"] == {"name": "Premium" if private else "Standard"}
    assert one(run, ML_WORKSPACE).inputs["containerRegistry"] == acr.id


def test_ml_workspace_identity_network_and_dependencies(run, typed):
    mlw = one(run, ML_WORKSPACE)
    ws = typed.workspace
    assert mlw.inputs["workspaceName"] == ws.name
    assert mlw.inputs["identity"] == {"type": "SystemAssigned"}
    assert mlw.inputs["publicNetworkAccess"] == ws.public_network_access
    assert mlw.inputs["storageAccount"] == one(run, STORAGE).id
    assert mlw.inputs["keyVault"] == one(run, KEY_VAULT).id
    assert mlw.inputs["applicationInsights"] == one(run, APP_INSIGHTS).id
    assert mlw.inputs["location"] == ws.region
    assert mlw.inputs["sku"] == {"name": "Basic", "tier": "Basic"}
    for field, value in (("friendlyName", ws.friendly_name), ("description", ws.description)):
        assert mlw.inputs.get(field) == value
    assert mlw.id == (
        f"/subscriptions/{run.config['azure-native:subscriptionId']}/resourceGroups/{ws.resource_group.name}"
        f"/providers/Microsoft.MachineLearningServices/workspaces/{ws.name}"
    )


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
    """The seed's reference cluster h100-x4, the whole body as azure-native sends it."""
    r = compute(runs["prod"], "h100-x4")
    assert r.program_inputs == {
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
    assert r.id == (
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train"
        "/providers/Microsoft.MachineLearningServices/workspaces/ws-llm/computes/h100-x4"
    )


def test_capacity_cross_region_cluster_exact_wire_body(runs):
    """The public stack's a100-wus3: in westus3 (computeLocation), its ARM envelope in the workspace's
    eastus, SSH by key decided at creation."""
    r = compute(runs["capacity"], "a100-wus3")
    key = typed_key("capacity", "a100-wus3")
    assert r.program_inputs["location"] == "eastus"
    assert r.program_inputs["properties"] == {
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


def typed_key(stack: str, cluster: str) -> str:
    """The example RSA key of a stack file's cluster, read through the config schema."""
    ssh = load_stack_file(ROOT / f"Pulumi.{stack}.yaml").cluster(cluster).ssh
    assert ssh.public_key.startswith("ssh-rsa ")
    return ssh.public_key


@pytest.mark.parametrize(
    ("stack", "cluster", "wire"), [("prod", "h100-x4", "PT5M"), ("dev", "t4-dev", "PT30M")]
)
def test_idle_timer_round_trips_through_isodate(runs, stack, cluster, wire):
    """300 s -> PT5M (prod) and 1800 s -> PT30M (dev), and back to the same seconds."""
    sent = compute(runs[stack], cluster).inputs["properties"]["properties"]["scaleSettings"]
    assert sent["nodeIdleTimeBeforeScaleDown"] == wire
    seconds = {"PT5M": 300, "PT30M": 1800}[wire]
    assert isodate.parse_duration(sent["nodeIdleTimeBeforeScaleDown"]).total_seconds() == seconds


def test_every_custom_resource_has_a_realistic_arm_id(run, typed):
    sub = run.config["azure-native:subscriptionId"]
    rg_id = f"/subscriptions/{sub}/resourceGroups/{typed.workspace.resource_group.name}"
    for r in run.declared:
        if not r.custom:
            assert r.id is None, r.urn
            continue
        assert r.id == rg_id or r.id.startswith(rg_id + "/providers/Microsoft."), r.id


def test_analyze_sees_the_checked_inputs_with_the_api_version_azure_native_adds(runs):
    """azure-native v3's Check adds `azureApiVersion` (the resource's API version, here read from the
    installed SDK's class, which says "Uses Azure REST API version ..."); Analyze receives the checked
    inputs."""
    import inspect

    import pulumi_azure_native.machinelearningservices as ml

    r = compute(runs["prod"], "h100-x4")
    version = re.search(r"Uses Azure REST API version (\S+?)\.\s", inspect.getsource(ml.Compute)).group(1)
    assert version == "2025-12-01"
    assert r.inputs == {**r.program_inputs, "azureApiVersion": version}
