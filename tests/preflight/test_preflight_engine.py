"""The gate's replay of the engine and of azure-native: property paths (ported from pulumi/pulumi's own
tests), the provider's Check and Diff, and which changes replace a cluster.

Property-path cases are those of pulumi/pulumi sdk/go/common/resource/properties_path_test.go
(TestPropertyPath, TestPropertyPathContains, TestPropertyPathMarshal; read at 1b5949891b).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from components.gpu_cluster import IMMUTABLE_PROPERTY_PATHS
from preflight import propertypath
from preflight.engine import (
    UPDATE,
    Deployment,
    StateFileError,
    StateResource,
    Step,
    read_state,
)
from preflight.program import exported_state, read_stack_config, run_program
from preflight.provider import model as azure_native
from preflight.provider.model import UNKNOWN

COMPUTE = "azure-native:machinelearningservices:Compute"

PARSE_CASES = [
    ("root", ("root",), "root"),
    ("root.nested", ("root", "nested"), "root.nested"),
    ('root["nested"]', ("root", "nested"), "root.nested"),
    ("root.double.nest", ("root", "double", "nest"), "root.double.nest"),
    ('root["double"].nest', ("root", "double", "nest"), "root.double.nest"),
    ('root["double"]["nest"]', ("root", "double", "nest"), "root.double.nest"),
    ("root.array[0]", ("root", "array", 0), "root.array[0]"),
    ("root.array[1]", ("root", "array", 1), "root.array[1]"),
    ("root.array[0].nested", ("root", "array", 0, "nested"), "root.array[0].nested"),
    ("root.array2[0][1].nested", ("root", "array2", 0, 1, "nested"), "root.array2[0][1].nested"),
    (
        "root.nested.array[0].double[1]",
        ("root", "nested", "array", 0, "double", 1),
        "root.nested.array[0].double[1]",
    ),
    (
        'root["key with \\"escaped\\" quotes"]',
        ("root", 'key with "escaped" quotes'),
        'root["key with \\"escaped\\" quotes"]',
    ),
    ('root["key with a ."]', ("root", "key with a ."), 'root["key with a ."]'),
    (
        '["root key with \\"escaped\\" quotes"].nested',
        ('root key with "escaped" quotes', "nested"),
        '["root key with \\"escaped\\" quotes"].nested',
    ),
    ('["root key with a ."][1]', ("root key with a .", 1), '["root key with a ."][1]'),
    ("root.array.[1]", ("root", "array", 1), "root.array[1]"),  # pulumi/pulumi#14439: tolerated
    ('root.["key with a ."]', ("root", "key with a ."), 'root["key with a ."]'),
]


@pytest.mark.parametrize(("path", "parsed", "printed"), PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_parse_property_path_as_pulumi_does(path: str, parsed: tuple, printed: str) -> None:
    assert propertypath.parse(path) == parsed
    assert propertypath.to_string(parsed) == printed


@pytest.mark.parametrize(
    ("path", "parsed"),
    [
        ('root["*"].field[1]', ("root", "*", "field", 1)),
        ("root[*].field[2]", ("root", "*", "field", 2)),
        ("root[3].*[3]", ("root", 3, "*", 3)),
        ("*.bar", ("*", "bar")),
    ],
)
def test_wildcards(path: str, parsed: tuple) -> None:
    assert propertypath.parse(path) == parsed


@pytest.mark.parametrize("path", ["root[", 'root["nested]', "root.array[abc]", "root.", ".root"])
def test_syntax_errors(path: str) -> None:
    with pytest.raises(propertypath.PropertyPathError):
        propertypath.parse(path)


def test_marshal_form() -> None:
    assert propertypath.to_string(("a", 1, "b")) == "a[1].b"
    assert propertypath.to_string((1, "*", 2)) == '[1]["*"][2]'


CONTAINS_CASES = [
    (("root", "nested"), ("root",), False),
    (("root",), ("root", "nested"), True),
    (("root", 1), ("root",), False),
    (("root",), ("root", 1), True),
    (("root", "double", "nest1"), ("root", "double", "nest2"), False),
    (("root", "nest1", "double"), ("root", "nest2", "double"), False),
    (("root", "nest", "double"), ("root", "nest", "double"), True),
    (("root", 1, "double"), ("root", 1, "double"), True),
    ((), (), True),
    (("root",), (), False),
    ((), ("root",), True),
    (("foo", "bar", 1), ("foo", "bar", 1, "baz"), True),
    (("foo", "*", "baz"), ("foo", "bar", "baz", "bam"), True),
    (("*", "bar", "baz"), ("foo", "bar", "baz", "bam"), True),
    (("foo", "*", "baz"), ("foo", 1, "baz", "bam"), True),
    (("foo", 1, "*", "bam"), ("foo", 1, "baz", "bam"), True),
    (("*",), ("a", "b"), True),
    (("*",), ("a", 1), True),
    (("*",), ("a", 1, "b"), True),
]


@pytest.mark.parametrize(("p1", "p2", "expected"), CONTAINS_CASES)
def test_contains_as_pulumi_does(p1: tuple, p2: tuple, expected: bool) -> None:
    assert propertypath.contains(p1, p2) is expected


# --- azure-native -------------------------------------------------------------------------------------


def test_check_adds_the_api_version_and_drops_nulls_but_no_schema_defaults() -> None:
    checked = azure_native.check(
        COMPUTE, {"computeName": "c", "tags": None, "properties": {"a": None}}, None, None, None
    )
    assert checked == {"computeName": "c", "properties": {}, "azureApiVersion": "2025-12-01"}


@pytest.mark.parametrize(
    ("news", "olds", "provider_location", "group_location", "location"),
    [
        ({"resourceGroupName": "rg"}, {"location": "westus3"}, "eastus", "northeurope", "westus3"),
        ({"resourceGroupName": "rg"}, None, "eastus", "northeurope", "eastus"),
        ({"resourceGroupName": UNKNOWN}, None, None, "northeurope", UNKNOWN),
        ({"resourceGroupName": "rg"}, None, None, "northeurope", "northeurope"),
        ({"resourceGroupName": "rg", "location": "eastus2"}, None, "eastus", None, "eastus2"),
    ],
    ids=["old inputs", "provider config", "group unknown: unknown", "the group's location", "given"],
)
def test_check_default_location_order(
    news: dict, olds: Any, provider_location: Any, group_location: Any, location: str
) -> None:
    """provider.go getDefaultLocation: old inputs, provider config, unknown while the group is, the group."""
    assert azure_native.check(COMPUTE, news, olds, provider_location, group_location)["location"] == location


def test_preview_outputs_have_the_response_shape() -> None:
    inputs = {
        "computeName": "c",
        "workspaceName": "ws",
        "resourceGroupName": "rg",
        "location": "eastus",
        "properties": {"computeType": "AmlCompute"},
        "azureApiVersion": "2025-12-01",
    }
    created = azure_native.preview_outputs(COMPUTE, inputs)
    assert created == {
        "azureApiVersion": "2025-12-01",
        "identity": UNKNOWN,
        "location": "eastus",
        "name": UNKNOWN,
        "properties": {"computeType": "AmlCompute"},
        "sku": UNKNOWN,
        "systemData": UNKNOWN,
        "tags": UNKNOWN,
        "type": UNKNOWN,
    }
    updated = azure_native.preview_outputs(COMPUTE, inputs, {"name": "c", "location": "eastus", "type": "x"})
    assert (updated["name"], updated["type"]) == ("c", UNKNOWN)  # Update keeps name and location only


@functools.cache
def _deployed_cluster() -> dict[str, Any]:
    program = run_program("prod")
    return dict(next(r for r in program.resources if r.name == "h100-x4" and r.custom).inputs)


def deployed_cluster() -> dict[str, Any]:
    """prod's h100-x4 as the update evaluation checks it (one program run per test session)."""
    return copy.deepcopy(_deployed_cluster())


