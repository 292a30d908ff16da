"""A submitted health job's verdict (jobs/health/judge.py `outcome`): its exit code, node ids and advice, from
the rank logs health.py writes (`health node {...}` / `health summary {...}` records, docs/job-scripts.md) and
the node ids from `compute.list_nodes` through azure-ai-ml's real HTTP pipeline: POST
.../computes/{name}/listNodes answers AmlComputeNodesInformation {nodes: [{nodeId, privateIpAddress,
nodeState, runId}], nextLink} (Azure ML REST spec, Compute_ListNodes). Each case changes one thing and asserts
what the user sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.builders import BuiltJob
from jobs.health import judge
from jobs.submit.lifecycle import Outcome

from ..health_util import LISTED, TWO, node, write_logs
from ..jobs_azure_fakes import RoutedTransport, ml_client


def ml_with_nodes(listed: list[dict] | None, status: int = 200):
    def route(method, url):
        if method == "POST" and url.split("?")[0].endswith("/computes/h100-x4/listNodes"):
            return (
                (status, {"nodes": listed, "nextLink": None})
                if status == 200
                else (
                    status,
                    {"error": {"code": "AuthorizationFailed", "message": "no listNodes"}},
                )
            )
        return 404, {"error": {"code": "NotFound", "message": url}}

    return ml_client(RoutedTransport(route), retry_total=0)


def built(compute: str | None = "h100-x4") -> BuiltJob:
    return BuiltJob("health", "health", None, 2, 8, "Standard_ND96isr_H100_v5", extra={"compute": compute})


def outcome(logs: Path | None, status: str = "Completed", code: int = 0, name: str = "job1") -> Outcome:
    return Outcome("health", name, status, code, logs=None if logs is None else str(logs))


def test_a_failed_node_is_exit_1_with_node_ids_and_advice(tmp_path):
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(write_logs(tmp_path, TWO)), 0)
    assert code == 1 and result["failed"] is True
    assert [(n["node"], n["node_id"]) for n in result["nodes"]] == [("node-0", "tvm-a"), ("node-1", "tvm-b")]
    assert result["nodes"][0]["advice"] == [] and len(result["nodes"][1]["advice"]) == 2


def test_healthy_nodes_are_exit_0_even_when_the_job_failed_after_its_report(tmp_path):
    ok = [node("node-0", 0, "10.0.0.4", "pass"), node("node-1", 1, "10.0.0.5", "pass")]
    logs = write_logs(tmp_path, ok)
    for status in ("Completed", "Failed"):
        result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(logs, status, 1), 1)
        assert (code, result["failed"]) == (0, False), status


def test_a_warn_node_does_not_fail_the_check_but_gets_the_advice(tmp_path):
    nodes = [node("node-0", 0, "10.0.0.4", "pass"), node("node-1", 1, "10.0.0.5", "warn")]
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(write_logs(tmp_path, nodes)), 0)
    assert code == 0 and len(result["nodes"][1]["advice"]) == 2


def test_a_completed_job_without_a_report_is_exit_1(tmp_path):
    logs = write_logs(tmp_path, TWO[:1], with_summary=False)
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(logs), 0)
    assert code == 1 and "no `health summary` line" in result["problems"][0]


@pytest.mark.parametrize(("status", "code"), [("Canceled", 2), ("NotResponding", 2)])
def test_another_terminal_state_keeps_submits_code(tmp_path, status, code):
    got, c = judge.outcome(
        ml_with_nodes(LISTED), built(), outcome(write_logs(tmp_path, TWO), status, code), code
    )
    assert c == code


def test_a_job_not_followed_has_no_logs_and_says_so():
    result, code = judge.outcome(ml_with_nodes(LISTED), built(), outcome(None, "Running", 0), 0)
    assert (result, code) == ({"error": "no logs: the job was not followed to its end (--no-wait)"}, 0)
    failed = Outcome("health", None, None, 3, error="create failed: quota")
    assert judge.outcome(ml_with_nodes(LISTED), built(), failed, 3) == ({"error": "create failed: quota"}, 3)


def test_a_list_nodes_call_that_fails_leaves_a_note_on_each_node(tmp_path):
    result, code = judge.outcome(ml_with_nodes(None, 403), built(), outcome(write_logs(tmp_path, TWO)), 0)
    assert code == 1
    notes = [n["node_id_note"] for n in result["nodes"]]
    assert all(n.startswith("compute.list_nodes(h100-x4) failed: HttpResponseError") for n in notes)
    assert all(n["node_id"] is None for n in result["nodes"])


def test_serverless_nodes_are_not_looked_up(tmp_path):
    result, _ = judge.outcome(ml_with_nodes(LISTED), built(None), outcome(write_logs(tmp_path, TWO)), 0)
    assert {n["node_id_note"] for n in result["nodes"]} == {"serverless compute: no cluster to list nodes of"}


def test_node_ids_prefer_the_nodes_that_ran_this_job(tmp_path):
    listed = [
        {"nodeId": "tvm-old", "privateIpAddress": "10.0.0.4", "nodeState": "idle", "runId": "job0"},
        *LISTED,
    ]
    result, _ = judge.outcome(ml_with_nodes(listed), built(), outcome(write_logs(tmp_path, TWO)), 0)
    assert result["nodes"][0]["node_id"] == "tvm-a"
