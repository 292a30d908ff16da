"""The gate's cluster-replacement check (preflight/replacements.py) on one resource record per case, built the
way the module docstring of preflight/resource.py says tests build them: a replaced AmlCompute cluster and
one field changed per case. What a user sees: which cluster the update deletes, how, why (the diff fields),
at what level, and that an acknowledged cluster passes."""

from __future__ import annotations

import dataclasses

import pytest

from preflight import replacements
from preflight.engine import Replacement
from preflight.resource import Resource
from preflight.wire import UNKNOWN

COMPUTE = "azure-native:machinelearningservices:Compute"
URN = "urn:pulumi:prod::azml-gpu::azml-gpu:components:GpuCluster$" + COMPUTE + "::h100-x4"


def replaced(**changes) -> Resource:
    base = Resource(
        type=COMPUTE,
        name="h100-x4-compute",
        urn=URN,
        inputs={},
        outputs={},  # what run_program always records (the step's outputs)
        program_inputs={"computeName": "h100-x4"},
        op="replace",
        replacement=Replacement(("properties.properties.vmSize",), False, True),
    )
    return dataclasses.replace(base, **changes)


def test_a_replaced_cluster_is_a_violation_at_the_configured_level_naming_it_and_the_fix():
    (v,) = replacements.findings([replaced()], {"enforcementLevel": "mandatory"})
    assert (v.policy, v.enforcement, v.urn) == ("cluster-replacement", "mandatory", URN)
    assert v.message.startswith("h100-x4 will be deleted and recreated (vmSize): the cluster is deleted")
    assert "add 'h100-x4' to cluster-replacement.acknowledged in the policy config" in v.message


def test_the_default_level_is_advisory_and_disabled_reports_nothing():
    (v,) = replacements.findings([replaced()], {})
    assert v.enforcement == "advisory"
    assert replacements.findings([replaced()], {"enforcementLevel": "disabled"}) == []


def test_an_acknowledged_cluster_passes_and_another_does_not():
    other = replaced(program_inputs={"computeName": "a100-lp"})
    got = replacements.findings([replaced(), other], {"acknowledged": ["h100-x4"]})
    assert [v.message.split(" will ")[0] for v in got] == ["a100-lp"]


@pytest.mark.parametrize(
    "change",
    [
        {"op": "update"},
        {"op": "create"},
        {"replacement": None},
        {"type": "azure-native:storage:StorageAccount"},
    ],
)
def test_only_a_replaced_compute_is_reported(change):
    assert replacements.findings([replaced(**change)], {"enforcementLevel": "mandatory"}) == []


def test_create_before_delete_and_several_fields_are_described():
    r = replaced(
        replacement=Replacement(
            ("properties.computeLocation", "properties.properties.vmPriority"), True, False
        )
    )
    assert replacements.summary(r) == (
        "h100-x4 will be recreated (new one first, then the old deleted) (computeLocation, vmPriority)"
    )


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("properties.properties.vmSize", "vmSize"),
        ("properties.computeLocation", "computeLocation"),
        ("location", "location"),
        ("properties.properties.scaleSettings.maxNodeCount", "scaleSettings.maxNodeCount"),
    ],
)
def test_field_names_drop_the_arm_property_prefixes(path, name):
    assert replacements.field_name(path) == name


def test_a_cluster_without_a_program_name_is_named_by_its_outputs_then_its_resource_name():
    named = replaced(program_inputs={}, outputs={"name": "h100-out"})
    assert replacements.summary(named).startswith("h100-out will be")
    bare = replaced(program_inputs={}, outputs={"name": {"not": "a string"}})
    assert replacements.summary(bare).startswith("h100-x4-compute will be")


def test_replacement_rows_list_every_replaced_resource_with_its_trigger():
    storage = replaced(
        type="azure-native:storage:StorageAccount",
        name="st",
        urn="urn:st",
        program_inputs={},
        replacement=Replacement(("properties.isHnsEnabled",), True, True),
    )
    rows = replacements.replacement_rows([replaced(), replaced(op="same"), storage])  # unchanged in between
    assert [(r["name"], r["trigger"], r["delete_before_replace"], r["fields"]) for r in rows] == [
        ("h100-x4-compute", "provider", True, ["properties.properties.vmSize"]),
        ("st", "replaceOnChanges", True, ["properties.isHnsEnabled"]),
    ]
    assert rows[0]["summary"] == "h100-x4 will be deleted and recreated (vmSize)"


def test_the_check_is_declared_advisory_with_an_acknowledged_list():
    entry = replacements.GATE_CHECKS["cluster-replacement"]
    assert entry["enforcementLevel"] == "advisory"
    assert entry["configSchema"]["properties"]["acknowledged"]["type"] == "array"


def test_a_hand_built_record_without_outputs_is_summarised_from_its_inputs():
    """preflight/resource.py: outputs None means "the inputs, for a resource built by hand" (was an
    AttributeError)."""
    r = replaced(outputs=None, program_inputs={}, inputs={"name": "h100-in"})
    assert replacements.summary(r).startswith("h100-in will be")


def test_an_unknown_name_in_the_preview_outputs_is_not_printed():
    """A replacement's preview outputs carry the unknown sentinel for its new name: the summary names the
    resource, not '04da6b54-...' (as the gate printed for a replaced resource group)."""
    r = replaced(outputs={"name": UNKNOWN}, program_inputs={}, name="ws-llm-rg")
    assert replacements.summary(r).startswith("ws-llm-rg will be")


def test_a_replaced_cluster_after_other_resources_is_still_reported():
    others = [replaced(type="azure-native:storage:StorageAccount"), replaced(op="update")]
    (v,) = replacements.findings([*others, replaced()], {"enforcementLevel": "mandatory"})
    assert v.message.startswith("h100-x4 will be deleted and recreated")
    acknowledged_first = replaced(program_inputs={"computeName": "a100-lp"})
    (w,) = replacements.findings([acknowledged_first, replaced()], {"acknowledged": ["a100-lp"]})
    assert w.message.startswith("h100-x4 will be")
