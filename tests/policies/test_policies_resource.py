"""Resource policies called directly, Checkov-style: SHOULD PASS / SHOULD FAIL tables built from one
happy-path cluster (policies_helpers.cluster), each case changing one field and asserting the exact
messages."""

from __future__ import annotations

from typing import Any

import pytest
from policies_helpers import (
    COMPUTE,
    DELETE,
    KEY_1024,
    KEY_2048,
    KEY_ED25519,
    STORAGE,
    SUBNET,
    VAULT,
    WORKSPACE,
    Recorder,
    cluster,
    resource_args,
    run_resource,
    workspace,
)

from policies import (
    idle_timer_bounds,
    low_priority_multi_node,
    min_nodes_zero,
    multi_node_requires_rdma,
    no_retired_vm_series,
    secure_defaults,
    ssh_decided_at_creation,
)
from policies._common import norm_region, parse_seconds
from preflight.azure_native import UNKNOWN
from vmsizes.regions import normalize_region

P = "properties__properties__"
SCALE = P + "scaleSettings__"

TCP_TAIL = (
    "; with max_instances=4, NCCL falls back to TCP sockets, so gradient all-reduce crawls and extra nodes "
    "are "
    "paid for without speeding training up. Fix: use an RDMA size (an 'r' in the name, e.g. "
    "Standard_ND96isr_H100_v5), or set max_instances to 1."
)
RETIRED_TAIL = (
    ": Azure cannot provision it and deallocates remaining VMs, so the cluster never gets a node. Fix: "
    "recreate "
    "the cluster on a current size (e.g. Standard_NC40ads_H100_v5 or Standard_ND96isr_H100_v5)."
)
ACK_SSH = {"ssh_clusters": ["h100-x4"]}
NO_SSH = {
    P + "remoteLoginPortPublicAccess": "Disabled",
    P + "userAccountCredentials": DELETE,
    "properties__disableLocalAuth": True,
}
SSH_NOT_ACKNOWLEDGED = (
    "SSH is enabled on the cluster, and with it local authentication (on Azure ML computes local auth "
    "is SSH): anyone holding the key can log in to every node outside Microsoft Entra ID. Fix: set ssh: "
    "disabled (fixed at creation), or add the cluster to secure-defaults.ssh_clusters in the policy "
    "config if you need SSH to debug it."
)
SSH_UNDECIDED = (
    "remoteLoginPortPublicAccess is {}: Azure then opens or closes the SSH port depending on the network and "
    "fixes it at creation, and it cannot be changed without recreating the cluster. Fix: set ssh to "
    "'disabled' "
    "or to {{admin_user, public_key}} in the stack config."
)
UNPARSEABLE = (
    "nodeIdleTimeBeforeScaleDown {!r} is not an ISO-8601 duration of fixed length, which ARM expects (a .NET "
    "TimeSpan): the deployment fails or the timer is not the one intended. Fix: set "
    "idle_time_before_scale_down "
    "in seconds in the stack config (the program sends e.g. 'PT5M')."
)
WS_PUBLIC = (
    "workspace publicNetworkAccess is {}: the workspace API is reachable from the internet. Fix: set "
    "workspace.public_network_access: Disabled and reach it through a private endpoint, or list the "
    "workspace in "
    "secure-defaults.public_workspaces if public access is intended."
)

