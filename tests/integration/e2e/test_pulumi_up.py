"""`pulumi up` of the shipped stacks into localml with the real CLI (doubles/localml/pulumiup.py): the offline
azure-native provider sends each resource to ARM as azure-native does (CanCreate GET, PUT with the request
body built from its inputs, readAfterWrite GET; preflight/provider/arm.py), localml keeps every one in its one
ARM store with the body sent, checked against the REST spec of its API version, and `pulumi destroy` deletes
every one (DELETE with `api-version` only, as azure-native sends it; the compute by its before-delete hook,
with `underlyingResourceAction=Delete`; the resource group's long-running) and leaves nothing."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML
from preflight.provider import arm

from .conftest import arm_request, deployment, stack_config

pytestmark = pytest.mark.slow

DEV_TYPES = {
    "azure-native:resources:ResourceGroup",
    "azure-native:storage:StorageAccount",
    "azure-native:keyvault:Vault",
    "azure-native:operationalinsights:Workspace",
    "azure-native:applicationinsights:Component",
    "azure-native:machinelearningservices:Workspace",
    "azure-native:machinelearningservices:Compute",
    "azure-native:authorization:RoleAssignment",
}


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[LocalAzureML]:
    """An empty localml: whatever its store holds afterwards, the test's `pulumi up` made."""
    with LocalAzureML(root=tmp_path / "localml", implicit_workspaces=False) as env:
        yield env


def _custom(state: dict) -> list[dict]:
    return [
        r
        for r in state["deployment"]["resources"]
        if r.get("custom") and r["type"].startswith("azure-native:") and r.get("id")
    ]


def test_pulumi_up_of_dev_leaves_every_resource_in_localml_with_the_body_azure_native_sends(
    fresh: LocalAzureML, tmp_path: Path
) -> None:
    assert fresh.control_plane is not None
    store, log = fresh.control_plane.store, fresh.control_plane.server.log
    with deployment(fresh, "dev", tmp_path / "deploy", policy=True) as d:
        up = d.up()
        assert up.ok, up.tail(40)
        resources = _custom(d.export())
        assert {r["type"] for r in resources} == DEV_TYPES
        # Exactly the stack's resources, each under the id the state holds, with what azure-native sends.
        assert sorted(k for k in store.resources) == sorted(r["id"].lower() for r in resources)
        for r in resources:
            stored = store.arm(r["id"])
            assert stored is not None, r["id"]
            assert stored.sent == arm.request_body(r["type"], r["inputs"]), r["type"]
            assert stored.api_version == r["inputs"]["azureApiVersion"]
            assert stored.resource["id"] == r["id"]
        # ... which is the REST body, not the SDK's inputs (wire names, containers, path parameters out).
        by_type = {r["type"]: store.arm(r["id"]).sent for r in resources}
        assert set(by_type["azure-native:resources:ResourceGroup"]) == {"location", "tags"}
        account = by_type["azure-native:storage:StorageAccount"]
        assert account["properties"]["supportsHttpsTrafficOnly"] is True and "accountName" not in account
        assert account["properties"]["allowBlobPublicAccess"] is False and account["sku"] == {
            "name": "Standard_LRS"
        }
        assert (
            by_type["azure-native:applicationinsights:Component"]["properties"]["Application_Type"] == "web"
        )
        scale = by_type["azure-native:machinelearningservices:Compute"]["properties"]["properties"][
            "scaleSettings"
        ]
        assert scale["maxNodeCount"] == 1 and isinstance(scale["maxNodeCount"], int)
        assert set(by_type["azure-native:authorization:RoleAssignment"]) == {"properties"}
        workspace = by_type["azure-native:machinelearningservices:Workspace"]
        assert workspace["properties"]["keyVault"].endswith(
            "/vaults/" + workspace["properties"]["keyVault"].split("/")[-1]
        )
        # Every body was checked against a vendored spec, none refused.
        assert fresh.control_plane.validation.rejected == []
        assert fresh.control_plane.validation.not_checked == []
        # azure-native's calls per resource: CanCreate GET (404), one PUT, readAfterWrite GET (the group is
        # also read by Check, for the location of what goes in it).
        calls: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for c in log:
            calls[c.path.lower()].append((c.method, c.status))
        for r in resources:
            made = calls[r["id"].lower()]
            puts = [i for i, (m, _) in enumerate(made) if m == "PUT"]
            assert len(puts) == 1 and made[puts[0]][1] in (200, 201), (r["type"], made)
            assert ("GET", 404) in made[: puts[0]] and ("GET", 200) in made[puts[0] + 1 :], (r["type"], made)
        before = len(log)
        down = d.destroy()
        assert down.ok, down.tail(40)
    assert store.resources == {}
    deletes = {(c.path.lower(), c.status) for c in log[before:] if c.method == "DELETE"}
    for r in resources:
        assert any(path == r["id"].lower() for path, _ in deletes), r["id"]
    (compute,) = [c for c in log[before:] if c.method == "DELETE" and "/computes/" in c.path]
    assert compute.query["underlyingResourceAction"] == "Delete" and compute.status == 200
    (group,) = [
        c
        for c in log[before:]
        if c.method == "DELETE" and c.path.lower().endswith("/resourcegroups/rg-train-dev")
    ]
    assert group.status == 202  # long-running, polled to its end


