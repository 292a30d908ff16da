"""Typed schema of the `azml-gpu:` config namespace (pydantic v2, strict types, unknown keys forbidden).

Each field's description says Required/Optional, its default and why. Single-field rules live in the field
validators here; rules across fields live in `stackconfig.rules` so `validate()` can report them even when
other fields of the same cluster are wrong.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import isodate
from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from stackconfig import combinations, names, regions, rules, sizes, sshkeys
from stackconfig.deploy import DeployConfig
from stackconfig.identity import IdentityConfig
from stackconfig.network import NetworkConfig
from stackconfig.schema_base import Strict as _Strict

SKIP_CROSS_RULES = "skip_cross_rules"  # validation context flag: validate() runs the cross rules itself


def _region(value: str) -> str:
    canonical = regions.canonical_region(value)
    if canonical is not None:
        return canonical
    raise ValueError(regions.region_problem(value))


class ResourceGroupConfig(_Strict):
    """The resource group that holds the workspace."""

    name: str = Field(
        description="Required. Resource group name (1-90 chars). No default: it names what a lock protects.",
        examples=["rg-train"],
    )
    create: bool = Field(
        default=True,
        description="Optional, default true: the stack creates the group; false uses an existing group.",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if problem := names.resource_group_name_problem(value):
            raise ValueError(problem)
        return value


class WorkspaceConfig(_Strict):
    """The Azure ML workspace (and its storage, key vault, insights and optional registry)."""

    name: str = Field(description="Required. Workspace name, 3-33 chars.", examples=["ws-llm"])
    resource_group: ResourceGroupConfig = Field(
        description="Required. {name, create}.", examples=[{"name": "rg-train"}]
    )
    region: str = Field(
        description="Required. Azure region (eastus). Also the default region of every cluster.",
        examples=["eastus"],
    )
    public_network_access: Literal["Enabled", "Disabled"] = Field(
        default="Enabled",
        description="Optional, default Enabled (Azure's default); Disabled needs private endpoints.",
    )
    container_registry: bool = Field(
        default=False,
        description="Optional, default false: Azure ML creates a registry on first image build when absent.",
    )
    key_vault_soft_delete_days: int = Field(
        default=90,
        ge=7,
        le=90,
        description="Optional, default 90 (Azure's default): days a deleted key vault stays soft-deleted, "
        "its name taken; 7-90. A disposable (dev) stack uses 7.",
    )
    key_vault_purge_protection: bool = Field(
        default=True,
        description="Optional, default true: a deleted key vault can't be purged within its retention.",
    )
    friendly_name: str | None = Field(default=None, description="Optional display name; default the name.")
    description: str | None = Field(default=None, description="Optional workspace description.")
    tags: dict[str, str] = Field(default_factory=dict, description="Optional tags on every resource.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if problem := names.workspace_name_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("region")
    @classmethod
    def _region(cls, value: str) -> str:
        return _region(value)


class SshConfig(_Strict):
    """SSH to the nodes, by key only (passwords are not accepted)."""

    admin_user: str = Field(description="Required. Linux admin user on the nodes.", examples=["azureuser"])
    public_key: str = Field(
        description="Required. One OpenSSH RSA public key line (ssh-rsa, at least 2048 bits; Azure ML "
        "takes RSA keys only).",
        examples=["ssh-rsa AAAA... you@host"],
    )

    @field_validator("admin_user")
    @classmethod
    def _admin_user(cls, value: str) -> str:
        if problem := names.admin_user_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("public_key")
    @classmethod
    def _public_key(cls, value: str) -> str:
        if problem := sshkeys.public_key_problem(value):
            raise ValueError(problem)
        return value.strip()


SSH_TAGS = ("ssh=disabled", "ssh=key")  # union tags; stripped from key paths in messages


def _ssh_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return SSH_TAGS[0]
    if isinstance(value, dict | SshConfig):
        return SSH_TAGS[1]
    return None


SshSetting = Annotated[
    Annotated[Literal["disabled"], Tag(SSH_TAGS[0])] | Annotated[SshConfig, Tag(SSH_TAGS[1])],
    Discriminator(
        _ssh_tag,
        custom_error_type="ssh_setting",
        custom_error_message="expected 'disabled' or a mapping {admin_user, public_key}",
    ),
]

_DURATION = re.compile(
    r"^\s*(\d+)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hours?)\s*$", re.IGNORECASE
)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _idle_hint(value: Any) -> str | None:
    """For a non-integer idle time, the fix with the seconds it probably means."""
    if isinstance(value, bool):
        return f"{str(value).lower()} is not a number of seconds; give seconds as a whole number, e.g. 300"
    if isinstance(value, float):
        if value.is_integer():
            return f"{value} is not a whole number; write {int(value)}"
        return f"{value} is not a whole number of seconds; use {round(value)}"
    if isinstance(value, str):
        seconds: int | None = None
        if value.strip().isdigit():
            seconds = int(value)
        elif match := _DURATION.match(value):
            seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)[0].lower()]
        else:
            try:
                seconds = int(isodate.parse_duration(value.strip()).total_seconds())
            except (isodate.ISO8601Error, ValueError, AttributeError):
                seconds = None
        if seconds is not None:
            return f"'{value}' is a string; give seconds as a whole number without quotes: {seconds}"
        return f"'{value}' is not a number of seconds; give seconds as a whole number, e.g. 300"
    return None


class ClusterConfig(_Strict):
    """One AmlCompute GPU cluster. Size, tier, SSH, subnet and node public IP are fixed at creation."""

    name: str = Field(
        description="Required. Compute name, 3-24 chars, unique in the workspace.", examples=["h100-x4"]
    )
    size: str = Field(
        description="Required. Azure VM size; canonical catalog casing after validation. No default: it "
        "sets cost and can't change after creation.",
        examples=["Standard_ND96isr_H100_v5"],
    )
    region: str | None = Field(
        default=None,
        description="Optional, default the workspace region (always set after validation). Another region "
        "reaches quota or capacity there.",
        examples=["eastus"],
    )
    min_instances: int = Field(
        default=0,
        ge=0,
        description="Optional, default 0: nodes kept running when idle (anything above 0 is billed).",
        examples=[0],
    )
    max_instances: int = Field(
        description="Required. Largest node count: reserves max x vCPUs of quota even at 0 nodes. No "
        "default: the SDK (4) and CLI (1) defaults disagree.",
        examples=[4],
    )
    idle_time_before_scale_down: int = Field(
        ge=0,
        description="Required, seconds. No default: the SDK's 120 s and SDK v1's 1800 s differ and the "
        "choice is a cost trade-off.",
        examples=[300],
    )
    tier: Literal["dedicated", "low_priority"] = Field(
        description="Required. dedicated or low_priority (preemptible, separate quota).",
        examples=["dedicated"],
    )
    ssh: SshSetting = Field(
        description="Required, explicit: 'disabled' or {admin_user, public_key}. SSH can't be enabled later. "
        "It also decides local authentication (on exactly when SSH is).",
        examples=["disabled"],
    )
    subnet_id: str | None = Field(
        default=None, description="Optional ARM subnet id to put the nodes in a VNet.", examples=[None]
    )
    node_public_ip: bool = Field(
        default=True,
        description="Optional, default true; false needs subnet_id or a managed network.",
        examples=[True],
    )
    user_assigned_identity_id: str | None = Field(
        default=None,
        description="Optional ARM id of a user-assigned identity for the nodes; default a system-assigned "
        "one. Either way the stack grants it the data roles its jobs need.",
        examples=[None],
    )

    @property
    def ssh_enabled(self) -> bool:
        """True when SSH to the nodes is configured."""
        return isinstance(self.ssh, SshConfig)

    @property
    def local_auth(self) -> bool:
        """Local authentication on the nodes, which on Azure ML computes is SSH: on exactly when SSH is.
        Derived, not configurable: azure-ai-ml sends `disableLocalAuth = not ssh_settings`
        (azure/ai/ml/entities/_compute/aml_compute.py, AmlCompute._to_rest_object)."""
        return self.ssh_enabled

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if problem := names.compute_name_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        return sizes.canonical_size(value)

    @field_validator("region")
    @classmethod
    def _region(cls, value: str | None) -> str | None:
        return None if value is None else _region(value)

    @field_validator("subnet_id")
    @classmethod
    def _subnet(cls, value: str | None) -> str | None:
        if value is not None and (problem := names.subnet_id_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("user_assigned_identity_id")
    @classmethod
    def _identity(cls, value: str | None) -> str | None:
        if value is not None and (
            problem := names.resource_id_problem(value, "Microsoft.ManagedIdentity/userAssignedIdentities")
        ):
            raise ValueError(problem)
        return value

    @field_validator("idle_time_before_scale_down", mode="before")
    @classmethod
    def _idle(cls, value: Any) -> Any:
        if (hint := _idle_hint(value)) is not None:
            raise ValueError(hint)
        return value

    @model_validator(mode="after")
    def _cross(self, info: ValidationInfo) -> ClusterConfig:
        if not (info.context or {}).get(SKIP_CROSS_RULES):
            # The workspace's network is not known here: StackConfig's combinations judge the node public IP.
            problems = rules.cluster_rules(self.model_dump(), managed_network=None)
            if problems:
                raise ValueError("; ".join(f"{key}: {msg}" for key, msg in problems))
        return self


class LocksConfig(_Strict):
    """CanNotDelete locks on individual resources (never the resource group: that blocks scaling).

    An unset flag follows the stack's lock decision (`stackconfig.combinations`, docs/azure-behaviour.md
    section 17): the resource is locked only when the stack grants no role on it and the workspace has no
    managed network; after validation every flag is a bool. A flag set to true against the decision is a
    config error naming the grants (or the managed network) that forbid it."""

    storage: bool | None = Field(
        default=None,
        description="Optional, default: locked unless the stack grants a role on it or the workspace has a "
        "managed network.",
    )
    key_vault: bool | None = Field(
        default=None,
        description="Optional, default as storage (the workspace identity's Key Vault Administrator sits on "
        "it, so it is not locked by default).",
    )
    container_registry: bool | None = Field(
        default=None, description="Optional, default as storage (when the workspace has a registry)."
    )
    application_insights: bool | None = Field(default=None, description="Optional, default as storage.")
    workspace: bool = Field(
        default=False,
        description="Optional, default false: a workspace lock also blocks deleting (so replacing) clusters.",
    )


ENVIRONMENTS = ("production", "development")


class StackConfig(_Strict):
    """The whole `azml-gpu:` namespace: workspace, clusters, locks, network, identity, environment."""

    workspace: WorkspaceConfig = Field(description="Required.", examples=[{"name": "ws-llm"}])
    clusters: list[ClusterConfig] = Field(
        min_length=1, description="Required, at least one cluster.", examples=[[{"name": "h100-x4"}]]
    )
    locks: LocksConfig = Field(default_factory=LocksConfig, description="Optional; every lock has a default.")
    network: NetworkConfig = Field(
        default_factory=NetworkConfig,
        description="Optional: managed network and private endpoints; default public (Azure's default).",
    )
    identity: IdentityConfig = Field(
        default_factory=IdentityConfig,
        description="Optional: identity-based data access, role assignments, customer-managed key, "
        "diagnostics.",
    )
    environment: Literal["production", "development"] | None = Field(
        default=None,
        description="Optional, no default: what the stack is, which decides its enforcement (never its "
        "name). production: `python -m preflight init-config` writes secure-defaults and "
        "cluster-replacement mandatory, and the gate refuses a policy config that makes either advisory; "
        "development: advisory. init-config refuses a stack that does not say.",
        examples=["production"],
    )
    deploy: DeployConfig = Field(
        default_factory=DeployConfig,
        description="Optional: how the deploy pipeline's smoke step reaches the workspace (a self-hosted "
        "runner for a private one) and the pipeline's principal, granted the data roles the smoke job's "
        "code upload needs with identity-based datastores.",
    )

    @model_validator(mode="after")
    def _finish(self, info: ValidationInfo) -> StackConfig:
        if not (info.context or {}).get(SKIP_CROSS_RULES):
            problems = rules.stack_rules([c.name for c in self.clusters])
            if problems:
                raise ValueError("; ".join(f"{key}: {msg}" for key, msg in problems))
        region = self.workspace.region
        clusters = [c if c.region else c.model_copy(update={"region": region}) for c in self.clusters]
        object.__setattr__(self, "clusters", clusters)
        # Unset lock flags follow the lock decision (stackconfig.combinations.resolved_locks).
        locks = self.locks.model_copy(update=combinations.resolved_locks(self))
        object.__setattr__(self, "locks", locks)
        if not (info.context or {}).get(SKIP_CROSS_RULES):
            problems = combinations.problems(self)
            if problems:
                raise ValueError("; ".join(f"{key}: {msg}" for key, msg in problems))
        return self

    def cluster(self, name: str) -> ClusterConfig:
        """The cluster called `name` (KeyError when absent)."""
        for cluster in self.clusters:
            if cluster.name == name:
                return cluster
        raise KeyError(name)
