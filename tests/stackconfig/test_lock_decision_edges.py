"""The lock decision [LOCK] at its edges: a registry lock without a registry is ignored even next to a managed
network, one with a registry is refused there; a refused lock names up to three of the grants on its resource
and counts the rest (3, 4 and 5 grants)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from stackconfig_factory import good_raw

from stackconfig import ConfigError, validate

MANAGED_NETWORK_REFUSAL = (
    "true, and the workspace has a managed network: Azure ML asks for no scope locks on its resources, since "
    "internal operations of the managed network might be blocked (how-to-managed-network.md, Limitations); "
    "set it to false or leave it unset (unset locks are off with a managed network)"
)


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate(raw)
    return info.value.problems


def public() -> dict[str, Any]:
    raw = good_raw()
    raw["clusters"] = [dict(raw["clusters"][0], ssh="disabled")]
    return raw


def managed(registry: bool) -> dict[str, Any]:
    """A public workspace with a managed network (locks are refused next to one)."""
    raw = public()
    raw["network"] = {"managed": {"isolation_mode": "AllowOnlyApprovedOutbound"}}
    raw["workspace"]["container_registry"] = registry
    raw["locks"] = {"container_registry": True}
    return raw


def test_a_registry_lock_without_a_registry_is_ignored_next_to_a_managed_network() -> None:
    assert validate(managed(registry=False)).locks.container_registry is True  # nothing to lock


def test_a_registry_lock_with_a_registry_is_refused_next_to_a_managed_network() -> None:
    assert problems(managed(registry=True)) == [
        f"azml-gpu:locks.container_registry: {MANAGED_NETWORK_REFUSAL}"
    ]


def principal(i: int) -> str:
    return f"00000000-0000-0000-0000-00000000a00{i}"


@pytest.mark.parametrize(("count", "tail"), [(3, ""), (4, " and 1 more"), (5, " and 2 more")])
def test_a_refused_lock_names_three_grants_and_counts_the_rest(count: int, tail: str) -> None:
    raw = public()
    raw["locks"] = {"workspace": True}
    assert validate(copy.deepcopy(raw)).locks.workspace is True  # no grant on the workspace yet
    raw["identity"] = {
        "role_assignments": [
            {"principal_id": principal(i), "principal_type": "Group", "role": "AzureML Compute Operator"}
            for i in range(1, count + 1)
        ]
    }
    named = ", ".join(f"AzureML Compute Operator for {principal(i)}" for i in range(1, 4))
    (problem,) = problems(raw)
    assert problem.startswith(
        f"azml-gpu:locks.workspace: true, but the stack grants roles on the workspace ({named}{tail}), "
    )
