"""The one place the pack's policies are registered.

Each entry is a policy module of the one shape (policies/_policy.py): NAME, DESCRIPTION, ENFORCEMENT, CONFIG,
KIND and `validate`. The order is the order the CLI lists the policies in; no policy depends on it, except
quota-reservation-unknown, which must follow quota-reservation (policies/quota_reservation.py says why), and
cluster-cost-budget-unknown, which must follow cluster-cost-budget (the same reason); tests/policies/
test_registry.py pins both.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from pulumi_policy import EnforcementLevel, Policy, PolicyPack

from policies import (
    cluster_cost_budget,
    cluster_cost_budget_unknown,
    compute_in_virtual_network,
    cross_region_compute,
    idle_timer_bounds,
    idle_timer_parseable,
    low_priority_multi_node,
    min_nodes_zero,
    multi_node_requires_rdma,
    no_locks_on_cluster_network,
    no_locks_on_granted_resources,
    no_privileged_role_assignments,
    no_privileged_role_assignments_by_dependency,
    no_resource_group_locks,
    no_resource_group_locks_by_dependency,
    no_retired_vm_series,
    private_network,
    private_network_cost,
    private_network_inputs,
    quota_reservation,
    quota_reservation_unknown,
    secure_defaults,
    ssh_decided_at_creation,
    vm_series_retiring_soon,
    workspace_user_assigned_identity,
)
from policies._policy import to_pulumi
from vmsizes import all_sizes

PACK_NAME = "azml-gpu"

MODULES: tuple[ModuleType, ...] = (
    multi_node_requires_rdma,
    no_retired_vm_series,
    vm_series_retiring_soon,
    no_resource_group_locks,
    no_resource_group_locks_by_dependency,
    no_locks_on_cluster_network,
    no_locks_on_granted_resources,
    ssh_decided_at_creation,
    quota_reservation,
    quota_reservation_unknown,
    cluster_cost_budget,
    cluster_cost_budget_unknown,
    min_nodes_zero,
    idle_timer_bounds,
    idle_timer_parseable,
    low_priority_multi_node,
    cross_region_compute,
    secure_defaults,
    no_privileged_role_assignments,
    no_privileged_role_assignments_by_dependency,
    private_network_inputs,
    private_network,
    private_network_cost,
    compute_in_virtual_network,
    workspace_user_assigned_identity,
)
BY_NAME: dict[str, ModuleType] = {m.NAME: m for m in MODULES}

POLICIES: list[Policy] = [to_pulumi(m) for m in MODULES]


def config_problems(name: str, config: Mapping[str, Any]) -> list[str]:
    """Problems with policy `name`'s config beyond its JSON schema, from the policy's own `config_problems`
    (a module may define one; e.g. quota-reservation's unknown region and quota family keys); [] for a name
    that is not a pack policy."""
    check = getattr(BY_NAME.get(name), "config_problems", None)
    return check(config) if check is not None else []


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
