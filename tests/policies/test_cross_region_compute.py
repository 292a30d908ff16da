"""cross-region-compute (advisory, stack): SHOULD PASS / SHOULD FAIL from the happy path: workspace ws-llm
in eastus and its cluster h100-x4 in eastus (found through propertyDependencies["workspaceName"])."""

from __future__ import annotations

from typing import Any

import pytest

from policies import cross_region_compute as policy
from preflight.wire import UNKNOWN

from .policies_helpers import (
    COMPUTE,
    DELETE,
    REGION,
    WORKSPACE,
    cluster,
    facts,
    stack_resource,
    stack_verdict,
    urn,
)
from .policies_helpers import workspace as workspace_props

WS = stack_resource(WORKSPACE, "ws-llm-mlw", workspace_props())
WS_WEST = stack_resource(WORKSPACE, "ws-west", workspace_props(workspaceName="ws-west", location="westus3"))
COST = "every read of data in the workspace's storage crosses regions"


def compute(workspace: Any = WS, **overrides: Any) -> Any:
    deps = {"workspaceName": [workspace]} if workspace is not None else {}
    return stack_resource(COMPUTE, "h100-x4", cluster(**overrides), deps)


SHOULD_PASS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "happy path: same region": ([WS, compute()], {}),
    "another region, acknowledged": ([WS, compute(**{REGION: "westus3"})], {"acknowledged": ["h100-x4"]}),
    "same region in another spelling": ([WS, compute(**{REGION: "East US"})], {}),
    "no workspace in the stack": ([compute(None, **{REGION: "westus3"})], {}),
    "two workspaces and no dependency: nothing to compare with": (
        [WS, WS_WEST, compute(None, **{REGION: "westus3"})],
        {},
    ),
    "computeLocation left out, location the workspace's": ([WS, compute(**{REGION: DELETE})], {}),
    "its own workspace in westus3, among two": ([WS, WS_WEST, compute(WS_WEST, **{REGION: "westus3"})], {}),
    "workspace location left out": (
        [stack_resource(WORKSPACE, "ws-llm-mlw", workspace_props(location=DELETE)), compute()],
        {},
    ),
}

SHOULD_FAIL: dict[str, tuple[list[Any], dict[str, Any], tuple[str, ...]]] = {
    "computeLocation westus3": (
        [WS, compute(**{REGION: "westus3"})],
        {},
        ("cluster h100-x4 runs in westus3 but its workspace is in eastus", COST),
    ),
    "acknowledged under another name": (
        [WS, compute(**{REGION: "westus3"})],
        {"acknowledged": ["h100-wus3"]},
        ("runs in westus3",),
    ),
    "computeLocation left out: location applies": (
        [WS, compute(**{REGION: DELETE, "location": "westus3"})],
        {},
        ("runs in westus3 but its workspace is in eastus",),
    ),
    "the only workspace, no dependency": (
        [WS, compute(None, **{REGION: "westus3"})],
        {},
        ("runs in westus3",),
    ),
    "its own workspace, not another one": (
        [WS, WS_WEST, compute(WS_WEST)],
        {},
        ("runs in eastus but its workspace is in westus3",),
    ),
    "region unknown in preview": (
        [WS, compute(**{REGION: UNKNOWN, "location": UNKNOWN})],
        {},
        ("cluster h100-x4: cannot decide during preview: the cluster region is not known",),
    ),
    "workspace location unknown in preview": (
        [stack_resource(WORKSPACE, "ws-llm-mlw", workspace_props(location=UNKNOWN)), compute(None)],
        {},
        ("the workspace location is not known",),
    ),
}


@pytest.mark.parametrize(("resources", "config"), SHOULD_PASS.values(), ids=SHOULD_PASS)
def test_should_pass(resources: list[Any], config: dict[str, Any]) -> None:
    assert stack_verdict(policy, resources, config) == []


@pytest.mark.parametrize(("resources", "config", "expected"), SHOULD_FAIL.values(), ids=SHOULD_FAIL)
def test_should_fail(resources: list[Any], config: dict[str, Any], expected: tuple[str, ...]) -> None:
    found = stack_verdict(policy, resources, config)
    facts([m for m, _ in found], [expected])
    assert [at for _, at in found] == [urn(COMPUTE, "h100-x4")]


def test_the_message_in_full() -> None:
    assert stack_verdict(policy, [WS, compute(**{REGION: "westus3"})]) == [
        (
            "cluster h100-x4 runs in westus3 but its workspace is in eastus: every read of data in the "
            "workspace's storage crosses regions, adding latency and egress charges per job. Fix: copy the "
            "data to westus3 first and add 'h100-x4' to cross-region-compute.acknowledged, or create the "
            "cluster in eastus.",
            urn(COMPUTE, "h100-x4"),
        )
    ]
