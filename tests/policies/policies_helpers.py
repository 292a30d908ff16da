"""One happy-path factory for the policy tests (the Checkov / pulumi-policy-aws pattern): each case changes
one field of a compliant resource, and asserts the verdict and the key facts of each message (`facts`), not
a copy of the whole text.

Arguments are built the way the pack's servicer builds them (pulumi_policy/policy.py Analyze/AnalyzeStack):
properties go through a protobuf Struct and back (numbers become floats), then deserialize_properties and the
unknown-checking proxy. Resource policies get inputs; stack policies get what the engine sends AnalyzeStack:
each resource's OUTPUTS (azure-native's preview outputs of those inputs, `preflight.provider.model`: path
parameters such as computeName and workspaceName absent, `name` unknown for a resource being created) and
its property dependencies. `UNKNOWN` is the engine's sentinel for a value not known during the preview.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import ModuleType
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from policies import locks
from preflight.provider import model as azure_native

COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
STORAGE = "azure-native:storage:StorageAccount"
VAULT = "azure-native:keyvault:Vault"
LOCK_BY_SCOPE = "azure-native:authorization:ManagementLockByScope"
LOCK_AT_RG = "azure-native:authorization:ManagementLockAtResourceGroupLevel"
LOCK_AT_SUB = "azure-native:authorization:ManagementLockAtSubscriptionLevel"
LOCK_AT_RESOURCE = "azure-native:authorization:ManagementLockAtResourceLevel"
DELETE = object()  # remove the key
SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
SUBNET = f"{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-ml/subnets/snet-train"
# Throw-away public keys (tests/fixtures/sshkeys/README.md): RSA 3072 bits, the size the stacks' examples use;
# Azure's minimum RSA size; a key below it; a key type Azure ML refuses.
_KEYS = Path(__file__).resolve().parent.parent / "fixtures" / "sshkeys"
KEY = (_KEYS / "rsa3072.pub").read_text().strip()
KEY_2048 = (_KEYS / "rsa2048.pub").read_text().strip()
KEY_1024 = (_KEYS / "rsa1024.pub").read_text().strip()
KEY_ED25519 = (_KEYS / "ed25519.pub").read_text().strip()


# Override keys (`change`) of the fields the cluster policies read.
P = "properties__properties__"
SIZE = P + "vmSize"
PRIORITY = P + "vmPriority"
MIN = P + "scaleSettings__minNodeCount"
MAX = P + "scaleSettings__maxNodeCount"
IDLE = P + "scaleSettings__nodeIdleTimeBeforeScaleDown"
REMOTE = P + "remoteLoginPortPublicAccess"
CREDENTIALS = P + "userAccountCredentials"
SSH_KEY = CREDENTIALS + "__adminUserSshPublicKey"
PASSWORD = CREDENTIALS + "__adminUserPassword"
SUBNET_ID = P + "subnet"
PUBLIC_IP = P + "enableNodePublicIp"
LOCAL_AUTH = "properties__disableLocalAuth"
REGION = "properties__computeLocation"
COMPUTE_TYPE = "properties__computeType"
# The cluster without SSH (so local auth off), from the happy path.
NO_SSH = {REMOTE: "Disabled", CREDENTIALS: DELETE, LOCAL_AUTH: True}


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:test::azml-gpu::{type_}::{name}"


def cluster(**overrides: Any) -> dict[str, Any]:
    """A compliant AmlCompute cluster (h100-x4 of the seed). Overrides: `a__b=value` sets wire path a.b
    (DELETE removes it)."""
    props: dict[str, Any] = {
        "computeName": "h100-x4",
        "workspaceName": "ws-llm",
        "resourceGroupName": "rg-train",
        "location": "eastus",
        "properties": {
            "computeType": "AmlCompute",
            "computeLocation": "eastus",
            "disableLocalAuth": False,  # SSH is on (userAccountCredentials below), and local auth IS SSH
            "properties": {
                "vmSize": "Standard_ND96isr_H100_v5",
                "vmPriority": "Dedicated",
                "osType": "Linux",
                "scaleSettings": {
                    "minNodeCount": 0,
                    "maxNodeCount": 4,
                    "nodeIdleTimeBeforeScaleDown": "PT5M",
                },
                "userAccountCredentials": {"adminUserName": "azureuser", "adminUserSshPublicKey": KEY},
                "remoteLoginPortPublicAccess": "Enabled",
                "enableNodePublicIp": True,
            },
        },
    }
    return change(props, **overrides)


def change(props: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """A deep copy with each `a__b__c=value` (path a.b.c) set, or removed for DELETE."""
    out = copy.deepcopy(props)
    for dotted, value in overrides.items():
        *parents, last = dotted.split("__")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return out


def wire(props: dict[str, Any]) -> Any:
    """Props as the pack's servicer hands them to a policy."""
    struct = struct_pb2.Struct()
    struct.update(props)
    return unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(struct)))


