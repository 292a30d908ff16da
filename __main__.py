"""azml-gpu stack program: validate the config, build the components, export the stack outputs.

Runs unchanged under `pulumi preview/up`; offline, under the gate's inline language host
(`python -m preflight STACK`: preflight/langhost.py) and, in tests, under `pulumi.runtime.set_mocks`
(tests/components/program_mocks.py).
Invalid config: every problem at once as a `pulumi.RunError`, which the engine prints without a
stack trace (pulumi-language-python-exec), and nothing is declared.
"""

import pulumi

import vmsizes
from components import (
    CustomerKey,
    EndpointTarget,
    GpuCluster,
    GpuClusterArgs,
    ManagedNetwork,
    OutboundRule,
    PrivateEndpoints,
    PrivateEndpointsArgs,
    ResourceLocks,
    ResourceLocksArgs,
    RoleAssignments,
    RoleAssignmentsArgs,
    SshAccess,
    Workspace,
    WorkspaceArgs,
    WorkspaceDiagnostics,
    WorkspaceDiagnosticsArgs,
    stack_grants,
    workspace_isolation,
    workspace_lock_targets,
)
from stackconfig import ConfigError, StackConfig, from_pulumi_config
from stackconfig.combinations import plan as grant_plan
from stackconfig.outputs import stack_outputs


def load_config() -> StackConfig:
    try:
        return from_pulumi_config()
    except ConfigError as exc:
        count = len(exc.problems)
        lines = "\n".join(f"  - {p}" for p in exc.problems)
        raise pulumi.RunError(
            f"invalid stack config ({count} problem{'s' if count != 1 else ''}); nothing was declared:\n"
            f"{lines}\nFix them in Pulumi.{pulumi.get_stack()}.yaml (schema: docs/config.md)."
        ) from exc


def managed_network(config: StackConfig) -> ManagedNetwork | None:
    """The workspace's managed network from `azml-gpu:network.managed` (None when absent)."""
    mn = config.network.managed
    if mn is None:
        return None
    rules = [OutboundRule(**rule.model_dump()) for rule in mn.outbound_rules]
    return ManagedNetwork(mn.isolation_mode, rules, mn.provision_at_creation, mn.firewall_sku)


def endpoint_targets(config: StackConfig, workspace: Workspace) -> list[EndpointTarget]:
    """The private endpoints of `azml-gpu:network.private_endpoints` (default: every resource declared)."""
    names = workspace.names
    available = {
        "workspace": (config.workspace.name, workspace.workspace_id),
        "storage_blob": (names.storage_account, workspace.storage_account.id),
        "storage_file": (names.storage_account, workspace.storage_account.id),
        "key_vault": (names.key_vault, workspace.key_vault.id),
    }
    if workspace.container_registry is not None:
        available["container_registry"] = (names.container_registry, workspace.container_registry.id)
    wanted = config.network.private_endpoints.targets or list(available)
    return [EndpointTarget(t, *available[t]) for t in wanted if t in available]