# (case id, validate function, overrides of the happy-path cluster, policy config, expected messages)
CASES: list[tuple[str, Any, dict[str, Any], dict[str, Any] | None, list[str]]] = [
    # multi-node-requires-rdma
    ("rdma/pass: ND H100 v5 x4", multi_node_requires_rdma.validate, {}, None, []),
    (
        "rdma/pass: no RDMA but one node",
        multi_node_requires_rdma.validate,
        {P + "vmSize": "Standard_NC96ads_A100_v4", SCALE + "maxNodeCount": 1},
        None,
        [],
    ),
    (
        "rdma/pass: inferred 'r' size",
        multi_node_requires_rdma.validate,
        {P + "vmSize": "Standard_ND200isr_X_v9"},
        None,
        [],
    ),
    (
        "rdma/fail: no 'r'",
        multi_node_requires_rdma.validate,
        {P + "vmSize": "Standard_NC96ads_A100_v4"},
        None,
        ["Standard_NC96ads_A100_v4 has no RDMA/InfiniBand network" + TCP_TAIL],
    ),
    (
        "rdma/fail: NC24r has no SR-IOV",
        multi_node_requires_rdma.validate,
        {P + "vmSize": "Standard_NC24r"},
        None,
        ["Standard_NC24r has RDMA but no SR-IOV, so NCCL cannot use InfiniBand" + TCP_TAIL],
    ),
    (
        "rdma/fail: inferred without 'r'",
        multi_node_requires_rdma.validate,
        {P + "vmSize": "Standard_ND200is_X_v9"},
        None,
        [
            "Standard_ND200is_X_v9 has no RDMA/InfiniBand network (inferred from the size name: the size is "
            "not in "
            "the catalog)" + TCP_TAIL
        ],
    ),
    (
        "rdma/fail: unparseable size",
        multi_node_requires_rdma.validate,
        {P + "vmSize": "gpu-large"},
        None,
        [
            "gpu-large is not in the size catalog and its name does not follow Azure's naming convention, so "
            "RDMA "
            "cannot be confirmed for max_instances=4. Fix: use a catalog size with 'r' (e.g. "
            "Standard_ND96isr_H100_v5), "
            "or set max_instances to 1."
        ],
    ),
    # no-retired-vm-series (mandatory part)
    (
        "retired/pass: H100 v5 has no retirement",
        no_retired_vm_series.validate,
        {},
        {"evaluation_date": "2026-11-30"},
        [],
    ),
    (
        "retired/fail: NCv3 after 2025-09-30",
        no_retired_vm_series.validate,
        {P + "vmSize": "Standard_NC6s_v3", SCALE + "maxNodeCount": 1},
        {"evaluation_date": "2026-11-30"},
        [
            "Standard_NC6s_v3 (NCv3) was retired on 2025-09-30 in eastus (evaluated on 2026-11-30)"
            + RETIRED_TAIL
        ],
    ),
    (
        "retired/pass: NCv3 regional extension in usgovvirginia",
        no_retired_vm_series.validate,
        {P + "vmSize": "Standard_NC6s_v3", "properties__computeLocation": "usgovvirginia"},
        {"evaluation_date": "2026-11-30"},
        [],
    ),
    (
        "retired/fail: NVv3 on its retirement day",
        no_retired_vm_series.validate,
        {P + "vmSize": "Standard_NV12s_v3"},
        {"evaluation_date": "2026-09-30"},
        [
            "Standard_NV12s_v3 (NVv3) was retired on 2026-09-30 in eastus (evaluated on 2026-09-30)"
            + RETIRED_TAIL
        ],
    ),
    (
        "retired/pass: NVv3 the day before",
        no_retired_vm_series.validate,
        {P + "vmSize": "Standard_NV12s_v3"},
        {"evaluation_date": "2026-09-29"},
        [],
    ),
    # ssh-decided-at-creation
    ("ssh/pass: Enabled with key", ssh_decided_at_creation.validate, {}, None, []),
    (
        "ssh/pass: Disabled, no credentials",
        ssh_decided_at_creation.validate,
        {P + "remoteLoginPortPublicAccess": "Disabled", P + "userAccountCredentials": DELETE},
        None,
        [],
    ),
    (
        "ssh/fail: absent",
        ssh_decided_at_creation.validate,
        {P + "remoteLoginPortPublicAccess": DELETE},
        None,
        [SSH_UNDECIDED.format("absent")],
    ),
    (
        "ssh/fail: NotSpecified",
        ssh_decided_at_creation.validate,
        {P + "remoteLoginPortPublicAccess": "NotSpecified"},
        None,
        [SSH_UNDECIDED.format("'NotSpecified'")],
    ),
    (
        "ssh/fail: Enabled without key",
        ssh_decided_at_creation.validate,
        {P + "userAccountCredentials__adminUserSshPublicKey": DELETE},
        None,
        [
            "SSH is Enabled without an SSH public key: nobody can log in to debug a hung node, and adding a "
            "key later "
            "means recreating the cluster. Fix: give ssh.public_key (an OpenSSH public key)."
        ],
    ),
    (
        "ssh/pass: a 2048-bit RSA key (Azure's minimum)",
        ssh_decided_at_creation.validate,
        {P + "userAccountCredentials__adminUserSshPublicKey": KEY_2048},
        None,
        [],
    ),
    (
        "ssh/fail: ed25519 key",
        ssh_decided_at_creation.validate,
        {P + "userAccountCredentials__adminUserSshPublicKey": KEY_ED25519},
        None,
        [
            "adminUserSshPublicKey: a ssh-ed25519 key is not accepted: Azure ML compute takes RSA keys "
            "only (docs: machine-learning-enable-ssh.md, 'starting with ssh-rsa'). The key is fixed at "
            "creation, so a key Azure refuses means recreating the cluster. Fix: generate one with "
            "`ssh-keygen -t rsa -b 3072`."
        ],
    ),
    (
        "ssh/fail: 1024-bit RSA key",
        ssh_decided_at_creation.validate,
        {P + "userAccountCredentials__adminUserSshPublicKey": KEY_1024},
        None,
        [
            "adminUserSshPublicKey: this RSA key has 1024 bits, Azure needs at least 2048. The key is "
            "fixed at creation, so a key Azure refuses means recreating the cluster. Fix: generate a new "
            "one (`ssh-keygen -t rsa -b 3072`)."
        ],
    ),
    (
        "ssh/fail: SSH with local auth disabled",
        ssh_decided_at_creation.validate,
        {"properties__disableLocalAuth": True},
        None,
        [
            "SSH is configured but disableLocalAuth is true: on Azure ML computes local authentication is "
            "SSH, so nobody could log in, and the setting is fixed at creation. Fix: send disableLocalAuth = "
            "not ssh (the program derives it from ssh), or set ssh: disabled."
        ],
    ),
    (
        "ssh/fail: admin password",
        ssh_decided_at_creation.validate,
        {P + "userAccountCredentials__adminUserPassword": "Secr3t!"},
        None,
        [
            "an admin password is set on the nodes: it ends up in the stack state and allows password logins "
            "on every "
            "node. Fix: remove the password and use ssh.public_key."
        ],
    ),
    # idle-timer-parseable (mandatory companion) and idle-timer-bounds (advisory)
    ("idle/pass: PT5M parses", idle_timer_bounds.validate_companion, {}, None, []),
    (
        "idle/fail: free text",
        idle_timer_bounds.validate_companion,
        {SCALE + "nodeIdleTimeBeforeScaleDown": "30 minutes"},
        None,
        [UNPARSEABLE.format("30 minutes")],
    ),
    (
        "idle/fail: months have no fixed length",
        idle_timer_bounds.validate_companion,
        {SCALE + "nodeIdleTimeBeforeScaleDown": "P1M"},
        None,
        [UNPARSEABLE.format("P1M")],
    ),
    (
        "bounds/pass: 300 s in [120, 1800]",
        idle_timer_bounds.validate,
        {},
        {"min_seconds": 120, "max_seconds": 1800},
        [],
    ),
    (
        "bounds/pass: unparseable is the companion's",
        idle_timer_bounds.validate,
        {SCALE + "nodeIdleTimeBeforeScaleDown": "P1M"},
        {},
        [],
    ),
    (
        "bounds/fail: below min",
        idle_timer_bounds.validate,
        {SCALE + "nodeIdleTimeBeforeScaleDown": "PT30S"},
        {"min_seconds": 120, "max_seconds": 1800},
        [
            "idle timer 30 s is below 120 s: nodes are released between back-to-back jobs, so each job waits "
            "minutes "
            "for allocation and image pull again. Fix: set idle_time_before_scale_down to at least 120."
        ],
    ),
    (
        "bounds/fail: above max",
        idle_timer_bounds.validate,
        {SCALE + "nodeIdleTimeBeforeScaleDown": "PT2H"},
        {"min_seconds": 120, "max_seconds": 1800},
        [
            "idle timer 7200 s is above 1800 s: every job leaves every node billed for 120 idle minutes. "
            "Fix: set "
            "idle_time_before_scale_down to at most 1800."
        ],
    ),
    (
        "bounds/fail: defaults apply (max 1800)",
        idle_timer_bounds.validate,
        {SCALE + "nodeIdleTimeBeforeScaleDown": "PT1H"},
        {},
        [
            "idle timer 3600 s is above 1800 s: every job leaves every node billed for 60 idle minutes. Fix: "
            "set "
            "idle_time_before_scale_down to at most 1800."
        ],
    ),
    (
        "bounds/fail: absent",
        idle_timer_bounds.validate,
        {SCALE + "nodeIdleTimeBeforeScaleDown": DELETE},
        {},
        [
            "nodeIdleTimeBeforeScaleDown is not set: Azure applies its own default, so idle GPU nodes are "
            "billed for a "
            "time nobody chose. Fix: set idle_time_before_scale_down in the stack config."
        ],
    ),
    # min-nodes-zero
    ("min0/pass: min 0", min_nodes_zero.validate, {}, {"allow": []}, []),
    (
        "min0/pass: allow-listed",
        min_nodes_zero.validate,
        {SCALE + "minNodeCount": 2},
        {"allow": ["h100-x4"]},
        [],
    ),
    (
        "min0/fail: min 2",
        min_nodes_zero.validate,
        {SCALE + "minNodeCount": 2},
        {"allow": ["other"]},
        [
            "min_instances=2 keeps 2 node(s) of Standard_ND96isr_H100_v5 running and billed around the "
            "clock, even "
            "with no job. Fix: set min_instances to 0, or add 'h100-x4' to the min-nodes-zero allow list in "
            "the policy "
            "config if warm nodes are intended."
        ],
    ),
    # low-priority-multi-node
    ("lowpri/pass: dedicated x4", low_priority_multi_node.validate, {}, None, []),
    (
        "lowpri/pass: low-priority x1",
        low_priority_multi_node.validate,
        {P + "vmPriority": "LowPriority", SCALE + "maxNodeCount": 1},
        None,
        [],
    ),
    (
        "lowpri/fail: low-priority x4",
        low_priority_multi_node.validate,
        {P + "vmPriority": "LowPriority"},
        None,
        [
            "low-priority cluster with max_instances=4: a preemption of any one node stops the whole "
            "multi-node job, "
            "which must be restarted from its last checkpoint, and the risk grows with the node count. Fix: "
            "use tier "
            "'dedicated' for multi-node training, or keep low-priority clusters to one node and checkpoint "
            "often."
        ],
    ),
    # secure-defaults on clusters: SSH (= local auth) acknowledged per cluster
    ("secure/pass: happy cluster, SSH acknowledged", secure_defaults.validate, {}, ACK_SSH, []),
    (
        "secure/pass: no SSH, local auth off",
        secure_defaults.validate,
        NO_SSH,
        None,
        [],
    ),
    (
        "secure/pass: subnet and no public IP",
        secure_defaults.validate,
        {P + "subnet": {"id": SUBNET}, P + "enableNodePublicIp": False},
        ACK_SSH,
        [],
    ),
    ("secure/fail: SSH not acknowledged", secure_defaults.validate, {}, None, [SSH_NOT_ACKNOWLEDGED]),
    (
        "secure/fail: SSH acknowledged for another cluster",
        secure_defaults.validate,
        {},
        {"ssh_clusters": ["h100-wus3"]},
        [SSH_NOT_ACKNOWLEDGED],
    ),
    (
        "secure/fail: a password alone is SSH",
        secure_defaults.validate,
        {**NO_SSH, P + "userAccountCredentials": {"adminUserName": "azureuser", "adminUserPassword": "x"}},
        None,
        [SSH_NOT_ACKNOWLEDGED],
    ),
    (
        "secure/fail: local auth on without SSH",
        secure_defaults.validate,
        {**NO_SSH, "properties__disableLocalAuth": False},
        None,
        [
            "local authentication is left on (disableLocalAuth is not true) although the cluster has no SSH: "
            "it serves nothing and Azure Policy's 'disable local authentication' flags it. Fix: send "
            "disableLocalAuth: true (the program derives it from ssh)."
        ],
    ),
    (
        "secure/fail: public IP with a subnet",
        secure_defaults.validate,
        {P + "subnet": {"id": SUBNET}},
        ACK_SSH,
        [
            "nodes get public IP addresses although the cluster has a subnet: every node is reachable from "
            "the "
            "internet and Azure adds a public IP and load balancer. Fix: set node_public_ip: false (fixed at "
            "creation)."
        ],
    ),
    (
        "secure/fail: no public IP without a subnet",
        secure_defaults.validate,
        {P + "enableNodePublicIp": False},
        ACK_SSH,
        [
            "node public IP is off but the cluster has no subnet: without a virtual network the nodes have "
            "no route to "
            "the workspace and jobs never start. Fix: set subnet_id, or node_public_ip: true."
        ],
    ),
]


