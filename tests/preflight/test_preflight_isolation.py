"""preflight/isolation.py on hand-built resources: each direction of an isolation-mode change of a deployed
workspace, an unknown new mode, a workspace that is not deployed yet."""

from __future__ import annotations

import pytest

from preflight import isolation
from preflight.engine import StateResource
from preflight.provider.model import UNKNOWN
from preflight.resource import Resource

URN = (
    "urn:pulumi:prod::azml-gpu::azml-gpu:components:Workspace$"
    "azure-native:machinelearningservices:Workspace::ws"
)


def _new(mode) -> Resource:
    inputs = {"managedNetwork": {"isolationMode": mode}} if mode is not None else {}
    return Resource(type=isolation.WORKSPACE, name="ws", urn=URN, inputs=inputs, custom=True)


def _old(mode) -> StateResource:
    inputs = {"managedNetwork": {"isolationMode": mode}} if mode is not None else {}
    return StateResource(urn=URN, type=isolation.WORKSPACE, custom=True, id="/w", inputs=inputs, outputs={})


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        ("AllowOnlyApprovedOutbound", "AllowInternetOutbound", True),
        ("AllowOnlyApprovedOutbound", "Disabled", True),
        ("AllowInternetOutbound", None, True),  # no managedNetwork at all is Disabled
        ("AllowInternetOutbound", "AllowOnlyApprovedOutbound", False),
        (None, "AllowInternetOutbound", False),
        ("AllowOnlyApprovedOutbound", "AllowOnlyApprovedOutbound", False),
    ],
)
def test_only_a_looser_mode_of_a_deployed_workspace_is_refused(old, new, refused: bool) -> None:
    found = isolation.findings([_new(new)], [_old(old)])
    assert [(v.policy, v.enforcement, v.urn) for v in found] == (
        [("managed-network-isolation", "mandatory", URN)] if refused else []
    )


def test_an_unknown_new_mode_or_a_new_workspace_decides_nothing() -> None:
    assert isolation.findings([_new(UNKNOWN)], [_old("AllowOnlyApprovedOutbound")]) == []
    assert isolation.findings([_new("Disabled")], []) == []