def change(inputs: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(inputs)
    *parents, last = propertypath.parse(path)
    node = out
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return out


IMMUTABLE_CHANGES = {
    "properties.computeLocation": "westus3",
    "properties.disableLocalAuth": False,  # prod's clusters have no SSH, so local auth off
    "properties.properties.vmSize": "Standard_ND96isr_H200_v5",
    "properties.properties.vmPriority": "LowPriority",
    "properties.properties.userAccountCredentials": {"adminUserName": "other", "adminUserSshPublicKey": "k"},
    "properties.properties.remoteLoginPortPublicAccess": "Enabled",
    "properties.properties.subnet": {
        "id": "/subscriptions/s/resourceGroups/n/providers/Microsoft.Network/virtualNetworks/v/subnets/s"
    },
    "properties.properties.enableNodePublicIp": True,  # prod's nodes have none (managed network)
}


def step_for(new_inputs: dict[str, Any], old_inputs: dict[str, Any]) -> Step:
    urn = f"urn:pulumi:prod::azml-gpu::azml-gpu:components:GpuCluster${COMPUTE}::h100-x4"
    state = {urn: StateResource(urn, COMPUTE, True, "/compute/id", old_inputs, {"name": "h100-x4"})}
    deployment = Deployment(UPDATE, provider_location="eastus", state=state)
    options = {
        "replaceOnChanges": list(IMMUTABLE_PROPERTY_PATHS),
        "deleteBeforeReplace": True,
        "deleteBeforeReplaceDefined": True,
    }
    return deployment.register(urn, COMPUTE, True, new_inputs, options, lambda _: None)


def test_every_immutable_field_is_covered() -> None:
    assert set(IMMUTABLE_CHANGES) == set(IMMUTABLE_PROPERTY_PATHS)


@pytest.mark.parametrize("path", sorted(IMMUTABLE_CHANGES))
def test_a_change_to_an_immutable_field_replaces_the_cluster(path: str) -> None:
    """azure-native itself would only update (nothing under Compute `properties` is force-new in the
    provider); the component's replaceOnChanges makes the engine replace, deleting first (fixed name)."""
    old = deployed_cluster()
    new = change(old, path, IMMUTABLE_CHANGES[path])
    provider_only = azure_native.detailed_diff(COMPUTE, old, new)
    assert provider_only.replace_keys == () and provider_only.changed
    step = step_for(new, old)
    assert step.op == "replace"
    assert step.replacement is not None and step.replacement.by_replace_on_changes
    assert step.replacement.delete_before_replace is True
    assert all(
        propertypath.contains(propertypath.parse(path), propertypath.parse(f))
        for f in step.replacement.fields
    )
    assert step.id == "" and step.outputs["name"] == UNKNOWN  # created anew: nothing known until it exists


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("properties.properties.scaleSettings.maxNodeCount", 2),
        ("properties.properties.scaleSettings.minNodeCount", 1),
        ("properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown", "PT10M"),
        ("tags", {"env": "prod", "team": "ml"}),
    ],
    ids=["max nodes", "min nodes", "idle timer", "tags"],
)
def test_scale_settings_and_tags_update_in_place(path: str, value: Any) -> None:
    old = deployed_cluster()
    step = step_for(change(old, path, value), old)
    assert (step.op, step.replacement, step.id) == ("update", None, "/compute/id")
    assert step.outputs["name"] == "h100-x4"  # Update(preview) keeps name and location from the state