@pytest.mark.parametrize(
    ("validate", "overrides", "config", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_cluster_policy(validate: Any, overrides: dict[str, Any], config: Any, expected: list[str]) -> None:
    assert run_resource(validate, resource_args(COMPUTE, cluster(**overrides), config)) == expected


@pytest.mark.parametrize(
    ("size", "region", "on", "expected"),
    [
        (
            "Standard_NV12s_v3",
            "eastus",
            "2026-06-01",
            [
                "Standard_NV12s_v3 (NVv3) retires on 2026-09-30 in eastus, 121 days after 2026-06-01: from "
                "then the "
                "cluster cannot get nodes and must be recreated (size cannot be changed in place). Fix: plan "
                "the move to "
                "a current size now."
            ],
        ),
        (
            "Standard_NC6s_v3",
            "usgovvirginia",
            "2026-11-30",
            [
                "Standard_NC6s_v3 (NCv3) retires on 2026-12-31 in usgovvirginia, 31 days after 2026-11-30: "
                "from then "
                "the cluster cannot get nodes and must be recreated (size cannot be changed in place). Fix: "
                "plan the "
                "move to a current size now."
            ],
        ),
        ("Standard_NV12s_v3", "eastus", "2025-01-01", []),  # 637 days ahead: outside warn_days 180
        ("Standard_ND96isr_H100_v5", "eastus", "2026-11-30", []),
    ],
)
def test_retiring_soon_companion(size: str, region: str, on: str, expected: list[str]) -> None:
    """The advisory companion reports what no-retired-vm-series computed for the same resource."""
    args = resource_args(
        COMPUTE,
        cluster(**{P + "vmSize": size, "properties__computeLocation": region, SCALE + "maxNodeCount": 1}),
        {"evaluation_date": on, "warn_days": 180},
    )
    mandatory, advisory = Recorder(), Recorder()
    no_retired_vm_series.validate(args, mandatory)
    no_retired_vm_series.validate_companion(args, advisory)
    assert mandatory.messages == []
    assert advisory.messages == expected
    # handed over once: a second companion call for the same resource finds nothing
    again = Recorder()
    no_retired_vm_series.validate_companion(args, again)
    assert again.messages == []


def test_evaluation_date_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the real CLI the gate's --date has no config to ride on; $AZML_GPU_POLICY_DATE does it."""
    monkeypatch.setenv("AZML_GPU_POLICY_DATE", "2023-09-05")
    args = resource_args(COMPUTE, cluster(**{P + "vmSize": "Standard_NC6", SCALE + "maxNodeCount": 1}), {})
    assert run_resource(no_retired_vm_series.validate, args) == []
    monkeypatch.setenv("AZML_GPU_POLICY_DATE", "2023-09-06")
    assert run_resource(no_retired_vm_series.validate, args) == [
        "Standard_NC6 (NC (v1)) was retired on 2023-09-06 in eastus (evaluated on 2023-09-06)" + RETIRED_TAIL
    ]


def test_evaluation_date_invalid_names_the_key() -> None:
    args = resource_args(COMPUTE, cluster(), {"evaluation_date": "30/11/2026"})
    with pytest.raises(ValueError, match=r"^evaluation_date: '30/11/2026' is not a date; use YYYY-MM-DD$"):
        run_resource(no_retired_vm_series.validate, args)


OTHER_CASES = [
    ("workspace/pass: Disabled", WORKSPACE, workspace(), {}, []),
    (
        "workspace/pass: public but acknowledged",
        WORKSPACE,
        workspace(publicNetworkAccess="Enabled"),
        {"public_workspaces": ["ws-llm"]},
        [],
    ),
    (
        "workspace/fail: Enabled",
        WORKSPACE,
        workspace(publicNetworkAccess="Enabled"),
        {},
        [WS_PUBLIC.format("Enabled")],
    ),
    (
        "workspace/fail: absent",
        WORKSPACE,
        workspace(publicNetworkAccess=DELETE),
        {},
        [WS_PUBLIC.format("not set (Azure's default: Enabled)")],
    ),
    (
        "storage/pass: TLS1_2, no public blobs",
        STORAGE,
        {"allowBlobPublicAccess": False, "minimumTlsVersion": "TLS1_2"},
        {},
        [],
    ),
    (
        "storage/fail: public blobs",
        STORAGE,
        {"allowBlobPublicAccess": True, "minimumTlsVersion": "TLS1_2"},
        {},
        [
            "storage allowBlobPublicAccess is true: containers can be made readable by anyone, including "
            "training data "
            "and checkpoints. Fix: set allowBlobPublicAccess to false."
        ],
    ),
    (
        "storage/fail: TLS absent",
        STORAGE,
        {"allowBlobPublicAccess": False},
        {},
        [
            "storage minimumTlsVersion is not set (Azure's default: TLS1_0): clients may connect with "
            "deprecated TLS "
            "versions. Fix: set minimumTlsVersion to TLS1_2."
        ],
    ),
    ("vault/pass: purge protection", VAULT, {"properties": {"enablePurgeProtection": True}}, {}, []),
    (
        "vault/fail: purge protection absent",
        VAULT,
        {"properties": {"enableSoftDelete": True}},
        {},
        [
            "key vault purge protection is off: a deleted vault and the workspace's secrets can be purged at "
            "once, and "
            "the workspace cannot switch to another vault. Fix: set workspace.key_vault_purge_protection: "
            "true "
            "(irreversible, by design)."
        ],
    ),
]


@pytest.mark.parametrize(
    ("type_", "props", "config", "expected"), [c[1:] for c in OTHER_CASES], ids=[c[0] for c in OTHER_CASES]
)
def test_secure_defaults_other_resources(type_: str, props: dict, config: dict, expected: list[str]) -> None:
    assert run_resource(secure_defaults.validate, resource_args(type_, props, config, name="x")) == expected


@pytest.mark.parametrize(
    "validate",
    [
        multi_node_requires_rdma.validate,
        no_retired_vm_series.validate,
        ssh_decided_at_creation.validate,
        idle_timer_bounds.validate,
        min_nodes_zero.validate,
        low_priority_multi_node.validate,
    ],
)
def test_cluster_policies_ignore_other_compute_types(validate: Any) -> None:
    """A ComputeInstance (computeType != AmlCompute) is not a cluster: no cluster policy applies."""
    props = cluster(
        **{
            "properties__computeType": "ComputeInstance",
            P + "vmSize": "Standard_NC24r",
            SCALE + "minNodeCount": 3,
            P + "remoteLoginPortPublicAccess": DELETE,
        }
    )
    assert run_resource(validate, resource_args(COMPUTE, props, {})) == []


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("PT5M", 300),
        ("PT30S", 30),
        ("P1DT1H", 90000),
        ("P1M", None),
        ("P1Y", None),
        ("half an hour", None),
        ("", None),
        (300, None),
        (None, None),
    ],
)
def test_parse_seconds_reads_fixed_length_iso_durations_only(value: Any, seconds: int | None) -> None:
    assert parse_seconds(value) == seconds


