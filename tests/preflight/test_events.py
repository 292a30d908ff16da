"""preflight/events.py: the engine's event log read into steps, violations, diagnostics and the summary.

Inputs are event logs the Pulumi CLI 3.274.1 wrote (tests/fixtures/engine, recorded by record.py and checked
against the CLI by tests/integration/gate) and, for the edge cases, single events in the shapes of
pulumi/pulumi sdk/go/common/apitype/events.go."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preflight import events
from preflight.wire import UNKNOWN

from .recorded import run, step

COMPUTE = "machinelearningservices:Compute"


def test_a_first_deploy_is_every_resource_created_with_unknown_ids_and_names() -> None:
    first = run("prod", "first-deploy")
    assert first.ops == {"create": 35}
    assert first.summary["result"] == "succeeded" and first.summary["resourceChanges"] == {"create": 34}
    h100 = step("prod", "first-deploy", "h100-x4", COMPUTE)
    assert h100.op == "create" and h100.custom and h100.old is None
    # values that come from other resources are the engine's unknown sentinel, as the pack received them
    assert h100.inputs["workspaceName"] == UNKNOWN and h100.inputs["resourceGroupName"] == UNKNOWN
    assert h100.inputs["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H100_v5"
    assert h100.state_outputs["name"] == UNKNOWN  # the preview outputs of a create
    assert h100.parent.endswith("azml-gpu:components:GpuCluster::h100-x4")


def test_an_update_against_the_deployed_stack_is_every_resource_same_with_known_values() -> None:
    update = run("prod", "update")
    assert update.ops == {"same": 35}
    h100 = step("prod", "update", "h100-x4", COMPUTE)
    assert h100.inputs["workspaceName"] == "ws-llm" and h100.old_inputs == h100.inputs
    assert h100.id == h100.old_id and h100.id.endswith("/workspaces/ws-llm/computes/h100-x4")
    assert update.stack_outputs["workspace_name"] == "ws-llm"
    assert set(update.stack_outputs["clusters"]) == {"h100-x4", "a100-spot"}


def test_the_ops_of_one_replacement_fold_into_one_replace_step_in_the_engines_order() -> None:
    h100 = step("prod-size-change", "update", "h100-x4", COMPUTE)
    assert h100.op == "replace"
    # delete-before-replace: the engine deletes the old cluster before it creates the new one
    assert h100.ops == ["delete-replaced", "replace", "create-replacement"]
    assert h100.detailed_diff == {
        "properties.properties.vmSize": {"diffKind": "update-replace", "inputDiff": True}
    }
    assert h100.old_inputs["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H100_v5"
    assert h100.inputs["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H200_v5"
    assert sum(s.urn == h100.urn for s in run("prod-size-change", "update").steps) == 1


def test_a_delete_keeps_the_old_state_as_its_inputs() -> None:
    spot = step("prod-cluster-removed", "update", "a100-spot", COMPUTE)
    assert spot.op == "delete" and spot.new is None
    assert spot.inputs == spot.old_inputs and spot.inputs["computeName"] == "a100-spot"


def _pre(op: str, urn: str, old: dict | None, new: dict | None) -> dict:
    """One `resourcePreEvent` as apitype.ResourcePreEvent carries it (metadata: StepEventMetadata)."""
    meta = {"op": op, "urn": urn, "type": "azure-native:authorization:RoleAssignment", "old": old, "new": new}
    return {"resourcePreEvent": {"metadata": meta}}


def test_a_delete_replaced_with_nothing_recreating_it_is_a_delete() -> None:
    """A resource the program no longer declares, deleted ahead of a replacement that depends on it: the
    engine sends `delete-replaced` then `remove-pending-replace` and no `replace`/`create-replacement`
    (the plain display's `delete original`)."""
    urn = "urn:pulumi:prod::azml-gpu::azure-native:authorization:RoleAssignment::old-grant"
    old = {"urn": urn, "custom": True, "inputs": {"scope": "/s"}, "outputs": {"id": "/s/g"}}
    parsed = events.parse(
        0, [_pre("delete-replaced", urn, old, None), _pre("remove-pending-replace", urn, old, None)]
    )
    assert [(s.op, s.ops) for s in parsed.steps] == [
        ("delete", ["delete-replaced", "remove-pending-replace"])
    ]
    assert parsed.steps[0].inputs == {"scope": "/s"}


@pytest.mark.parametrize("second", ["replace", "create-replacement"])
def test_a_delete_replaced_with_a_recreation_stays_a_replace(second: str) -> None:
    urn = "urn:pulumi:prod::azml-gpu::azure-native:authorization:RoleAssignment::grant"
    old = {"urn": urn, "custom": True, "inputs": {"scope": "/s"}}
    parsed = events.parse(0, [_pre("delete-replaced", urn, old, None), _pre(second, urn, old, old)])
    assert [s.op for s in parsed.steps] == ["replace"]


def test_policy_events_split_the_description_from_the_message() -> None:
    [retired] = [
        v for v in run("dev-retired-size", "first-deploy").violations if v.policy == "no-retired-vm-series"
    ]
    assert retired.enforcement == "mandatory" and retired.blocking
    assert retired.urn.endswith(f"{COMPUTE}::t4-dev")
    assert retired.message.startswith("Standard_NC6s_v3 (NCv3) was retired on 2025-09-30")
    assert retired.description and not retired.message.startswith(retired.description)


def test_an_engine_error_is_a_diagnostic_with_its_resource() -> None:
    first = run("dev-duplicate-urn", "first-deploy")
    [duplicate] = [d for d in first.errors if d.urn]
    assert duplicate.message.startswith("Duplicate resource URN 'urn:pulumi:dev::azml-gpu::")
    assert duplicate.urn.endswith("-stcorpus01-blob-reader")
    assert first.summary["result"] == "failed"


@pytest.mark.parametrize(
    ("level", "blocking"),
    [("mandatory", True), ("remediate", True), ("advisory", False), ("disabled", False)],
)
def test_remediate_blocks_like_mandatory(level: str, blocking: bool) -> None:
    event = {
        "policyEvent": {"policyName": "p", "enforcementLevel": level, "resourceUrn": "u", "message": "d\nm"}
    }
    [found] = events.parse(0, [event]).violations
    assert found.blocking is blocking and (found.description, found.message) == ("d", "m")


def test_a_message_without_a_description_is_kept_whole_and_colours_are_dropped() -> None:
    event = {
        "policyEvent": {"policyName": "p", "enforcementLevel": "advisory", "message": "<{%reset%}>only\n"}
    }
    [found] = events.parse(0, [event]).violations
    assert (found.description, found.message) == ("", "only")


def test_info_and_debug_diagnostics_are_not_kept() -> None:
    lines = [
        {"diagnosticEvent": {"severity": s, "message": s}} for s in ("debug", "info", "info#err", "warning")
    ]
    parsed = events.parse(0, lines)
    assert [d.severity for d in parsed.diagnostics] == ["warning"] and parsed.errors == []


def test_read_gives_no_events_for_a_log_the_cli_never_wrote(tmp_path: Path) -> None:
    assert events.read(tmp_path / "missing.jsonl") == []
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"summaryEvent": {"result": "succeeded"}}) + "\n\n")
    assert events.parse(0, events.read(log)).summary == {"result": "succeeded"}