def test_path_parameters_are_the_providers_own_replacements() -> None:
    """computeName, workspaceName and resourceGroupName are URL path parameters: the provider replaces on
    them itself (diff.go calculateDetailedDiff), with delete-before-replace (no __createBeforeDelete)."""
    old = deployed_cluster()
    diff = azure_native.detailed_diff(COMPUTE, old, {**old, "workspaceName": "ws-other"})
    assert diff.detailed == {"workspaceName": "UPDATE_REPLACE"}
    assert (diff.replace_keys, diff.delete_before_replace) == (("workspaceName",), True)
    # ARM compares resource group names and locations ignoring case (and spaces for locations)
    same = azure_native.detailed_diff(
        COMPUTE, old, {**old, "resourceGroupName": "RG-TRAIN", "location": "East US"}
    )
    assert not same.changed


def test_an_unknown_new_value_is_a_change_and_on_a_path_parameter_a_replacement() -> None:
    """pulumi sdk PropertyValue.DeepEquals: a computed value equals only a computed value; diff.go then marks
    a path parameter's UPDATE as UPDATE_REPLACE (the workspace is being replaced: its name is unknown)."""
    old = deployed_cluster()
    diff = azure_native.detailed_diff(COMPUTE, old, {**old, "workspaceName": UNKNOWN})
    assert diff.detailed == {"workspaceName": "UPDATE_REPLACE"} and diff.changed
    tags = azure_native.detailed_diff(COMPUTE, old, {**old, "tags": UNKNOWN})
    assert (tags.detailed, tags.replaces) == ({"tags": "UPDATE"}, ())


