"""`quota` and `audit` against azure-ai-ml's real HTTP pipeline, answered at the transport with bodies in
the API's shape (azure-rest-api-specs machinelearningservices examples/Usage/list.json)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from jobs_azure_fakes import RoutedTransport, ml_client

from jobs import idleclusters, outputs, quotausage
from jobs.cli import main
from policies import quota_reservation
from vmsizes.quota import ClusterDemand, reserve

FIXTURES = Path(__file__).parent / "fixtures"
OUTPUTS = outputs.from_file(FIXTURES / "outputs-prod.json")
USAGES = json.loads((FIXTURES / "usages-eastus.json").read_text())


def usage_route(method: str, url: str):
    if "/providers/Microsoft.MachineLearningServices/locations/" in url and "/usages" in url:
        return 200, USAGES
    return 404, {"error": {"code": "NotFound", "message": url}}


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


def test_quota_cli_rejects_empty_regions(capsys):
    assert main(["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", " , "]) == 2
    assert "--regions" in capsys.readouterr().err


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


def _no_azure(monkeypatch):
    import jobs.azure_client

    def refuse(*a, **k):
        raise AssertionError("the live query ran before --write was checked")

    monkeypatch.setattr(jobs.azure_client, "ml_client", refuse)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a folder; pass a file path, e.g. --write"),
        (lambda p: p.write_bytes(b"\xff\xfe{}"), "not UTF-8 text"),
        (lambda p: p.write_text("[1]"), "expected a JSON object"),
    ],
)
def test_quota_write_target_is_checked_before_the_live_query(tmp_path, monkeypatch, capsys, make, message):
    _no_azure(monkeypatch)
    target = tmp_path / "prod.json"
    make(target)
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--write", str(target)]
    assert main(argv) == 2
    assert f"--write {target}: {message}" in capsys.readouterr().err


def _refused(method: str, url: str):
    return 403, {"error": {"code": "AuthorizationFailed", "message": "no access to the workspace"}}


@pytest.mark.parametrize(
    ("argv", "what"),
    [(["quota", "--regions", "eastus"], "usage query failed"), (["audit"], "job list query failed")],
)
def test_failed_query_exits_4_with_json_on_stdout(monkeypatch, capsys, argv, what):
    import jobs.azure_client

    transport = RoutedTransport(_refused)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    assert main([*argv, "--outputs", str(FIXTURES / "outputs-prod.json"), "--json"]) == 4
    captured = capsys.readouterr()
    body = json.loads(captured.out)
    assert body["ok"] is False and body["exit_code"] == 4
    assert body["error"].startswith(what) and "AuthorizationFailed" in body["error"]
    assert captured.err.startswith(f"error: {what}") and len(captured.err.splitlines()) == 1
    assert transport.requests  # the query was really sent


def test_bad_input_under_json_is_json_too(capsys):
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", " , ", "--json"]
    assert main(argv) == 2
    body = json.loads(capsys.readouterr().out)
    message = "--regions: empty; pass e.g. --regions eastus,westus3"
    assert body == {"ok": False, "error": message, "exit_code": 2}


def test_quota_regions_are_checked_and_normalised(monkeypatch, capsys):
    _no_azure(monkeypatch)
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", "eastus,westeurop"]
    assert main(argv) == 2
    message = "--regions westeurop: not a known Azure region; did you mean westeurope?"
    assert message in capsys.readouterr().err
    import jobs.azure_client

    transport = RoutedTransport(usage_route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    argv = ["quota", "--outputs", str(FIXTURES / "outputs-prod.json"), "--regions", "East US", "--json"]
    assert main(argv) == 1  # the fixture's eastus H100 clusters reserve 480 of a 192 limit
    assert json.loads(capsys.readouterr().out)["regions"] == ["eastus"]
    assert "/locations/eastus/usages" in transport.requests[0].url


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


def _computes(created: dict[str, str]) -> dict:
    base = json.loads((FIXTURES / "compute-get-amlcompute.json").read_text())
    value = []
    for name, when in created.items():
        item = json.loads(json.dumps(base))
        item["name"], item["id"] = name, base["id"].rsplit("/", 1)[0] + "/" + name
        item["properties"]["createdOn"] = when
        value.append(item)
    return {"value": value}


def test_audit_reads_each_cluster_s_age_from_the_compute_list(monkeypatch, capsys):
    import jobs.azure_client

    just_now = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=4)).isoformat()
    computes = _computes({"h100-x4": just_now, "a100-lp": "2021-04-01T22:00:00.0000000+00:00"})

    def route(method: str, url: str):
        path = url.split("?")[0]
        if path.endswith("/workspaces/ws-llm/jobs"):
            return 200, {"value": []}
        if path.endswith("/workspaces/ws-llm/computes"):
            return 200, computes
        return 404, {"error": {"code": "NotFound", "message": url}}

    transport = RoutedTransport(route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    assert main(["audit", "--outputs", str(FIXTURES / "outputs-prod.json"), "--json"]) == 1
    body = json.loads(capsys.readouterr().out)
    rows = {r["cluster"]: r for r in body["clusters"]}
    assert body["unused"] == ["a100-lp"]
    assert rows["h100-x4"]["note"].startswith("created 4 minutes ago, under the 30 days")
    assert rows["h100-one"]["note"].startswith("not in the workspace")
    assert rows["a100-lp"]["created_at"] == "2021-04-01T22:00:00+00:00"


def test_the_quota_table_names_a_family_as_every_other_output_does(rows):
    """One spelling of a family in the text of plan, audit, run and quota: the catalog's key."""
    quotausage.attach_stack(rows, OUTPUTS)
    text = quotausage.render_text(rows)
    assert "│ eastus │ standardNDSH100v5Family " in text
    assert "Standard NDSH100v5 Family Cluster Dedicated vCPUs" not in text
    assert "│ eastus │ Total Cluster Dedicated Regional vCPUs " in text  # not a family: Azure's name
    h100 = next(r for r in quotausage.to_json(rows) if r["family"] == "standardNDSH100v5Family")
    assert h100["name"] == "Standard NDSH100v5 Family Cluster Dedicated vCPUs"  # --json keeps both