@pytest.mark.parametrize(
    ("urn", "name", "type_"),
    [
        ("urn:pulumi:dev::p::a:b:C$azure-native:x:Y::n1", "n1", "azure-native:x:Y"),
        ("urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev", "p-dev", "pulumi:pulumi:Stack"),
        ("", "", ""),
    ],
)
def test_urn_parts(urn: str, name: str, type_: str) -> None:
    assert (events.urn_name(urn), events.urn_type(urn)) == (name, type_)


CLUSTER = "urn:pulumi:prod::azml-gpu::azure-native:machinelearningservices:Compute::h100-x4"


def test_a_deleted_resources_id_outputs_and_options_come_from_its_old_state() -> None:
    old = {
        "urn": CLUSTER,
        "custom": True,
        "parent": "urn:pulumi:prod::azml-gpu::pulumi:pulumi:Stack::azml-gpu-prod",
        "id": "/c/h100-x4",
        "inputs": {"computeName": "h100-x4"},
        "outputs": {"name": "h100-x4"},
        "retainOnDelete": True,
        "protect": False,
    }
    [gone] = events.parse(0, [_pre("delete", CLUSTER, old, None)]).steps
    assert gone.custom and gone.parent.endswith("azml-gpu-prod")
    assert (gone.id, gone.old_id) == ("/c/h100-x4", "/c/h100-x4")
    assert gone.state_outputs == {"name": "h100-x4"}
    assert gone.options == {"retainOnDelete": True}


