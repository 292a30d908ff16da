"""secure-defaults: secure settings on clusters, the workspace and its storage account and key vault.

Advisory by default; policies/config/prod.json sets `"enforcementLevel": "mandatory"`. Rules and sources (the
azure-native 3.29 input docstrings unless noted):
- Cluster SSH, which on Azure ML computes is local authentication: azure-ai-ml sends `disableLocalAuth = not
  ssh_settings` (azure/ai/ml/entities/_compute/aml_compute.py, AmlCompute._to_rest_object) and the program
  does the same. A cluster with SSH (remoteLoginPortPublicAccess Enabled or admin credentials) is reported
  unless config `ssh_clusters` lists it (the seed advises SSH on the clusters you will need to debug, so a
  stack acknowledges those); local auth left on without SSH (`disableLocalAuth` not true) is reported too.
- Node public IP (AmlComputePropertiesArgs.enable_node_public_ip, default true): a cluster WITH a subnet
  should turn the node public IP off (enableNodePublicIp false). Whether a cluster WITHOUT a subnet may turn
  it off depends on its workspace's managed network, which a resource policy cannot see: policy
  `private-network` (policies/private_network.py) judges it with the workspace.
- Workspace `publicNetworkAccess` must be "Disabled" ("Whether requests from Public Network are allowed";
  absent means Azure's default, Enabled), unless the workspace name is in config `public_workspaces` (a
  workspace meant to be used from CI and laptops without a VPN, such as dev, lists itself there). That a
  Disabled workspace is still reachable (a private endpoint) is `private-network`'s.
- Workspace `allowPublicAccessWhenBehindVnet` must not be true ("The flag to indicate whether to allow public
  access when behind VNet", an input azure-native still takes): it switches public access back on the SDK v1
  way whatever `publicNetworkAccess` says; PSRule for Azure's Azure.ML.PublicAccess requires it unset or
  false next to Disabled (Azure/PSRule.Rules.Azure rules/Azure.ML.Rule.yaml). A workspace listed in
  `public_workspaces` is public on purpose and not reported for it.
- Storage account: `allowBlobPublicAccess` must not be true ("The default interpretation is false") and
  `minimumTlsVersion` must be "TLS1_2" ("The default interpretation is TLS 1.0 ... 1.3 is not supported").
- Key vault: `properties.enablePurgeProtection` must be true (a workspace's key vault cannot change after
  creation: platform-notes.md; without purge protection a deleted vault and its secrets can be purged at
  once).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel

from policies._common import KEY_VAULT, STORAGE_ACCOUNT, WORKSPACE, read, undecided
from policies._policy import RESOURCE, AnalyzedResource
from policies.clusters import Cluster, cluster_of

NAME = "secure-defaults"
DESCRIPTION = (
    "Secure defaults: no SSH (local auth) on clusters unless acknowledged, no node public IPs on a subnet, "
    "no public workspace, storage without public blobs and with TLS 1.2, key vault purge protection."
)
ENFORCEMENT = EnforcementLevel.ADVISORY  # policies/config/prod.json makes it mandatory
KIND = RESOURCE
CONFIG: dict[str, Any] = {
    "public_workspaces": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Workspace names whose public network access is intended (acknowledged).",
    },
    "ssh_clusters": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Cluster names whose SSH (so local auth) is intended (acknowledged).",
    },
}
# The cluster fields the cluster rules read (each reported as undecided while unknown in a preview).
CLUSTER_FIELDS = (
    "remote_login",
    "ssh_public_key",
    "admin_password",
    "disable_local_auth",
    "subnet_id",
    "node_public_ip",
)


def validate(resource: AnalyzedResource, config: Mapping[str, Any]) -> list[str]:
    cluster = cluster_of(resource)
    if cluster is None:
        return _resource_messages(
            resource.resource_type, resource.props, list(config.get("public_workspaces", []))
        )
    if why := cluster.undecided(*CLUSTER_FIELDS):
        return [why]
    return _cluster_messages(cluster, list(config.get("ssh_clusters", [])))


def _cluster_messages(cluster: Cluster, ssh_clusters: Collection[str] = ()) -> list[str]:
    found = []
    if cluster.ssh_enabled and cluster.name not in ssh_clusters:
        found.append(
            "SSH is enabled on the cluster, and with it local authentication "
            "(on Azure ML computes local auth is SSH): "
            "anyone holding the key can log in to every node outside Microsoft Entra ID. "
            "Fix: set ssh: disabled (remoteLoginPortPublicAccess: Disabled, fixed at creation), or add the "
            "cluster to secure-defaults.ssh_clusters "
            "in the policy config if you need SSH to debug it."
        )
    elif not cluster.ssh_enabled and cluster.disable_local_auth is not True:
        found.append(
            "local authentication is left on (disableLocalAuth is not true) although the cluster has no SSH: "
            "it serves nothing and Azure Policy's 'disable local authentication' flags it. "
            "Fix: send disableLocalAuth: true (the program derives it from ssh)."
        )
    if cluster.subnet_id and cluster.node_public_ip:
        found.append(
            "nodes get public IP addresses although the cluster has a subnet: "
            "every node is reachable from the internet and Azure adds a public IP and load balancer. "
            "Fix: set node_public_ip (enableNodePublicIp): false (fixed at creation)."
        )
    return found


def _resource_messages(
    resource_type: str, props: Mapping[str, Any], public_workspaces: Collection[str] = ()
) -> list[str]:
    if resource_type == WORKSPACE:
        access, name = read(props, "publicNetworkAccess"), read(props, "workspaceName")
        behind = read(props, "allowPublicAccessWhenBehindVnet")
        if why := undecided(
            publicNetworkAccess=access, workspaceName=name, allowPublicAccessWhenBehindVnet=behind
        ):
            return [why]
        if behind is True and name not in public_workspaces:
            return [
                f"workspace allowPublicAccessWhenBehindVnet is true (publicNetworkAccess "
                f"{access or 'not set'}): public access is switched back on the SDK v1 way, so the "
                "workspace API is reachable from the internet (PSRule Azure.ML.PublicAccess). "
                "Fix: remove allowPublicAccessWhenBehindVnet (the program never sends it), or list the "
                "workspace in secure-defaults.public_workspaces if public access is intended."
            ]
        if access != "Disabled" and name not in public_workspaces:
            shown = access if access else "not set (Azure's default: Enabled)"
            return [
                f"workspace publicNetworkAccess is {shown}: "
                "the workspace API is reachable from the internet. "
                "Fix: set workspace.public_network_access (publicNetworkAccess): Disabled and reach it "
                "through a private endpoint, "
                "or list the workspace in secure-defaults.public_workspaces if public access is intended."
            ]
    elif resource_type == STORAGE_ACCOUNT:
        found = []
        public, tls = read(props, "allowBlobPublicAccess"), read(props, "minimumTlsVersion")
        if why := undecided(allowBlobPublicAccess=public, minimumTlsVersion=tls):
            return [why]
        if public is True:
            found.append(
                "storage allowBlobPublicAccess is true: "
                "containers can be made readable by anyone, including training data and checkpoints. "
                "Fix: set allowBlobPublicAccess to false."
            )
        if tls != "TLS1_2":
            shown = tls if tls else "not set (Azure's default: TLS1_0)"
            found.append(
                f"storage minimumTlsVersion is {shown}: clients may connect with deprecated TLS versions. "
                "Fix: set minimumTlsVersion to TLS1_2."
            )
        return found
    elif resource_type == KEY_VAULT:
        purge = read(props, "properties", "enablePurgeProtection")
        if why := undecided(**{"properties.enablePurgeProtection": purge}):
            return [why]
        if purge is True:
            return []
        return [
            "key vault purge protection is off: "
            "a deleted vault and the workspace's secrets can be purged at once, "
            "and the workspace cannot switch to another vault. "
            "Fix: set workspace.key_vault_purge_protection (the vault's enablePurgeProtection): true "
            "(irreversible, by design)."
        ]
    return []
