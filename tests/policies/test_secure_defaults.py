"""secure-defaults (advisory; prod: mandatory): SHOULD PASS / SHOULD FAIL per resource type, each from its
happy path: the cluster h100-x4 (SSH acknowledged in ssh_clusters, no subnet, public IP on), a private
workspace, a storage account with TLS 1.2 and no public blobs, a key vault with purge protection."""

from __future__ import annotations

from typing import Any

import pytest

from policies import secure_defaults as policy

from .policies_helpers import (
    COMPUTE,
    DELETE,
    LOCAL_AUTH,
    NO_SSH,
    PASSWORD,
    PUBLIC_IP,
    REMOTE,
    SSH_KEY,
    STORAGE,
    SUBNET,
    SUBNET_ID,
    VAULT,
    WORKSPACE,
    change,
    cluster,
    facts,
    verdict,
    workspace,
)

ACK = {"ssh_clusters": ["h100-x4"]}
IN_SUBNET = {SUBNET_ID: {"id": SUBNET}, PUBLIC_IP: False}

CLUSTER_PASS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "happy path: SSH acknowledged, no subnet, public IP": ({}, ACK),
    "no SSH, local auth off": (NO_SSH, {}),
    "subnet with the public IP off": ({**NO_SSH, **IN_SUBNET}, {}),
    "enableNodePublicIp left out without a subnet (Azure's default: on)": ({**NO_SSH, PUBLIC_IP: DELETE}, {}),
    "public IP off without a subnet: private-network's (it needs the workspace)": (
        {**NO_SSH, PUBLIC_IP: False},
        {},
    ),
}

CLUSTER_FAIL: dict[str, tuple[dict[str, Any], dict[str, Any], list[tuple[str, ...]]]] = {
    "SSH not acknowledged": ({}, {}, [("SSH is enabled on the cluster", "secure-defaults.ssh_clusters")]),
    "SSH acknowledged for another cluster": ({}, {"ssh_clusters": ["other"]}, [("SSH is enabled",)]),
    "SSH by the port alone": ({SSH_KEY: DELETE}, {}, [("SSH is enabled",)]),
    "SSH by a password alone": ({**NO_SSH, PASSWORD: "x"}, {}, [("SSH is enabled",)]),
    "no SSH, local auth left on": (
        {**NO_SSH, LOCAL_AUTH: False},
        {},
        [("local authentication is left on (disableLocalAuth is not true)",)],
    ),
    "no SSH, disableLocalAuth left out (Azure's default: local auth on)": (
        {**NO_SSH, LOCAL_AUTH: DELETE},
        {},
        [("local authentication is left on",)],
    ),
    "subnet with the public IP on": (
        {**NO_SSH, SUBNET_ID: {"id": SUBNET}, PUBLIC_IP: True},
        {},
        [("nodes get public IP addresses although the cluster has a subnet",)],
    ),
    "subnet, enableNodePublicIp left out (Azure's default: on)": (
        {**NO_SSH, SUBNET_ID: {"id": SUBNET}, PUBLIC_IP: DELETE},
        {},
        [("nodes get public IP addresses",)],
    ),
    "SSH and a public IP on a subnet: both reported": (
        {SUBNET_ID: {"id": SUBNET}},
        {},
        [("SSH is enabled",), ("nodes get public IP addresses",)],
    ),
}


@pytest.mark.parametrize(("overrides", "config"), CLUSTER_PASS.values(), ids=CLUSTER_PASS)
def test_cluster_should_pass(overrides: dict[str, Any], config: dict[str, Any]) -> None:
    assert verdict(policy, cluster(**overrides), config) == []


@pytest.mark.parametrize(("overrides", "config", "expected"), CLUSTER_FAIL.values(), ids=CLUSTER_FAIL)
def test_cluster_should_fail(
    overrides: dict[str, Any], config: dict[str, Any], expected: list[tuple[str, ...]]
) -> None:
    facts(verdict(policy, cluster(**overrides), config), expected)


