"""preflight/replacements.py: the gate's cluster-replacement check on the engine's steps. What a user sees:
which cluster the update deletes, how (delete first, or create first), why (each input that forces it, old ->
new), at what level, and that an acknowledged cluster passes unless a lock blocks its delete.

The steps are the engine's own (recorded event logs, tests/fixtures/engine: prod with the h100-x4 cluster's
size changed; prod with the a100-spot cluster removed), and single steps built from them, one field changed
per
case."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from preflight import replacements
from preflight.events import Step
from preflight.wire import UNKNOWN

from .recorded import run, step

COMPUTE = "azure-native:machinelearningservices:Compute"


def resized() -> Step:
    return copy.deepcopy(step("prod-size-change", "update", "h100-x4", "Compute"))


def removed() -> Step:
    return copy.deepcopy(step("prod-cluster-removed", "update", "a100-spot", "Compute"))


def test_a_replaced_cluster_is_a_violation_at_the_configured_level_naming_it_the_change_and_the_fix() -> None:
    (v,) = replacements.findings([resized()], {"enforcementLevel": "mandatory"})
    assert (v.policy, v.enforcement, v.urn) == ("cluster-replacement", "mandatory", resized().urn)
    assert v.message.startswith(
        "h100-x4 will be deleted and recreated (vmSize: Standard_ND96isr_H100_v5 -> "
        "Standard_ND96isr_H200_v5): "
        "the cluster is deleted with every job running on it"
    )
    assert "add 'h100-x4' to cluster-replacement.acknowledged in the policy config" in v.message


def test_a_removed_cluster_is_reported_as_a_delete() -> None:
    (v,) = replacements.findings([removed()], {"enforcementLevel": "mandatory"})
    assert v.message.startswith("a100-spot will be deleted: the cluster is deleted with every job")


def test_the_default_level_is_advisory_and_disabled_reports_nothing() -> None:
    (v,) = replacements.findings([resized()], {})
    assert v.enforcement == "advisory"
    assert replacements.findings([resized()], {"enforcementLevel": "disabled"}) == []


def test_an_acknowledged_cluster_passes_and_another_does_not() -> None:
    got = replacements.findings([resized(), removed()], {"acknowledged": ["h100-x4"]})
    assert [v.message.split(" will ")[0] for v in got] == ["a100-spot"]


@pytest.mark.parametrize("op", ["update", "create", "same", "read"])
def test_only_a_replaced_or_deleted_compute_is_reported(op: str) -> None:
    assert (
        replacements.findings([dataclasses.replace(resized(), op=op)], {"enforcementLevel": "mandatory"})
        == []
    )
    other = dataclasses.replace(resized(), type="azure-native:storage:StorageAccount")
    assert replacements.findings([other], {"enforcementLevel": "mandatory"}) == []


def test_every_replacement_of_the_update_is_a_row_with_old_and_new_values() -> None:
    rows = replacements.replacement_rows(run("prod-size-change", "update").steps)
    assert [(r["name"], r["delete_before_replace"], r["fields"]) for r in rows] == [
        ("h100-x4", True, ["properties.properties.vmSize"]),
        # the cluster's new identity is unknown until it exists: its storage grant is replaced with it
        ("ws-llm-access-h100-x4-st-blob-contributor", True, ["principalId"]),
    ]
    assert rows[0]["changes"] == [
        {
            "field": "properties.properties.vmSize",
            "old": "Standard_ND96isr_H100_v5",
            "new": "Standard_ND96isr_H200_v5",
        }
    ]
    assert rows[1]["summary"].endswith(
        "(principalId: " + rows[1]["changes"][0]["old"] + " -> (known after the update))"
    )


def test_create_before_delete_and_several_fields_are_described() -> None:
    s = resized()
    s.ops = ["create-replacement", "replace", "delete-replaced"]
    s.detailed_diff = {
        "properties.computeLocation": {"diffKind": "update-replace"},
        "properties.properties.vmPriority": {"diffKind": "update-replace"},
        "tags.env": {"diffKind": "update"},  # changes, but does not force the replacement
    }
    s.old["inputs"]["properties"]["properties"]["vmPriority"] = "LowPriority"
    assert replacements.summary(s) == (
        "h100-x4 will be recreated (new one first, then the old deleted) (computeLocation: eastus -> eastus; "
        "vmPriority: LowPriority -> Dedicated)"
    )
    assert replacements.delete_before_replace(s) is False


def test_without_a_detailed_diff_the_replace_keys_name_the_fields() -> None:
    s = dataclasses.replace(resized(), detailed_diff={}, keys=["location"])
    assert replacements.replace_fields(s) == ["location"]
    assert replacements.summary(s).endswith("(location: eastus -> eastus)")
    bare = dataclasses.replace(resized(), detailed_diff={}, keys=[])
    assert replacements.summary(bare).endswith("(no input named)")


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("properties.properties.vmSize", "vmSize"),
        ("properties.computeLocation", "computeLocation"),
        ("location", "location"),
        ("properties.properties.scaleSettings.maxNodeCount", "scaleSettings.maxNodeCount"),
    ],
)
def test_field_names_drop_the_arm_property_prefixes(path: str, name: str) -> None:
    assert replacements.field_name(path) == name


def test_values_are_shown_as_a_reviewer_reads_them() -> None:
    s = resized()
    s.new["inputs"]["properties"]["properties"]["vmSize"] = UNKNOWN
    assert "(vmSize: Standard_ND96isr_H100_v5 -> (known after the update))" in replacements.summary(s)
    s.new["inputs"]["properties"]["properties"]["vmSize"] = {"a": 1}
    assert "-> (a structure))" in replacements.summary(s)
    del s.new["inputs"]["properties"]["properties"]["vmSize"]
    assert "-> (none))" in replacements.summary(s)


def _lock(scope: str | None, lock_id: str, level: str = "CanNotDelete") -> Step:
    inputs = {"lockName": "ws-lock", "level": level, **({"scope": scope} if scope else {})}
    return Step(
        "same",
        "urn:pulumi:prod::azml-gpu::azml-gpu:components:ResourceLocks$"
        "azure-native:authorization:ManagementLockByScope::ws-lock",
        "azure-native:authorization:ManagementLockByScope",
        True,
        "",
        {"inputs": inputs, "id": lock_id},
        {"inputs": inputs},
    )


def test_an_acknowledged_replacement_blocked_by_a_lock_on_the_workspace_is_mandatory() -> None:
    cluster = resized()
    workspace = cluster.old_id.split("/computes/")[0]
    lock = _lock(workspace, f"{workspace}/providers/Microsoft.Authorization/locks/ws-lock")
    (v,) = replacements.findings(
        [cluster, lock], {"acknowledged": ["h100-x4"], "enforcementLevel": "advisory"}
    )
    assert v.enforcement == "mandatory"
    assert v.message.startswith(
        "cluster-replacement.acknowledged: 'h100-x4' is acknowledged, but the CanNotDelete lock 'ws-lock' "
        "on "
        f"{workspace} blocks deleting it"
    )


@pytest.mark.parametrize(
    ("scope_of", "blocks"),
    [
        (lambda ws: ws, True),  # the workspace: a parent scope
        (lambda ws: ws.split("/providers/")[0], True),  # the resource group
        (lambda ws: ws + "/computes/h100-x4", True),  # the cluster itself
        (lambda ws: ws + "/computes/h100-x40", False),  # a sibling whose name starts the same
        (lambda ws: ws.replace("ws-llm", "ws-other"), False),  # another workspace
    ],
)
def test_a_lock_blocks_the_delete_of_everything_below_its_scope(scope_of, blocks: bool) -> None:
    cluster = resized()
    workspace = cluster.old_id.split("/computes/")[0]
    scope = scope_of(workspace)
    lock = _lock(None, f"{scope}/providers/Microsoft.Authorization/locks/ws-lock")  # scope from the id
    assert bool(replacements.blocking_locks(cluster.old_id, [lock])) is blocks


def test_a_lock_the_update_creates_does_not_block_what_it_deletes() -> None:
    cluster = resized()
    workspace = cluster.old_id.split("/computes/")[0]
    new_lock = dataclasses.replace(_lock(workspace, ""), old=None, op="create")
    assert replacements.blocking_locks(cluster.old_id, [new_lock]) == []


def test_the_check_is_declared_advisory_with_an_acknowledged_list() -> None:
    entry = replacements.GATE_CHECKS["cluster-replacement"]
    assert entry["enforcementLevel"] == "advisory"
    assert entry["configSchema"]["properties"]["acknowledged"]["type"] == "array"


CLUSTER = "azure-native:machinelearningservices:Compute"
GRANT = "azure-native:authorization:RoleAssignment"
PRINCIPAL = "1ecec376-abf9-5539-863c-4608fd585378"


def _cluster(op: str) -> Step:
    outputs = {"identity": {"type": "SystemAssigned", "principalId": PRINCIPAL}, "name": "h100-x4"}
    return Step(
        op,
        f"urn:pulumi:prod::azml-gpu::azml-gpu:components:GpuCluster${CLUSTER}::h100-x4",
        CLUSTER,
        True,
        "",
        {"inputs": {"computeName": "h100-x4"}, "outputs": outputs},
        {"inputs": {"computeName": "h100-x4"}},
    )


def _grant(new_principal: object, scope: str = "/st") -> Step:
    return Step(
        "replace",
        f"urn:pulumi:prod::azml-gpu::azml-gpu:components:RoleAssignments${GRANT}::h100-x4-blob",
        GRANT,
        True,
        "",
        {"inputs": {"principalId": PRINCIPAL, "scope": "/st"}},
        {"inputs": {"principalId": new_principal, "scope": scope}},
        keys=["principalId"],
        detailed_diff={"principalId": {"diffKind": "update-replace"}},
        ops=["delete-replaced", "create-replacement"],
    )


def test_a_replacement_from_a_value_of_a_resource_updated_in_place_is_preview_only() -> None:
    """The issue's case: a scale change updates the cluster in place, whose identity's principalId the
    Update preview leaves unknown, so the grant naming it shows a replacement `pulumi up` would not make."""
    grant, steps = _grant(UNKNOWN), [_cluster("update")]
    assert replacements.preview_only(grant, [grant, *steps]) is True
    (row,) = replacements.replacement_rows([grant, *steps])
    assert row["preview_only"] is True
    assert row["summary"].endswith(
        "(principalId: 1ecec376-abf9-5539-863c-4608fd585378 -> (known after the update)); preview only: "
        "every input that forces it is unknown until the update, so `pulumi up` replaces it only if the "
        "value then differs"
    )


@pytest.mark.parametrize(
    ("grant", "cluster_op"),
    [
        (_grant(UNKNOWN), "replace"),  # the cluster is recreated: a new identity, a real new principal
        (_grant(UNKNOWN), None),  # no resource of the update holds the old value: not labelled
        (_grant("other-principal"), "update"),  # a known new value: a real replacement
    ],
)
def test_a_replacement_is_real_when_its_source_is_replaced_or_its_value_known(
    grant: Step, cluster_op: str | None
) -> None:
    steps = [grant] + ([_cluster(cluster_op)] if cluster_op else [])
    assert replacements.preview_only(grant, steps) is False
    assert "preview only" not in replacements.summary(grant, steps)


def test_one_known_forcing_value_makes_it_real() -> None:
    grant = _grant(UNKNOWN, scope="/other")
    grant.detailed_diff["scope"] = {"diffKind": "update-replace"}
    assert replacements.preview_only(grant, [grant, _cluster("update")]) is False


def test_a_resource_updated_in_place_that_does_not_hold_the_value_is_no_source() -> None:
    """Only the step whose old outputs hold the old principal is the source: another cluster scaled in
    place, with another identity, says nothing about this grant."""
    other = _cluster("update")
    other.old["outputs"]["identity"]["principalId"] = "another-principal"  # type: ignore[index]
    grant = _grant(UNKNOWN)
    assert replacements.preview_only(grant, [grant, other]) is False
    assert replacements.preview_only(grant, [grant, other, _cluster("update")]) is True