def options(parent: str | None = None) -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], parent)


def resource_args(
    type_: str, props: dict[str, Any], config: dict[str, Any] | None = None, name: str = "h100-x4"
) -> ResourceValidationArgs:
    return ResourceValidationArgs(type_, wire(props), urn(type_, name), name, options(), None, config)


def stack_resource(
    type_: str,
    name: str,
    props: dict[str, Any],
    deps: dict[str, list[PolicyResource]] | None = None,
    deployed: bool = False,
) -> PolicyResource:
    """A resource as AnalyzeStack receives it: the outputs azure-native gives for these inputs in a preview
    (or, `deployed`, once created: known name and type), with property dependencies `deps`."""
    if deployed:
        outputs = azure_native.deployed_outputs(type_, props, str(props.get("computeName", name)), "")
    else:
        outputs = azure_native.preview_outputs(type_, props)
    return PolicyResource(
        type_, wire(outputs), urn(type_, name), name, options(), None, None, [], dict(deps or {})
    )


def stack_args(resources: list[PolicyResource], config: dict[str, Any] | None = None) -> StackValidationArgs:
    return StackValidationArgs(resources, config)


def verdict(
    module: ModuleType,
    props: dict[str, Any],
    config: dict[str, Any] | None = None,
    type_: str = COMPUTE,
    name: str = "h100-x4",
) -> list[str]:
    """A resource policy's messages for one resource (its inputs, as Analyze receives them)."""
    return module.validate(resource_args(type_, props, config, name), config or {})


def stack_verdict(
    module: ModuleType,
    resources: list[PolicyResource],
    config: dict[str, Any] | None = None,
    analyzed: list[ResourceValidationArgs] = (),
) -> list[tuple[str, str | None]]:
    """A stack policy's (message, urn) pairs, after the engine's Analyze of `analyzed` (each lock's inputs:
    the pack records what it saw, policies/locks.py) in a fresh pack process."""
    locks._observed.clear()  # a new pack process (the store lives as long as the process)
    for args in analyzed:
        locks.record_analyzed(args)
    return [(v.message, v.urn) for v in module.validate(resources, config or {})]


def facts(messages: list[str], expected: list[tuple[str, ...]]) -> None:
    """One message per expected tuple, in order, each containing every fact of its tuple."""
    assert len(messages) == len(expected), messages
    for message, wanted in zip(messages, expected, strict=True):
        missing = [fact for fact in wanted if fact not in message]
        assert not missing, f"{missing} not in {message!r}"


class Recorder:
    """A report_violation that keeps (message, urn)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    def __call__(self, message: str, urn: str | None = None) -> None:
        self.calls.append((message, urn))

    @property
    def messages(self) -> list[str]:
        return [m for m, _ in self.calls]


def run_resource(policy_validate: Any, args: ResourceValidationArgs) -> list[str]:
    rec = Recorder()
    policy_validate(args, rec)
    return rec.messages


def workspace(**overrides: Any) -> dict[str, Any]:
    base = {
        "workspaceName": "ws-llm",
        "resourceGroupName": "rg-train",
        "location": "eastus",
        "publicNetworkAccess": "Disabled",
    }
    return change(base, **overrides)
