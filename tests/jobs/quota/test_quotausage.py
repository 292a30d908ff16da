"""Live quota usage per family and region (jobs/quota/quotausage.py) through azure-ai-ml's real HTTP pipeline,
answered at the transport with bodies in the API's shape (azure-rest-api-specs machinelearningservices
examples/Usage/list.json): rows classified and matched to the size catalog, the stack's reservation attached,
`--write` merged into the policy config, and one family string matched alike by the catalog, the policy and
the write."""

from __future__ import annotations

import json

import pytest

from jobs import outputs
from jobs.cli import main
from jobs.quota import quotausage
from policies import quota_reservation
from vmsizes.quota import ClusterDemand, reserve

from ..jobs_azure_fakes import RoutedTransport, ml_client
from ..jobs_util import FIXTURES
from ..quota_util import usage_route

OUTPUTS = outputs.from_file(FIXTURES / "outputs-prod.json")


@pytest.fixture(scope="module")
def rows():
    transport = RoutedTransport(usage_route)
    got = quotausage.fetch(ml_client(transport), ["eastus"])
    assert [r.url for r in transport.requests][0].startswith(
        "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/providers/"
        "Microsoft.MachineLearningServices/locations/eastus/usages?api-version="
    )
    return got


def test_rows_are_classified_and_workspace_rows_skipped(rows):
    kinds = [(r.kind, r.name, r.used, r.limit) for r in rows]
    assert ("regional-total", "Total Cluster Dedicated Regional vCPUs", 14, 500) in kinds
    assert ("low-priority", "Total Cluster LowPriority Regional vCPUs", 18, 50) in kinds
    assert ("clusters", "Clusters", 7, 100) in kinds
    assert sum(1 for r in rows if r.name == "Standard DSv2 Family Cluster Dedicated vCPUs") == 1
    assert not any("LowPriority vCPUs" in r.name and r.kind == "family" for r in rows)


def test_azure_ml_family_names_map_to_the_catalog(rows):
    h100 = next(r for r in rows if r.name.startswith("Standard NDSH100v5"))
    assert h100.family == "standardNDSH100v5Family"
    assert not any(r.family for r in rows if r.name.startswith("Standard DSv2"))  # not a GPU family: no match


def test_stack_reservations_are_attached(rows):
    quotausage.attach_stack(rows, OUTPUTS)
    h100 = next(r for r in rows if r.family == "standardNDSH100v5Family")
    total = next(r for r in rows if r.kind == "regional-total")
    assert h100.stack_vcpus == (4 + 1) * 96  # h100-x4 and h100-one, both eastus, dedicated
    assert total.stack_vcpus == 480
    assert h100.stack_vcpus > h100.limit  # 480 > 192: the table flags it
    assert "(over)" in quotausage.render_text(rows)


def test_write_merges_into_the_policy_config(rows, tmp_path):
    cfg = tmp_path / "prod.json"
    cfg.write_text(
        json.dumps(
            {
                "secure-defaults": {"enforcementLevel": "mandatory"},
                "quota-reservation": {
                    "enforcementLevel": "mandatory",
                    "quotas": {"westus3": {"lowPriority": 100}, "eastus": {"foo": 1}},
                },
            }
        )
    )
    data = quotausage.write_policy_config(cfg, rows)
    assert data == json.loads(cfg.read_text())
    assert data["secure-defaults"] == {"enforcementLevel": "mandatory"}
    q = data["quota-reservation"]
    assert q["enforcementLevel"] == "mandatory"
    assert q["quotas"]["westus3"] == {"lowPriority": 100}
    assert q["quotas"]["eastus"] == {
        "foo": 1,
        "total": 500,
        "lowPriority": 50,
        "standardNDSH100v5Family": 192,
    }


def test_write_replaces_other_spellings_of_the_same_region_and_family(rows, tmp_path):
    """A hand-written "East US" / "Standard NDSH100v5 Family" entry is replaced, not kept beside the new
    one: the policy reads the first key that matches, which would otherwise be the stale 100."""
    cfg = tmp_path / "prod.json"
    stale = {"Standard NDSH100v5 Family": 100, "Total": 1, "foo": 1}
    cfg.write_text(json.dumps({"quota-reservation": {"quotas": {"East US": stale, "westus3": {"total": 7}}}}))
    quotas = quotausage.write_policy_config(cfg, rows)["quota-reservation"]["quotas"]
    assert quotas == {
        "westus3": {"total": 7},
        "eastus": {"foo": 1, "total": 500, "lowPriority": 50, "standardNDSH100v5Family": 192},
    }
    pool = reserve([ClusterDemand("h100", H100, "eastus", "dedicated", 1)]).find(
        "eastus", "family", H100_FAMILY
    )
    assert quota_reservation.configured_quota(quotas, pool) == 192