STORAGE_OK = {"allowBlobPublicAccess": False, "minimumTlsVersion": "TLS1_2"}
VAULT_OK = {"properties": {"enablePurgeProtection": True}}

OTHER_PASS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "workspace: Disabled": (WORKSPACE, workspace(), {}),
    "workspace: public, acknowledged": (
        WORKSPACE,
        workspace(publicNetworkAccess="Enabled"),
        {"public_workspaces": ["ws-llm"]},
    ),
    "storage: TLS1_2, no public blobs": (STORAGE, STORAGE_OK, {}),
    "storage: allowBlobPublicAccess left out (Azure's default: false)": (
        STORAGE,
        change(STORAGE_OK, allowBlobPublicAccess=DELETE),
        {},
    ),
    "key vault: purge protection": (VAULT, VAULT_OK, {}),
    "another resource type": ("azure-native:insights:Component", {"kind": "web"}, {}),
}

OTHER_FAIL: dict[str, tuple[str, dict[str, Any], dict[str, Any], tuple[str, ...]]] = {
    "workspace: Enabled": (
        WORKSPACE,
        workspace(publicNetworkAccess="Enabled"),
        {},
        ("workspace publicNetworkAccess is Enabled", "reachable from the internet"),
    ),
    "workspace: publicNetworkAccess left out (Azure's default: Enabled)": (
        WORKSPACE,
        workspace(publicNetworkAccess=DELETE),
        {},
        ("publicNetworkAccess is not set (Azure's default: Enabled)",),
    ),
    "workspace: acknowledged under another name": (
        WORKSPACE,
        workspace(publicNetworkAccess="Enabled"),
        {"public_workspaces": ["ws-other"]},
        ("publicNetworkAccess is Enabled",),
    ),
    "workspace: public access switched back on the SDK v1 way (PSRule Azure.ML.PublicAccess)": (
        WORKSPACE,
        workspace(allowPublicAccessWhenBehindVnet=True),
        {},
        ("allowPublicAccessWhenBehindVnet is true (publicNetworkAccess Disabled)", "Azure.ML.PublicAccess"),
    ),
    "storage: public blobs": (
        STORAGE,
        change(STORAGE_OK, allowBlobPublicAccess=True),
        {},
        ("storage allowBlobPublicAccess is true",),
    ),
    "storage: TLS1_1": (
        STORAGE,
        change(STORAGE_OK, minimumTlsVersion="TLS1_1"),
        {},
        ("storage minimumTlsVersion is TLS1_1", "TLS1_2"),
    ),
    "storage: minimumTlsVersion left out (Azure's default: TLS1_0)": (
        STORAGE,
        change(STORAGE_OK, minimumTlsVersion=DELETE),
        {},
        ("minimumTlsVersion is not set (Azure's default: TLS1_0)",),
    ),
    "key vault: purge protection false": (
        VAULT,
        {"properties": {"enablePurgeProtection": False}},
        {},
        ("key vault purge protection is off",),
    ),
    "key vault: enablePurgeProtection left out (Azure's default: off)": (
        VAULT,
        {"properties": {"enableSoftDelete": True}},
        {},
        ("key vault purge protection is off",),
    ),
}


@pytest.mark.parametrize(("type_", "props", "config"), OTHER_PASS.values(), ids=OTHER_PASS)
def test_other_resources_should_pass(type_: str, props: dict[str, Any], config: dict[str, Any]) -> None:
    assert verdict(policy, props, config, type_=type_, name="x") == []


@pytest.mark.parametrize(("type_", "props", "config", "expected"), OTHER_FAIL.values(), ids=OTHER_FAIL)
def test_other_resources_should_fail(
    type_: str, props: dict[str, Any], config: dict[str, Any], expected: tuple[str, ...]
) -> None:
    facts(verdict(policy, props, config, type_=type_, name="x"), [expected])


def test_storage_with_both_problems_reports_both() -> None:
    props = {"allowBlobPublicAccess": True, "minimumTlsVersion": "TLS1_0"}
    facts(verdict(policy, props, {}, type_=STORAGE, name="x"), [("allowBlobPublicAccess",), ("TLS1_0",)])


