"""no-locks-on-granted-resources (mandatory, stack): no lock on a resource that carries a role assignment
of the stack (lock-resources.md: "A cannot-delete lock on a resource or resource group prevents the deletion
of Azure RBAC assignments")."""

from __future__ import annotations

import pytest

from policies import no_locks_on_granted_resources

from .policies_helpers import LOCK_BY_SCOPE, STORAGE, VAULT, stack_resource

ASSIGNMENT = "azure-native:authorization:RoleAssignment"


def _storage():
    return stack_resource(STORAGE, "ws-llm-st", {"accountName": "stllm"})


def _lock(target):
    return stack_resource(LOCK_BY_SCOPE, "lock-st", {"level": "CanNotDelete"}, {"scope": [target]})


def _grant(target, name: str = "ws-llm-access-h100-x4-st-blob-contributor"):
    return stack_resource(ASSIGNMENT, name, {"principalType": "ServicePrincipal"}, {"scope": [target]})


def test_a_lock_on_a_granted_resource_is_mandatory() -> None:
    storage = _storage()
    lock = _lock(storage)
    (found,) = no_locks_on_granted_resources.validate([storage, lock, _grant(storage)], {})
    assert found.urn == lock.urn
    assert found.message == (
        "CanNotDelete lock 'lock-st' on StorageAccount ws-llm-st, which carries 1 role assignment(s) of "
        "this stack (ws-llm-access-h100-x4-st-blob-contributor): a lock blocks deleting the role "
        "assignments on the resource it locks (lock-resources.md), so replacing a cluster, removing a "
        "grant or `pulumi destroy` fails half-way. Fix: don't lock that resource (azml-gpu:locks; unset "
        "flags skip granted resources), or unlock, change and relock by hand (docs/azure-behaviour.md "
        "section 17)."
    )


def test_locks_and_grants_on_different_resources_pass() -> None:
    storage, vault = _storage(), stack_resource(VAULT, "ws-llm-kv", {"vaultName": "kv"})
    assert no_locks_on_granted_resources.validate([storage, vault, _lock(storage), _grant(vault)], {}) == []
    assert no_locks_on_granted_resources.validate([storage, _lock(storage)], {}) == []


@pytest.mark.parametrize(
    ("count", "shown"),
    [(3, "(g0, g1, g2)"), (4, "(g0, g1, g2 and 1 more)")],
)
def test_up_to_three_grants_are_named_and_the_rest_counted(count: int, shown: str) -> None:
    storage = _storage()
    grants = [_grant(storage, f"g{i}") for i in range(count)]
    (found,) = no_locks_on_granted_resources.validate([storage, _lock(storage), *grants], {})
    assert f"carries {count} role assignment(s) of this stack {shown}:" in found.message


def test_many_grants_are_counted_and_the_first_three_named() -> None:
    storage = _storage()
    grants = [_grant(storage, f"g{i}") for i in range(5)]
    (found,) = no_locks_on_granted_resources.validate([storage, _lock(storage), *grants], {})
    assert "carries 5 role assignment(s) of this stack (g0, g1, g2 and 2 more)" in found.message
