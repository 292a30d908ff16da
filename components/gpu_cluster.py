"""GpuCluster: one Azure ML compute cluster (AmlCompute) on a GPU VM size."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal, Protocol

import isodate
import pulumi
import pulumi_azure_native.machinelearningservices as ml
import pulumi_azure_native.managedidentity as managedidentity

import vmsizes
from components.arguments import ArgumentsError, plain, renamed
from components.compute_delete import compute_delete_hook
from stackconfig.sizes import canonical_size
from vmsizes.quota import ClusterDemand, reserve

TYPE_TOKEN = "azml-gpu:components:GpuCluster"

# Settings Azure fixes when the cluster is created, as wire-format property paths of the
# `azure-native:machinelearningservices:Compute` inputs. Changing any of them must replace the
# cluster: the update API carries scale settings only, and a cluster re-created under the same name has
# come back with its old vmSize (Azure/azure-rest-api-specs#18889, docs/azure-behaviour.md §9).
# azure-native does not replace on them: its Diff replaces a Compute only on its path parameters
# (computeName, workspaceName, resourceGroupName); the spec's create-only marks on computeLocation and
# disableLocalAuth sit inside the `properties` union, which its force-new search does not enter
# (provider/pkg/provider/diff.go calculateDetailedDiff, gen/properties.go forceNew; preflight/
# azure_native.py). The maintainers' advice for properties the spec does not mark is `replaceOnChanges`
# (pulumi/pulumi-azure-native#940, #2577), so the component declares it; the engine matches these paths
# against the provider's detailed diff keys (pulumi/pulumi step_generator.go applyReplaceOnChanges).
# - vmSize: "Virtual machine type (CPU/GPU) ... can't be changed after creation" (Azure ML docs,
#   how-to-create-attach-compute-cluster.md).
# - userAccountCredentials, remoteLoginPortPublicAccess: "SSH access ... can't be changed after
#   creation" (same page).
# - vmPriority, subnet, enableNodePublicIp: ForceNew in terraform azurerm
#   (machine_learning_compute_cluster: vm_priority, subnet_resource_id, node_public_ip_enabled,
#   ssh_public_access_enabled, ssh), which follows what the Azure ML update API accepts: only scale
#   settings (ClusterUpdateParameters -> ClusterUpdateProperties.scaleSettings).
# - computeLocation, disableLocalAuth: ForceNew in terraform azurerm (location, local_auth_enabled);
#   the update API carries neither.
# Scale settings (min, max, idle time) are deliberately absent: Azure updates them in place.
IMMUTABLE_PROPERTY_PATHS: tuple[str, ...] = (
    "properties.computeLocation",
    "properties.disableLocalAuth",
    "properties.properties.vmSize",
    "properties.properties.vmPriority",
    "properties.properties.userAccountCredentials",
    "properties.properties.remoteLoginPortPublicAccess",
    "properties.properties.subnet",
    "properties.properties.enableNodePublicIp",
)

# ARM `vmPriority` values (azure-native machinelearningservices.VmPriority).
_PRIORITY = {"dedicated": ml.VmPriority.DEDICATED, "low_priority": ml.VmPriority.LOW_PRIORITY}


class CatalogSize(Protocol):
    """What the component reads from the size catalog (`vmsizes.VmSize` satisfies it)."""

    name: str
    gpus: int | None
    vcpus: int | None
    quota_family: str | None
    rdma_usable: bool


@dataclass(frozen=True)
class SshAccess:
    """SSH to the nodes, by key only (no password is ever sent).

    Required: `admin_user` (the admin account created on every node), `public_key` (an OpenSSH RSA
    public key line, "ssh-rsa AAAA...": Azure ML takes RSA keys only; stackconfig.sshkeys checks it).
    """

    admin_user: str
    public_key: str


def idle_duration(seconds: int) -> str:
    """Seconds -> the ISO 8601 duration ARM expects in `scaleSettings.nodeIdleTimeBeforeScaleDown`
    ("in the RFC Format", a .NET TimeSpan: azure-native ScaleSettingsArgs docstring, azure-notes §3.2).
    300 -> "PT5M", 1800 -> "PT30M"."""
    return isodate.duration_isoformat(timedelta(seconds=seconds))


@dataclass(frozen=True)
class GpuClusterArgs:
    """Arguments of the GpuCluster component.

    Required:
    - `name`: the compute name (3-24 characters, letter first; validated by stackconfig). Fixed for
      the cluster's life, which is why replacements delete before they create.
    - `size`: a size name (`"Standard_ND96isr_H100_v5"`, any casing) or its catalog entry
      (`vmsizes.describe(size)`); a name becomes its catalog entry, whose canonical `name` is sent as
      `vmSize` and whose facts become the outputs.
    - `workspace_name`, `resource_group_name`: the parent workspace (pass the Workspace component's
      outputs so the cluster depends on the workspace).
    - `workspace_region`: the workspace's region, sent as the resource `location` (see `region`).
    - `max_instances`: `maxNodeCount`, required by ARM; also the quota the cluster reserves
      (max x vCPUs of its family, even when scaled to zero: azure-notes §3.5).
    - `idle_seconds`: idle time before a node is released. Required with no default on purpose: the
      SDK v2/CLI v2 default is 120 s while SDK v1's was 1800 s (azure-notes §3.2), and for GPU nodes
      the right value is a cost decision.

    Optional:
    - `region` (default None = the workspace region): the cluster's own region. Sent as
      `properties.computeLocation` while the resource `location` stays at the workspace region
      (docs/azure-behaviour.md, "Cross-region clusters").
    - `min_instances` (default 0): nodes kept running even when idle; 0 pays nothing when idle.
    - `tier` (default "dedicated"): "dedicated" | "low_priority" -> `vmPriority`.
    - `ssh` (default None = SSH disabled): an `SshAccess`; the public SSH port is then opened
      ("Enabled"), otherwise it is sent as "Disabled" explicitly, because "NotSpecified" turns into
      Enabled or Disabled after creation (azure-native RemoteLoginPortPublicAccess docstring) and
      would show as drift. SSH also decides local authentication: on Azure ML computes local auth
      IS SSH, so `disableLocalAuth` is sent as `not ssh`, exactly as azure-ai-ml does
      (`disableLocalAuth = not self.ssh_settings`, azure/ai/ml/entities/_compute/aml_compute.py
      AmlCompute._to_rest_object). It is create-only (Az.MachineLearningServices ICompute.DisableLocalAuth:
      Create=true, Update=false). Sending true with SSH credentials would create a cluster nobody can
      log in to; the built-in Azure Policy that disables it (Azure/azure-policy built-in-policies/
      policyDefinitions/Machine Learning/DisableLocalAuth_Modify.json) therefore turns SSH off.
    - `subnet_id` (default None): ARM id of a subnet for the nodes.
    - `node_public_ip` (default True, Azure's default): False gives nodes no public IP (needs a
      subnet or a managed network).
    - `user_assigned_identity_id` (default None = a system-assigned identity): ARM id of an existing
      user-assigned identity for the nodes; the component looks it up (`managedidentity.
      get_user_assigned_identity`) so a missing identity fails at preview, and exposes its principal.
    - `workspace_isolation` (default None = no trigger): how the workspace is reached, such as
      "managed-network=False;workspace-private-endpoint=True" (`workspace_isolation`). It is the cluster's
      replacement trigger: a change replaces the cluster, because a cluster made before the workspace got
      a managed network or a private endpoint does not work in it. "You'll need to delete all existing
      managed compute resources and recreate them after enabling the managed virtual network"
      (how-to-managed-network.md, "Migration of compute resources"); "If you have any existing compute
      targets associated with this workspace, and they aren't behind the same virtual network that the
      private endpoint is created in, they won't work" (how-to-configure-private-link.md, "Add a private
      endpoint to a workspace"). The engine compares it with the value in the state (pulumi
      step_generator.go `shouldTriggerReplace`; a state written before the trigger existed holds none, so
      the first update with it replaces nothing).
    - `tags` (default empty).
    """

    name: str
    size: CatalogSize | str
    workspace_name: pulumi.Input[str]
    resource_group_name: pulumi.Input[str]
    workspace_region: str
    max_instances: int
    idle_seconds: int
    region: str | None = None
    min_instances: int = 0
    tier: Literal["dedicated", "low_priority"] = "dedicated"
    ssh: SshAccess | None = None
    subnet_id: str | None = None
    node_public_ip: bool = True
    user_assigned_identity_id: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    workspace_isolation: str | None = None

    def __post_init__(self) -> None:
        """Checked by stackconfig's cluster rules (components.arguments): every problem at once, as
        ArgumentsError; a size given by name becomes its catalog entry."""
        from stackconfig.regions import canonical_region, region_problem
        from stackconfig.validation import cluster_problems

        given = self.size if isinstance(self.size, str) else self.size.name
        ssh = self.ssh
        keys = "disabled" if ssh is None else {"admin_user": ssh.admin_user, "public_key": ssh.public_key}
        raw = plain(
            {
                "name": self.name,
                "size": given,
                "region": self.region,
                "min_instances": self.min_instances,
                "max_instances": self.max_instances,
                "idle_time_before_scale_down": self.idle_seconds,
                "tier": self.tier,
                "ssh": keys,
                "subnet_id": self.subnet_id,
                "node_public_ip": self.node_public_ip,
                "user_assigned_identity_id": self.user_assigned_identity_id,
            }
        )
        problems = renamed(cluster_problems(raw), {"idle_time_before_scale_down": "idle_seconds"})
        if isinstance(self.workspace_region, str) and canonical_region(self.workspace_region) is None:
            problems.append(f"workspace_region: {region_problem(self.workspace_region)}")
        if problems:
            raise ArgumentsError("GpuClusterArgs", problems)
        if isinstance(self.size, str):
            object.__setattr__(self, "size", vmsizes.describe(canonical_size(self.size)))

    @property
    def cluster_region(self) -> str:
        return self.region or self.workspace_region


def workspace_isolation(managed_network: bool, workspace_private_endpoint: bool) -> str:
    """The cluster's replacement trigger for how its workspace is reached (`GpuClusterArgs`)."""
    return f"managed-network={managed_network};workspace-private-endpoint={workspace_private_endpoint}"