def test_an_open_port_with_ssh_acknowledged_still_needs_local_auth_on() -> None:
    """REMOTE Enabled is SSH even without credentials; acknowledged, nothing else is reported."""
    assert verdict(policy, cluster(**{REMOTE: "Enabled", SSH_KEY: DELETE}), ACK) == []


def test_allow_public_access_when_behind_vnet_false_or_acknowledged_passes() -> None:
    """PSRule Azure.ML.PublicAccess: `allowPublicAccessWhenBehindVnet` hasDefault false next to Disabled."""
    assert (
        verdict(policy, workspace(allowPublicAccessWhenBehindVnet=False), {}, type_=WORKSPACE, name="x") == []
    )
    public = workspace(publicNetworkAccess="Enabled", allowPublicAccessWhenBehindVnet=True)
    assert verdict(policy, public, {"public_workspaces": ["ws-llm"]}, type_=WORKSPACE, name="x") == []


MESSAGES: dict[str, tuple[str, dict[str, Any], str]] = {
    "cluster: SSH": (
        COMPUTE,
        cluster(),
        "SSH is enabled on the cluster, and with it local authentication (on Azure ML computes local auth "
        "is SSH): anyone holding the key can log in to every node outside Microsoft Entra ID. Fix: set ssh: "
        "disabled (remoteLoginPortPublicAccess: Disabled, fixed at creation), or add the cluster to "
        "secure-defaults.ssh_clusters in the policy "
        "config if you need SSH to debug it.",
    ),
    "cluster: local auth without SSH": (
        COMPUTE,
        cluster(**{**NO_SSH, LOCAL_AUTH: False}),
        "local authentication is left on (disableLocalAuth is not true) although the cluster has no SSH: it "
        "serves nothing and Azure Policy's 'disable local authentication' flags it. Fix: send "
        "disableLocalAuth: true (the program derives it from ssh).",
    ),
    "cluster: public IP on a subnet": (
        COMPUTE,
        cluster(**{**NO_SSH, SUBNET_ID: {"id": SUBNET}}),
        "nodes get public IP addresses although the cluster has a subnet: every node is reachable from the "
        "internet and Azure adds a public IP and load balancer. Fix: set node_public_ip "
        "(enableNodePublicIp): false (fixed at "
        "creation).",
    ),
    "workspace: public": (
        WORKSPACE,
        workspace(publicNetworkAccess="Enabled"),
        "workspace publicNetworkAccess is Enabled: the workspace API is reachable from the internet. Fix: "
        "set workspace.public_network_access (publicNetworkAccess): Disabled and reach it through a private "
        "endpoint, or list the "
        "workspace in secure-defaults.public_workspaces if public access is intended.",
    ),
    "storage: public blobs": (
        STORAGE,
        change(STORAGE_OK, allowBlobPublicAccess=True),
        "storage allowBlobPublicAccess is true: containers can be made readable by anyone, including "
        "training data and checkpoints. Fix: set allowBlobPublicAccess to false.",
    ),
    "storage: TLS1_1": (
        STORAGE,
        change(STORAGE_OK, minimumTlsVersion="TLS1_1"),
        "storage minimumTlsVersion is TLS1_1: clients may connect with deprecated TLS versions. Fix: set "
        "minimumTlsVersion to TLS1_2.",
    ),
    "key vault: no purge protection": (
        VAULT,
        {"properties": {"enablePurgeProtection": False}},
        "key vault purge protection is off: a deleted vault and the workspace's secrets can be purged at "
        "once, and the workspace cannot switch to another vault. Fix: set "
        "workspace.key_vault_purge_protection (the vault's enablePurgeProtection): true (irreversible, by "
        "design).",
    ),
}


@pytest.mark.parametrize(("type_", "props", "message"), MESSAGES.values(), ids=MESSAGES)
def test_the_messages_in_full(type_: str, props: dict[str, Any], message: str) -> None:
    assert verdict(policy, props, {}, type_=type_) == [message]
