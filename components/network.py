"""PrivateEndpoints: private endpoints (with private DNS zone groups) for the workspace and its resources.

Resources: `azure-native:network:PrivateEndpoint` and `azure-native:network:PrivateDnsZoneGroup` (azure-native
3.29: Azure REST API 2024-05-01, the version the installed SDK's docstrings name).

Private-link group ids and private DNS zones per target (learn.microsoft.com/azure/private-link/
private-endpoint-dns, "Azure services DNS zone configuration": Azure Machine Learning `amlworkspace` ->
privatelink.api.azureml.ms and privatelink.notebooks.azure.net; Storage `blob` ->
privatelink.blob.core.windows.net, `file` -> privatelink.file.core.windows.net; Key Vault `vault` ->
privatelink.vaultcore.azure.net; Container Registry `registry` -> privatelink.azurecr.io). A private endpoint
to a container registry needs the Premium SKU
(learn.microsoft.com/azure/container-registry/container-registry-private-link: "available in the
Premium container registry service tier"); `Workspace` declares Premium when the network is private.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_azure_native.machinelearningservices as ml
import pulumi_azure_native.network as network

TYPE_TOKEN = "azml-gpu:components:PrivateEndpoints"

# target -> (private-link group id, private DNS zone names)
TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "workspace": ("amlworkspace", ("privatelink.api.azureml.ms", "privatelink.notebooks.azure.net")),
    "storage_blob": ("blob", ("privatelink.blob.core.windows.net",)),
    "storage_file": ("file", ("privatelink.file.core.windows.net",)),
    "key_vault": ("vault", ("privatelink.vaultcore.azure.net",)),
    "container_registry": ("registry", ("privatelink.azurecr.io",)),
}


def zone_id(zones_resource_group_id: str, zone: str) -> str:
    """ARM id of a private DNS zone in the given resource group (Microsoft.Network/privateDnsZones)."""
    return f"{zones_resource_group_id}/providers/Microsoft.Network/privateDnsZones/{zone}"


@dataclass(frozen=True)
class EndpointTarget:
    """One resource to reach privately. Required: `target` (a key of TARGETS), `azure_name` (the resource's
    Azure name: the endpoint is named `pe-<azure_name>-<group id>`), `resource_id` (its ARM id; pass the
    resource's `id` output so the endpoint depends on it)."""

    target: str
    azure_name: str
    resource_id: pulumi.Input[str]


@dataclass(frozen=True)
class PrivateEndpointsArgs:
    """Arguments of the PrivateEndpoints component.

    Required:
    - `subnet_id`: ARM id of the subnet the endpoints' network interfaces go in (your virtual network).
    - `region`: the endpoints' location; the subnet's virtual network must be in it (a private endpoint is
      created in its subnet's region).
    - `resource_group_name`: where the endpoints are declared (the workspace's group).
    - `targets`: the resources (EndpointTarget), one endpoint each.

    Optional:
    - `dns_zones_resource_group_id` (default None): ARM id of the resource group holding the privatelink.*
      zones; each endpoint then gets a PrivateDnsZoneGroup that writes its A records there. None leaves DNS
      to you (e.g. a central Azure Policy), as the Azure Verified Modules do when no zone group is given.
    - `tags` (default empty).
    """

    subnet_id: str
    region: str
    resource_group_name: pulumi.Input[str]
    targets: Sequence[EndpointTarget]
    dns_zones_resource_group_id: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)