def test_norm_region_is_the_catalog_normaliser_and_none_safe() -> None:
    assert norm_region("US Gov Virginia") == normalize_region("US Gov Virginia") == "usgovvirginia"
    assert (norm_region(None), norm_region(42)) == (None, None)


# The first preview of a new stack: a Compute's workspaceName and resourceGroupName are outputs of resources
# not created yet, so the engine sends them as its unknown sentinel (pulumi/pulumi analyzer_plugin.go,
# KeepUnknowns). Reading one would turn the whole policy into pulumi-policy's advisory "can't run policy ...
# during preview"; every verdict must come out the same as with the values known.
FIRST_PREVIEW = {"workspaceName": UNKNOWN, "resourceGroupName": UNKNOWN, "azureApiVersion": "2025-12-01"}


@pytest.mark.parametrize(
    ("validate", "overrides", "config", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_cluster_verdicts_do_not_depend_on_the_values_unknown_in_a_first_preview(
    validate: Any, overrides: dict[str, Any], config: Any, expected: list[str]
) -> None:
    props = cluster(**overrides, **FIRST_PREVIEW)
    assert run_resource(validate, resource_args(COMPUTE, props, config)) == expected


def undecided(*paths: str) -> str:
    verb = "is" if len(paths) == 1 else "are"
    return (
        f"cannot decide during preview: {', '.join(paths)} {verb} not known until deployment (computed from "
        "another resource's output), so this check would first run during `pulumi up`, after resources were "
        f"already created. Fix: give {'it' if len(paths) == 1 else 'them'} a literal value in the program "
        "(the stack config)."
    )


@pytest.mark.parametrize(
    ("validate", "overrides", "expected"),
    [
        (
            multi_node_requires_rdma.validate,
            {P + "vmSize": UNKNOWN},
            [undecided("properties.properties.vmSize")],
        ),
        (
            multi_node_requires_rdma.validate,
            {SCALE + "maxNodeCount": UNKNOWN},
            [undecided("properties.properties.scaleSettings.maxNodeCount")],
        ),
        (
            no_retired_vm_series.validate,
            {"properties__computeLocation": UNKNOWN},
            [undecided("properties.computeLocation (else location)")],
        ),
        (
            ssh_decided_at_creation.validate,
            {P + "userAccountCredentials": UNKNOWN},
            [
                undecided(
                    "properties.properties.userAccountCredentials.adminUserSshPublicKey",
                    "properties.properties.userAccountCredentials.adminUserPassword",
                )
            ],
        ),
        (
            idle_timer_bounds.validate_companion,
            {SCALE + "nodeIdleTimeBeforeScaleDown": UNKNOWN},
            [undecided("properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown")],
        ),
        (
            secure_defaults.validate,
            {P + "subnet": {"id": UNKNOWN}},
            [undecided("properties.properties.subnet.id")],
        ),
        (
            low_priority_multi_node.validate,
            {P + "vmPriority": UNKNOWN},
            [undecided("properties.properties.vmPriority")],
        ),
    ],
    ids=[
        "rdma/size",
        "rdma/max",
        "retired/region",
        "ssh/credentials",
        "idle/timer",
        "secure/subnet",
        "lowpri",
    ],
)
def test_a_deciding_value_unknown_in_preview_is_reported_not_skipped(
    validate: Any, overrides: dict[str, Any], expected: list[str]
) -> None:
    """The fields that decide a cluster are literals in this program; a program that computes one from
    another resource gets the reason instead of a silent pass."""
    assert run_resource(validate, resource_args(COMPUTE, cluster(**overrides), None)) == expected


@pytest.mark.parametrize(
    ("type_", "props", "expected"),
    [
        (WORKSPACE, workspace(publicNetworkAccess=UNKNOWN), [undecided("publicNetworkAccess")]),
        (
            STORAGE,
            {"minimumTlsVersion": UNKNOWN, "allowBlobPublicAccess": False},
            [undecided("minimumTlsVersion")],
        ),
        (
            VAULT,
            {"properties": {"enablePurgeProtection": UNKNOWN}},
            [undecided("properties.enablePurgeProtection")],
        ),
        (WORKSPACE, workspace(resourceGroupName=UNKNOWN, location=UNKNOWN), []),
    ],
    ids=["workspace", "storage", "vault", "workspace: unknown resource group and location are not read"],
)
def test_secure_defaults_on_other_resources_with_unknowns(
    type_: str, props: dict, expected: list[str]
) -> None:
    assert run_resource(secure_defaults.validate, resource_args(type_, props, {}, name="x")) == expected
