"""`python -m jobs audit` against azure-ai-ml's real HTTP pipeline, answered at the transport: each cluster's
age read from the compute list."""

from __future__ import annotations

import datetime as dt
import json

from jobs.cli import main

from .jobs_azure_fakes import RoutedTransport, ml_client
from .jobs_util import FIXTURES


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
