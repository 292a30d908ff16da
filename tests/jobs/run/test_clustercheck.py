"""Before a job is built on Azure (jobs/run/clustercheck.py): `run` on a cluster the workspace lacks, though
the stack outputs list it, says so before anything else (answered at the HTTP transport)."""

from __future__ import annotations

import json

from jobs.cli import main

from ..jobs_util import FIXTURES


def test_run_on_a_cluster_the_workspace_lacks_says_so_before_anything_else(monkeypatch, capsys, tmp_path):
    import jobs.azure_client

    from ..jobs_azure_fakes import RoutedTransport, ml_client

    def route(method: str, url: str):
        return 404, {"error": {"code": "ResourceNotFound", "message": "compute h100-x4 not found"}}

    transport = RoutedTransport(route)
    monkeypatch.setattr(jobs.azure_client, "ml_client", lambda o: ml_client(transport, retry_total=0))
    argv = ["run", "smoke", "--outputs", str(FIXTURES / "outputs-prod.json"), "--cluster", "h100-x4"]
    assert main([*argv, "--logs", str(tmp_path / "logs"), "--json"]) == jobs.errors.EXIT_NOT_CREATED
    out, err = capsys.readouterr()
    message = (
        "--cluster h100-x4: the workspace ws-llm (resource group rg-train) has no cluster h100-x4, though "
        "the stack outputs list it: the stack is not deployed or the cluster was deleted; run `pulumi up`, "
        "then `python -m jobs check-deploy`"
    )
    assert json.loads(out) == {"ok": False, "error": message, "exit_code": 3, "ledger": None}
    assert err == f"error: {message}\n"
    # one call, the compute GET: no quota read, no code upload, no job
    assert [(r.method, r.url.split("?")[0].rsplit("/", 2)[-2:]) for r in transport.requests] == [
        ("GET", ["computes", "h100-x4"])
    ]
