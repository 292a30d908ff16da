"""A team's own program with azml-gpu's components: a workspace and a two-node H100 cluster.

Gate it offline (no Azure, no Pulumi account): `python -m preflight dev --program examples/team-gpu`;
deploy it with `pulumi up` in this folder. Arguments are checked at construction by the stack config's rules
(docs/components.md), so a typo fails here, naming the argument, not half-way through `pulumi up`."""

import pulumi
from azml_gpu.components import GpuCluster, GpuClusterArgs, Workspace, WorkspaceArgs

config = pulumi.Config()
region = config.require("region")

ws = Workspace(
    "ws-team",
    WorkspaceArgs(name="ws-team", region=region, resource_group="rg-team", public_network_access="Enabled"),
)
cluster = GpuCluster(
    "h100-x2",
    GpuClusterArgs(
        name="h100-x2",
        size="Standard_ND96isr_H100_v5",  # 8 H100 per node, InfiniBand: what multi-node training needs
        workspace_name=ws.workspace_name,
        resource_group_name=ws.resource_group_name,
        workspace_region=region,
        max_instances=config.require_int("max_nodes"),
        idle_seconds=300,
    ),
)
pulumi.export("workspace", ws.workspace_name)
pulumi.export("cluster", cluster.compute_name)
pulumi.export("gpus_per_node", cluster.gpus_per_node)
