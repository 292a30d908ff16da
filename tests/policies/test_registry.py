"""policies/registry.py, the one place the pack's policies are registered: every policy module once, the
orders that matter (quota-reservation and cluster-cost-budget before their companions), and the level each
is registered with."""

from __future__ import annotations

import re
from pathlib import Path

from policies import registry

ROOT = Path(__file__).resolve().parent.parent.parent


def test_every_policy_module_is_registered_once() -> None:
    defined = sorted(
        p.stem
        for p in (ROOT / "policies").glob("*.py")
        if re.search(r"^NAME = ", p.read_text(), re.MULTILINE)
    )
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in registry.MODULES) == defined
    assert len(registry.BY_NAME) == len(registry.MODULES)


def test_the_only_orders_the_registry_keeps_are_the_companion_pairs() -> None:
    names = [m.NAME for m in registry.MODULES]
    assert names.index("quota-reservation") < names.index("quota-reservation-unknown")
    assert names.index("cluster-cost-budget") < names.index("cluster-cost-budget-unknown")


def test_the_policy_is_advisory_with_its_config() -> None:
    assert registry.BY_NAME["compute-in-virtual-network"].ENFORCEMENT.value == "advisory"
    assert registry.BY_NAME["workspace-user-assigned-identity"].ENFORCEMENT.value == "advisory"
    assert registry.BY_NAME["no-locks-on-granted-resources"].ENFORCEMENT.value == "mandatory"


def test_policies_are_registered_with_their_levels() -> None:
    from policies.registry import POLICIES

    levels = {p.name: p.enforcement_level.value for p in POLICIES}
    assert levels["no-privileged-role-assignments"] == "mandatory"
    assert levels["no-privileged-role-assignments-by-dependency"] == "mandatory"
    assert levels["private-network"] == "mandatory"
    assert levels["private-network-cost"] == "advisory"
    assert levels["private-network-inputs"] == "advisory"  # the recorder: reports nothing
    names = [p.name for p in POLICIES]
    assert names.index("private-network-inputs") < names.index("private-network")


def _documented() -> dict[str, tuple[str, str]]:
    """docs/policies.md "Policies": policy -> (default level, kind), as users read them."""
    doc = (ROOT / "docs" / "policies.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([a-z]+)[^|]* \| (resource|stack) \|", doc, re.MULTILINE)
    return {name: (level, kind) for name, level, kind in rows}


def test_every_policy_has_the_level_and_kind_the_documentation_gives() -> None:
    registered = {
        p.name: (p.enforcement_level.value, registry.BY_NAME[p.name].KIND) for p in registry.POLICIES
    }
    assert len(registered) == 25
    assert registered == _documented()
