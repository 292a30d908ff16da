"""Cross-region clusters: resource `location` stays at the workspace region, the cluster region goes
in `properties.computeLocation` (docs/azure-behaviour.md, "Cross-region clusters")."""

from __future__ import annotations

from components_helpers import CLUSTER_COMPONENT, COMPUTE, compute, ns, variant

from preflight.program import run_program


def test_cross_region_cluster_sends_compute_location(stack_configs):
    """The seed's h100-wus3 next to an eastus workspace without a managed network (the public dev stack: a
    private prod workspace can't have it, docs/azure-behaviour.md)."""
    base = stack_configs["dev"]
    wus3 = dict(ns(base, "clusters")[0], name="h100-wus3", region="westus3")
    result = run_program("dev", config=variant(base, clusters=[*ns(base, "clusters"), wus3]))
    assert result.ok, result.problems
    r = compute(result, "h100-wus3")
    assert r.inputs["location"] == "eastus"  # the workspace's region: the ARM envelope of a workspace child
    assert r.inputs["properties"]["computeLocation"] == "westus3"
    component = next(c for c in result.of_type(CLUSTER_COMPONENT) if c.name == "h100-wus3")
    assert component.outputs["region"] == "westus3"
    assert result.outputs["clusters"]["h100-wus3"]["region"] == "westus3"


def test_same_region_clusters_send_the_workspace_region_in_both(run, typed):
    for cluster in typed.clusters:
        r = compute(run, cluster.name)
        assert r.inputs["location"] == typed.workspace.region
        assert r.inputs["properties"]["computeLocation"] == cluster.region


def test_region_follows_config_not_a_constant(stack_configs):
    base = stack_configs["dev"]
    cluster = dict(ns(base, "clusters")[0], region="swedencentral")
    result = run_program("dev", config=variant(base, clusters=[cluster]))
    (r,) = result.of_type(COMPUTE)
    assert r.inputs["location"] == "eastus"
    assert r.inputs["properties"]["computeLocation"] == "swedencentral"