def main() -> None:
    config = load_config()
    ws_cfg = config.workspace
    identity = config.identity
    network = config.network
    cmk = identity.customer_managed_key
    # Every role assignment the stack declares, decided once (stackconfig.identity.grant_plan).
    plan = grant_plan(config)

    workspace = Workspace(
        ws_cfg.name,
        WorkspaceArgs(
            name=ws_cfg.name,
            region=ws_cfg.region,
            resource_group=ws_cfg.resource_group.name,
            create_resource_group=ws_cfg.resource_group.create,
            public_network_access=ws_cfg.public_network_access,
            container_registry=ws_cfg.container_registry,
            key_vault_purge_protection=ws_cfg.key_vault_purge_protection,
            key_vault_soft_delete_days=ws_cfg.key_vault_soft_delete_days,
            friendly_name=ws_cfg.friendly_name,
            description=ws_cfg.description,
            tags=ws_cfg.tags,
            managed_network=managed_network(config),
            # A private workspace reaches its registry through a private endpoint: Premium (network.py).
            private_registry=network.managed_enabled or network.private_endpoints is not None,
            system_datastores_auth_mode=identity.system_datastores_auth_mode,
            storage_shared_key_access=identity.storage_shared_key_access,
            customer_managed_key=(
                CustomerKey(cmk.key_vault_id, cmk.key_uri, cmk.user_assigned_identity_id) if cmk else None
            ),
            user_assigned_identity_id=identity.workspace_identity_id,
            identity_grants=[g for g in plan if g.before_workspace],
        ),
    )

    if network.private_endpoints is not None:
        pe = network.private_endpoints
        PrivateEndpoints(
            f"{ws_cfg.name}-pe",
            PrivateEndpointsArgs(
                subnet_id=pe.subnet_id,
                region=ws_cfg.region,
                resource_group_name=workspace.resource_group_name,
                targets=endpoint_targets(config, workspace),
                dns_zones_resource_group_id=pe.private_dns_zones_resource_group_id,
                tags=ws_cfg.tags,
            ),
        )

    clusters: dict[str, GpuCluster] = {}
    for cluster in config.clusters:
        ssh = cluster.ssh
        clusters[cluster.name] = GpuCluster(
            cluster.name,
            GpuClusterArgs(
                name=cluster.name,
                size=vmsizes.describe(cluster.size),
                workspace_name=workspace.workspace_name,
                resource_group_name=workspace.resource_group_name,
                workspace_region=ws_cfg.region,
                region=cluster.region,
                min_instances=cluster.min_instances,
                max_instances=cluster.max_instances,
                idle_seconds=cluster.idle_time_before_scale_down,
                tier=cluster.tier,
                ssh=None if ssh == "disabled" else SshAccess(ssh.admin_user, ssh.public_key),
                subnet_id=cluster.subnet_id,
                node_public_ip=cluster.node_public_ip,
                user_assigned_identity_id=cluster.user_assigned_identity_id,
                tags=ws_cfg.tags,
                workspace_isolation=workspace_isolation(
                    network.managed_enabled,
                    network.private_endpoints is not None
                    and (
                        network.private_endpoints.targets is None
                        or "workspace" in network.private_endpoints.targets
                    ),
                ),
            ),
        )

    grants = stack_grants(workspace, clusters, plan)
    access = RoleAssignments(
        f"{ws_cfg.name}-access",
        RoleAssignmentsArgs(
            subscription_id=workspace.subscription_id,
            name_seed=f"/subscriptions/{workspace.subscription_id}/resourceGroups/{ws_cfg.resource_group.name}",
            grants=grants,
        ),
    )

    if identity.diagnostic_settings:
        WorkspaceDiagnostics(
            f"{ws_cfg.name}-diagnostics",
            WorkspaceDiagnosticsArgs(
                workspace_id=workspace.workspace_id, log_analytics_id=workspace.log_analytics.id
            ),
        )

    targets = workspace_lock_targets(workspace, config.locks)
    if targets:
        ResourceLocks(
            f"{ws_cfg.name}-locks",
            ResourceLocksArgs(
                targets=targets,
                stack_label=f"{pulumi.get_project()}/{pulumi.get_stack()}",
                # Deleted after every lock: the clusters and the role assignments (components/locks.py).
                blocks=[
                    *clusters.values(),
                    access,
                    *([workspace.identity_assignments] if workspace.identity_assignments else []),
                ],
            ),
        )

    # The subscription of the provider's credentials (authorization.get_client_config(), read by Workspace),
    # and the key vault name the component derived from it (jobs teardown purges that vault).
    outputs = stack_outputs(config, workspace.subscription_id, key_vault_name=workspace.names.key_vault)
    for key, value in outputs.model_dump(mode="json").items():
        pulumi.export(key, value)


main()