def reserved_vcpus(size: CatalogSize, max_instances: int, region: str, tier: str, name: str) -> int:
    """vCPUs of quota the cluster holds: max x vCPUs per node (azure-notes §3.5), via the catalog's
    quota arithmetic (`vmsizes.quota.reserve`), the project's single implementation of that rule."""
    report = reserve([ClusterDemand(name, size.name, region, tier, max_instances)])
    return report.reservations[0].vcpus


class GpuCluster(pulumi.ComponentResource):
    """An AmlCompute cluster with a system-assigned identity.

    Outputs (attributes): `compute` (the Compute resource), `compute_id`, `compute_name`, `principal_id`
    (of the nodes' identity),
    `gpus_per_node`, `vcpus_per_node`, `reserved_vcpus` (max x vCPUs), `quota_family`,
    `rdma_usable`, `region`.
    """

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)

        ssh_enabled = args.ssh is not None
        self.region = args.cluster_region
        self.gpus_per_node = args.size.gpus
        self.vcpus_per_node = args.size.vcpus
        self.quota_family = args.size.quota_family
        self.rdma_usable = args.size.rdma_usable
        self.reserved_vcpus = reserved_vcpus(args.size, args.max_instances, self.region, args.tier, args.name)

        self.compute = ml.Compute(
            name,
            compute_name=args.name,
            workspace_name=args.workspace_name,
            resource_group_name=args.resource_group_name,
            # The ARM envelope of a workspace child lives in the workspace's region; the cluster's
            # region goes in properties.computeLocation (docs/azure-behaviour.md, "Cross-region clusters").
            location=args.workspace_region,
            identity=(
                ml.ManagedServiceIdentityArgs(
                    type=ml.ManagedServiceIdentityType.USER_ASSIGNED,
                    user_assigned_identities=[args.user_assigned_identity_id],
                )
                if args.user_assigned_identity_id
                else ml.ManagedServiceIdentityArgs(type=ml.ManagedServiceIdentityType.SYSTEM_ASSIGNED)
            ),
            properties=ml.AmlComputeArgs(
                compute_type="AmlCompute",
                compute_location=self.region,
                # Local auth is SSH on Azure ML computes (see GpuClusterArgs.ssh): create-only.
                disable_local_auth=not ssh_enabled,
                properties=ml.AmlComputePropertiesArgs(
                    vm_size=args.size.name,
                    vm_priority=_PRIORITY[args.tier],
                    os_type=ml.OsType.LINUX,
                    scale_settings=ml.ScaleSettingsArgs(
                        min_node_count=args.min_instances,
                        max_node_count=args.max_instances,
                        node_idle_time_before_scale_down=idle_duration(args.idle_seconds),
                    ),
                    user_account_credentials=(
                        ml.UserAccountCredentialsArgs(
                            admin_user_name=args.ssh.admin_user,
                            admin_user_ssh_public_key=args.ssh.public_key,
                        )
                        if args.ssh is not None
                        else None
                    ),
                    remote_login_port_public_access=(
                        ml.RemoteLoginPortPublicAccess.ENABLED
                        if ssh_enabled
                        else ml.RemoteLoginPortPublicAccess.DISABLED
                    ),
                    subnet=ml.ResourceIdArgs(id=args.subnet_id) if args.subnet_id else None,
                    enable_node_public_ip=args.node_public_ip,
                ),
            ),
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(
                parent=self,
                replace_on_changes=list(IMMUTABLE_PROPERTY_PATHS),
                # The compute name is fixed, so the old cluster must go before the new one exists.
                delete_before_replace=True,
                # Deleted by the before-delete hook with underlyingResourceAction=Delete, never by
                # azure-native's plain DELETE (components/compute_delete.py); `pulumi destroy` needs
                # `--run-program` for the hook to run.
                retain_on_delete=True,
                hooks=pulumi.ResourceHookBinding(before_delete=[compute_delete_hook()]),
                # Re-created when the workspace gets a managed network or a private endpoint (GpuClusterArgs).
                replacement_trigger=args.workspace_isolation,
            ),
        )
        self.compute_id: pulumi.Output[str] = self.compute.id
        self.compute_name: pulumi.Output[str] = self.compute.name
        # The identity the nodes run jobs as: the grants of components.identity go to this principal.
        if args.user_assigned_identity_id:
            parts = args.user_assigned_identity_id.split("/")
            found = managedidentity.get_user_assigned_identity_output(
                resource_group_name=parts[4],
                resource_name=parts[-1],
                opts=pulumi.InvokeOutputOptions(parent=self),
            )
            self.principal_id: pulumi.Output[str] = found.principal_id
        else:
            self.principal_id = self.compute.identity.apply(lambda i: i.principal_id if i else None)

        self.register_outputs(
            {
                "computeId": self.compute_id,
                "computeName": self.compute_name,
                "region": self.region,
                "gpusPerNode": self.gpus_per_node,
                "vcpusPerNode": self.vcpus_per_node,
                "reservedVcpus": self.reserved_vcpus,
                "quotaFamily": self.quota_family,
                "rdmaUsable": self.rdma_usable,
            }
        )
