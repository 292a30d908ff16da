"""`azml-gpu:network`: the workspace's managed network and its private endpoints (schema only).

Combinations Azure refuses (with other keys: clusters, workspace) are checked in `stackconfig.combinations`.
Sources of the shapes: azure-native 3.29 `machinelearningservices.ManagedNetworkSettingsArgs`,
`FqdnOutboundRuleArgs`, `PrivateEndpointOutboundRuleArgs`, `ServiceTagOutboundRuleArgs` (installed SDK) and
learn.microsoft.com/azure/machine-learning/how-to-managed-network.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from stackconfig import names
from stackconfig.schema_base import Strict

IsolationMode = Literal["Disabled", "AllowInternetOutbound", "AllowOnlyApprovedOutbound"]
# What a private endpoint can point at; components/network.py maps each to its private-link group id and
# private DNS zones.
PrivateEndpointTarget = Literal[
    "workspace", "storage_blob", "storage_file", "key_vault", "container_registry"
]
PRIVATE_ENDPOINT_TARGETS: tuple[str, ...] = (
    "workspace",
    "storage_blob",
    "storage_file",
    "key_vault",
    "container_registry",
)

# Outbound rule names: letters, digits, '-' and '_' (the examples' shape); kept short for the portal.
_RULE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{1,62}$")
_FQDN = re.compile(r"^(\*\.)?([A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,63}$")


class OutboundRule(Strict):
    """One user-defined outbound rule of the managed network. `type` decides which other keys apply:
    fqdn -> destination; private_endpoint -> service_resource_id, subresource_target; service_tag ->
    service_tag, protocol, port_ranges."""

    name: str = Field(description="Required. Rule name, unique in the workspace.", examples=["pypi"])
    type: Literal["fqdn", "private_endpoint", "service_tag"] = Field(
        description="Required. fqdn (needs an Azure Firewall: billed), private_endpoint or service_tag.",
        examples=["fqdn"],
    )
    destination: str | None = Field(
        default=None,
        description="fqdn: the host name (e.g. pypi.org, *.anaconda.org).",
        examples=["pypi.org"],
    )
    service_resource_id: str | None = Field(
        default=None, description="private_endpoint: ARM id of the target resource.", examples=[None]
    )
    subresource_target: str | None = Field(
        default=None,
        description="private_endpoint: the private-link group id (blob, file, vault...).",
        examples=["blob"],
    )
    service_tag: str | None = Field(
        default=None, description="service_tag: e.g. AzureMonitor.", examples=["AzureMonitor"]
    )
    protocol: Literal["TCP", "UDP", "ICMP", "*"] | None = Field(
        default=None, description="service_tag: protocol."
    )
    port_ranges: str | None = Field(
        default=None, description="service_tag: e.g. '443' or '80,443'.", examples=["443"]
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _RULE_NAME.match(value):
            raise ValueError(
                f"'{value}' is not a valid outbound rule name; use 2-63 letters, digits, '-' or '_', "
                "starting with a letter or digit"
            )
        return value

    @model_validator(mode="after")
    def _keys_of_type(self) -> OutboundRule:
        wanted = {
            "fqdn": ("destination",),
            "private_endpoint": ("service_resource_id", "subresource_target"),
            "service_tag": ("service_tag", "protocol", "port_ranges"),
        }[self.type]
        every = (
            "destination",
            "service_resource_id",
            "subresource_target",
            "service_tag",
            "protocol",
            "port_ranges",
        )
        missing = [k for k in wanted if getattr(self, k) is None]
        extra = [k for k in every if k not in wanted and getattr(self, k) is not None]
        if missing:
            raise ValueError(f"a {self.type} rule needs {', '.join(missing)}; add {missing[0]}")
        if extra:
            raise ValueError(
                f"{', '.join(extra)} do not apply to a {self.type} rule; remove them (a {self.type} rule "
                "takes "
                f"{', '.join(wanted)})"
            )
        if self.type == "fqdn" and self.destination is not None and not _FQDN.match(self.destination):
            raise ValueError(f"destination '{self.destination}' is not a host name; write e.g. pypi.org")
        if self.service_resource_id is not None and not self.service_resource_id.lower().startswith(
            "/subscriptions/"
        ):
            raise ValueError(
                f"service_resource_id '{self.service_resource_id}' is not an ARM id; use /subscriptions/<id>/"
                "resourceGroups/<rg>/providers/<namespace>/<type>/<name>"
            )
        return self


class ManagedNetworkConfig(Strict):
    """Azure ML's workspace managed virtual network (outbound isolation of its managed computes)."""

    isolation_mode: IsolationMode = Field(
        description="Required. Disabled | AllowInternetOutbound | AllowOnlyApprovedOutbound. Once on, it "
        "can't "
        "be turned off (how-to-managed-network.md, Limitations).",
        examples=["AllowOnlyApprovedOutbound"],
    )
    provision_at_creation: bool = Field(
        default=True,
        description="Optional, default true: provision the managed network when the workspace is created "
        "(provisionNetworkNow) instead of at the first compute, so a network error shows at `pulumi up`.",
    )
    firewall_sku: Literal["Standard", "Basic"] | None = Field(
        default=None,
        description="Optional: the Azure Firewall SKU Azure deploys for FQDN rules (Standard when unset).",
    )
    outbound_rules: list[OutboundRule] = Field(
        default_factory=list, description="Optional user-defined outbound rules.", examples=[[]]
    )

    @property
    def enabled(self) -> bool:
        return self.isolation_mode != "Disabled"

    @field_validator("outbound_rules")
    @classmethod
    def _unique(cls, value: list[OutboundRule]) -> list[OutboundRule]:
        seen: set[str] = set()
        for rule in value:
            if rule.name.lower() in seen:
                raise ValueError(f"two outbound rules are named '{rule.name}'; give each rule its own name")
            seen.add(rule.name.lower())
        return value


class PrivateEndpointsConfig(Strict):
    """Private endpoints, in a subnet of your virtual network, for the workspace and its resources."""

    subnet_id: str = Field(description="Required. ARM id of the subnet the endpoints go in.", examples=[None])
    targets: list[PrivateEndpointTarget] | None = Field(
        default=None,
        description="Optional, default every target the stack declares (workspace, storage blob and file, "
        "key "
        "vault, and the registry when there is one).",
    )
    private_dns_zones_resource_group_id: str | None = Field(
        default=None,
        description="Optional ARM id of the resource group holding the privatelink.* DNS zones (a hub); each "
        "endpoint then gets a private DNS zone group. Without it, DNS is yours (e.g. an Azure Policy that "
        "adds the records).",
    )

    @field_validator("subnet_id")
    @classmethod
    def _subnet(cls, value: str) -> str:
        if problem := names.subnet_id_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("private_dns_zones_resource_group_id")
    @classmethod
    def _zones(cls, value: str | None) -> str | None:
        if value is not None and (problem := names.resource_group_id_problem(value)):
            raise ValueError(problem)
        return value


class NetworkConfig(Strict):
    """`azml-gpu:network`. Without it the workspace is public (Azure's default)."""

    managed: ManagedNetworkConfig | None = Field(default=None, description="Optional managed network.")
    private_endpoints: PrivateEndpointsConfig | None = Field(
        default=None, description="Optional private endpoints in your virtual network."
    )

    @property
    def managed_enabled(self) -> bool:
        return self.managed is not None and self.managed.enabled