def test_a_created_resource_has_no_id_until_it_exists_and_an_update_keeps_its_old_one() -> None:
    [new] = events.parse(0, [_pre("create", CLUSTER, None, {"urn": CLUSTER, "id": ""})]).steps
    assert (new.id, new.old_id, new.options) == ("", "", {})
    old = {"urn": CLUSTER, "id": "/c/h100-x4", "outputs": {"name": "h100-x4"}}
    [upd] = events.parse(0, [_pre("update", CLUSTER, old, {"urn": CLUSTER, "id": ""})]).steps
    assert upd.id == "/c/h100-x4"  # the preview's new state has no id yet: the resource keeps its own


def test_a_replacements_later_events_fill_what_its_first_lacked() -> None:
    old = {"urn": CLUSTER, "custom": True, "inputs": {"vmSize": "H100"}}
    new = {"urn": CLUSTER, "custom": True, "inputs": {"vmSize": "H200"}}
    first = {"op": "create-replacement", "urn": CLUSTER, "new": new}
    second = {
        "op": "replace",
        "urn": CLUSTER,
        "old": old,
        "new": new,
        "keys": ["vmSize"],
        "detailedDiff": {"vmSize": {"diffKind": "update-replace"}},
    }
    parsed = events.parse(0, [{"resourcePreEvent": {"metadata": m}} for m in (first, second)])
    [h100] = parsed.steps
    assert (h100.op, h100.ops) == ("replace", ["create-replacement", "replace"])
    assert h100.old_inputs == {"vmSize": "H100"} and h100.inputs == {"vmSize": "H200"}
    assert h100.keys == ["vmSize"] and h100.detailed_diff == {"vmSize": {"diffKind": "update-replace"}}


def test_a_second_event_of_a_step_that_is_no_replacement_changes_nothing() -> None:
    old = {"urn": CLUSTER, "inputs": {"a": 1}}
    parsed = events.parse(0, [_pre("refresh", CLUSTER, old, old), _pre("update", CLUSTER, old, old)])
    [s] = parsed.steps
    assert (s.op, s.ops) == ("refresh", ["refresh", "update"])


def test_outputs_of_an_unknown_urn_or_without_a_state_are_ignored() -> None:
    old = {"urn": CLUSTER, "outputs": {"name": "from-state"}}
    lines = [
        _pre("same", CLUSTER, old, old),
        {
            "resOutputsEvent": {
                "metadata": {"urn": "urn:pulumi:prod::azml-gpu::t::other", "new": {"outputs": {}}}
            }
        },
        {"resOutputsEvent": {"metadata": {"urn": CLUSTER, "new": None}}},
        {"resOutputsEvent": {"metadata": {"new": {"outputs": {"x": 1}}}}},
    ]
    [s] = events.parse(0, lines).steps
    assert s.outputs is None and s.state_outputs == {"name": "from-state"}


def test_events_missing_their_fields_read_as_empty_never_as_text_of_their_own() -> None:
    parsed = events.parse(
        1,
        [
            {"policyEvent": {"policyPackName": "azml-gpu"}},
            {"diagnosticEvent": {"severity": "error"}},
            {"diagnosticEvent": {"message": "no severity"}},
        ],
    )
    [v] = parsed.violations
    assert (v.policy, v.enforcement, v.urn, v.message, v.description) == ("", "", "", "", "")
    assert parsed.diagnostics == [events.Diagnostic("error", "", "")]
    assert parsed.errors == parsed.diagnostics
    warned = events.parse(0, [{"diagnosticEvent": {"severity": "warning", "message": "w"}}])
    assert warned.errors == []  # a warning is no error
    [odd] = events.parse(0, [{"resourcePreEvent": {"metadata": {"op": "create"}}}]).steps
    assert (odd.urn, odd.parent) == ("", "")


def test_a_step_is_found_by_urn_and_its_type_read_from_the_urn_when_the_event_has_none() -> None:
    meta = {"op": "create", "urn": CLUSTER, "new": {"urn": CLUSTER}}
    parsed = events.parse(0, [{"resourcePreEvent": {"metadata": meta}}])
    assert parsed.step(CLUSTER) is parsed.steps[0]
    assert parsed.step(CLUSTER + "-other") is None
    assert parsed.steps[0].type == "azure-native:machinelearningservices:Compute"
    [no_op] = events.parse(0, [{"resourcePreEvent": {"metadata": {"urn": CLUSTER}}}]).steps
    assert no_op.op == "" and no_op.ops == [""]
    assert events.parse(0, []).stderr == ""
