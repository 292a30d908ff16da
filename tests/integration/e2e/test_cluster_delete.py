"""Cluster deletes under the real engine against localml: a VM size change (a replace), a cluster removed
from the config and `pulumi destroy --run-program` each delete the compute once, through the clusters'
before-delete hook with `underlyingResourceAction=Delete` (components/compute_delete.py), never through
azure-native's plain DELETE, which carries no such parameter (pulumi-azure-native provider/pkg/provider/
provider.go `Delete`) and which localml refuses with 400 as Compute_Delete 2025-12-01 requires it
(azure-rest-api-specs machinelearningservices stable/2025-12-01 `UnderlyingResourceActionParameter`). A
detach instead of a delete is how a re-created cluster kept its old VM size
(Azure/azure-rest-api-specs#18889): the new cluster must have the new size.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest

from doubles.localml import LocalAzureML

from .conftest import deployment, stack_config, stack_text

pytestmark = pytest.mark.slow

H100 = "Standard_ND96isr_H100_v5"
H200 = "Standard_ND96isr_H200_v5"
COMPUTE = "azure-native:machinelearningservices:Compute"
ACTION = (("api-version", "2025-12-01"), ("underlyingResourceAction", "Delete"))


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[LocalAzureML]:
    with LocalAzureML(root=tmp_path / "localml", implicit_workspaces=False) as env:
        yield env


def _compute_deletes(log: list) -> list[tuple[str, dict, int]]:
    """(compute name, query, status) of each compute DELETE localml answered."""
    return [
        (c.path.rsplit("/", 1)[-1], dict(c.query), c.status)
        for c in log
        if c.method == "DELETE" and "/computes/" in c.path
    ]


def _computes(state: dict) -> dict[str, dict]:
    return {r["urn"].rsplit("::", 1)[-1]: r for r in state["deployment"]["resources"] if r["type"] == COMPUTE}


def test_a_size_change_replaces_the_cluster_with_the_new_size_and_destroy_leaves_nothing(
    fresh: LocalAzureML, tmp_path: Path
) -> None:
    assert fresh.control_plane is not None
    store, log = fresh.control_plane.store, fresh.control_plane.server.log
    config = stack_config("prod")
    assert [c["name"] for c in config["azml-gpu:clusters"]] == ["h100-x4", "a100-spot"]
    assert config["azml-gpu:clusters"][0]["size"] == H100
    with deployment(fresh, "prod", tmp_path / "deploy", config) as d:
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        (h100,) = [r for r in store.resources.values() if r.resource["name"] == "h100-x4"]
        h100_id = h100.resource["id"]
        assert h100.resource["properties"]["properties"]["vmSize"] == H100

        # h100-x4 on H200 (create-only: replaced), a100-spot removed from the config.
        changed = copy.deepcopy(config)
        changed["azml-gpu:clusters"] = [dict(changed["azml-gpu:clusters"][0], size=H200)]
        d.set_stack_text(stack_text(changed))
        before = len(log)
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        # Each compute deleted once, by the hook, with the parameter; then h100-x4 created again.
        deletes = _compute_deletes(log[before:])
        assert sorted(name for name, _, _ in deletes) == ["a100-spot", "h100-x4"]
        assert {(tuple(sorted(q.items())), status) for _, q, status in deletes} == {(ACTION, 200)}
        after = store.arm(h100_id)
        assert after is not None and after.resource["properties"]["properties"]["vmSize"] == H200
        assert not [r for r in store.resources.values() if r.resource["name"] == "a100-spot"]
        assert store.detached == {}
        state = _computes(d.export())
        assert set(state) == {"h100-x4"}
        assert state["h100-x4"]["outputs"]["properties"]["properties"]["vmSize"] == H200

        before = len(log)
        down = d.destroy()
        assert down.ok, down.tail(40)
    assert store.resources == {}
    assert [(n, tuple(sorted(q.items()))) for n, q, _ in _compute_deletes(log[before:])] == [
        ("h100-x4", ACTION)
    ]


def test_destroy_without_run_program_is_refused_before_anything_is_deleted(
    fresh: LocalAzureML, tmp_path: Path
) -> None:
    """The hook lives in the program: a plain `pulumi destroy` cannot run it, and the engine refuses the whole
    destroy before any step (pulumi pkg/engine/destroy.go: "You must run with the `--run-program` flag to use
    delete hooks during destroy."), so nothing is deleted; `pulumi destroy --run-program` then deletes
    everything."""
    assert fresh.control_plane is not None
    store = fresh.control_plane.store
    with deployment(fresh, "dev", tmp_path / "deploy") as d:
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        made = sorted(store.resources)
        (cluster,) = [r for r in store.resources.values() if "/computes/" in r.resource["id"]]
        plain = d.destroy(run_program=False)
        assert not plain.ok
        assert (
            "You must run with the `--run-program` flag to use delete hooks during destroy." in plain.stderr
        )
        assert plain.tail() == (
            "Resource has delete hooks registered, but the program is not running. Hooks: "
            "azml-gpu-compute-delete"
        )
        assert sorted(store.resources) == made  # nothing deleted
        assert cluster.resource["name"] in _computes(d.export())
        down = d.destroy()
        assert down.ok, down.tail(40)
    assert store.resources == {}


def test_enabling_a_managed_network_replaces_every_cluster(fresh: LocalAzureML, tmp_path: Path) -> None:
    """how-to-managed-network.md, "Migration of compute resources": after enabling the managed virtual
    network, "delete all existing managed compute resources and recreate them". The clusters' replacement
    trigger is how the workspace is reached (components/gpu_cluster.py), so the real engine replaces each one
    (the hook's DELETE with `underlyingResourceAction=Delete`, then a PUT) in the update that enables it."""
    assert fresh.control_plane is not None
    store, log = fresh.control_plane.store, fresh.control_plane.server.log
    config = stack_config("dev")
    assert "azml-gpu:network" not in config or not config["azml-gpu:network"].get("managed")
    with deployment(fresh, "dev", tmp_path / "deploy", config) as d:
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        names = sorted(_computes(d.export()))
        assert names
        changed = copy.deepcopy(config)
        changed["azml-gpu:network"] = {"managed": {"isolation_mode": "AllowInternetOutbound"}}
        d.set_stack_text(stack_text(changed))
        before = len(log)
        up = d.up(skip_preview=True)
        assert up.ok, up.tail(40)
        deletes = _compute_deletes(log[before:])
        assert sorted(n for n, _, _ in deletes) == names
        assert {(tuple(sorted(q.items())), status) for _, q, status in deletes} == {(ACTION, 200)}
        puts = [
            c.path.rsplit("/", 1)[-1] for c in log[before:] if c.method == "PUT" and "/computes/" in c.path
        ]
        assert sorted(puts) == names
        state = _computes(d.export())
        assert {n: r["replacementTrigger"] for n, r in state.items()} == {
            n: "managed-network=True;workspace-private-endpoint=False" for n in names
        }
        down = d.destroy()
        assert down.ok, down.tail(40)
    assert store.resources == {}
