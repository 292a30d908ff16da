"""The audit of the stack's clusters (jobs/audit/idleclusters.py): which are unused (no job for 30 days, and
only once the cluster is that old), matched case-insensitively, a recreated cluster not judged by its
predecessor's jobs, a cluster the workspace lacks never advised for deletion."""

from __future__ import annotations

import datetime as dt

import pytest

from jobs import outputs
from jobs.audit import idleclusters

from ..jobs_util import FIXTURES

OUTPUTS = outputs.from_file(FIXTURES / "outputs-prod.json")


def _job(name: str, compute: str, created: dt.datetime):
    from azure.ai.ml.entities import CommandJob
    from azure.ai.ml.entities._system_data import SystemData

    job = CommandJob(name=name, compute=compute, command="python x")
    job._creation_context = SystemData(created_at=created)
    return job


def test_audit_flags_clusters_unused_for_30_days():
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    jobs = [
        _job("old", "h100-x4", now - dt.timedelta(days=45)),
        _job(
            "recent",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/"
            "workspaces/ws-llm/computes/h100-x4",
            now - dt.timedelta(days=2),
        ),
        _job("lp", "a100-lp", now - dt.timedelta(days=40)),
    ]
    rows = {r.cluster: r for r in idleclusters.audit(OUTPUTS, jobs, now)}
    assert rows["h100-x4"].last_job == "recent" and not rows["h100-x4"].unused
    assert rows["h100-x4"].vcpus_held == 384 and rows["h100-x4"].quota_family == "standardNDSH100v5Family"
    assert rows["a100-lp"].unused and "40 days ago" in rows["a100-lp"].reason
    assert rows["h100-one"].unused and rows["h100-one"].reason.startswith("no job found")
    assert "release 96 vCPUs" in rows["h100-one"].reason


def test_audit_matches_compute_names_case_insensitively():
    # ARM names are case-insensitive: a job may name the cluster `H100-X4` or carry an ARM id in any casing.
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    jobs = [
        _job("upper", "H100-X4", now - dt.timedelta(days=1)),
        _job(
            "arm-id",
            "/subscriptions/S/resourceGroups/RG/providers/Microsoft.MachineLearningServices/"
            "workspaces/WS-LLM/Computes/H100-One",
            now - dt.timedelta(days=3),
        ),
    ]
    rows = {r.cluster: r for r in idleclusters.audit(OUTPUTS, jobs, now)}
    assert rows["h100-x4"].last_job == "upper" and not rows["h100-x4"].unused
    assert rows["h100-one"].last_job == "arm-id" and not rows["h100-one"].unused
    assert rows["a100-lp"].unused

    # and a stack cluster named in upper case matches a job that names it in lower case
    upper = OUTPUTS.model_copy(
        update={"clusters": {"H100-X4": OUTPUTS.clusters["h100-x4"].model_copy(update={"name": "H100-X4"})}}
    )
    (row,) = idleclusters.audit(upper, [_job("lower", "h100-x4", now - dt.timedelta(days=1))], now)
    assert row.cluster == "H100-X4" and row.last_job == "lower" and not row.unused


# A cluster is judged unused only once it is --days old: its age is the live compute's createdOn.
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
YOUNG = "created {} ago, under the 30 days it takes to call a cluster unused; judged from {}"


@pytest.mark.parametrize(
    ("age", "unused", "note"),
    [
        (dt.timedelta(minutes=3), False, YOUNG.format("3 minutes", "2026-12-30")),
        (dt.timedelta(hours=5), False, YOUNG.format("5 hours", "2026-12-30")),
        (dt.timedelta(days=29, hours=23), False, YOUNG.format("29 days", "2026-11-30")),
        (dt.timedelta(days=30), True, None),
        (dt.timedelta(days=31), True, None),
    ],
)
def test_a_cluster_without_jobs_is_flagged_only_once_it_is_old_enough(age, unused, note):
    created = {"h100-x4": NOW - age, "a100-lp": NOW - age, "h100-one": NOW - age}
    rows = {r.cluster: r for r in idleclusters.audit(OUTPUTS, [], NOW, 30, created)}
    row = rows["h100-x4"]
    assert (row.unused, row.note) == (unused, note)
    assert row.created_at == (NOW - age).isoformat()
    if unused:
        assert row.reason == (
            "no job found on this cluster; delete it to release 384 vCPUs of "
            "standardNDSH100v5Family in eastus"
        )


def test_a_recreated_cluster_is_not_judged_by_the_jobs_of_its_predecessor():
    created = {
        "h100-x4": NOW - dt.timedelta(days=2),
        "a100-lp": NOW - dt.timedelta(days=90),
        "h100-one": None,
    }
    jobs = [
        _job("old", "h100-x4", NOW - dt.timedelta(days=45)),
        _job("lp", "a100-lp", NOW - dt.timedelta(days=40)),
    ]
    rows = {r.cluster: r for r in idleclusters.audit(OUTPUTS, jobs, NOW, 30, created)}
    assert not rows["h100-x4"].unused and rows["h100-x4"].note.startswith("created 2 days ago")
    assert rows["a100-lp"].unused and rows["a100-lp"].reason.startswith("last job 40 days ago (over 30)")
    # Azure left createdOn out: judged by its jobs alone, as before
    assert rows["h100-one"].unused and rows["h100-one"].note is None


def test_a_cluster_the_workspace_lacks_is_not_advised_for_deletion():
    rows = {r.cluster: r for r in idleclusters.audit(OUTPUTS, [], NOW, 30, {"a100-lp": NOW})}
    assert not rows["h100-x4"].unused and rows["h100-x4"].reason is None
    assert (
        rows["h100-x4"].note
        == "not in the workspace: nothing to delete (`jobs check-deploy` says what is missing)"
    )


# Prices: the recorded Retail Prices pages' illustrative ones (tests/jobs/fixtures/retail-prices).
def _prices():
    from vmsizes.prices import Prices

    return Prices(
        "2026-12-01T00:00:00+00:00",
        "USD",
        "test",
        {
            "eastus": {"Standard_ND96isr_H100_v5": {"pay_as_you_go": 98.32}},
            "westus3": {"Standard_NC24ads_A100_v4": {"pay_as_you_go": 3.673}},
        },
    )


def test_audit_prices_the_idle_timer_of_each_cluster():
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    rows = {r.cluster: r for r in idleclusters.audit(OUTPUTS, [], now, prices=_prices())}
    h100 = rows["h100-x4"]
    assert h100.price_per_node_hour == 98.32 and h100.currency == "USD"
    assert h100.idle_cost_per_job == pytest.approx(4 * 98.32 * 300 / 3600)  # 32.77
    assert rows["h100-one"].idle_cost_per_job == pytest.approx(98.32 * 300 / 3600)  # 8.19
    # a100-lp is low-priority: the file has only its pay-as-you-go price, which is not used for it.
    assert rows["a100-lp"].price_per_node_hour is None and rows["a100-lp"].idle_cost_per_job is None
    text = idleclusters.render_text(list(rows.values()))
    assert "  cost: 98.32 USD per node-hour; its idle timer costs up to 32.77 USD per job (4 nodes x" in text
    assert "  cost: price unknown (no price in the price file for its size, region and tier)" in text


def test_audit_without_prices_says_price_unknown():
    now = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    rows = idleclusters.audit(OUTPUTS, [], now)
    assert all(r.price_per_node_hour is None and r.idle_cost_per_job is None for r in rows)
    assert idleclusters.render_text(rows).count("cost: price unknown") == len(rows)