H100 = "Standard_ND96isr_H100_v5"
H100_FAMILY = "standardNDSH100v5Family"


@pytest.mark.parametrize(
    "family",
    [
        H100_FAMILY,  # Compute usages name.value: the catalog's spelling
        "Standard NDSH100v5 Family vCPUs",  # Compute usages name.localizedValue (az vm list-usage, portal)
        "Standard NDSH100v5 Family Cluster Dedicated vCPUs",  # Azure ML usages (examples/Usage/list.json)
        "standard_ndsh100v5_family",  # typed by hand
    ],
)
def test_one_family_string_matches_alike_in_the_catalog_the_policy_and_quota_write(
    family, monkeypatch, tmp_path
):
    """The Done-when of issue 15: one rule (vmsizes.quota.family_key) in all three places."""
    # The catalog: the pool four H100 nodes reserve is found by this spelling.
    pool = reserve([ClusterDemand("h100-x4", H100, "eastus", "dedicated", 4)]).find(
        "eastus", "family", family
    )
    assert pool is not None and pool.family == H100_FAMILY and pool.vcpus == 384
    # The policy: a config key in this spelling is that pool's quota, and no config problem.
    assert quota_reservation.configured_quota({"eastus": {family: 192}}, pool) == 192
    assert quota_reservation.config_problems({"quotas": {"eastus": {family: 192}}}) == []
    # `jobs quota --write`: a usage row of this name is written where the policy reads it.
    row = {
        "id": "/subscriptions/00000000-0000-0000-0000-000000000000/usages/x",
        "type": "Microsoft.MachineLearningServices/vmFamily/usages",
        "currentValue": 0,
        "limit": 192,
        "name": {"value": family, "localizedValue": family},
        "unit": "Count",
    }
    import jobs.azure_client

    transport = RoutedTransport(lambda method, url: (200, {"value": [row]}))
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    cfg = tmp_path / "prod.json"
    argv = [
        "quota",
        "--outputs",
        str(FIXTURES / "outputs-prod.json"),
        "--regions",
        "eastus",
        "--write",
        str(cfg),
    ]
    assert main(argv) == 1  # the fixture's H100 clusters reserve 480 of the 192
    quotas = json.loads(cfg.read_text())["quota-reservation"]["quotas"]
    assert quotas == {"eastus": {H100_FAMILY: 192}}
    assert quota_reservation.configured_quota(quotas, pool) == 192


def test_a_low_priority_family_row_matches_no_dedicated_family_anywhere():
    """Azure ML's per-family low-priority rows (limit -1) are no dedicated family pool: low-priority quota is
    one regional value (how-to-manage-quotas.md), so the name matches in none of the three places."""
    name = "Standard NDSH100v5 Family Cluster LowPriority vCPUs"
    report = reserve([ClusterDemand("h100-x4", H100, "eastus", "dedicated", 4)])
    assert report.find("eastus", "family", name) is None
    assert quota_reservation.config_problems({"quotas": {"eastus": {name: 1}}})
    usage = {
        "type": "Microsoft.MachineLearningServices/vmFamily/usages",
        "currentValue": 0,
        "limit": -1,
        "name": {"value": name},
    }
    assert quotausage.policy_quotas(quotausage.rows_from_usages("eastus", [_Usage(usage)])) == {}


class _Usage:
    """An azure-ai-ml Usage as `_from_rest_object` leaves it: the REST model's wire names (see _field)."""

    def __init__(self, body: dict) -> None:
        self.__dict__.update(body)


def test_write_refuses_a_broken_config(rows, tmp_path):
    cfg = tmp_path / "bad.json"
    cfg.write_text("{not json")
    with pytest.raises(quotausage.UsageError, match="--write"):
        quotausage.write_policy_config(cfg, rows)


def test_the_quota_table_names_a_family_as_every_other_output_does(rows):
    """One spelling of a family in the text of plan, audit, run and quota: the catalog's key."""
    quotausage.attach_stack(rows, OUTPUTS)
    text = quotausage.render_text(rows)
    assert "│ eastus │ standardNDSH100v5Family " in text
    assert "Standard NDSH100v5 Family Cluster Dedicated vCPUs" not in text
    assert "│ eastus │ Total Cluster Dedicated Regional vCPUs " in text  # not a family: Azure's name
    h100 = next(r for r in quotausage.to_json(rows) if r["family"] == "standardNDSH100v5Family")
    assert h100["name"] == "Standard NDSH100v5 Family Cluster Dedicated vCPUs"  # --json keeps both