def test_the_whole_program_against_an_exported_state(tmp_path: Path) -> None:
    """run_program with a `pulumi stack export`-shaped state: an unchanged program is all sames; a scale
    change and a tag change update in place; a new size replaces, and only that cluster."""
    deployed = run_program("prod")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(exported_state(deployed)))
    state = read_state(path)
    unchanged = run_program("prod", deployment=Deployment(UPDATE, provider_location="eastus", state=state))
    assert {r.op for r in unchanged.resources if r.custom} == {"same"}
    config = copy.deepcopy(read_stack_config("prod"))
    clusters = config["azml-gpu:clusters"]
    clusters[0]["size"] = "Standard_ND96isr_H200_v5"
    changed = run_program(
        "prod", config=config, deployment=Deployment(UPDATE, provider_location="eastus", state=state)
    )
    ops = {r.name: r.op for r in changed.resources if r.type == COMPUTE}
    assert ops == {"h100-x4": "replace", "a100-spot": "same"}
    clusters[1]["idle_time_before_scale_down"] = 600
    changed = run_program(
        "prod", config=config, deployment=Deployment(UPDATE, provider_location="eastus", state=state)
    )
    ops = {r.name: r.op for r in changed.resources if r.type == COMPUTE}
    assert ops == {"h100-x4": "replace", "a100-spot": "update"}


def test_a_state_file_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "state.json"
    bad.write_text(json.dumps({"resources": []}))
    with pytest.raises(StateFileError, match="not a `pulumi stack export` document"):
        read_state(bad)


# The state fields the step generator reads (pulumi/pulumi v3.274.1 pkg/resource/deploy/step_generator.go):
# isTargetedReplace (taint), continueStepsFromDiff (pendingReplacement), continueStepsFromImport (external),
# generateURN (duplicate URNs); apitype ResourceV3 for the export format.
URN = f"urn:pulumi:prod::azml-gpu::azml-gpu:components:GpuCluster${COMPUTE}::h100-x4"


def _export(tmp_path: Path, **fields: Any) -> Path:
    old = deployed_cluster()
    entry = {"urn": URN, "custom": True, "type": COMPUTE, "id": "/compute/id", "inputs": old, "outputs": {}}
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 3, "deployment": {"resources": [{**entry, **fields}]}}))
    return path


@pytest.mark.parametrize(
    ("fields", "op", "trigger"),
    [
        ({}, "same", None),
        ({"taint": True}, "replace", "taint"),
        ({"pendingReplacement": True}, "replace", "pendingReplacement"),
        ({"external": True}, "create", None),
    ],
    ids=["plain", "taint", "pendingReplacement", "external"],
)
def test_state_flags_decide_the_step(tmp_path: Path, fields: dict, op: str, trigger: str | None) -> None:
    from preflight.engine import read_state_file

    state = read_state_file(_export(tmp_path, **fields))
    deployment = Deployment(UPDATE, provider_location="eastus", state=state.resources)
    step = deployment.register(URN, COMPUTE, True, deployed_cluster(), {}, lambda _: None)
    assert step.op == op
    assert (step.replacement.trigger if step.replacement else None) == trigger


def test_pending_deletes_are_never_matched_and_the_owner_is_read(tmp_path: Path) -> None:
    from preflight.engine import read_state_file, state_names

    path = _export(tmp_path, delete=True)
    state = read_state_file(path)
    assert (dict(state.resources), [r.urn for r in state.pending_deletes]) == ({}, [URN])
    assert (state.stack, state.project) == ("prod", "azml-gpu")
    assert state_names(path) == {("prod", "azml-gpu")}


def test_secrets_exported_with_show_secrets_read_as_the_program_sends_them(tmp_path: Path) -> None:
    from preflight.engine import read_state_file
    from preflight.provider.model import SECRET_SIG, SIG_KEY

    old = deployed_cluster()
    key = {SIG_KEY: SECRET_SIG, "plaintext": json.dumps("ssh-rsa AAAA")}
    # prod's h100-x4 has no SSH any more: a cluster that has one, as a deployed state would hold it
    old["properties"]["properties"]["userAccountCredentials"] = {"adminUserName": "azureuser"}
    old["properties"]["properties"]["userAccountCredentials"]["adminUserSshPublicKey"] = key
    path = tmp_path / "state.json"
    entry = {"urn": URN, "custom": True, "type": COMPUTE, "id": "/compute/id", "inputs": old, "outputs": {}}
    path.write_text(json.dumps({"version": 3, "deployment": {"resources": [entry]}}))
    read = read_state_file(path).resources[URN].inputs
    credentials = read["properties"]["properties"]["userAccountCredentials"]
    assert credentials["adminUserSshPublicKey"] == {SIG_KEY: SECRET_SIG, "value": "ssh-rsa AAAA"}


def test_a_urn_registered_twice_is_recorded_as_the_engine_refuses_it() -> None:
    deployment = Deployment(UPDATE, provider_location="eastus")
    first = deployment.register(URN, COMPUTE, True, deployed_cluster(), {}, lambda _: None)
    again = deployment.register(URN, COMPUTE, True, deployed_cluster(), {}, lambda _: None)
    assert again is first and deployment.duplicates == [URN]
