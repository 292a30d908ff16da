"""azml-gpu stack program: validate the config, build the components, export the stack outputs.

Runs unchanged under `pulumi preview/up` and offline under `preflight.program.run_program` (mocks).
Invalid config: every problem at once as a `pulumi.RunError`, which the engine prints without a
stack trace (pulumi-language-python-exec), and nothing is declared.
"""

import pulumi

import vmsizes
from components import (
    GpuCluster,
    GpuClusterArgs,
    ResourceLocks,
    ResourceLocksArgs,
    SshAccess,
    Workspace,
    WorkspaceArgs,
    workspace_lock_targets,
)
from stackconfig import ConfigError, StackConfig, from_pulumi_config
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


def main() -> None:
    config = load_config()
    ws_cfg = config.workspace

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
        ),
    )

    for cluster in config.clusters:
        ssh = cluster.ssh
        GpuCluster(
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
                tags=ws_cfg.tags,
            ),
        )

    targets = workspace_lock_targets(workspace, config.locks)
    if targets:
        ResourceLocks(
            f"{ws_cfg.name}-locks",
            ResourceLocksArgs(targets=targets, stack_label=f"{pulumi.get_project()}/{pulumi.get_stack()}"),
        )

    # The subscription of the provider's credentials (authorization.get_client_config(), read by Workspace),
    # and the key vault name the component derived from it (jobs teardown purges that vault).
    outputs = stack_outputs(config, workspace.subscription_id, key_vault_name=workspace.names.key_vault)
    for key, value in outputs.model_dump(mode="json").items():
        pulumi.export(key, value)


main()