class PrivateEndpoints(pulumi.ComponentResource):
    """One private endpoint per target (automatic approval: the deployer owns both sides), plus a private
    DNS zone group each when a zones resource group is given. Outputs: `endpoints` (target -> endpoint),
    `zone_groups` (target -> zone group)."""

    def __init__(
        self, name: str, args: PrivateEndpointsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.endpoints: dict[str, network.PrivateEndpoint] = {}
        self.zone_groups: dict[str, network.PrivateDnsZoneGroup] = {}
        for item in args.targets:
            group_id, zones = TARGETS[item.target]
            endpoint_name = f"pe-{item.azure_name}-{group_id}"[:80]
            endpoint = network.PrivateEndpoint(
                f"{name}-{item.target}",
                private_endpoint_name=endpoint_name,
                resource_group_name=args.resource_group_name,
                location=args.region,
                # A reference to the subnet: only its id (SubnetArgs would add its own defaults for the
                # subnet's network policies, which a private endpoint does not set).
                subnet={"id": args.subnet_id},
                private_link_service_connections=[
                    network.PrivateLinkServiceConnectionArgs(
                        name=endpoint_name,
                        private_link_service_id=item.resource_id,
                        group_ids=[group_id],
                    )
                ],
                tags=dict(args.tags),
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.endpoints[item.target] = endpoint
            if args.dns_zones_resource_group_id:
                self.zone_groups[item.target] = network.PrivateDnsZoneGroup(
                    f"{name}-{item.target}-dns",
                    private_endpoint_name=endpoint.name,
                    private_dns_zone_group_name="default",
                    resource_group_name=args.resource_group_name,
                    private_dns_zone_configs=[
                        network.PrivateDnsZoneConfigArgs(
                            name=zone.replace(".", "-"),
                            private_dns_zone_id=zone_id(args.dns_zones_resource_group_id, zone),
                        )
                        for zone in zones
                    ],
                    opts=pulumi.ResourceOptions(parent=self),
                )
        self.register_outputs({"endpointIds": {k: v.id for k, v in self.endpoints.items()}})


@dataclass(frozen=True)
class OutboundRule:
    """A user-defined outbound rule of the managed network. Required: `name`, `type` ("fqdn" |
    "private_endpoint" | "service_tag"). fqdn: `destination`; private_endpoint: `service_resource_id`,
    `subresource_target`; service_tag: `service_tag`, `protocol`, `port_ranges` (stackconfig checks which)."""

    name: str
    type: str
    destination: str | None = None
    service_resource_id: str | None = None
    subresource_target: str | None = None
    service_tag: str | None = None
    protocol: str | None = None
    port_ranges: str | None = None


@dataclass(frozen=True)
class ManagedNetwork:
    """The workspace's managed virtual network (Workspace `managed_network`).

    Required: `isolation_mode` ("Disabled" | "AllowInternetOutbound" | "AllowOnlyApprovedOutbound").
    Optional: `outbound_rules` (default none: Azure adds its required rules itself, how-to-managed-network.md
    "List of required rules"), `provision_at_creation` (default True: `provisionNetworkNow`, so the network
    exists before the first compute and a failure shows at `pulumi up`), `firewall_sku` (default None: Azure's
    Standard; the firewall exists only with FQDN rules, and is billed).
    """

    isolation_mode: str
    outbound_rules: Sequence[OutboundRule] = ()
    provision_at_creation: bool = True
    firewall_sku: str | None = None

    @property
    def enabled(self) -> bool:
        return self.isolation_mode != "Disabled"


def _rule_args(rule: OutboundRule) -> object:
    """An outbound rule as azure-native takes it: type FQDN | PrivateEndpoint | ServiceTag, category
    UserDefined (the only category a user sets; Required/Recommended/Dependency are Azure's own)."""
    if rule.type == "fqdn":
        return ml.FqdnOutboundRuleArgs(
            type="FQDN", category=ml.RuleCategory.USER_DEFINED, destination=rule.destination
        )
    if rule.type == "private_endpoint":
        return ml.PrivateEndpointOutboundRuleArgs(
            type="PrivateEndpoint",
            category=ml.RuleCategory.USER_DEFINED,
            destination=ml.PrivateEndpointDestinationArgs(
                service_resource_id=rule.service_resource_id,
                subresource_target=rule.subresource_target,
                spark_enabled=False,
            ),
        )
    return ml.ServiceTagOutboundRuleArgs(
        type="ServiceTag",
        category=ml.RuleCategory.USER_DEFINED,
        destination=ml.ServiceTagDestinationArgs(
            service_tag=rule.service_tag,
            protocol=rule.protocol,
            port_ranges=rule.port_ranges,
            action=ml.RuleAction.ALLOW,
        ),
    )


def managed_network_args(network_config: ManagedNetwork) -> ml.ManagedNetworkSettingsArgs:
    """The workspace's `managedNetwork` input (azure-native ManagedNetworkSettingsArgs)."""
    return ml.ManagedNetworkSettingsArgs(
        isolation_mode=network_config.isolation_mode,
        outbound_rules={r.name: _rule_args(r) for r in network_config.outbound_rules} or None,
        firewall_sku=network_config.firewall_sku,
    )


# Isolation mode changes Azure refuses on a deployed workspace (how-to-managed-network.md: "Once a managed
# VNet workspace is configured to allow internet outbound, the workspace cannot be reconfigured to disabled.
# Similarly, once a managed VNet workspace is configured to allow only approved outbound, the workspace cannot
# be reconfigured to allow internet outbound"; Limitations: "Once you enable managed virtual network isolation
# of your workspace ... you can't disable it"). Absent (no managedNetwork) is Disabled.
_ISOLATION_RANK = {"Disabled": 0, "AllowInternetOutbound": 1, "AllowOnlyApprovedOutbound": 2}


def refused_isolation_change(old: str | None, new: str | None) -> str | None:
    """Why Azure refuses changing a deployed workspace's `managedNetwork.isolationMode` from `old` to `new`
    (None when it accepts it). Only tightening is allowed: Disabled -> AllowInternetOutbound ->
    AllowOnlyApprovedOutbound. The deployed mode is in the state, not the config: the gate's update evaluation
    is where this is asked (docs/azure-behaviour.md section 15)."""
    before, after = old or "Disabled", new or "Disabled"
    if _ISOLATION_RANK.get(after, 0) >= _ISOLATION_RANK.get(before, 0):
        return None
    return (
        f"managedNetwork.isolationMode {before} -> {after}: Azure can't loosen a workspace's managed network "
        "once set (how-to-managed-network.md); keep "
        f"isolation_mode: {before}, or create a new workspace (stack) for the looser network"
    )
