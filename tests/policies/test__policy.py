"""policies/_policy.py: the one policy module shape, and its adapter to pulumi-policy (`to_pulumi`: what
the CLI runs), for every registered module."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from policies import _policy, locks, registry

from .policies_helpers import (
    COMPUTE,
    LOCK_AT_RG,
    REGION,
    SIZE,
    WORKSPACE,
    Recorder,
    cluster,
    resource_args,
    stack_args,
    stack_resource,
    workspace,
)

ROOT = Path(__file__).resolve().parent.parent.parent
ids = [m.NAME for m in registry.MODULES]


@pytest.mark.parametrize("module", registry.MODULES, ids=ids)
def test_every_policy_module_has_the_one_shape(module: Any) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", module.NAME)
    assert module.NAME.replace("-", "_") == module.__name__.rsplit(".", 1)[1]  # one module per policy
    assert isinstance(module.DESCRIPTION, str) and module.DESCRIPTION.endswith(".")
    assert isinstance(module.ENFORCEMENT, EnforcementLevel)
    assert isinstance(module.CONFIG, dict)
    assert module.KIND in (_policy.RESOURCE, _policy.STACK)
    first = "resource" if module.KIND == _policy.RESOURCE else "resources"
    assert list(inspect.signature(module.validate).parameters) == [first, "config"]


@pytest.mark.parametrize("module", registry.MODULES, ids=ids)
def test_the_adapter_builds_the_pulumi_policy(module: Any) -> None:
    policy = registry.POLICIES[registry.MODULES.index(module)]
    kind = ResourceValidationPolicy if module.KIND == _policy.RESOURCE else StackValidationPolicy
    assert isinstance(policy, kind)
    assert (policy.name, policy.description, policy.enforcement_level) == (
        module.NAME,
        module.DESCRIPTION,
        module.ENFORCEMENT,
    )
    properties = policy.config_schema.properties if policy.config_schema else {}
    assert properties == module.CONFIG


def test_the_resource_adapter_reports_each_message_and_records_locks() -> None:
    locks._observed.clear()
    policy = registry.POLICIES[
        registry.MODULES.index(
            registry.BY_NAME["multi-node-requires-rdma"].__class__
            and registry.BY_NAME["multi-node-requires-rdma"]
        )
    ]
    rec = Recorder()
    policy.validate(resource_args(COMPUTE, cluster(**{SIZE: "Standard_NC96ads_A100_v4"}), None), rec)
    assert len(rec.calls) == 1 and rec.calls[0][1] is None
    # any resource policy's Analyze records what it saw of a lock, for the stack policies
    lock = resource_args(LOCK_AT_RG, {"resourceGroupName": "rg-train"}, None, name="l")
    policy.validate(lock, Recorder())
    assert locks.observed(lock.urn) == locks.LockTarget(
        "resource-group", "/resourcegroups/rg-train", "resource group rg-train"
    )


def test_the_stack_adapter_reports_on_the_resource() -> None:
    policy = registry.POLICIES[registry.MODULES.index(registry.BY_NAME["cross-region-compute"])]
    ws = stack_resource(WORKSPACE, "ws", workspace())
    west = stack_resource(COMPUTE, "h100-x4", cluster(**{REGION: "westus3"}), {"workspaceName": [ws]})
    rec = Recorder()
    policy.validate(stack_args([ws, west], None), rec)
    assert [at for _, at in rec.calls] == [west.urn]


def test_a_module_of_no_kind_is_refused() -> None:
    class Odd:
        __name__ = "policies.odd"
        NAME, DESCRIPTION, ENFORCEMENT, CONFIG, KIND = "odd", "Odd.", EnforcementLevel.ADVISORY, {}, "both"

    with pytest.raises(ValueError, match="KIND: 'both'; use 'resource' or 'stack'"):
        _policy.to_pulumi(Odd)  # type: ignore[arg-type]


def test_messages_are_not_split_into_fragments() -> None:
    """A message is written in phrases that can be grepped: no string piece of a few characters on a line
    of its own (the formatter's "the " + "internet..." splits)."""
    fragment = re.compile(r'^\s+f?"[^"]{0,14}"\s*$', re.MULTILINE)
    found = {p.name: fragment.findall(p.read_text()) for p in (ROOT / "policies").glob("*.py")}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_companion_findings_are_taken_once_and_per_thread() -> None:
    import threading

    from policies._policy import CompanionFindings

    findings = CompanionFindings()
    assert findings.take() == []  # nothing put in this call
    given = ["pool a: no quota configured"]
    findings.put(given)
    given.append("changed after put")
    other: list[list[str]] = []
    t = threading.Thread(target=lambda: other.append(findings.take()))
    t.start()
    t.join()
    assert other == [[]]  # another AnalyzeStack thread sees nothing
    assert findings.take() == ["pool a: no quota configured"]
    assert findings.take() == []  # the companion reports them once
