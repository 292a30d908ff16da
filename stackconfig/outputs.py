"""The stack outputs: what `__main__.py` exports and `jobs` reads (`pulumi stack output --json`).

One definition, shared by the writer and the readers (docs/architecture.md, "Stack outputs").
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

import vmsizes
from stackconfig.errors import ConfigError
from stackconfig.models import ClusterConfig, StackConfig

#: The config key azure-native reads the subscription from (`pulumi config set azure-native:subscriptionId`).
SUBSCRIPTION_KEY = "azure-native:subscriptionId"
#: ARM's `subscriptionId` path parameter: "The ID of the target subscription. The value must be an UUID."
#: (azure-rest-api-specs, specification/common-types/resource-management/v3/types.json,
#: SubscriptionIdParameter, `format: uuid`; the extract vendored in preflight/provider/azure_specs drops
# both). A
#: placeholder such as README's `<your subscription id>` would otherwise reach the stack outputs and
#: every ARM URL.
_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
SUBSCRIPTION_FIX = 'pulumi config set azure-native:subscriptionId "$(az account show --query id -o tsv)"'


def subscription_problem(value: object) -> str | None:
    """The message for a subscription id that is not a GUID (None when it is one)."""
    if isinstance(value, str) and _GUID.fullmatch(value):
        return None
    return (
        f"{SUBSCRIPTION_KEY}: {value!r} is not a subscription id (a GUID, 8-4-4-4-12 hex digits such as "
        f"00000000-0000-0000-0000-000000000000); set yours: {SUBSCRIPTION_FIX}"
    )


class ClusterOutput(BaseModel):
    """One cluster as jobs need it: where it is, how big, and what a node has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    size: str
    region: str
    tier: Literal["dedicated", "low_priority"]
    min_instances: int
    max_instances: int
    idle_seconds: int
    gpus_per_node: int
    vcpus_per_node: int
    rdma_usable: bool
    ssh_enabled: bool
    # Network settings Azure fixes at creation; `python -m jobs check-deploy` compares them with the live
    # cluster. `subnet_id` is left out when there is none, as `pulumi stack output` leaves it out (the
    # Pulumi SDK drops None values when it serialises an export), so the dump is what the engine exports.
    # The defaults (the config's) let outputs exported before these fields existed still be read;
    # check-deploy refuses such outputs (`network_fields_exported`).
    subnet_id: str | None = Field(default=None, exclude_if=lambda value: value is None)
    node_public_ip: bool = True

    def network_fields_exported(self) -> bool:
        """Whether the JSON this entry came from carried the network fields. `node_public_ip` is always
        exported by the program that added both, so its presence tells; `subnet_id` may be absent (None)."""
        return "node_public_ip" in self.model_fields_set


class KeyVaultOutput(BaseModel):
    """The workspace's key vault as `python -m jobs teardown` needs it: which vault, and whether its name
    can be freed at once. `purge_protection` and `soft_delete_days` are the config's
    `key_vault_purge_protection` and `key_vault_soft_delete_days` (what the Workspace component sends);
    teardown also reads the live vault, because purge protection stays on once it was on
    (docs/azure-behaviour.md, section 8)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    purge_protection: bool
    soft_delete_days: int


class StackOutputs(BaseModel):
    """The whole stack output object."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subscription_id: str
    resource_group: str
    workspace_name: str
    workspace_region: str
    clusters: dict[str, ClusterOutput]
    # Absent from outputs exported before it existed (None, left out of the dump as Pulumi leaves None out of
    # an export); the other commands read such outputs, teardown refuses them.
    key_vault: KeyVaultOutput | None = Field(default=None, exclude_if=lambda value: value is None)

    @field_validator("subscription_id")
    @classmethod
    def _a_guid(cls, value: str) -> str:
        problem = subscription_problem(value)
        if problem is not None:
            raise ValueError(problem.removeprefix(f"{SUBSCRIPTION_KEY}: "))
        return value


def cluster_output(cluster: ClusterConfig, size: vmsizes.VmSize) -> ClusterOutput:
    """The output entry of a validated cluster on its size."""
    if cluster.region is None:
        raise ValueError(f"cluster {cluster.name} has no region; build it through stackconfig.validate()")
    return ClusterOutput(
        name=cluster.name,
        size=size.name,
        region=cluster.region,
        tier=cluster.tier,
        min_instances=cluster.min_instances,
        max_instances=cluster.max_instances,
        idle_seconds=cluster.idle_time_before_scale_down,
        gpus_per_node=size.gpus,
        vcpus_per_node=size.vcpus,
        rdma_usable=size.rdma_usable,
        ssh_enabled=cluster.ssh_enabled,
        subnet_id=cluster.subnet_id,
        node_public_ip=cluster.node_public_ip,
    )


def stack_outputs(config: StackConfig, subscription_id: str, key_vault_name: str) -> StackOutputs:
    """The outputs of a validated config (sizes looked up in the catalog, or inferred from the name).

    `key_vault_name`: the vault name the Workspace component derived (`components.naming.workspace_names`);
    `__main__.py` passes `workspace.names.key_vault` (stackconfig does not import the Pulumi components).
    Raises ConfigError when `subscription_id` (azure-native's, from `azure-native:subscriptionId`) is not a
    GUID."""
    problem = subscription_problem(subscription_id)
    if problem is not None:
        raise ConfigError([problem])
    ws = config.workspace
    return StackOutputs(
        subscription_id=subscription_id,
        resource_group=ws.resource_group.name,
        workspace_name=ws.name,
        workspace_region=ws.region,
        clusters={c.name: cluster_output(c, vmsizes.describe(c.size)) for c in config.clusters},
        key_vault=KeyVaultOutput(
            name=key_vault_name,
            purge_protection=ws.key_vault_purge_protection,
            soft_delete_days=ws.key_vault_soft_delete_days,
        ),
    )
