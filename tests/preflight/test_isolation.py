"""preflight/isolation.py: an update must not loosen a deployed workspace's managed network. The input is the
engine's step (recorded: prod-westus3 with isolation_mode changed from AllowOnlyApprovedOutbound to
AllowInternetOutbound); Azure allows only tightening (components.network.refused_isolation_change)."""

from __future__ import annotations

import copy

import pytest

from preflight import isolation
from preflight.wire import UNKNOWN

from .recorded import step


def workspace():
    return copy.deepcopy(
        step("westus3-looser-network", "update", "ws-llm-wus3-mlw", "machinelearningservices:Workspace")
    )


def test_loosening_the_deployed_isolation_mode_is_mandatory() -> None:
    (v,) = isolation.findings([workspace()])
    assert (v.policy, v.enforcement) == ("managed-network-isolation", "mandatory")
    assert v.message.startswith("workspace 'ws-llm-wus3-mlw': ")
    assert "AllowOnlyApprovedOutbound" in v.message and "AllowInternetOutbound" in v.message


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        ("AllowOnlyApprovedOutbound", "AllowInternetOutbound", True),
        ("AllowOnlyApprovedOutbound", "Disabled", True),
        ("AllowInternetOutbound", "Disabled", True),
        ("AllowInternetOutbound", "AllowOnlyApprovedOutbound", False),  # tightening
        ("Disabled", "AllowInternetOutbound", False),
        ("AllowOnlyApprovedOutbound", "AllowOnlyApprovedOutbound", False),
        ("AllowOnlyApprovedOutbound", UNKNOWN, False),  # unknown until the update: decides nothing
    ],
)
def test_each_direction(old: str, new: str, refused: bool) -> None:
    s = workspace()
    s.old["inputs"]["managedNetwork"]["isolationMode"] = old
    s.new["inputs"]["managedNetwork"]["isolationMode"] = new
    assert bool(isolation.findings([s])) is refused


def test_a_new_workspace_or_a_deleted_one_is_not_an_update() -> None:
    created = workspace()
    created.old = None
    deleted = workspace()
    deleted.new = None
    assert isolation.findings([created]) == [] and isolation.findings([deleted]) == []
