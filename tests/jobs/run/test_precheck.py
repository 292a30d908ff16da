"""The quota pre-check and the allocation line of `jobs run` (jobs/run/precheck.py) through azure-ai-ml's
real HTTP pipeline, answered at the transport with bodies in the REST shapes: usages as
`GET .../locations/{region}/usages` lists them (tests/jobs/fixtures/usages-eastus.json), the cluster as
`GET .../computes/{name}` returns AmlCompute (fixtures/compute-get-amlcompute.json, the REST spec example),
each case changing one number of those bodies.

Quota facts (docs/reference/azure-notes.md section 3.5): dedicated nodes count against their VM family's
pool and the regional dedicated total; low-priority and Spot nodes count against the one regional
low-priority pool. Standard_ND96isr_H100_v5 has 96 vCPUs a node (Azure's ND H100 v5 size page)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from jobs import outputs
from jobs.builders import cluster_target, smoke
from jobs.run import precheck

from ..jobs_azure_fakes import RoutedTransport, ml_client
from ..jobs_util import FIXTURES
from ..runs_util import COMPUTE, USAGES, quota_route

OUTPUTS = FIXTURES / "outputs-prod.json"
H100_VCPUS = 96
FAMILY = "Standard NDSH100v5 Family Cluster Dedicated vCPUs"
REGIONAL = "Total Cluster Dedicated Regional vCPUs"
LOW_PRIORITY = "Total Cluster LowPriority Regional vCPUs"


def usages(**limits_used: tuple[int, int]) -> dict:
    """usages-eastus.json with (limit, used) of the named pools changed (keys: family, regional, low)."""
    names = {"family": FAMILY, "regional": REGIONAL, "low": LOW_PRIORITY}
    body = copy.deepcopy(USAGES)
    for key, (limit, used) in limits_used.items():
        for u in body["value"]:
            if u["name"]["value"] == names[key]:
                u["limit"], u["currentValue"] = limit, used
    return body


def compute(current: int = 0, **props) -> dict:
    body = copy.deepcopy(COMPUTE)
    body["properties"]["properties"]["currentNodeCount"] = current
    body["properties"]["properties"].update(props)
    return body


def client(usage: dict, cluster: dict | None = None, usage_status: int = 200):
    def route(method: str, url: str):
        if "/locations/eastus/usages" in url:
            return usage_status, usage
        if "/computes/h100-x4" in url and cluster is not None:
            return 200, cluster
        return 404, {"error": {"code": "NotFound", "message": url}}

    transport = RoutedTransport(route)
    return ml_client(transport, retry_total=0), transport


def job(nodes: int):
    return smoke(cluster_target(outputs.from_file(OUTPUTS), "h100-x4"), nodes=nodes)


def pools(check: precheck.QuotaCheck) -> dict[int, tuple[int, int, int]]:
    """limit -> (need, held, free) of each pool checked."""
    return {p["limit"]: (p["need"], p["held"], p["free"]) for p in check.pools}


@pytest.mark.parametrize(
    ("family_free", "fits"),
    [
        (2 * H100_VCPUS + 1, True),  # just above what 2 nodes need
        (2 * H100_VCPUS, True),  # exactly what they need: fits
        (2 * H100_VCPUS - 1, False),  # one vCPU short
    ],
)
def test_dedicated_family_pool_boundary(family_free, fits):
    ml, _ = client(usages(family=(1000, 1000 - family_free), regional=(5000, 0)))
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", None)
    assert check.checked and check.fits is fits
    short = check.message()
    if fits:
        assert short == ""
    else:
        family = next(p["pool"] for p in check.pools if p["limit"] == 1000)
        assert short == (
            f"{family} in eastus: the job needs 192 vCPUs, "
            f"{1000 - family_free} of 1000 are in use (0 held by this cluster), {family_free} free"
        )


@pytest.mark.parametrize(("regional_free", "fits"), [(192, True), (191, False)])
def test_the_regional_dedicated_total_also_binds(regional_free, fits):
    ml, _ = client(usages(family=(1000, 0), regional=(500, 500 - regional_free)))
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", None)
    assert check.fits is fits
    assert pools(check)[500] == (192, 0, regional_free)
    assert ("total regional dedicated vCPUs in eastus" in check.message()) is not fits


@pytest.mark.parametrize("tier", ["spot", "low_priority"])
def test_spot_and_low_priority_count_against_the_low_priority_pool_only(tier):
    # the dedicated pools are full, the low-priority pool has exactly one node's room
    ml, _ = client(usages(family=(192, 192), regional=(500, 500), low=(100, 100 - H100_VCPUS)))
    one = precheck.check_quota(ml, job(1), "eastus", tier, None)
    assert one.fits and pools(one) == {100: (96, 0, 96)}
    two = precheck.check_quota(ml, job(2), "eastus", tier, None)
    assert not two.fits
    assert two.message().startswith("low-priority vCPUs (all families) in eastus: the job needs 192 vCPUs")


def test_dedicated_does_not_read_the_low_priority_pool():
    ml, _ = client(usages(family=(192, 0), regional=(500, 0), low=(0, 0)))
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", None)
    assert check.fits and set(pools(check)) == {192, 500}


@pytest.mark.parametrize(("held_nodes", "fits"), [(0, False), (1, True), (2, True)])
def test_nodes_the_cluster_already_holds_are_counted_back(held_nodes, fits):
    # 96 of 192 family vCPUs in use; when they are this cluster's own node, a 2-node job still fits
    ml, _ = client(usages(family=(192, 96), regional=(5000, 96)), compute(current=held_nodes))
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", "h100-x4")
    held = held_nodes * H100_VCPUS
    assert check.fits is fits
    assert pools(check)[192] == (192, held, 96 + held)
    if not fits:
        assert f"96 of 192 are in use ({held} held by this cluster), {96 + held} free" in check.message()


def test_held_nodes_are_not_counted_without_a_cluster():
    ml, _ = client(usages(family=(192, 96), regional=(5000, 96)), compute(current=1))
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", None)  # serverless: nothing held
    assert not check.fits and pools(check)[192] == (192, 0, 96)


def test_a_pool_azure_does_not_list_is_not_compared():
    body = usages()
    body["value"] = [u for u in body["value"] if u["name"]["value"] != FAMILY]
    ml, _ = client(body)
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", None)
    assert check.checked and check.fits and set(pools(check)) == {500}


def test_a_usage_read_that_fails_is_reported_and_not_fatal():
    ml, _ = client(
        {"error": {"code": "AuthorizationFailed", "message": "no usages read\nsecond line"}}, None, 403
    )
    check = precheck.check_quota(ml, job(2), "eastus", "dedicated", None)
    assert (check.checked, check.fits, check.pools) == (False, True, [])
    # the exception's type and the first line of its text (azure-core: "(code) message")
    assert check.error == "HttpResponseError: (AuthorizationFailed) no usages read"
    assert check.to_json()["error"] == check.error


def test_allocation_names_busy_node_states_and_errors():
    cluster = compute(
        current=2,
        allocationState="Steady",
        targetNodeCount=3,
        nodeStateCounts={
            "preparingNodeCount": 1,
            "runningNodeCount": 2,
            "idleNodeCount": 0,
            "unusableNodeCount": 1,
            "leavingNodeCount": 0,
            "preemptedNodeCount": 0,
        },
        errors=[{"error": {"code": "QuotaExceeded", "message": "not enough quota"}}],
    )
    ml, _ = client(usages(), cluster)
    assert precheck.allocation(ml, "h100-x4") == (
        "cluster h100-x4: allocation Steady; nodes 2/3; preparing 1, running 2, unusable 1; "
        "error QuotaExceeded: not enough quota"
    )


def test_allocation_is_none_for_serverless_or_an_unreadable_cluster():
    ml, _ = client(usages(), None)
    assert precheck.allocation(ml, None) is None
    assert precheck.allocation(ml, "h100-x4") is None  # 404


def test_quota_check_counts_the_jobs_nodes_against_family_and_regional_pools():
    from jobs import outputs
    from jobs.builders import cluster_target, smoke

    transport = RoutedTransport(quota_route)
    ml = ml_client(transport, retry_total=0)
    target = cluster_target(outputs.from_file(Path(OUTPUTS)), "h100-x4")
    fits = precheck.check_quota(ml, smoke(target, nodes=2), "eastus", "dedicated", "h100-x4")
    assert fits.checked and fits.fits
    assert {p["pool"]: (p["need"], p["used"], p["limit"]) for p in fits.pools} == {
        next(p["pool"] for p in fits.pools if p["limit"] == 192): (192, 0, 192),
        next(p["pool"] for p in fits.pools if p["limit"] == 500): (192, 14, 500),
    }
    short = precheck.check_quota(ml, smoke(target, nodes=3), "eastus", "dedicated", "h100-x4")
    assert not short.fits and "needs 288 vCPUs, 0 of 192 are in use" in short.message()
    assert precheck.allocation(ml, "h100-x4") == "cluster h100-x4: allocation Resizing; nodes 0/1"