@pytest.mark.parametrize("stack", ["prod", "capacity"])
def test_every_type_the_shipped_stacks_declare_is_made_and_destroyed(
    fresh: LocalAzureML, tmp_path: Path, stack: str
) -> None:
    """prod (private endpoints and their DNS zone groups, diagnostic settings, a registry, role assignments)
    and capacity (management locks: `pulumi destroy` deletes each lock before what it locks)."""
    assert fresh.control_plane is not None
    store = fresh.control_plane.store
    with deployment(fresh, stack, tmp_path / "deploy", policy=True) as d:
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        resources = _custom(d.export())
        assert len(store.resources) == len(resources)
        for r in resources:
            assert store.arm(r["id"]).sent == arm.request_body(r["type"], r["inputs"]), r["type"]
        assert fresh.control_plane.validation.rejected == []
        down = d.destroy()
        assert down.ok, down.tail(40)
    assert store.resources == {}
    types = {r["type"] for r in resources}
    if stack == "prod":
        assert {
            "azure-native:network:PrivateEndpoint",
            "azure-native:network:PrivateDnsZoneGroup",
            "azure-native:monitor:DiagnosticSetting",
            "azure-native:containerregistry:Registry",
        } <= types
    else:
        assert "azure-native:authorization:ManagementLockByScope" in types


def test_a_lock_refuses_the_delete_of_what_it_locks(fresh: LocalAzureML, tmp_path: Path) -> None:
    """A lock the stack did not make (someone locked the storage account in the portal): `pulumi destroy`
    fails on that account with ARM's ScopeLocked, and the rest is deleted."""
    assert fresh.control_plane is not None
    with deployment(fresh, "dev", tmp_path / "deploy") as d:
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        (account,) = [r for r in _custom(d.export()) if r["type"] == "azure-native:storage:StorageAccount"]
        lock = f"{account['id']}/providers/Microsoft.Authorization/locks/by-hand"
        status, _ = arm_request(fresh, "PUT", lock, "2020-05-01", {"properties": {"level": "CanNotDelete"}})
        assert status == 201
        down = d.destroy()
    assert not down.ok
    assert 'Status=409 Code="ScopeLocked"' in down.tail()
    assert f"following scope(s) are locked: '{account['id']}'" in down.tail()
    left = sorted(r.type for r in fresh.control_plane.store.resources.values())
    assert left == [
        "Microsoft.Authorization/locks",
        "Microsoft.Resources/resourceGroups",
        "Microsoft.Storage/storageAccounts",
    ]


def test_destroy_removes_every_lock_before_the_clusters_and_grants_it_would_block(
    fresh: LocalAzureML, tmp_path: Path
) -> None:
    """capacity with its workspace locked too: a CanNotDelete lock blocks deleting what lies under its scope
    (the workspace's computes, the role assignments on a locked resource; lock-resources.md), and localml
    refuses those deletes with ScopeLocked as ARM does. Each lock depends on every cluster and grant
    (components/locks.py `blocks`), so the real engine's `pulumi destroy` deletes the locks first and the
    destroy leaves nothing."""
    assert fresh.control_plane is not None
    store, log = fresh.control_plane.store, fresh.control_plane.server.log
    config = stack_config("capacity")
    config["azml-gpu:locks"] = dict(config["azml-gpu:locks"], workspace=True)
    with deployment(fresh, "capacity", tmp_path / "deploy", config) as d:
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        types = {r["type"] for r in _custom(d.export())}
        assert "azure-native:authorization:ManagementLockByScope" in types
        before = len(log)
        down = d.destroy()
        assert down.ok, down.tail(40)
    assert store.resources == {}
    deletes = [c for c in log[before:] if c.method == "DELETE"]
    assert all(c.status != 409 for c in deletes), [(c.path, c.status) for c in deletes if c.status == 409]
    position = {c.path.lower(): i for i, c in reversed(list(enumerate(deletes)))}
    locks = [i for p, i in position.items() if "/providers/microsoft.authorization/locks/" in p]
    blocked = [
        i
        for p, i in position.items()
        if "/computes/" in p or "/providers/microsoft.authorization/roleassignments/" in p
    ]
    assert len(locks) == 4 and blocked
    assert max(locks) < min(blocked)
