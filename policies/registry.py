"""The one place the pack's policies are registered, in evaluation order.

A concern with both a mandatory and an advisory case is two policies (pulumi-policy 1.21 gives each policy one
enforcement level); the companion is registered right after the policy that computes its findings, since the
servicer evaluates policies in this order (pulumi_policy/policy.py).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, Policy, PolicyPack

from policies import (
    cross_region_compute,
    idle_timer_bounds,
    low_priority_multi_node,
    min_nodes_zero,
    multi_node_requires_rdma,
    no_locks_on_cluster_network,
    no_privileged_role_assignments,
    no_resource_group_locks,
    no_retired_vm_series,
    private_network,
    quota_reservation,
    secure_defaults,
    ssh_decided_at_creation,
)
from vmsizes import all_sizes

PACK_NAME = "azml-gpu"

POLICIES: list[Policy] = [
    multi_node_requires_rdma.POLICY,
    no_retired_vm_series.POLICY,
    no_retired_vm_series.COMPANION_POLICY,
    no_resource_group_locks.POLICY,
    no_resource_group_locks.COMPANION_POLICY,
    no_locks_on_cluster_network.POLICY,
    ssh_decided_at_creation.POLICY,
    quota_reservation.POLICY,
    quota_reservation.COMPANION_POLICY,
    min_nodes_zero.POLICY,
    idle_timer_bounds.POLICY,
    idle_timer_bounds.COMPANION_POLICY,
    low_priority_multi_node.POLICY,
    cross_region_compute.POLICY,
    secure_defaults.POLICY,
    no_privileged_role_assignments.POLICY,
    no_privileged_role_assignments.COMPANION_POLICY,
    private_network.RECORDER,
    private_network.POLICY,
    private_network.COMPANION_POLICY,
]


def build_pack() -> PolicyPack:
    """Start the pack's gRPC Analyzer server (prints its port, then blocks): what the CLI runs."""
    # Read the size catalog now, while the engine is still evaluating the program, not on the first Analyze.
    all_sizes()
    return PolicyPack(
        name=PACK_NAME,
        policies=POLICIES,
        enforcement_level=EnforcementLevel.ADVISORY,
        description="Azure ML GPU compute guardrails.",
        provider="azure",
    )
