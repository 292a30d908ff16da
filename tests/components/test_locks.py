"""components/locks.py: CanNotDelete locks on individual resources only, scoped to resource ids, with
deterministic names, as the real program declares them (Pulumi mocks, program_mocks.py)."""

from __future__ import annotations

import textwrap

import pytest

from components.locks import check_resource_scope

from .components_helpers import (
    APP_INSIGHTS,
    COMPUTE,
    GROUP_OR_SUBSCRIPTION,
    KEY_VAULT,
    LOCK,
    LOCKS_COMPONENT,
    ML_WORKSPACE,
    REGISTRY,
    RESOURCE_ID,
    ROLE_ASSIGNMENT,
    STORAGE,
    ns,
    one,
    variant,
)
from .program_mocks import REPO, run_program


def _locked(result) -> dict[str, object]:
    """scope -> the declared resource it locks."""
    by_id = {r.id: r for r in result.declared if r.custom}
    return {lock.inputs["scope"]: by_id.get(lock.inputs["scope"]) for lock in result.of_type(LOCK)}


def test_every_lock_scope_is_an_individual_resource_id(run):
    for lock in run.of_type(LOCK):
        scope = lock.inputs["scope"]
        assert RESOURCE_ID.match(scope), scope
        assert not GROUP_OR_SUBSCRIPTION.match(scope), scope
        assert lock.inputs["level"] == "CanNotDelete"


def test_capacity_locks_what_carries_no_grant(runs):
    """The public capacity stack carries the locks: storage, registry, App Insights; not the key vault (the
    workspace identity's Key Vault Administrator sits on it) nor the workspace (azure-behaviour.md 17)."""
    result = runs["capacity"]
    locked = _locked(result)
    assert all(target is not None for target in locked.values()), "a lock scope is not a declared resource"
    assert sorted(t.type for t in locked.values()) == sorted([STORAGE, REGISTRY, APP_INSIGHTS])
    granted = {r.inputs["scope"] for r in result.of_type(ROLE_ASSIGNMENT)}
    assert granted and not granted & set(locked)  # no lock on a resource that carries a grant
    assert one(result, KEY_VAULT).id in granted
    for lock in result.of_type(LOCK):
        target = locked[lock.inputs["scope"]]
        azure_name = target.state["name"]
        assert lock.inputs["lockName"] == f"lock-{azure_name}"
        assert azure_name in lock.inputs["notes"] and "capacity" in lock.inputs["notes"]
        assert target.urn in lock.dependencies


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_dev_and_prod_declare_no_locks(runs, stack):
    """dev: disposable; prod: a managed network asks for no scope locks (how-to-managed-network.md)."""
    assert runs[stack].of_type(LOCK) == []
    assert runs[stack].of_type(LOCKS_COMPONENT) == []


def test_every_lock_depends_on_what_it_would_block_so_destroy_removes_it_first(stack_configs):
    """A lock blocks deleting what lies under its scope: a workspace lock its computes, a storage or registry
    lock the role assignments on it (lock-resources.md; docs/config.md). `pulumi destroy` deletes a resource's
    dependents before it, so each lock depends on every cluster and every role assignment of the stack and
    is deleted before any of them (the engine's order: tests/integration/e2e/test_pulumi_up.py)."""
    base = stack_configs["capacity"]
    result = run_program("capacity", variant(base, locks=dict(ns(base, "locks"), workspace=True)))
    assert result.ok, result.error
    blocked = {r.urn for r in result.of_type(COMPUTE)} | {r.urn for r in result.of_type(ROLE_ASSIGNMENT)}
    assert result.of_type(COMPUTE) and result.of_type(ROLE_ASSIGNMENT)
    for lock in result.of_type(LOCK):
        assert blocked <= set(lock.dependencies), lock.name


def test_workspace_lock_only_when_asked_and_says_it_covers_computes(stack_configs):
    base = stack_configs["capacity"]
    result = run_program("capacity", variant(base, locks=dict(ns(base, "locks"), workspace=True)))
    assert result.ok, result.error
    mlw = one(result, ML_WORKSPACE)
    (ws_lock,) = [lock for lock in result.of_type(LOCK) if lock.inputs["scope"] == mlw.id]
    assert "computes" in ws_lock.inputs["notes"] and "replacing a GPU cluster" in ws_lock.inputs["notes"]
    assert ws_lock.inputs["lockName"] == "lock-ws-llm-cap"
    assert len(result.of_type(LOCK)) == 4


def test_lock_flags_select_targets(stack_configs):
    base = stack_configs["capacity"]
    flags = {
        "storage": True,
        "key_vault": False,
        "container_registry": False,
        "application_insights": False,
        "workspace": False,
    }
    result = run_program("capacity", variant(base, locks=flags))
    assert [t.type for t in _locked(result).values()] == [STORAGE]


@pytest.mark.parametrize(
    "scope",
    [
        "/subscriptions/00000000-0000-0000-0000-000000000000",
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train",
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-train/",
    ],
)
def test_scope_check_refuses_group_and_subscription(scope):
    with pytest.raises(ValueError, match="not the id of an individual resource"):
        check_resource_scope(scope)


def test_locks_component_refuses_a_resource_group_target(tmp_path):
    """A program that tries to lock the resource group fails before anything is sent."""
    program = tmp_path / "__main__.py"
    program.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        import pulumi_azure_native.resources as resources
        from components import LockTarget, ResourceLocks, ResourceLocksArgs
        rg = resources.ResourceGroup("rg", resource_group_name="rg-train", location="eastus")
        ResourceLocks("locks", ResourceLocksArgs(targets=[LockTarget("rg-train", rg, "no")]))
    """)
    )
    refused = "refusing to lock 'rg-train' of type azure-native:resources:ResourceGroup"
    with pytest.raises(ValueError, match=refused):
        run_program("dev", {}, program=program)
